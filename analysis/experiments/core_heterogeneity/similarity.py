"""
Which cores are alike (the paper's Fig. 5): per pair of cores a two-sample Anderson-Darling test
at the paper's level, Holm over all pairs, and the KS distance between their time distributions.
"""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.stats

from analysis.core import stats

ALPHA = 0.01  # the paper's level for "similar" (k-sample Anderson-Darling, k = 2)
AD_RESAMPLES_MAX = 20000


@dataclass
class Similarity:
    """Every pair of cores of one workload: KS distance, Anderson-Darling p, 'similar'."""

    cores: list
    n: list
    ks: np.ndarray  # two-sample KS statistic D, 0 on the diagonal
    ad_statistic: np.ndarray
    p: np.ndarray  # Anderson-Darling p (permutation where scipy's is capped)
    p_adjusted: np.ndarray  # Holm over the k(k-1)/2 pairs
    similar: np.ndarray  # p_adjusted >= alpha (True on the diagonal)
    notes: np.ndarray  # per pair, how p was obtained
    alpha: float
    resamples: int
    correction: str

    def pairs(self):
        for i, j in itertools.combinations(range(len(self.cores)), 2):
            yield i, j

    def as_dict(self):
        return {
            "cores": list(self.cores), "n": list(self.n), "alpha": self.alpha, "correction": self.correction,
            "resamples": self.resamples,
            "pairs": [{"a": self.cores[i], "b": self.cores[j], "ks": float(self.ks[i, j]),
                       "ad_statistic": float(self.ad_statistic[i, j]), "p": float(self.p[i, j]),
                       "p_adjusted": float(self.p_adjusted[i, j]), "similar": bool(self.similar[i, j]),
                       "note": str(self.notes[i, j])} for i, j in self.pairs()],
        }


def ad_resamples(pairs, alpha=ALPHA):
    """Permutation resamples for an Anderson-Darling p that scipy floors at 0.001: enough that the
    smallest Holm threshold alpha/m is 10 resolution steps (1/(R+1)) wide, at least
    stats.AD_RESAMPLES, at most AD_RESAMPLES_MAX (beyond, similarity bounds a floored p by the KS p)."""
    return int(min(max(stats.AD_RESAMPLES, math.ceil(10 * max(pairs, 1) / alpha)), AD_RESAMPLES_MAX))


def similarity(groups, alpha=ALPHA, seed=0):
    """The core similarity matrix (the paper's Fig. 5) of {core: values}.

    Per pair: k-sample Anderson-Darling with a permutation p where scipy's is capped, Holm over all
    pairs, 'similar' when the adjusted p is at least alpha; the two-sample KS statistic says how far
    apart two cores are. From 7 cores on no affordable permutation resolves Holm's thresholds, and a
    floored p becomes min(0.001, KS p), still a valid p-value (docs/experiments.md, "The similarity
    matrix").
    """
    cores = sorted(groups)
    k = len(cores)
    m = k * (k - 1) // 2
    resamples = ad_resamples(m, alpha)
    bounded = math.ceil(10 * max(m, 1) / alpha) > AD_RESAMPLES_MAX  # floored p: KS bound, no permutation
    ks = np.zeros((k, k))
    ad = np.full((k, k), np.nan)
    p = np.full((k, k), np.nan)
    notes = np.full((k, k), "", dtype=object)
    for i, j in itertools.combinations(range(k), 2):
        ks[i, j], ad[i, j], p[i, j], notes[i, j] = _pair(groups[cores[i]], groups[cores[j]], str(cores[i]),
                                                         str(cores[j]), alpha, seed, resamples, bounded, m)
        ks[j, i], ad[j, i], p[j, i], notes[j, i] = ks[i, j], ad[i, j], p[i, j], notes[i, j]
    upper = [(i, j) for i, j in itertools.combinations(range(k), 2)]
    adjusted = np.full((k, k), np.nan)
    if upper:
        holm = stats.holm([p[i, j] for i, j in upper])
        for (i, j), q in zip(upper, holm):
            adjusted[i, j] = adjusted[j, i] = q
    similar = np.eye(k, dtype=bool) | (adjusted >= alpha)
    return Similarity(cores=cores, n=[int(np.isfinite(np.asarray(groups[c], dtype=float)).sum()) for c in cores],
                      ks=ks, ad_statistic=ad, p=p, p_adjusted=adjusted, similar=similar, notes=notes,
                      alpha=alpha, resamples=resamples, correction=f"Holm over the {m} pairs" + (
                          f"; a permutation cannot resolve alpha/m = {alpha / m:.2g}: where scipy's Anderson-Darling p is "
                          f"floored, p = min({stats.AD_P_FLOOR}, two-sample KS p)" if bounded else ""))


def _pair(a, b, name_a, name_b, alpha, seed, resamples, bounded, m):
    """(KS D, AD statistic, AD p, how p was obtained) of one pair of cores."""
    # the many resamples matter only where scipy's p is floored (near the Holm thresholds);
    # a capped p (>= 0.25) is 'similar' at any resolution, so it gets the default count
    scipy_p = _scipy_ad_p(a, b)
    floored, capped = scipy_p <= stats.AD_P_FLOOR, scipy_p >= stats.AD_P_CAP
    # ad_max_pooled=0: a floored pair keeps scipy's statistic and skips the permutation
    found = {r.test: r for r in stats.two_sample_tests(a, b, name_a, name_b, alpha, seed, (stats.KS, stats.ANDERSON),
                                                       ad_resamples=resamples if floored else stats.AD_RESAMPLES,
                                                       ad_max_pooled=0 if bounded else stats.AD_MAX_POOLED)}
    p, note = found[stats.ANDERSON].p, found[stats.ANDERSON].note
    if bounded and capped:
        note = (f"Anderson-Darling p >= {p:.3g} (scipy's tabulated value, capped at 0.25): "
                "similar under any correction, no permutation needed")
    if floored and bounded:
        p = min(stats.AD_P_FLOOR, found[stats.KS].p)
        note = (f"Anderson-Darling p < {stats.AD_P_FLOOR} (scipy's floor); p = min({stats.AD_P_FLOOR}, two-sample KS p "
                f"{found[stats.KS].p:.3g}): no permutation of at most {AD_RESAMPLES_MAX} resamples resolves alpha/m = {alpha / m:.2g}")
    return found[stats.KS].statistic, found[stats.ANDERSON].statistic, p, note


def _scipy_ad_p(a, b):
    """scipy's tabulated k-sample Anderson-Darling p (capped to 0.001-0.25), NaN if not computable."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if x.size < 2 or y.size < 2 or np.unique(np.concatenate([x, y])).size < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(scipy.stats.anderson_ksamp([x, y], variant="midrank").pvalue)
        except TypeError:  # scipy < 1.17 has no `variant`
            return float(scipy.stats.anderson_ksamp([x, y], midrank=True).pvalue)
