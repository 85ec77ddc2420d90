"""
The claims' quantities run by run, and their intervals at the unit of replication.

A figure pooled over every run has no interval, and judged as a point it is confirmed or refuted
about half the time at the claim's bound. So each claim takes one value per run and a t interval
(of the logs) over the invocations' means, or over the runs of a single invocation, for that
invocation only (docs/experiments.md, "scheduling-noise").
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from analysis.core import replication
from analysis.core.verdicts import Estimate
from analysis.experiments.scheduling_noise.gaps import SLICE_MS, traced_ms
from analysis.experiments.scheduling_noise.period import dominant_period, pair_lags


@dataclass(frozen=True)
class TraceFigures:
    """What one single-tracer run says about the claims."""

    invocation: str
    period_ms: float  # dominant period of its own gaps (nan when none is found)
    short_mean_us: float  # mean inactive period below SLICE_MS
    lost_short_us_per_ms: float  # time lost in those per ms traced


def trace_figures(trace_runs):
    """TraceFigures of every single-tracer run that has its periods file."""
    figures = []
    for r in trace_runs:
        if r.periods is None:
            continue
        starts, lengths = r.periods.gaps()
        short_us = lengths[lengths < SLICE_MS] * 1e3
        total = traced_ms(r.periods)
        figures.append(TraceFigures(
            invocation=r.invocation, period_ms=dominant_period(pair_lags(starts)).period_ms,
            short_mean_us=float(short_us.mean()) if short_us.size else math.nan,
            lost_short_us_per_ms=float(short_us.sum() / total) if total > 0 else math.nan))
    return figures


def estimate(values, invocations, *, what, scale="ratio", grid=0.0, confidence=0.95):
    """The mean of positive per-run `values` with its t interval over the invocations' means (two or
    more invocations), else over the runs of the one invocation, both of the logs (a period or a
    time stays positive however few and spread the invocations); a single run gives no interval."""
    values, invocations = np.asarray(values, dtype=float), np.asarray(invocations, dtype=object)
    keep = np.isfinite(values) & (values > 0)
    values, invocations = values[keep], invocations[keep]
    if not values.size:
        return None
    names = list(dict.fromkeys(invocations.tolist()))
    if len(names) >= 2:
        means = [float(values[invocations == name].mean()) for name in names]
        n = min(int(np.sum(invocations == name)) for name in names)
        est = replication.over_reruns(means, n=n, confidence=confidence, scale=scale, log=True,
                                      method=f"the invocations' means of each run's {what}")
        return dataclasses.replace(est, grid=grid)
    if values.size >= 2:
        est = replication.over_reruns(values, n=values.size, confidence=confidence, scale=scale, log=True,
                                      method=f"each run's {what}, runs of one invocation")
        return dataclasses.replace(est, unit="runs", m=1, grid=grid)
    return Estimate(float(values[0]), -math.inf, math.inf, unit="runs", n=1, grid=grid, scale=scale,
                    method=f"{what} of one run: no interval")
