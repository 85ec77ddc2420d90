"""
What a co-located design (interleaved, duet) does to each side's cost, and whether its verdict
still speaks of the programs as they run alone (docs/designs.md shows how far it can be off).
Every co-located invocation also times a few pairs back to back (cmdrun's --sentinel); a side's
co-location factor is its median CPU time under the design over that back to back, the bias the
ratio of the two sides' factors. Flagged where, with 99 % confidence, the bias lies beyond a
quarter of the threshold or a side's cost moves beyond SIDE_LIMIT; shown harmless (Check.shown)
only where an equivalence test at the run's alpha puts both inside those limits. The burden of
proof is on the design: its pairs give the verdict only while it is shown harmless.
"""

import math
from dataclasses import asdict, dataclass

import numpy as np
from analysis.core.deferred import scipy_stats

from analysis.tools.commands import executions
from analysis.ab import designs

COLUMN = "exec-cputime"   # the only column both co-located designs compare
SIDE_LIMIT = 0.10         # a side whose cost changes more than this under the design is flagged
MIN_UNITS = 3             # invocations (or pilot rounds) with both kinds of pairs to judge by
LEVEL = 0.01              # the check's error level: it looks after every invocation, so each look is strict


@dataclass(frozen=True)
class Estimate:
    """A ratio (exp of a mean of logs) and its t interval (99 % for the check's own figures, 95 % for
    the estimates of new / base) over `units` invocations or rounds."""

    ratio: float
    low: float
    high: float
    units: int
    se: float = math.nan   # the standard error of the mean log (nan in records from before it was kept)

    @classmethod
    def of_logs(cls, logs, level=0.05):
        logs = np.asarray(logs, dtype=float)
        if logs.size < MIN_UNITS:
            return cls(math.nan, math.nan, math.nan, int(logs.size))
        mean, se = float(logs.mean()), float(logs.std(ddof=1)) / math.sqrt(logs.size)
        half = float(scipy_stats.t.ppf(1 - level / 2, logs.size - 1)) * se
        return cls(math.exp(mean), math.exp(mean - half), math.exp(mean + half), int(logs.size), se)

    def equivalence_interval(self, alpha):
        """The (1 - 2 alpha) t interval of the ratio: inside 1 ± limit, two one-sided tests at
        `alpha` show the ratio within the limit (nan where it cannot be told)."""
        if self.units < MIN_UNITS or not math.isfinite(self.se):
            return math.nan, math.nan
        half = float(scipy_stats.t.ppf(1 - alpha, self.units - 1)) * self.se
        return self.ratio * math.exp(-half), self.ratio * math.exp(half)

    def within(self, limit, alpha):
        """Whether an equivalence test at `alpha` shows the ratio inside 1 ± limit (on the log scale)."""
        low, high = self.equivalence_interval(alpha)
        return math.isfinite(low) and max(abs(math.log(low)), abs(math.log(high))) <= math.log1p(limit)

    def beyond(self, limit):
        """Whether the whole interval lies beyond 1 +- limit (on the log scale)."""
        bound = math.log1p(limit)
        return math.isfinite(self.low) and (math.log(self.low) > bound or math.log(self.high) < -bound)


@dataclass(frozen=True)
class Check:
    """The co-location check of one run definition: each side's factor, the two estimates of
    new / base, their ratio (the bias) and the verdict on the design."""

    design: str
    base: Estimate       # base's cost under the design / alone
    new: Estimate
    together: Estimate   # new / base under the design
    alone: Estimate      # new / base back to back
    bias: Estimate       # together / alone
    tolerance: float     # the bias allowed: a quarter of the threshold
    pairs_alone: int     # back-to-back pairs it rests on
    alpha: float = 0.05  # the run's alpha: the level of the equivalence test that shows the design harmless

    @property
    def judged(self):
        return self.bias.units >= MIN_UNITS

    @property
    def flagged(self):
        """The design changes what it measures: a bias beyond the tolerance, or a side's cost
        changed beyond SIDE_LIMIT, each with 99 % confidence."""
        return self.judged and (self.bias.beyond(self.tolerance) or self.base.beyond(SIDE_LIMIT)
                                or self.new.beyond(SIDE_LIMIT))

    @property
    def shown(self):
        """The sentinel's proof that the design leaves what it measures as it is alone: equivalence
        tests at the run's alpha put the bias inside ±tolerance and each side's cost inside
        ±SIDE_LIMIT. Only then do the pairs under the design give the verdict."""
        return (self.judged and not self.flagged and self.bias.within(self.tolerance, self.alpha)
                and self.base.within(SIDE_LIMIT, self.alpha) and self.new.within(SIDE_LIMIT, self.alpha))

    def shown_harmless(self, threshold):
        """What auto's pilot asks before it tries the design: the bias within the threshold and each
        side's cost within half of SIDE_LIMIT, all by their 99 % intervals, not their points. Each
        interval is two one-sided tests at 0.005; the pilot looks at most MAX_ROUNDS - MIN_ROUNDS + 1
        = 9 times, so its optional stopping accepts a harmful design with at most 9 x 0.005 = 4.5 %."""
        alpha = LEVEL / 2
        return (self.judged and not self.flagged and self.bias.within(threshold, alpha)
                and self.base.within(SIDE_LIMIT / 2, alpha) and self.new.within(SIDE_LIMIT / 2, alpha))

    def to_dict(self):
        return {**asdict(self), "flagged": self.flagged}

    @classmethod
    def from_dict(cls, data):
        fields = {k: Estimate(**v) if isinstance(v, dict) else v for k, v in data.items() if k != "flagged"}
        return cls(**fields)


