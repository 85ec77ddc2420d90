"""Statistics for timing samples: summaries, distribution tests between samples, ratios.

The tests come from scipy and Holm from statsmodels; written here is only the delta-method
interval for a ratio of means. Every result carries its test, alpha, sizes, raw and adjusted p and
how p was obtained, so a report can print it verbatim; costs are bounded so that 100,000-value
samples take well under a second (docs/architecture.md, "Statistics").
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import math
import warnings
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence

import numpy as np
from analysis.core.deferred import scipy_stats

__all__ = [
    "Summary", "summarize",
    "TestResult", "holm", "adjust", "two_sample_tests", "pairwise_tests", "ALL_TESTS",
    "Ratio", "ratio_of_means",
]

WELCH = "Welch t"
MANN_WHITNEY = "Mann-Whitney U"
KS = "two-sample KS"
ANDERSON = "k-sample Anderson-Darling"
ALL_TESTS = (WELCH, MANN_WHITNEY, KS, ANDERSON)

AD_RESAMPLES = 1000        # permutation resamples for Anderson-Darling when scipy's p is capped
AD_MAX_POOLED = 5000       # larger pooled samples are subsampled (seeded) for that permutation
AD_P_FLOOR, AD_P_CAP = 0.001, 0.25   # scipy's interpolation range for the asymptotic p
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_MAX_N = 5000     # BCa needs a jackknife (O(n^2)); beyond this the delta method is used


def finite_values(x) -> np.ndarray:
    """1-D float array of the finite values of x."""
    a = np.asarray(x, dtype=float).ravel()
    return a[np.isfinite(a)]


def as_float(v) -> float:
    """Plain Python float (JSON-friendly), NaN for None."""
    return float("nan") if v is None else float(v)


# --------------------------------------------------------------------------------------------
# Summary

@dataclass(frozen=True)
class Summary:
    """Descriptive statistics of one sample (NaN values ignored)."""

    n: int
    mean: float
    sd: float            # ddof=1
    cv: float            # sd / mean, as a fraction
    median: float
    mad: float           # scipy_stats.median_abs_deviation, unscaled
    min: float
    max: float
    ci_low: float        # confidence interval of the mean, Student t
    ci_high: float
    confidence: float = 0.95

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def summarize(x, confidence: float = 0.95) -> Summary:
    """Summary of the finite values of x; n=0 gives all NaN, n=1 gives NaN sd/cv/CI."""
    a = finite_values(x)
    n = int(a.size)
    nan = float("nan")
    if n == 0:
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan, nan, confidence)
    mean = float(np.mean(a))
    median = float(np.median(a))
    mad = float(scipy_stats.median_abs_deviation(a, scale=1.0))
    lo, hi = float(np.min(a)), float(np.max(a))
    if lo == hi:
        mean = median = lo
    if n == 1:
        return Summary(1, mean, nan, nan, median, mad, lo, hi, nan, nan, confidence)
    # identical values (a timer's 10 ms step) have no spread, not float round-off noise
    sd = 0.0 if lo == hi else float(np.std(a, ddof=1))
    cv = sd / mean if mean != 0 else nan
    half = float(scipy_stats.t.ppf(0.5 + confidence / 2, n - 1)) * sd / math.sqrt(n)
    return Summary(n, mean, sd, cv, median, mad, lo, hi, mean - half, mean + half, confidence)


# --------------------------------------------------------------------------------------------
# Tests and multiple-comparison correction

@dataclass(frozen=True)
class TestResult:
    """One two-sample test: which test, on what, with which alpha, n and p."""

    __test__ = False  # not a pytest test class

    test: str
    label_a: str
    label_b: str
    n_a: int
    n_b: int
    statistic: float
    p: float
    p_adjusted: float    # after Holm over the family it was corrected in; = p until corrected
    alpha: float
    significant: bool    # p_adjusted < alpha (False when p is NaN)
    note: str = ""

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values (statsmodels' ``multipletests``, method "holm";
    monotone, capped at 1) over the last axis: a 1-D array is one family, each row of a 2-D array
    (splits x hypotheses) one. NaN entries stay NaN and do not count in their family's size."""
    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        return np.full(p.shape, np.nan)
    families = p.reshape(-1, p.shape[-1] if p.ndim else 1)
    out = np.full(families.shape, np.nan)
    if families.shape[1] == 1:  # a family of one is its own p: no call per row
        out[:] = families
        return out.reshape(p.shape)
    # one call per distinct family (a calibration's splits of a few invocations repeat); NaN as -1, which no p is
    distinct, first, back = np.unique(np.nan_to_num(families, nan=-1.0), axis=0, return_index=True, return_inverse=True)
    adjusted = np.full(distinct.shape, np.nan)
    for k, row in enumerate(first):
        valid = ~np.isnan(families[row])
        if valid.any():
            adjusted[k, valid] = _multipletests_holm(families[row, valid])
    out[:] = adjusted[back.reshape(-1)]
    return out.reshape(p.shape)


