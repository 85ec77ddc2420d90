"""
Decide, then stop: compare's rerun rule looked at after every pair of invocations, with error
rates that hold although it looks many times.

Group-sequential alpha spending (Lan & DeMets 1983, O'Brien-Fleming type) up to M_max, with
boundaries for Welch's test on rerun means found by simulation; per row "slower"/"faster" below
the boundary and beyond the threshold, "~" by two one-sided tests, else undecided. Why not a
confidence sequence, and why the error rates hold: docs/calibration.md, "Decide, then stop:
`ab --until-decided`".
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.special
import scipy.stats

from analysis.core import stats
from analysis.tools.plan.args import FIRST_LOOK

START = FIRST_LOOK      # the first look: Welch's t on 2 means a side has 1-2 df
SIMULATIONS = 20_000
SEED = 0


def spent(t, alpha):
    """O'Brien-Fleming-type spending: alpha spent by information fraction t (Lan & DeMets 1983)."""
    return 2 * (1 - scipy.stats.norm.cdf(scipy.stats.norm.ppf(1 - alpha / 2) / math.sqrt(t))) if t > 0 else 0.0


def spent_evenly(t, alpha):
    """Pocock-type spending, alpha ln(1 + (e - 1) t) (Lan & DeMets 1983): the paired designs' looks.
    Their invocations are short and each one's log ratio precise, so a decision is due early,
    where O'Brien-Fleming spends almost nothing (at M = 3 of 20 about 1e-6 of 0.05)."""
    return alpha * math.log(1 + (math.e - 1) * t) if t > 0 else 0.0


def boundaries(alpha, max_reruns, start=START, simulations=SIMULATIONS, seed=SEED, paired=False):
    """{M: nominal p threshold} for the looks at M = start .. max_reruns reruns a side (the
    report's claims under `timekit run --until-decided` use analysis.tools.plan.share_spending).
    `paired`: the one-sample t test of M invocations' log ratios (analysis.ab.observations),
    with Pocock-type spending; else Welch's test on M rerun means a side, O'Brien-Fleming-type.
    Remembered by value, however the arguments are passed: a caller that draws them ahead (while
    the first invocation runs) and one that reads them at a look share one draw."""
    return _boundaries(float(alpha), int(max_reruns), int(start), int(simulations), int(seed), bool(paired))


@functools.lru_cache(maxsize=64)
def _boundaries(alpha, max_reruns, start, simulations, seed, paired):
    rng = np.random.default_rng([seed, max_reruns, start])
    a = rng.standard_normal((simulations, max_reruns))
    b = rng.standard_normal((simulations, max_reruns))
    alive = np.ones(simulations, dtype=bool)
    out, before = {}, 0.0
    spend = spent_evenly if paired else spent
    sums, squares = np.cumsum(a, axis=1), np.cumsum(a * a, axis=1)   # the paired looks' t, each in O(1)
    for m in range(start, max_reruns + 1):
        if paired:
            p = _one_sample_p_of_sums(sums[:, m - 1], squares[:, m - 1], m)
        else:
            p = scipy.stats.ttest_ind(a[:, :m], b[:, :m], axis=1, equal_var=False).pvalue
        quota = int(round((spend(m / max_reruns, alpha) - before) * simulations))
        candidates = np.sort(p[alive])
        c = float(candidates[quota - 1]) * (1 + 1e-12) if quota > 0 else 0.0
        if quota > 0 and quota < candidates.size:  # between the quota-th and the next p: no ties at the edge
            c = float((candidates[quota - 1] + candidates[quota]) / 2)
        out[m] = c
        alive &= ~(p < c)
        before = spend(m / max_reruns, alpha)
    return out


@dataclass
class Decision:
    verdict: str           # slower, faster, ~ (equivalent), or '' while undecided
    decided: bool
    reruns: int            # M a side at this look
    p: float               # Welch p on the rerun means
    level: float           # nominal p threshold of this look
    ratio: float
    rci_low: float         # repeated confidence interval of the ratio at level `confidence`
    rci_high: float
    confidence: float = math.nan   # 1 - level; 1 - 2 level for "~" (the interval of the two one-sided tests)
    # the two-sided repeated interval at 1 - level, also for "~": what a row shows as its CI once the
    # rule stopped, because it keeps its level whatever look the rule stopped at (the fixed-sample
    # interval at the stopping look does not: stopping early selects looks whose spread was small)
    two_sided: tuple = (math.nan, math.nan)