def _median(values):
    return float(np.median(values)) if len(values) else math.nan


def check(invocations, design, threshold, alpha=0.05):
    """The Check over the invocations (or pilot rounds) that hold pairs of both kinds, its
    equivalence tests at `alpha`."""
    from analysis.ab import observations

    base, new, together, alone, pairs_alone = [], [], [], [], 0
    for invocation in invocations:
        if not executions.co_located(invocation):
            continue
        logs_together, _ = observations.invocation_log_ratios([invocation], COLUMN)
        logs_alone, found = observations.invocation_log_ratios([invocation], COLUMN, alone=True)
        if not logs_together.size or not logs_alone.size:
            continue
        factors = [math.log(_median(executions.side_values(invocation, side, COLUMN, True))
                            / _median(executions.side_values(invocation, side, COLUMN, False))) for side in "ab"]
        base.append(factors[0])
        new.append(factors[1])
        together.append(float(logs_together[0]))
        alone.append(float(logs_alone[0]))
        pairs_alone += int(found[0].size)
    bias = np.subtract(together, alone)
    return Check(design, Estimate.of_logs(base, LEVEL), Estimate.of_logs(new, LEVEL), Estimate.of_logs(together),
                 Estimate.of_logs(alone), Estimate.of_logs(bias, LEVEL), threshold / 4, pairs_alone, alpha)


def _ratio(e):
    return f"{e.ratio:.3f}x (99 % CI {e.low:.3f} … {e.high:.3f})"


def _change(e, level=95):
    return f"{100 * (e.ratio - 1):+.1f} % ({level} % CI {100 * (e.low - 1):+.1f} … {100 * (e.high - 1):+.1f} %)"


def reason(c, base="base", new="new"):
    """Why a flagged design does not give the verdict, in one clause."""
    doing = designs.get(c.design).doing or c.design
    worst = max(((base, c.base), (new, c.new)), key=lambda s: abs(math.log(s[1].ratio)))
    if worst[1].beyond(SIDE_LIMIT):
        return (f"{doing} made {worst[0]} {worst[1].ratio:.2f}x as expensive as alone (99 % CI {worst[1].low:.2f} … "
                f"{worst[1].high:.2f}): the two share the core's caches or memory bandwidth")
    return (f"{doing} moved the ratio by {_change(c.bias, 99)} against back-to-back pairs, beyond the "
            f"±{100 * c.tolerance:.2g} % tolerance: the design changes what it measures")


def render(c):
    """Lines for the output: the factors, both estimates of new / base, and what was concluded."""
    if not c.judged:
        return [f"co-location check: fewer than {MIN_UNITS} invocations held back-to-back pairs too; not judged"]
    lines = [f"co-location ({c.design}, from {c.bias.units} invocations with {c.pairs_alone} back-to-back pairs): "
             f"CPU time under the design / alone: base {_ratio(c.base)}, new {_ratio(c.new)}",
             f"  new / base: under the design {_change(c.together)}; back to back {_change(c.alone)}"]
    if c.flagged:
        lines.append(f"  flagged: {reason(c)}; the verdict comes from the back-to-back pairs only")
        return lines
    if c.shown:
        lines.append(f"  shown harmless: {_moved(c)}, inside ±{100 * c.tolerance:.2g} %, and each side's cost within "
                     f"±{100 * SIDE_LIMIT:g} % of alone; the verdict comes from the pairs under the design")
    else:
        lines.append(f"  {unshown(c)}; the verdict comes from the back-to-back pairs")
    return lines


def unshown(c, base="base", new="new"):
    """Why a design that is not flagged is not shown harmless either, in one clause."""
    if not c.judged:
        return f"not shown harmless: fewer than {MIN_UNITS} invocations held back-to-back pairs too"
    if not c.bias.within(c.tolerance, c.alpha):
        return f"not shown harmless: {_moved(c)}, not inside ±{100 * c.tolerance:.2g} %"
    name, side = max(((base, c.base), (new, c.new)), key=lambda s: abs(math.log(s[1].ratio)))
    low, high = side.equivalence_interval(c.alpha)
    return (f"not shown harmless: {name}'s cost under the design {side.ratio:.3f}x of alone "
            f"({100 * (1 - 2 * c.alpha):g} % CI {low:.3f} … {high:.3f}), not inside ±{100 * SIDE_LIMIT:g} %")


def _moved(c):
    """The bias and its equivalence interval, as the output says them."""
    low, high = c.bias.equivalence_interval(c.alpha)
    return (f"the design's ratio / back to back {100 * (c.bias.ratio - 1):+.1f} % ({100 * (1 - 2 * c.alpha):g} % CI "
            f"{100 * (low - 1):+.1f} … {100 * (high - 1):+.1f} %)")
