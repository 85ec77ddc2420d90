"""
The time-APIs comparisons: distribution tests between every pair of APIs at each load level
(Holm over the pairs of one load and one test), and ratios of means between conditions at the
unit of replication (over reruns where there are two or more, analysis.core.replication), which
the tables show at 95 % and the findings judge at their own family's level.
"""

import dataclasses
from dataclasses import asdict

import numpy as np

from analysis.core import replication
from analysis.core import stats, timers
from analysis.core.report import Table
from analysis.experiments.time_apis.samples import api_label

ALPHA = 0.05
QUANTITY = {"observed_cpu": "CPU time", "observed_wall": "wall time"}


def api_tests(samples, apis, loads):
    """Observed CPU time: every pair of APIs at each load level (four tests, Holm per test over the
    pairs of that load level)."""
    results = []
    for load in loads:
        groups = {api: samples.observed_cpu[(samples.api == api) & (samples.load == load) & samples.usable("observed_cpu")]
                  for api in apis}
        groups = {k: v for k, v in groups.items() if len(v) >= 2}
        for r in stats.pairwise_tests(groups, alpha=ALPHA):
            results.append((load, r))
    return results


def ratio(samples, quantity, base, other, confidence=0.95, what=""):
    """mean of `other` / mean of `base` (masks over the samples; runs with a valid `quantity` only) as an Estimate,
    paired by rerun, on the grid of the timers' values; None when either side has fewer than two runs.

    A mean is known to half its timer's step where the values do not scatter over several steps, and
    far closer where they do and the rounding averages out (analysis.core.timers.mean_offset_bound);
    the ratio's grid follows from both sides' (docs/experiments.md, "Claims and ratios")."""
    values = getattr(samples, quantity)
    base, other = base & samples.usable(quantity), other & samples.usable(quantity)
    if base.sum() < 2 or other.sum() < 2:
        return None
    est = replication.ratio_of_means(values[base], values[other], samples.rerun[base], samples.rerun[other],
                                     confidence=confidence, what=what)
    grid = ratio_grid(samples, quantity, base, other)
    return dataclasses.replace(est, grid=grid.ratio) if est and grid.ratio else est


NEGLIGIBLE_GRID = 1e-4  # a ratio's grid below 0.01 % of the base mean widens nothing worth saying


@dataclasses.dataclass(frozen=True)
class Grid:
    """The grid of a ratio of two timers' means: each side's step, how far each side's mean can sit
    off on it (half a step, less where the values scatter over several), and the base mean (seconds)."""

    steps: tuple
    base_mean: float
    offsets: tuple = ()

    @property
    def ratio(self):
        """The grid as a ratio: 2 x (sum of both sides' offsets) / base mean; 0 where none is
        visible or the values average it out."""
        offsets = self.offsets or tuple(step / 2 for step in self.steps)
        grid = 2 * sum(offsets) / self.base_mean if any(offsets) and self.base_mean > 0 else 0.0
        return grid if grid >= NEGLIGIBLE_GRID else 0.0

    def too_coarse(self, margin):
        """Why equivalence within ±margin cannot be decided on this grid ('' when it can): the grid
        is at least twice the margin, so the interval widened by half of it on each side never fits
        inside the margin, however many reruns (analysis.core.verdicts.grid_bound, said in milliseconds)."""
        if not self.ratio or self.ratio < 2 * margin:
            return ""
        ms = [1e3 * step for step in self.steps]
        sides = f" (a {ms[0]:.3g} ms and a {ms[1]:.3g} ms step)" if all(ms) else ""
        held = 1e3 * self.ratio * self.base_mean / 2
        scatter = "" if abs(held - sum(ms) / 2) < 1e-9 else (
            f", over which the values scatter too little to average it out (the means are held to ±{held:.3g} ms),")
        return (f"its {sum(ms):.3g} ms grid{sides}{scatter} is ≥ 2 × the {1e3 * margin * self.base_mean:.3g} ms margin "
                f"({margin:.0%} of the base mean, {1e3 * self.base_mean:.4g} ms): set aside")


