"""
The os-microbench medians as estimates for the verdict policy (analysis.core.verdicts).

A median's interval rests on what there is: the invocations' medians (unit reruns), else the runs'
medians of one invocation (unit runs), else the order-statistic interval of the one run's samples,
read off its p10 and p90. ``grid_of`` finds the timer's grid and ``printing_step`` the grid osbench
printed on, so that no claim is judged more finely than either allows (docs/experiments.md,
"Estimates of a median").
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.stats

from analysis.core import replication
from analysis.core.verdicts import Estimate

VISIBLE = 0.01  # a grid is visible when its step is at least 1 % of the median
ON_STEP = 0.02  # ... and every reported quantile lies within 2 % of a step from a multiple of it


def grid_of(v):
    """The step of the grid the runs' reported quantiles lie on, 0 when none is visible (quantiles
    combined over runs are not used: the median of 10 and 20 ns is 15 ns, off the grid)."""
    runs = v.get("run_quantiles") or [[v.get("min"), v.get("p10"), v.get("median"), v.get("p90")]]
    values = sorted({x for quantiles in runs for x in quantiles if x is not None and math.isfinite(x) and x > 0})
    if len(values) < 2:
        return 0.0
    step = min(b - a for a, b in zip(values, values[1:]))
    if step < VISIBLE * v["median"]:
        return 0.0
    on = all(abs(x / step - round(x / step)) <= ON_STEP for x in values)
    return float(step) if on else 0.0


def printing_step(v):
    """The step of the decimal grid the variant's values were printed on (0.0001 for 0.2712), 0
    when none of up to 9 decimals holds them."""
    values = [x for x in [v.get("median"), v.get("p10"), v.get("p90"), *v.get("run_medians", [])]
              if x is not None and math.isfinite(x)]
    for decimals in range(10):
        if all(abs(round(x, decimals) - x) <= 1e-9 * max(1.0, abs(x)) for x in values):
            return 10.0 ** -decimals if values else 0.0
    return 0.0


def median(v, confidence=0.95, scale="ns"):
    """A variant's median (values as samples.collect gives them) as an Estimate with its grid (the
    timer's where visible, else the printing one)."""
    grid = grid_of(v) or printing_step(v)
    medians, files = v.get("run_medians", [v["median"]]), v.get("invocations", [])
    by_invocation = {}
    for m, f in zip(medians, files):
        by_invocation.setdefault(f, []).append(m)
    # times are positive and spread multiplicatively: intervals over runs are geometric (t of the logs)
    if len(by_invocation) >= 2:
        est = replication.over_reruns([float(np.median(x)) for x in by_invocation.values()], scale=scale, log=True,
                                      n=min(len(x) for x in by_invocation.values()), confidence=confidence,
                                      method="the invocations' medians")
        return dataclasses.replace(est, grid=grid)
    if len(medians) >= 2:
        est = replication.over_reruns(medians, n=len(medians), confidence=confidence, scale=scale, log=True,
                                      method="the runs' medians of one invocation")
        return dataclasses.replace(est, unit="runs", m=1, grid=grid)
    n, mid = int(v["n"]), v["median"]
    # the sample median's rank lies within z sqrt(n)/2 of n/2: that far, as a share of the 40 % of
    # ranks between the median and p10 (or p90), toward each of them
    reach = min(1.0, scipy.stats.norm.ppf(0.5 + confidence / 2) * 0.5 / math.sqrt(max(n, 1)) / 0.4)
    low, high = mid - (mid - v["p10"]) * reach, mid + (v["p90"] - mid) * reach
    return Estimate(mid, low, high, unit="samples", n=n, grid=grid, scale=scale,
                    method=f"order-statistic interval of the median ({100 * confidence:.3g} %), read off the run's "
                           "p10 and p90")


def scaled(est, factor, scale):
    """The estimate times `factor` (ns to cycles, say), its grid too."""
    return dataclasses.replace(est, value=est.value * factor, low=est.low * factor, high=est.high * factor,
                               grid=est.grid * factor, scale=scale)


def _bounds(est):
    return est.widened()


def ratio(a, b, confidence=0.95, what="a / b"):
    """median a / median b of two variants: the interval from each median's 1 - alpha/2 interval
    (Bonferroni over the two), widened by their grids. Of two log-t intervals it is one on the log
    scale too, its half-width there the sum of theirs, which narrows with M as a t interval at
    1 - alpha/2 does: what would decide it is sized so (Estimate.interval, sizing_level)."""
    each = 1 - (1 - confidence) / 2
    ea, eb = median(a, each), median(b, each)
    (la, ha), (lb, hb) = _bounds(ea), _bounds(eb)
    logs = ea.interval == eb.interval == "log t" and ea.unit == eb.unit
    return Estimate(ea.value / eb.value, la / hb, ha / lb if lb > 0 else math.inf, unit=_unit(ea, eb),
                    n=min(ea.n, eb.n), m=min(ea.m, eb.m), scale="ratio",
                    interval="log t" if logs else "t", sizing_level=each if logs else 0.0,
                    method=f"{what}, ratio of medians from their {100 * each:.3g} % intervals")


def difference(a, b, confidence=0.95, what="a - b", factor=1.0, scale="ns"):
    """median a - median b (times `factor`), from each median's 1 - alpha/2 interval."""
    each = 1 - (1 - confidence) / 2
    ea, eb = median(a, each), median(b, each)
    (la, ha), (lb, hb) = _bounds(ea), _bounds(eb)
    return Estimate((ea.value - eb.value) * factor, (la - hb) * factor, (ha - lb) * factor, unit=_unit(ea, eb),
                    n=min(ea.n, eb.n), m=min(ea.m, eb.m), scale=scale,
                    method=f"{what}, difference of medians from their {100 * each:.3g} % intervals")


def _unit(a, b):
    """The weaker of two units: samples < runs < reruns."""
    order = ("samples", "runs", "reruns")
    return min(a.unit, b.unit, key=order.index)