def _multipletests_holm(p):
    """statsmodels' Holm of one family without NaN. Its Holm branch calls gc.collect() on every call
    (still in statsmodels 0.15; its pull request 8671 proposed dropping it): some 30 ms in a process
    of the kit's size, minutes over a calibration's splits. With the process's objects frozen
    (gc.freeze) the collection sees only the call's own: 15 us a call."""
    from statsmodels.stats.multitest import multipletests

    if gc.get_freeze_count():  # someone else froze objects: leave their freeze alone
        return multipletests(p, method="holm")[1]
    gc.freeze()
    try:
        return multipletests(p, method="holm")[1]
    finally:
        gc.unfreeze()


def adjust(results: Sequence[TestResult]) -> List[TestResult]:
    """Holm over `results` as one family; new objects with p_adjusted and significant set."""
    adj = holm([r.p for r in results])
    return [dataclasses.replace(r, p_adjusted=float(q), significant=bool(q < r.alpha))
            for r, q in zip(results, adj)]


def _result(test, la, lb, na, nb, stat, p, alpha, note="") -> TestResult:
    p = as_float(p)
    return TestResult(test, str(la), str(lb), int(na), int(nb), as_float(stat), p, p, float(alpha),
                      bool(p < alpha), note)


def _anderson(a, b, seed: int, resamples: int, max_pooled: int):
    """k-sample Anderson-Darling (midrank) with a permutation p where scipy's p is capped."""
    def ad(samples, method=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the "p-value capped/floored" UserWarning
            try:
                return scipy_stats.anderson_ksamp(samples, variant="midrank", method=method)
            except TypeError:  # scipy < 1.17 has no `variant`
                return scipy_stats.anderson_ksamp(samples, midrank=True, method=method)

    res = ad([a, b])
    stat, p = float(res.statistic), float(res.pvalue)
    if not (np.isfinite(stat) and np.isfinite(p)):
        return stat, float("nan"), "not computed: scipy returned no finite statistic"
    floored, capped = p <= AD_P_FLOOR, p >= AD_P_CAP
    if not (floored or capped):
        return stat, p, "Anderson-Darling p interpolated from scipy's table (midrank variant)"
    pooled = a.size + b.size
    if pooled > max_pooled and floored:
        # A subsample would only lose power; the large-sample asymptotics behind scipy's value are
        # sound, the floor is a table limit. Report the floor as an upper bound.
        return stat, AD_P_FLOOR, (
            f"Anderson-Darling p < {AD_P_FLOOR} (scipy's floor, reported as an upper bound; "
            f"no permutation for n={pooled} > {max_pooled})")
    sub_note = ""
    sa, sb = a, b
    if pooled > max_pooled:
        rng = np.random.default_rng(seed)
        ka = max(2, int(round(max_pooled * a.size / pooled)))
        kb = max(2, max_pooled - ka)
        sa = rng.choice(a, size=min(ka, a.size), replace=False)
        sb = rng.choice(b, size=min(kb, b.size), replace=False)
        sub_note = (f" on a seeded random subsample of {sa.size}+{sb.size} values "
                    f"(n={pooled} > {max_pooled}); statistic from all values")
    perm = ad([sa, sb], scipy_stats.PermutationMethod(n_resamples=resamples, random_state=seed))
    why = "floored at 0.001" if floored else "capped at 0.25"
    return stat, float(perm.pvalue), (
        f"Anderson-Darling p from permutation ({resamples} resamples){sub_note}; "
        f"scipy's asymptotic p was {why}")


def two_sample_tests(a, b, label_a: str = "a", label_b: str = "b", alpha: float = 0.05,
                     seed: int = 0, tests: Iterable[str] = ALL_TESTS, *,
                     ad_resamples: int = AD_RESAMPLES,
                     ad_max_pooled: int = AD_MAX_POOLED) -> List[TestResult]:
    """Two-sided two-sample tests of a against b (NaN dropped), uncorrected (p_adjusted = p).

    `tests` selects among ALL_TESTS (Welch t, Mann-Whitney U, two-sample KS, k-sample
    Anderson-Darling), in that order.
    """
    x, y = finite_values(a), finite_values(b)
    na, nb = x.size, y.size
    wanted = list(tests)
    unknown = [t for t in wanted if t not in ALL_TESTS]
    if unknown:
        raise ValueError(f"unknown test(s) {unknown}; known: {list(ALL_TESTS)}")
    out = []
    for test in ALL_TESTS:
        if test not in wanted:
            continue
        args = (test, label_a, label_b, na, nb)
        need = 2 if test in (WELCH, ANDERSON) else 1
        if na < need or nb < need:
            out.append(_result(*args, np.nan, np.nan, alpha,
                               f"not computed: needs at least {need} value(s) per sample"))
            continue
        if test == WELCH:
            if np.ptp(x) == 0 and np.ptp(y) == 0:
                note = "not computed: both samples are constant (zero variance)"
                out.append(_result(*args, np.nan, np.nan, alpha, note))
                continue
            r = scipy_stats.ttest_ind(x, y, equal_var=False)
            out.append(_result(*args, r.statistic, r.pvalue, alpha, "two-sided, unequal variances"))
        elif test == MANN_WHITNEY:
            r = scipy_stats.mannwhitneyu(x, y, alternative="two-sided")
            out.append(_result(*args, r.statistic, r.pvalue, alpha, "two-sided, U of sample a"))
        elif test == KS:
            r = scipy_stats.ks_2samp(x, y)
            out.append(_result(*args, r.statistic, r.pvalue, alpha, "two-sided"))
        else:
            if np.unique(np.concatenate([x, y])).size < 2:
                out.append(_result(*args, np.nan, np.nan, alpha,
                                   "not computed: all values are identical"))
                continue
            stat, p, note = _anderson(x, y, seed, ad_resamples, ad_max_pooled)
            out.append(_result(*args, stat, p, alpha, note))
    return out


def pairwise_tests(groups: Dict[str, object], alpha: float = 0.05,
                   tests: Iterable[str] = ALL_TESTS, seed: int = 0, **kwargs) -> List[TestResult]:
    """All unordered pairs of groups (in dict order), Holm applied per test kind over all pairs."""
    tests = tuple(tests)
    raw: List[TestResult] = []
    for la, lb in itertools.combinations(list(groups), 2):
        raw.extend(two_sample_tests(groups[la], groups[lb], la, lb, alpha, seed, tests, **kwargs))
    out: List[Optional[TestResult]] = [None] * len(raw)
    for test in tests:
        idx = [i for i, r in enumerate(raw) if r.test == test]
        for i, r in zip(idx, adjust([raw[i] for i in idx])):
            out[i] = dataclasses.replace(
                r, note=(r.note + "; " if r.note else "") + f"Holm over {len(idx)} pairs")
    return out  # type: ignore[return-value]


# --------------------------------------------------------------------------------------------
# Ratio of means

@dataclass(frozen=True)
class Ratio:
    """mean(b) / mean(a) with a confidence interval."""

    ratio: float
    ci_low: float
    ci_high: float
    confidence: float
    method: str

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _ratio_stat(a, b, axis=-1):
    return np.mean(b, axis=axis) / np.mean(a, axis=axis)


def ratio_of_means(a, b, confidence: float = 0.95, seed: int = 0, *,
                   n_resamples: int = BOOTSTRAP_RESAMPLES,
                   max_n: int = BOOTSTRAP_MAX_N) -> Ratio:
    """mean(b)/mean(a) with a CI from scipy_stats.bootstrap on the two independent samples.

    BCa with `n_resamples` resamples; percentile when BCa fails (degenerate samples). Above
    `max_n` values in either sample the bootstrap (its BCa jackknife is O(n^2)) is replaced by the
    delta-method normal interval, which is accurate at such sizes; `method` says which was used.
    """
    x, y = finite_values(a), finite_values(b)
    nan = float("nan")
    if x.size < 2 or y.size < 2:
        return Ratio(nan, nan, nan, confidence, "not computed: needs at least 2 values per sample")
    ma, mb = float(np.mean(x)), float(np.mean(y))
    if ma == 0:
        return Ratio(nan, nan, nan, confidence, "not computed: mean of sample a is 0")
    r = mb / ma
    if max(x.size, y.size) > max_n:
        # var(mb/ma) ~ (var_b/nb + r^2 var_a/na) / ma^2
        se = math.sqrt(np.var(y, ddof=1) / y.size + r * r * np.var(x, ddof=1) / x.size) / abs(ma)
        z = float(scipy_stats.norm.ppf(0.5 + confidence / 2))
        return Ratio(r, r - z * se, r + z * se, confidence,
                     f"delta method, normal approximation (n > {max_n}; bootstrap skipped)")

    def boot(method):
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy_stats.DegenerateDataWarning)
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            res = scipy_stats.bootstrap((x, y), _ratio_stat, vectorized=True, paired=False,
                                        n_resamples=n_resamples, confidence_level=confidence,
                                        method=method, random_state=seed)
        ci = res.confidence_interval
        return float(ci.low), float(ci.high)

    try:
        lo, hi = boot("BCa")
        if np.isfinite(lo) and np.isfinite(hi):
            return Ratio(r, lo, hi, confidence, f"bootstrap BCa, {n_resamples} resamples")
        why = "non-finite BCa interval"
    except (scipy_stats.DegenerateDataWarning, ValueError, FloatingPointError) as e:
        why = f"BCa failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = scipy_stats.bootstrap((x, y), _ratio_stat, vectorized=True, paired=False,
                                    n_resamples=n_resamples, confidence_level=confidence,
                                    method="percentile", random_state=seed)
    ci = res.confidence_interval
    return Ratio(r, float(ci.low), float(ci.high), confidence,
                 f"bootstrap percentile, {n_resamples} resamples ({why})")


def verdict(significant, ratio, threshold):
    """benchstat-style: 'slower'/'faster' only when significant (after correction) and the ratio
    of means (new/base) is beyond the noise threshold, else '~'."""
    if not significant or abs(ratio - 1) <= threshold:
        return "~"
    return "slower" if ratio > 1 else "faster"


def log_ratio_t(logs, level=0.05):
    """(mean, half-width, p) of the one-sample t test of paired log ratios against 0 (one per
    invocation): the 1 - level t interval is mean +- half-width (df M - 1). All equal: p is 0
    unless they are all 0, and the interval has no width."""
    logs = np.asarray(logs, dtype=float)
    m, mean = logs.size, float(logs.mean())
    sd = float(logs.std(ddof=1))
    if not sd > 0:
        return mean, 0.0, (0.0 if mean != 0 else 1.0)
    half = float(scipy_stats.t.ppf(1 - level / 2, m - 1)) * sd / math.sqrt(m) if level > 0 else math.inf
    return mean, half, float(scipy_stats.ttest_1samp(logs, 0.0).pvalue)