def decide(base_means, new_means, level, threshold):
    """The decision at one look (see the module's docstring); base_means and new_means: rerun means."""
    a, b = np.asarray(base_means, dtype=float), np.asarray(new_means, dtype=float)
    m = min(a.size, b.size)
    with np.errstate(all="ignore"):
        test = scipy.stats.ttest_ind(a, b, equal_var=False)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    ratio = float(b.mean() / a.mean())
    if se > 0 and math.isfinite(test.df):
        half = float(scipy.stats.t.ppf(1 - level / 2, test.df)) * se / a.mean() if level > 0 else math.inf
    else:
        half = 0.0 if se == 0 else math.inf
    low, high = ratio - half, ratio + half
    p = float(test.pvalue) if math.isfinite(test.pvalue) else 1.0
    if p < level and abs(ratio - 1) > threshold:
        return Decision("slower" if ratio > 1 else "faster", True, m, p, level, ratio, low, high, 1 - level, (low, high))
    half = _one_sided(half, level, test.df)
    if 1 - threshold < ratio - half and ratio + half < 1 + threshold:
        return Decision("~", True, m, p, level, ratio, ratio - half, ratio + half, 1 - 2 * level, (low, high))
    return Decision("", False, m, p, level, ratio, low, high, 1 - level, (low, high))


def run_sequence(base_means, new_means, alpha, threshold, max_reruns, start=START):
    """Looks after every pair from `start` until decided or the means run out (at most max_reruns):
    the Decision where it stopped (undecided when it ran out)."""
    levels = boundaries(alpha, max_reruns, start)
    top = min(len(base_means), len(new_means), max_reruns)
    decision = None
    for m in range(min(start, top), top + 1):
        decision = decide(base_means[:m], new_means[:m], levels.get(m, 0.0), threshold)
        if decision.decided:
            break
    return decision


def _one_sided(half, level, df):
    """The half-width of the two one-sided tests' interval (1 - 2 level) from that of the
    two-sided one at 1 - level (t quantiles with df degrees of freedom)."""
    if not (half > 0 and math.isfinite(half)):
        return half
    return half * float(scipy.stats.t.ppf(1 - level, df) / scipy.stats.t.ppf(1 - level / 2, df))


def _one_sample_p(x):
    """Two-sided p of the one-sample t test against 0, row by row (scipy.stats.ttest_1samp's value,
    without its per-call cost: the boundaries run it 20,000 times per look)."""
    m = x.shape[1]
    t = x.mean(axis=1) / (x.std(axis=1, ddof=1) / math.sqrt(m))
    return 2 * scipy.special.stdtr(m - 1, -np.abs(t))


def _one_sample_p_of_sums(sums, squares, m):
    """_one_sample_p of rows of m values from their sums and sums of squares (the looks' running
    totals: each look in O(1) a row, not O(m))."""
    mean = sums / m
    sd = np.sqrt(np.maximum(squares - m * mean * mean, 0.0) / (m - 1))
    return 2 * scipy.special.stdtr(m - 1, -np.abs(mean / (sd / math.sqrt(m))))


def decide_paired(log_ratios, level, threshold, same_level=None):
    """The decision at one look of a paired design: the one-sample t test of the invocations'
    ln(new / base) against 0 at `level`, and the repeated interval exp(mean +- t sd / sqrt(M));
    "~" by two one-sided tests at `same_level` (default `level`; their interval at 1 - 2 same_level).
    A run calls "~" only where every row shows it, an intersection-union test, so a row's two
    one-sided tests need not share alpha with the other rows (analysis.ab.stopping.decide)."""
    same_level = level if same_level is None else same_level
    x = np.asarray(log_ratios, dtype=float)
    m = x.size
    mean, half, p = stats.log_ratio_t(x, level)
    ratio, low, high = math.exp(mean), math.exp(mean - half), math.exp(mean + half)
    if p < level and abs(ratio - 1) > threshold:
        return Decision("slower" if ratio > 1 else "faster", True, m, p, level, ratio, low, high, 1 - level, (low, high))
    same = _one_sided(stats.log_ratio_t(x, same_level)[1] if same_level != level else half, same_level, m - 1)
    if 1 - threshold < math.exp(mean - same) and math.exp(mean + same) < 1 + threshold:
        return Decision("~", True, m, p, same_level, ratio, math.exp(mean - same), math.exp(mean + same),
                        1 - 2 * same_level, (low, high))
    return Decision("", False, m, p, level, ratio, low, high, 1 - level, (low, high))


def run_paired_sequence(log_ratios, alpha, threshold, max_reruns, start=START, decide=decide_paired, same_alpha=None):
    """run_sequence for a paired design: looks after every invocation from `start` (`decide`:
    decide_paired, or a caller's remembered one); "~" at `same_alpha`'s boundaries (default alpha's)."""
    levels = boundaries(alpha, max_reruns, start, paired=True)
    same = levels if same_alpha is None else boundaries(same_alpha, max_reruns, start, paired=True)
    top = min(len(log_ratios), max_reruns)
    decision = None
    for m in range(min(start, top), top + 1):
        decision = decide(log_ratios[:m], levels.get(m, 0.0), threshold, same.get(m, 0.0))
        if decision.decided:
            break
    return decision
