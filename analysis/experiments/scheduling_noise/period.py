"""
The distances between gaps and the dominant period of the interruptions.

The dominant period here is the same computation as the tracer's own (`programs/tracer.c`,
`summarize`): the histogram of distances between the starts of all pairs of gaps up to 20 ms
apart in 0.01 ms bins, lags below 0.5 ms left out, three neighbouring bins summed; the highest
peak above the median count, reduced to its fundamental. The tests check that both agree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# the tracer's defaults for the dominant period (tracer.c: min-period-ms, max-period-ms, period-bin-ms)
BIN_MS = 0.01
MIN_MS = 0.5
MAX_MS = 20.0
PARTNER_BINS = 3  # a gap is periodic if another starts one period before or after it, +- 3 bins


def pair_lags(starts_ms, min_ms=MIN_MS, max_ms=MAX_MS):
    """Distances between the starts of all pairs of gaps, min_ms <= lag <= max_ms."""
    s = np.sort(np.asarray(starts_ms, dtype=float))
    parts = []
    for k in range(1, len(s)):
        d = s[k:] - s[:-k]
        if d.min() > max_ms:  # d grows with k element by element: no later k can fall in range
            break
        parts.append(d[(d >= min_ms) & (d <= max_ms)])
    return np.concatenate(parts) if parts else np.empty(0)


def lag_counts(lags, bin_ms=BIN_MS, max_ms=MAX_MS):
    bins = math.ceil(max_ms / bin_ms) + 2
    index = np.floor(np.asarray(lags) / bin_ms).astype(np.int64)
    return np.bincount(index[index < bins], minlength=bins)


@dataclass
class Period:
    period_ms: float  # nan if none
    peak_ms: float  # the highest peak before reducing it to its fundamental
    base: float  # median of the smoothed counts: what random coincidences give
    noise: float  # robust sd of the smoothed counts
    smooth: np.ndarray
    bin_ms: float
    pairs: int

    def excess_near(self, lo_ms, hi_ms):
        """(lag of the highest smoothed count in [lo, hi] ms, its excess over base in noise sd)."""
        lo, hi = int(lo_ms / self.bin_ms), int(hi_ms / self.bin_ms)
        window = self.smooth[lo:hi + 1]
        if not window.size:
            return math.nan, math.nan
        top = lo + int(np.argmax(window))
        z = (self.smooth[top] - self.base) / self.noise if self.noise > 0 else math.nan
        return (top + 0.5) * self.bin_ms, float(z)


def dominant_period(lags, bin_ms=BIN_MS, min_ms=MIN_MS, max_ms=MAX_MS):
    """The tracer's dominant-period rule (see the module docstring) on a set of lags."""
    lags = np.asarray(lags, dtype=float)
    counts = lag_counts(lags, bin_ms, max_ms)
    bins = len(counts)
    smooth = np.zeros(bins, dtype=np.int64)
    smooth[1:-1] = counts[:-2] + counts[1:-1] + counts[2:]
    first, last = math.ceil(min_ms / bin_ms) + 1, bins - 2
    nothing = Period(math.nan, math.nan, math.nan, math.nan, smooth, bin_ms, 0)
    if last <= first:
        return nothing
    ranged = np.sort(smooth[first:last + 1])
    base = float(ranged[len(ranged) // 2])
    mad = float(np.median(np.abs(smooth[first:last + 1] - np.median(smooth[first:last + 1]))))
    nothing.base, nothing.noise = base, 1.4826 * mad
    best = first + int(np.argmax(smooth[first:last + 1]))
    top_excess = smooth[best] - base
    if smooth[best] == 0 or top_excess <= 0:
        return nothing
    chosen = _fundamental(smooth, best, first, last, base, top_excess)
    lo_ms, hi_ms = (chosen - 1) * bin_ms, (chosen + 2) * bin_ms
    in_bins = lags[(lags >= lo_ms) & (lags < hi_ms) & (lags >= min_ms)]
    if not in_bins.size:
        return nothing
    return Period(float(in_bins.mean()), (best + 0.5) * bin_ms, base, 1.4826 * mad, smooth, bin_ms, int(in_bins.size))


def _fundamental(smooth, best, first, last, base, top_excess):
    """The bin of the highest peak's fundamental: the peak near best/k for the largest k where each
    m x best/k (m = 1..k) has a peak at least half the highest one's excess over base; else best."""
    for k in range(best // first, 1, -1):
        supported, first_top = True, 0
        for m in range(1, k + 1):
            centre = math.floor(best * m / k + 0.5)
            lo = centre - 2 if centre > first + 2 else first
            hi = min(centre + 2, last)
            top = lo + int(np.argmax(smooth[lo:hi + 1])) if hi >= lo else 0
            if not top or 2 * (smooth[top] - base) < top_excess:
                supported = False
                break
            if m == 1:
                first_top = top
        if supported:
            return first_top
    return best


def periodic_mask(starts_ms, period_ms, tolerance_ms=PARTNER_BINS * BIN_MS):
    """Gaps in a train of that period: other gaps start one period before and after, or one and
    two periods after, or one and two before (+- tolerance), so the ends of a train count too.
    A random gap has two such partners by chance only where gaps are dense."""
    s = np.asarray(starts_ms, dtype=float)
    if len(s) < 2 or not np.isfinite(period_ms):
        return np.zeros(len(s), dtype=bool)
    order = np.sort(s)
    has = {}
    for k in (-2, -1, 1, 2):
        target = s + k * period_ms
        i = np.clip(np.searchsorted(order, target), 1, len(order) - 1)
        has[k] = np.minimum(np.abs(order[i] - target), np.abs(order[i - 1] - target)) <= tolerance_ms
    return (has[-1] & has[1]) | (has[1] & has[2]) | (has[-2] & has[-1])
