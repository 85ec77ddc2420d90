"""
An estimate as every finding carries it (analysis.core.verdicts judges it): a point with its
confidence interval, what the interval rests on (the unit of replication, n, M), how it was made
(so that what would decide it follows the same distribution), and how to print it.
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval, and what the interval rests on."""

    value: float
    low: float
    high: float
    # "reruns" (invocations/rounds), "runs" (of one invocation), "samples" (of one run) or "cases": a
    # share of n cases (binomial), whose interval narrows only with more cases, not with more runs
    unit: str = "runs"
    n: int = 0  # runs per condition (per rerun, when the unit is reruns)
    m: int = 1  # reruns per condition
    method: str = ""  # e.g. "Welch t on rerun means, 95 % CI"
    grid: float = 0.0  # step of the grid the measurement sits on (0: none visible)
    scale: str = ""  # how to print the quantity: "ratio", "pct" or a unit such as "ns"
    level: float = 0.0  # the level the interval was computed at (a sequential look's, if stricter); 0: not recorded
    # how the interval was made, so that what would decide it follows the same distribution: "t" (over
    # reruns or runs), "log t" (a t interval of the logs, or a ratio of two: sized on the log scale),
    # "F" (theta = 1 + n var(between) / var(within) from one-way ANOVA: M reruns of n runs)
    interval: str = "t"
    # the level of the t quantile the width scales with, where it is not `level` (a ratio of two medians
    # whose intervals are each at 1 - alpha/2); 0: `level`
    sizing_level: float = 0.0

    def widened(self):
        """The CI widened by half a grid step on each side."""
        half = self.grid / 2
        return self.low - half, self.high + half

    def sizing(self):
        """(low, high, level) of the interval that says how many repetitions would decide: the CI,
        or for a repeated interval the one at the claim's own level, because an early look's
        interval is far wider (unbounded while it spends no alpha) than the one the last looks test with."""
        fixed = getattr(self, "fixed", ())
        if not (fixed and self.value and all(map(math.isfinite, fixed))):
            return self.low, self.high, self.sizing_level or self.level
        low, high = sorted((self.value * fixed[0], self.value * fixed[1]))
        return low, high, getattr(self, "fixed_level", 0.0)

    def replication(self):
        if self.unit == "reruns":
            return f"unit: reruns, M = {self.m} of n = {self.n} runs"
        if self.unit == "samples":
            return f"unit: samples of one run, n = {self.n}"
        if self.unit == "cases":
            return f"unit: a share of n = {self.n} cases"
        if self.unit == "bracket":
            return (f"unit: a bracket between two measured points (M = {self.m} of n = {self.n} runs; more runs do not "
                    "narrow it, a finer grid does)")
        if self.unit == "pooled":
            return "unit: one figure pooled over the runs of one invocation (no interval; holds for this invocation)"
        return f"unit: runs of one invocation, n = {self.n}" + (f" (M = {self.m}: rerun level not used)" if self.m > 1 else "")


@dataclass(frozen=True)
class RepeatedEstimate(Estimate):
    """An Estimate on a repeated interval (a look of `timekit run --until-decided`), which also
    carries the interval at the claim's own confidence, as (low, high) / value: relative, so that
    scaling the estimate keeps it. A class of its own so that fixed designs' estimates (and the
    report data made of them) stay as they were."""

    fixed: tuple = ()
    fixed_level: float = 0.0  # the claim's own confidence, at which `fixed` is computed


@dataclass(frozen=True)
class BracketUnion(Estimate):
    """A bracket between two measured points (unit "bracket") that is the union of several
    invocations' brackets, `brackets` ((low, high) each, in the estimate's scale). Where they
    differ, the step moves between invocations: more runs do not settle that and a finer grid
    alone does not either, so the text says so instead of "more runs do not narrow it". A class of
    its own so that one curve's bracket (Estimate) stays as it was."""

    brackets: tuple = ()  # None for an invocation that shows no such step

    def agree(self):
        return None not in self.brackets and len(set(self.brackets)) <= 1

    def replication(self):
        if self.agree():
            return super().replication()
        spans = ", ".join(f"{format_value(b[0], '')}–{format_value(b[1], self.scale)}" if b else "none" for b in self.brackets)
        return (f"unit: the union of M = {self.m} invocations' brackets between two measured points (n = {self.n} "
                f"runs each), which differ ({spans}): the step moves between invocations, so a finer grid alone does "
                "not narrow it")


def format_value(x, scale, digits=4, zeros=False):
    """A value in its scale: 'pct' as a percentage, ratios and units to `digits` significant digits;
    `zeros` keeps trailing zeros, so that an interval's ends show the same digits (0.2691–7.000)."""
    if not math.isfinite(x):
        return "∞" if x > 0 else "-∞"
    if scale == "pct":
        return f"{x:.2%}"
    text = f"{x:#.{digits}g}".rstrip(".") if zeros else f"{x:.{digits}g}"
    return text if scale in ("", "ratio") else f"{text} {scale}"
