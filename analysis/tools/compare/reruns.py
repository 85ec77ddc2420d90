"""
Rerun-level statistics: when each side of a comparison holds several benchexec invocations
(reruns) of one run definition and input, the rerun is the unit.

Runs of one invocation share the machine's state, so their spread says nothing of how far the
mean moves to the next invocation. After Kalibera & Jones (ISMM 2013): Welch's t on the rerun
means, a two-stage bootstrap CI (expanded percentiles), and the variance components of a one-way
random-effects ANOVA (docs/calibration.md, "Between invocations: the rerun as the unit").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from analysis.core.deferred import scipy_stats

RESAMPLES = 2000
EXACT_DRAWS = 50_000_000     # inner-stage draws per side up to which runs are really resampled
CHUNK = 4_000_000            # run indices drawn at once (memory bound: 32 MB)
SEED = 0


@dataclass(frozen=True)
class Components:
    """Variance components of runs nested in reruns (one-way random effects, pooled over sides)."""

    within: float          # variance of runs around their rerun's mean (MSW)
    between: float         # variance of the rerun levels, ANOVA estimate clipped at 0
    between_share: float   # between / (between + within); nan when both are 0
    cv_within: float       # sqrt(within) / grand mean
    cv_between: float      # sqrt(between) / grand mean
    f_p: float             # F test that the rerun levels differ (MSB / MSW); nan without within df

    @property
    def within_share(self):
        return 1 - self.between_share


@dataclass(frozen=True)
class RerunComparison:
    mean_base: float       # mean of the base's rerun means
    mean_new: float
    ratio: float           # mean_new / mean_base
    ci_low: float
    ci_high: float
    welch_p: float         # Welch t on the rerun means
    mannwhitney_p: float   # Mann-Whitney U on the rerun means
    components: Components
    method: str            # how the CI was drawn


def _sums(reruns):
    """(SS within, SS between, N, M, sum of n_j^2) of one side."""
    n = np.array([r.size for r in reruns], dtype=float)
    means = np.array([r.mean() for r in reruns])
    grand = float(np.sum(n * means) / n.sum())
    ss_within = float(sum(np.sum((r - m) ** 2) for r, m in zip(reruns, means)))
    ss_between = float(np.sum(n * (means - grand) ** 2))
    return ss_within, ss_between, n.sum(), n.size, float(np.sum(n * n))


def variance_components(*sides):
    """Components of one or more sides, each a list of per-rerun arrays (2+ reruns each)."""
    sums = [_sums(reruns) for reruns in sides]
    df_within = sum(s[2] - s[3] for s in sums)
    df_between = sum(s[3] - 1 for s in sums)
    ms_within = sum(s[0] for s in sums) / df_within if df_within else math.nan
    ms_between = sum(s[1] for s in sums) / df_between
    n0 = sum(s[2] - s[4] / s[2] for s in sums) / df_between   # mean runs per rerun (unbalanced: ANOVA's n0)
    between = max(0.0, (ms_between - ms_within) / n0) if df_within else ms_between
    within = ms_within if df_within else 0.0
    total = between + within
    grand = float(np.mean([np.mean([r.mean() for r in reruns]) for reruns in sides]))
    f_p = float(scipy_stats.f.sf(ms_between / ms_within, df_between, df_within)) if df_within and ms_within > 0 else math.nan
    return Components(within, between, between / total if total > 0 else math.nan,
                      math.sqrt(within) / grand, math.sqrt(between) / grand, f_p)


def _resampled_means(runs, count, rng):
    """`count` bootstrap means of `runs` (each a mean of runs.size draws with replacement)."""
    out = np.empty(count)
    rows = max(1, CHUNK // runs.size)
    for start in range(0, count, rows):
        stop = min(count, start + rows)
        picks = rng.integers(0, runs.size, (stop - start, runs.size))   # int64: np.take needs no copy
        out[start:stop] = np.take(runs, picks).mean(axis=1)
    return out


def two_stage_means(reruns, resamples, rng, exact=True):
    """Bootstrap distribution (`resamples` values) of the mean of rerun means: reruns drawn with
    replacement, then runs within each drawn rerun (or its normal limit when not `exact`)."""
    m = len(reruns)
    picks = rng.integers(0, m, (resamples, m))
    levels = np.empty((resamples, m))
    for j, runs in enumerate(reruns):
        slots = picks == j
        count = int(slots.sum())
        if not count:
            continue
        if exact:
            levels[slots] = _resampled_means(runs, count, rng)
        else:
            levels[slots] = rng.normal(runs.mean(), runs.std() / math.sqrt(runs.size), count)
    return levels.mean(axis=1)


def ratio_ci(base, new, df, confidence=0.95, resamples=RESAMPLES, seed=SEED, exact_draws=EXACT_DRAWS):
    """(low, high, method) of mean(new rerun means) / mean(base rerun means): two-stage bootstrap,
    expanded percentile interval for min(M) reruns and Welch's df (plain percentile if df is nan)."""
    rng = np.random.default_rng([seed, 12])
    exact = resamples * max(sum(r.size for r in base), sum(r.size for r in new)) <= exact_draws
    ratios = two_stage_means(new, resamples, rng, exact) / two_stage_means(base, resamples, rng, exact)
    m = min(len(base), len(new))
    alpha = 1 - confidence
    if math.isfinite(df) and df > 0:
        alpha = 2 * float(scipy_stats.norm.sf(math.sqrt(m / (m - 1)) * scipy_stats.t.ppf(1 - alpha / 2, df)))
    low, high = np.percentile(ratios, [50 * alpha, 100 - 50 * alpha])
    inner = "runs resampled within each" if exact else "each drawn rerun's mean from its normal limit N(mean, var/n)"
    return float(low), float(high), (f"two-stage bootstrap, {resamples} resamples: reruns resampled, {inner}; "
                                     f"expanded percentile interval (percentiles at {100 * alpha:.2g} %)")


def compare_reruns(base, new, confidence=0.95, resamples=RESAMPLES, seed=SEED, exact_draws=EXACT_DRAWS):
    """Rerun-level comparison of two sides, each a list of per-rerun arrays of finished values
    (2+ reruns per side, 1+ runs per rerun)."""
    base = [np.asarray(r, dtype=float) for r in base]
    new = [np.asarray(r, dtype=float) for r in new]
    means_a = np.array([r.mean() for r in base])
    means_b = np.array([r.mean() for r in new])
    with np.errstate(all="ignore"):
        welch = scipy_stats.ttest_ind(means_a, means_b, equal_var=False)
    mwu = scipy_stats.mannwhitneyu(means_a, means_b, alternative="two-sided").pvalue
    low, high, method = ratio_ci(base, new, float(welch.df), confidence, resamples, seed, exact_draws)
    mean_a, mean_b = float(means_a.mean()), float(means_b.mean())
    return RerunComparison(mean_a, mean_b, mean_b / mean_a, low, high, float(welch.pvalue), float(mwu),
                           variance_components(base, new), method)
