"""
How many reruns (or runs) would decide an inconclusive verdict, from the t quantile.

s is recovered from the interval as it was computed (its level and m), and the smallest M is
searched with the quantile of each candidate M, the estimate and s staying where they are; an
interval made on the log scale is sized there (``on_log_scale``). Why not scale today's
half-width by sqrt(m / M): docs/verdicts.md, "Inconclusive is an answer".
"""

from __future__ import annotations

import functools
import math

import scipy.stats

#: the level assumed where an interval does not record its own: the lowest the kit judges at
#: (90 %, equivalence), since a lower level makes t_{M-1} / t_{m-1} larger and so the M named larger
ASSUMED_LEVEL = 0.90


@functools.lru_cache(maxsize=4096)
def _shrink(size, level):
    """t_{size-1, (1+level)/2} / sqrt(size): the half-width per unit of s at this size. Cached: a
    calibration judges thousands of simulated intervals at the same few sizes and levels, and
    scipy's ppf costs 0.1 ms a call."""
    return float(scipy.stats.t.ppf((1 + level) / 2, size - 1)) / math.sqrt(size)


@functools.lru_cache(maxsize=64)
def _normal_quantile(level):
    return float(scipy.stats.norm.ppf((1 + level) / 2))


def smallest_size(half, size, level, room, limit):
    """The smallest M (> size) at which a t interval at `level` with this interval's s has a
    half-width of at most `room`, where `half` is today's half-width over `size` values; None
    when `room` <= 0 or it takes more than `limit`.

    Iterated as M <- ceil((t_{M-1} * s / room)^2) from the normal approximation until it stands
    still, then stepped down while M - 1 also suffices (t_{M-1} / sqrt(M) falls with M)."""
    if not (room > 0 and half > 0 and size >= 2):
        return None
    level = level if 0 < level < 1 else ASSUMED_LEVEL
    s = half / _shrink(size, level)
    target = room / s
    z = _normal_quantile(level)
    m = max(2, math.ceil((z / target) ** 2))
    while m <= limit:
        following = max(2, math.ceil((_shrink(m, level) * math.sqrt(m) / target) ** 2))
        if following <= m:
            break
        m = following
    if m > limit:
        return None
    while m > 2 and _shrink(m - 1, level) <= target:
        m -= 1
    return max(m, size + 1)


def on_log_scale(value, low, high, edges, grid=0.0):
    """(half-width, room) of an interval made on the log scale, in logs: its wider side,
    max(ln(high / value), ln(value / low)), and the log distance from the estimate to the nearest
    edge, each edge moved half a grid step toward the estimate (the verdict widens the interval by
    that much). None where a value is not positive: that interval is sized as it is."""
    if not (value > 0 and low > 0 and high > 0):
        return None
    near = [e + math.copysign(grid / 2, value - e) for e in edges]
    rooms = [abs(math.log(value / e)) for e in near if e > 0]  # an edge at or below 0: no log interval reaches it
    if not rooms:
        return None
    return max(math.log(high / value), math.log(value / low)), min(rooms)


def smallest_f_reruns(theta, bound, m, n, level, limit):
    """The smallest M (> m) of reruns of n runs each at which the F interval of theta (one-way
    ANOVA, analysis.experiments.discipline.variation.rerun_effect: theta / F quantiles of
    (M - 1, M (n - 1)) degrees of freedom) excludes `bound` on theta's side, theta staying where
    it is; None when it takes more than `limit` or theta sits on the bound. The t quantile does
    not apply: this interval is a ratio of variances, whose quantiles narrow far faster with M."""
    if not (theta > 0 and n >= 2 and theta != bound):
        return None
    tail = (1 - (level if 0 < level < 1 else ASSUMED_LEVEL)) / 2

    def decides(reruns):
        dfn, dfd = reruns - 1, reruns * (n - 1)
        if theta > bound:
            return theta / scipy.stats.f.ppf(1 - tail, dfn, dfd) > bound
        return theta / scipy.stats.f.ppf(tail, dfn, dfd) < bound

    high = max(m + 1, 2)
    while not decides(high):
        if high >= limit:
            return None
        high = min(2 * high, limit)
    low = max(m, 1)  # decides(low) is False or low is below the first candidate
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if decides(middle) else (middle, high)
    return high
