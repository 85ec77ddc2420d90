"""
The cheapest design (M invocations a side, n runs each) that lets compare's rerun rule call a
given slowdown "slower" with a given power, after Kalibera & Jones ("Rigorous Benchmarking in
Reasonable Time", ISMM 2013).

n comes from K&J's optimal repetition count, M from statsmodels' TTestIndPower on the rerun means,
and a simulation of compare's actual rule (Welch's df, lognormal levels, the threshold, Holm) raises
M until the power holds (docs/calibration.md, "Planning: `timekit plan`").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.stats

MIN_RUNS = 2            # per invocation: keeps the within-invocation variance measurable
MIN_RERUNS = 2          # per side: compare's rerun rule needs 2
MAX_RERUNS = 1000
SIMULATIONS = 4000      # per check; standard error of a power near 0.9: 0.5 points
SLACK = 0.01            # simulated power may fall this far below the target (its noise)
SEED = 0


@dataclass
class RerunPlan:
    """M invocations a side of n runs each, and what they give: the power and the CI's half-width
    (not an A/B design: those are analysis.ab.designs)."""

    reruns: int                 # M invocations a side
    runs: int                   # n runs per invocation
    power_analytic: float       # statsmodels, t-test at the row's alpha
    power: float                # simulated, compare's rule
    half_width: float           # predicted 95 % CI half-width of the ratio, relative
    seconds: float              # both sides on this machine

    @property
    def minutes(self):
        return self.seconds / 60


def _solver():
    from statsmodels.stats.power import TTestIndPower  # 1-2 s to import: only when planning

    return TTestIndPower()


def cv_of_means(cv_between, cv_within, n):
    return math.sqrt(cv_between ** 2 + cv_within ** 2 / n)


def optimal_runs(cv_between, cv_within, invocation_seconds, run_seconds, cap):
    """Kalibera & Jones's n* (continuous; `cap` when invocations are free of variance or runs free of cost)."""
    if cv_between <= 0 or run_seconds <= 0:
        return float(cap)
    return min(float(cap), math.sqrt(invocation_seconds * cv_within ** 2 / (run_seconds * cv_between ** 2)))


def analytic_reruns(effect, cv, alpha, power):
    """Smallest M with the t-test's power >= `power` (statsmodels); MAX_RERUNS + 1 if none up to it."""
    m = np.arange(MIN_RERUNS, MAX_RERUNS + 1)
    reached = np.flatnonzero(_solver().power(effect_size=effect / cv, nobs1=m, alpha=alpha, ratio=1.0) >= power)
    return int(m[reached[0]]) if reached.size else MAX_RERUNS + 1


def analytic_power(effect, cv, m, alpha):
    return float(_solver().power(effect_size=effect / cv, nobs1=m, alpha=alpha, ratio=1.0))


def simulated_power(cv_between, cv_within, n, m, effect, alpha, threshold, simulations=SIMULATIONS, seed=SEED):
    """Share of simulated pairs of M rerun means a side that compare's rule calls 'slower': lognormal
    rerun levels at CV_between, each rerun's mean of n runs normal at CV_within / sqrt(n), the new
    side (1 + effect) times slower; Welch t at `alpha`, ratio beyond the threshold."""
    rng = np.random.default_rng([seed, m, n])
    sb = math.sqrt(math.log1p(cv_between ** 2))

    def side(scale):
        level = rng.lognormal(-sb * sb / 2, sb, (simulations, m))
        return scale * level * rng.normal(1.0, cv_within / math.sqrt(n), (simulations, m))

    base, new = side(1.0), side(1.0 + effect)
    with np.errstate(all="ignore"):
        p = scipy.stats.ttest_ind(base, new, axis=1, equal_var=False).pvalue
    ratio = new.mean(axis=1) / base.mean(axis=1)
    return float(((p < alpha) & (ratio > 1 + threshold)).mean())


def half_width(cv, m, confidence=0.95):
    """compare's CI of the ratio at M reruns a side: about t(df) x CV x sqrt(2 / M), df = 2M - 2
    (the expanded percentile interval's width, analysis.tools.compare.reruns)."""
    return float(scipy.stats.t.ppf(1 - (1 - confidence) / 2, 2 * m - 2) * cv * math.sqrt(2 / m))


def design_at(row, n, effect, alpha, power, threshold, invocation_seconds, run_seconds):
    """The smallest M at n runs that reaches `power`, checked by simulation; None beyond MAX_RERUNS,
    or when the effect is not beyond the threshold (its ratio lands below 1 + threshold about half
    the time at any M, so no M reaches a power above one half)."""
    if effect <= threshold and power > 0.5:
        return None
    cv = cv_of_means(row.cv_between, row.cv_within, n)
    m = analytic_reruns(effect, cv, alpha, power)
    while m <= MAX_RERUNS:
        simulated = simulated_power(row.cv_between, row.cv_within, n, m, effect, alpha, threshold)
        if simulated >= power - SLACK:
            return RerunPlan(m, n, analytic_power(effect, cv, m, alpha), simulated, half_width(cv, m),
                          2 * m * (invocation_seconds + n * run_seconds))
        m += max(1, m // 10)
    return None


def candidate_runs(row, invocation_seconds, run_seconds):
    """n to price: both integer neighbours of Kalibera & Jones's n*, and the pilot's own n."""
    cap = max(10 * row.runs, 1000)
    best = optimal_runs(row.cv_between, row.cv_within, invocation_seconds, run_seconds, cap)
    return sorted({max(MIN_RUNS, math.floor(best)), max(MIN_RUNS, math.ceil(best)), row.runs}), best


def cheapest(row, effect, alpha, power, threshold, invocation_seconds, run_seconds):
    """(cheapest RerunPlan or None, RerunPlan at the pilot's n or None, K&J's n*)."""
    candidates, best = candidate_runs(row, invocation_seconds, run_seconds)
    designs = {n: design_at(row, n, effect, alpha, power, threshold, invocation_seconds, run_seconds) for n in candidates}
    found = [d for d in designs.values() if d]
    return (min(found, key=lambda d: (d.seconds, d.runs != row.runs)) if found else None), designs[row.runs], best


def detectable(row, budget_seconds, alpha, power, threshold, invocation_seconds, run_seconds):
    """(smallest effect 'slower' with `power` within the budget, its RerunPlan) or (None, None) when the
    budget does not buy MIN_RERUNS a side. The effect: statsmodels' solve_power for d at the M the
    budget buys, then raised in 1 % steps until the simulated rule reaches the power too."""
    options = []
    for n in candidate_runs(row, invocation_seconds, run_seconds)[0]:
        m = int(budget_seconds // (2 * (invocation_seconds + n * run_seconds)))
        if m < MIN_RERUNS:
            continue
        m = min(m, MAX_RERUNS)
        cv = cv_of_means(row.cv_between, row.cv_within, n)
        effect = float(_solver().solve_power(effect_size=None, nobs1=m, alpha=alpha, power=power, ratio=1.0)) * cv
        effect = max(effect, threshold)
        while simulated_power(row.cv_between, row.cv_within, n, m, effect, alpha, threshold) < power - SLACK:
            effect *= 1.01
        simulated = simulated_power(row.cv_between, row.cv_within, n, m, effect, alpha, threshold)
        options.append((effect, RerunPlan(m, n, analytic_power(effect, cv, m, alpha), simulated, half_width(cv, m),
                                       2 * m * (invocation_seconds + n * run_seconds))))
    return min(options, key=lambda o: o[0]) if options else (None, None)
