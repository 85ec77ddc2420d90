"""
Estimates at the unit of replication (docs/verdicts.md), ready for analysis.core.verdicts.

Runs of one benchexec invocation share its state of the machine, so wherever a condition has two
or more reruns (invocations), the interval is a t interval over per-rerun values, and only with
one invocation a bootstrap over its runs. Conditions measured in the same rerun are paired by it:
the rerun is a block, and its drift cancels in their ratio.
"""

from __future__ import annotations

import contextvars
import dataclasses
import math

import numpy as np
import scipy.stats

from analysis.core import stats
from analysis.core.verdicts import Estimate, RepeatedEstimate

#: Set while a sweep decides its claims look by look (`timekit run --until-decided`): a function
#: (confidence, M) -> (the confidence of this look's repeated interval, a note for the evidence),
#: so that t intervals over reruns keep their level although they are looked at after every
#: invocation (analysis.tools.plan.run_looks). None: one look, the fixed design.
SEQUENTIAL_LOOK = contextvars.ContextVar("sequential_look", default=None)


def over_reruns(values, *, n, confidence=0.95, method="", log=False, scale="ratio"):
    """A t interval (at `confidence`) over per-rerun values; `log`: over their logarithms, so the
    estimate is the geometric mean (for ratios of spreads, which are skewed)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & ((v > 0) if log else True)]
    m = int(v.size)
    if m < 2:
        return None
    x = np.log(v) if log else v
    mean, sem = float(np.mean(x)), float(scipy.stats.sem(x))
    look = SEQUENTIAL_LOOK.get()
    nominal, note = (confidence, "") if look is None else look(confidence, m)
    low, high = _t_interval(mean, sem, m, nominal, log)
    what = "geometric mean, t interval of the logs" if log else "t interval"
    value = math.exp(mean) if log else mean
    common = {"unit": "reruns", "n": int(n), "m": m, "scale": scale, "interval": "log t" if log else "t",
              "method": f"{what} ({100 * confidence:.3g} %{note}) over {method}"}
    if look is None:
        return Estimate(value, float(low), float(high), level=nominal, **common)
    # a repeated interval: what would decide it is sized on the claim's own level (Estimate.sizing)
    fixed_low, fixed_high = _t_interval(mean, sem, m, confidence, log)
    return RepeatedEstimate(value, float(low), float(high), level=nominal, fixed_level=confidence,
                            fixed=(fixed_low / value, fixed_high / value) if value else (), **common)


def _t_interval(mean, sem, m, confidence, log):
    """The t interval at `confidence` (unbounded at 1), back on the values' scale when `log`."""
    if confidence >= 1:
        low, high = -math.inf, math.inf
    elif sem > 0:
        low, high = scipy.stats.t.interval(confidence, m - 1, loc=mean, scale=sem)
    else:
        low = high = mean
    return (math.exp(low), math.exp(high)) if log else (float(low), float(high))


def paired_reruns(reruns_a, reruns_b, min_runs=2):
    """Reruns in which both conditions have at least `min_runs` runs, in order."""
    a, b = np.asarray(reruns_a), np.asarray(reruns_b)
    return [r for r in sorted(set(a.tolist()) & set(b.tolist()))
            if np.sum(a == r) >= min_runs and np.sum(b == r) >= min_runs]


def ratio_of_means(base, other, reruns_base, reruns_other, *, confidence=0.95, what="mean B / mean A"):
    """mean(other) / mean(base) as an Estimate: over the per-rerun ratios where both conditions
    share two or more reruns (their geometric mean with a t interval of the logs: a ratio stays
    positive however few and noisy the reruns), else over the pooled runs (bootstrap)."""
    base, other = np.asarray(base, dtype=float), np.asarray(other, dtype=float)
    reruns_base, reruns_other = np.asarray(reruns_base), np.asarray(reruns_other)
    shared = paired_reruns(reruns_base, reruns_other)
    if len(shared) >= 2:
        ratios = [np.mean(other[reruns_other == r]) / np.mean(base[reruns_base == r]) for r in shared]
        n = min(min(np.sum(reruns_base == r), np.sum(reruns_other == r)) for r in shared)
        return over_reruns(ratios, n=n, confidence=confidence, log=True, method=f"the per-rerun ratios {what}")
    r = stats.ratio_of_means(base, other, confidence=confidence)
    return Estimate(r.ratio, r.ci_low, r.ci_high, unit="runs", n=int(min(base.size, other.size)),
                    m=max(len(set(reruns_base.tolist())), 1), scale="ratio", level=confidence,
                    method=f"{what}, {r.method}, {100 * confidence:.3g} %")


def paired_ratio(base, other, reruns, *, confidence=0.95, what="B / A of the same runs"):
    """mean(other) / mean(base) of two values of the same runs (a clock against the cgroup): over
    the per-rerun ratios of means where there are two or more reruns, else a t interval over the
    per-run ratios of the one invocation."""
    base, other, reruns = np.asarray(base, dtype=float), np.asarray(other, dtype=float), np.asarray(reruns)
    keep = np.isfinite(base) & np.isfinite(other) & (base != 0)
    base, other, reruns = base[keep], other[keep], reruns[keep]
    shared = [r for r in sorted(set(reruns.tolist())) if np.sum(reruns == r) >= 2]
    if len(shared) >= 2:
        ratios = [np.mean(other[reruns == r]) / np.mean(base[reruns == r]) for r in shared]
        return over_reruns(ratios, n=min(np.sum(reruns == r) for r in shared), confidence=confidence, log=True,
                           method=f"the per-rerun ratios of means {what}")
    if base.size < 2:
        return None
    per_run = over_reruns(other / base, n=base.size, confidence=confidence, method=f"the per-run ratios {what}")
    return dataclasses.replace(per_run, unit="runs", n=int(base.size), m=1)


def share(k, total, confidence=0.95):
    """k of total as a share with its Clopper-Pearson (exact binomial) interval: (share, low, high)."""
    if total == 0:
        return float("nan"), 0.0, 1.0
    ci = scipy.stats.binomtest(int(k), int(total)).proportion_ci(confidence_level=confidence, method="exact")
    return k / total, float(ci.low), float(ci.high)
