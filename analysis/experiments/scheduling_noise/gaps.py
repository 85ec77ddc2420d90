"""
The gaps of all single-tracer runs pooled: their dominant period against the tick, which gaps
belong to the periodic train, and how much time a process alone on a CPU loses per ms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from analysis.experiments.scheduling_noise.period import Period, dominant_period, pair_lags, periodic_mask

# a gap this long is another task's (or the host's) turn on the CPU, not an interrupt being handled
SLICE_MS = 1.0


def finite_median(values):
    """Median of the finite values, nan when there are none."""
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    return float(np.median(values)) if values.size else math.nan


@dataclass
class Gaps:
    period: Period  # of the pooled distances between gaps
    near_1ms: float  # lag (ms) of the highest count near 1 ms, and its z
    z_1ms: float
    near_tick: float  # the same near the kernel's tick
    z_tick: float
    all_us: np.ndarray  # lengths of every gap (µs)
    short_us: np.ndarray  # the gaps below SLICE_MS
    periodic_us: np.ndarray  # gaps in the periodic train
    other_us: np.ndarray  # the rest
    total_ms: float  # time traced
    lost_us_per_ms: float  # inactive time per ms traced
    lost_short_us_per_ms: float  # the same in gaps below SLICE_MS

    @property
    def periodic_median_us(self):
        return float(np.median(self.periodic_us)) if self.periodic_us.size else math.nan


def traced_ms(periods):
    """How long a run traced (ms): from its first period's start to its last period's end."""
    return periods.start_ms[-1] + periods.duration_ms[-1] - periods.start_ms[0]


def _concat_us(lengths_ms):
    return np.concatenate(lengths_ms) * 1e3 if lengths_ms else np.empty(0)


def pooled(trace_runs, tick_ms):
    """Gaps of the single-tracer runs that have their periods file, pooled."""
    pooled_lags = [pair_lags(r.periods.gaps()[0]) for r in trace_runs if r.periods is not None]
    period = dominant_period(np.concatenate(pooled_lags) if pooled_lags else np.empty(0))
    near_1ms, z_1ms = period.excess_near(0.95, 1.10) if np.isfinite(period.base) else (math.nan, math.nan)
    near_tick, z_tick = period.excess_near(tick_ms * 0.97, tick_ms * 1.03) if np.isfinite(tick_ms) and np.isfinite(period.base) \
        else (math.nan, math.nan)

    gap_lengths, periodic_lengths, other_lengths = [], [], []
    total_inactive = total_time = 0.0
    for r in trace_runs:
        if r.periods is None:
            continue
        starts, lengths = r.periods.gaps()
        gap_lengths.append(lengths)
        total_inactive += lengths.sum()
        total_time += traced_ms(r.periods)
        if np.isfinite(period.period_ms):
            mask = periodic_mask(starts, period.period_ms)
            periodic_lengths.append(lengths[mask])
            other_lengths.append(lengths[~mask])
    all_us = _concat_us(gap_lengths)
    short_us = all_us[all_us < SLICE_MS * 1e3]
    return Gaps(period=period, near_1ms=near_1ms, z_1ms=z_1ms, near_tick=near_tick, z_tick=z_tick, all_us=all_us,
                short_us=short_us, periodic_us=_concat_us(periodic_lengths), other_us=_concat_us(other_lengths),
                total_ms=total_time,
                lost_us_per_ms=total_inactive / total_time * 1e3 if total_time else math.nan,
                lost_short_us_per_ms=short_us.sum() / 1e3 / total_time * 1e3 if total_time else math.nan)
