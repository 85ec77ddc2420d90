"""What a timer's own values say about it: the grid they lie on (its resolution) and how far
they sit from a reference clock measuring the same runs (its bias).

Used by the time-APIs experiment; apart from analysis.core.stats because these are properties of a
timer, not tests between samples.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import numpy as np

from analysis.core.stats import as_float, finite_values, summarize

GRID_SHARE = 0.99          # timer_resolution(): share of values that must lie on the grid


def _candidate_steps() -> np.ndarray:
    return np.array([m * 10.0 ** e for e in range(-6, 1) for m in (1, 2, 5) if m * 10.0 ** e <= 1])


@dataclass(frozen=True)
class Resolution:
    """The grid a timer's values lie on."""

    step: float              # seconds; NaN when no candidate grid holds GRID_SHARE of the values
    share_on_grid: float     # share of the non-zero values on that grid (on 1 us when step is NaN)
    note: str = ""

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _on_grid(v: np.ndarray, step: float) -> np.ndarray:
    """Which values lie on multiples of `step`, tolerant to the float noise of decimal text."""
    tol = np.minimum(1e-9 * np.maximum(np.abs(v), 1.0), 1e-3 * step)
    return np.abs(v - np.round(v / step) * step) <= tol


def share_on_grid(values, step: float) -> float:
    """Share of the finite non-zero values that lie on multiples of `step` (NaN without values)."""
    v = finite_values(values)
    v = v[v != 0]
    return float(np.mean(_on_grid(v, step))) if v.size else float("nan")


def timer_resolution(values) -> Resolution:
    """Largest step among 1e-6..1 s (1/2/5 per decade) on which >= 99 % of the non-zero values lie.

    Zeros are left out (they lie on every grid). Values parsed from text such as '0.08' are fine.
    """
    v = finite_values(values)
    v = v[v != 0]
    if v.size == 0:
        return Resolution(float("nan"), float("nan"), "no non-zero values")
    steps = _candidate_steps()
    shares = np.array([np.mean(_on_grid(v, s)) for s in steps])
    ok = np.flatnonzero(shares >= GRID_SHARE)
    if ok.size == 0:
        return Resolution(float("nan"), float(shares[0]),
                          f"finer than 1e-06 s or no grid (n={v.size})")
    i = ok[-1]
    return Resolution(float(steps[i]), float(shares[i]), f"n={v.size} non-zero values")


def mean_offset_bound(step: float, sd: float) -> float:
    """How far the mean of values reported on a `step` grid can sit from the mean of the times
    before rounding, beyond an offset the timer always adds (truncation's half step): at most half
    a step when the times do not scatter, far less when they scatter over several steps, as the
    rounding error then averages out. Rounding as a sawtooth's Fourier series, the times normal
    with standard deviation `sd` (Widrow's quantization theorem): the mean's error is at most
    sum over k of step / (pi k) exp(-2 pi^2 k^2 sd^2 / step^2), capped at step / 2."""
    if not step > 0:
        return 0.0
    if not sd > 0:
        return step / 2
    k = np.arange(1, 51)
    terms = step / (np.pi * k) * np.exp(-2 * np.pi ** 2 * k ** 2 * sd ** 2 / step ** 2)
    return float(min(step / 2, terms.sum()))


def scatter_before_rounding(values, groups, step: float) -> float:
    """The standard deviation of the times within a group (an invocation) before they were rounded
    to `step`: the pooled within-group variance less the rounding's own step^2 / 12 (Sheppard's
    correction), 0 where nothing is left. Values beyond Tukey's far-out fences of their group
    (3 IQR) are left out: a run the machine disturbed by 60 ms says nothing about whether the
    others scatter over a 10 ms grid."""
    v, g = np.asarray(values, dtype=float), np.asarray(groups)
    ok = np.isfinite(v)
    squares, dof = 0.0, 0
    for group in np.unique(g[ok]):
        x = v[ok & (g == group)]
        q1, q3 = np.percentile(x, [25, 75]) if x.size else (0.0, 0.0)
        x = x[(x >= q1 - 3 * (q3 - q1)) & (x <= q3 + 3 * (q3 - q1))]
        if x.size >= 2:
            squares += float(np.sum((x - x.mean()) ** 2))
            dof += x.size - 1
    if dof == 0:
        return 0.0
    return float(np.sqrt(max(0.0, squares / dof - step ** 2 / 12)))


@dataclass(frozen=True)
class Bias:
    """Paired differences timer - reference over the same runs."""

    n: int
    mean_diff: float
    median_diff: float
    ci_low: float        # 95 % t interval of the mean difference
    ci_high: float
    share_below: float   # fraction of runs with timer < reference
    share_above: float
    summary: str
    step: float = float("nan")   # timer resolution used for the verdict

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def bias_against(timer_values, reference_values, step: Optional[float] = None,
                 confidence: float = 0.95) -> Bias:
    """Compare a timer with the reference (cgroup) value of the same run, pairwise; pairs with a
    non-finite member are dropped. `step` is the timer's resolution (timer_resolution() unless
    given). `summary` says which holds first: identical, truncates, ceils, rounds, biased by a mean
    whose CI excludes 0, or unbiased; the thresholds of each rule are in docs/experiments.md,
    "A timer's bias against the cgroup".
    """
    t = np.asarray(timer_values, dtype=float).ravel()
    r = np.asarray(reference_values, dtype=float).ravel()
    if t.shape != r.shape:
        raise ValueError(f"bias_against: {t.size} timer values but {r.size} reference values")
    ok = np.isfinite(t) & np.isfinite(r)
    t, r = t[ok], r[ok]
    n = int(t.size)
    nan = float("nan")
    if step is None:
        step = timer_resolution(t).step
    step = as_float(step)
    if n == 0:
        return Bias(0, nan, nan, nan, nan, nan, nan, "no paired values", step)
    d = t - r
    tol = 1e-9 * np.maximum(np.maximum(np.abs(t), np.abs(r)), 1e-3)
    below = d < -tol
    above = d > tol
    s = summarize(d, confidence)
    share_below, share_above = float(np.mean(below)), float(np.mean(above))

    def share_within(lo, hi):
        return float(np.mean((d >= lo - tol) & (d <= hi + tol)))

    if not (below.any() or above.any()):
        words = "identical to reference"
    elif np.isfinite(step) and share_within(-step, 0) >= 0.99 and share_below >= 0.9:
        words = "truncates (always below by < one step)"
    elif np.isfinite(step) and share_within(0, step) >= 0.99 and share_above >= 0.9:
        words = "ceils (always above by < one step)"
    elif np.isfinite(step) and share_within(-step / 2, step / 2) >= 0.99:
        words = "rounds (within half a step)"
    elif np.isfinite(s.ci_low) and (s.ci_low > 0 or s.ci_high < 0):
        side = "above" if s.mean > 0 else "below"
        words = f"{side} by {abs(s.mean):.3g} s on average"
    else:
        words = "unbiased (CI of the mean difference contains 0)"
    return Bias(n, s.mean, s.median, s.ci_low, s.ci_high, share_below, share_above, words, step)
