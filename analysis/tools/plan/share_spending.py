"""
Alpha spent by the share of the budget used: the levels of `timekit run --until-decided`'s looks.

O'Brien-Fleming-type spending at tau = seconds spent / budget (Lan & DeMets 1989, calendar time),
the final look spending what is left; boundaries for the one-sample t test over per-rerun values,
simulated on one fixed set of sequences so a later report finds the same levels. Why not the
information fraction, and why the error rate holds: docs/calibration.md, "Decide, then stop:
`timekit run --until-decided`".
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.stats

from analysis.tools.plan.sequential import SEED, SIMULATIONS, START, spent

CAP = 40  # the longest sequence simulated (run_looks stops at 30 reruns)
MARK = "repeated interval"  # what a look's note in the evidence says (run_looks.look_function)


@functools.lru_cache(maxsize=2)
def _null_p(simulations=SIMULATIONS, seed=SEED):
    """p[:, M]: two-sided one-sample t p-values of the first M values of standard normal sequences
    (columns 0 and 1 unused), computed at once from cumulative sums."""
    x = np.random.default_rng([seed, CAP]).standard_normal((simulations, CAP))
    m = np.arange(1, CAP + 1)
    mean = np.cumsum(x, axis=1) / m
    with np.errstate(all="ignore"):
        var = (np.cumsum(x * x, axis=1) - m * mean * mean) / (m - 1)
        t = mean / np.sqrt(var / m)
        p = 2 * scipy.stats.t.sf(np.abs(t), np.maximum(m - 1, 1))
    p[:, 0] = 1.0
    return np.hstack([np.ones((simulations, 1)), p])  # index by M


def _clean(looks):
    """((M, share), ...) with M strictly increasing (a later look at the same or a smaller M
    replaces nothing: it is dropped), shares clipped to [0, 1] and never decreasing."""
    out, top = [], 0.0
    for m, share in looks:
        if out and m <= out[-1][0]:
            continue
        top = max(top, min(max(float(share), 0.0), 1.0))
        out.append((int(m), top))
    return tuple(out)


@functools.lru_cache(maxsize=512)
def boundaries(alpha, looks):
    """The nominal p threshold of each look in `looks` ((M, share of the budget), ...; M < START
    spends nothing), so that a first crossing under the null happens with probability
    alpha(share_k) - alpha(share_{k-1}) at look k (see the module's docstring)."""
    looks = _clean(looks)
    if any(m > CAP for m, _ in looks):
        raise ValueError(f"looks beyond M = {CAP} are not simulated")
    p = _null_p()
    simulations = p.shape[0]
    alive = np.ones(simulations, dtype=bool)
    crossed, out = 0, []
    for m, share in looks:
        quota = int(round(spent(share, alpha) * simulations)) - crossed if m >= START else 0
        c = 0.0
        if quota > 0:
            candidates = np.sort(p[alive, m])
            c = float(candidates[min(quota, candidates.size) - 1]) * (1 + 1e-12)
            if quota < candidates.size:  # between the quota-th and the next p: no ties at the edge
                c = float((candidates[quota - 1] + candidates[quota]) / 2)
        now = alive & (p[:, m] < c)
        crossed += int(now.sum())
        alive &= ~now
        out.append(c)
    return tuple(out)


def crossing_rate(alpha, looks):
    """Share of the simulated null sequences that cross a boundary at some look: the alpha the
    looks spend in all (alpha(share of the last look), up to one sequence in SIMULATIONS)."""
    looks = _clean(looks)
    levels = boundaries(alpha, looks)
    p = _null_p()
    crossed = np.zeros(p.shape[0], dtype=bool)
    for (m, _), c in zip(looks, levels):
        crossed |= p[:, m] < c
    return float(crossed.mean())


def look_confidence(confidence, looks):
    """The confidence of the repeated t interval at the last of `looks` for a claim whose overall
    level is `confidence`: 1 - its boundary (1, an unbounded interval, where the look spends
    nothing). One look that is also the final one is the fixed design: `confidence` itself."""
    looks = _clean(looks)
    if len(looks) == 1 and looks[0][1] >= 1:
        return confidence
    return 1 - boundaries(round(1 - confidence, 12), looks)[-1]