def ratio_grid(samples, quantity, base, other):
    """The Grid of mean(other) / mean(base) (masks over the samples), as `ratio` widens it."""
    values = getattr(samples, quantity)
    base, other = base & samples.usable(quantity), other & samples.usable(quantity)
    mean = float(np.mean(values[base])) if base.any() else float("nan")
    steps = tuple(_step(samples, quantity, side) for side in (base, other))
    offsets = tuple(timers.mean_offset_bound(step, timers.scatter_before_rounding(values[side], samples.rerun[side], step))
                    for step, side in zip(steps, (base, other)))
    return Grid(steps, mean, offsets)


def _step(samples, quantity, mask):
    """The step of the grid one API's values lie on (all its load levels: one timer, one grid), 0
    where none is visible (the cgroup's nanoseconds)."""
    apis = set(samples.api[mask].tolist())
    values = getattr(samples, quantity)[np.isin(samples.api, list(apis)) & samples.usable(quantity)]
    step = timers.timer_resolution(values).step
    return float(step) if np.isfinite(step) else 0.0


def load_ratio(samples, quantity, api, base_load, load, confidence=0.95):
    """One API's mean at `load` / its mean at `base_load` (on the API's grid, as `ratio`)."""
    mask = samples.api == api
    base, other = mask & (samples.load == base_load), mask & (samples.load == load)
    return ratio(samples, quantity, base, other, confidence, f"{QUANTITY[quantity]} of {api} at load {load} / load {base_load}")


def load_effects(samples, apis, loads, quantity):
    """Each load level against the lowest per API: table rows and data (95 % intervals)."""
    base_load = min(loads)
    rows, results = [], []
    for api in apis:
        for load in loads:
            est = load_ratio(samples, quantity, api, base_load, load) if load != base_load else None
            if est is None:
                continue
            low, high = est.widened()
            rows.append([api_label(api), f"{base_load} → {load}", est.unit, est.n, est.m, est.value,
                         f"{low:.4f} – {high:.4f}"])
            results.append({"api": api, "load": int(load), "estimate": asdict(est)})
    return rows, results


LOAD_COLUMNS = ("API", "load", "unit", "n (per rerun)", "reruns M", "ratio of means", "95 % CI")


def api_tests_table(label, tests):
    """The table of ``api_tests``: one row per (load, test, API pair)."""
    return Table(title=f"{label}: observed CPU time between APIs at each load level",
                 columns=["load", "test", "A", "B", "n A", "n B", "statistic", "p", "p (Holm)", "significant", "note"],
                 rows=[[load, r.test, api_label(r.label_a), api_label(r.label_b), r.n_a, r.n_b, r.statistic, r.p,
                        r.p_adjusted, "yes" if r.significant else "no", r.note] for load, r in tests],
                 caption=f"alpha = {ALPHA}; Holm over the API pairs of one load level, separately for each test. "
                         "Runs of all reruns pooled: these tests describe the distributions; the findings judge "
                         "means over reruns.")


def load_tables(label, cpu_rows, wall_rows):
    """The tables of ``load_effects`` for observed CPU time and wall time."""
    caption = ("Ratio = mean at the load level / mean at the lowest level. Unit reruns: mean of the per-rerun ratios "
               "with a t interval over reruns (the load levels of one rerun pair up); unit runs (one rerun): "
               "bootstrap over runs, which holds for that invocation only. The CI is widened by half the ratio's grid "
               "where the timer prints in steps (GNU time 10 ms, bash 1 ms).")
    return [
        Table(title=f"{label}: observed CPU time against the lowest load level", columns=list(LOAD_COLUMNS),
              rows=cpu_rows, caption=caption),
        Table(title=f"{label}: wall time against the lowest load level", columns=list(LOAD_COLUMNS), rows=wall_rows,
              caption=caption),
    ]
