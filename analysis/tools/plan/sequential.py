"""
Decide, then stop: compare's rerun rule looked at after every pair of invocations, with error
rates that hold although it looks many times.

Looking after every invocation and stopping at the first p < alpha would call an A/A comparison
"slower" or "faster" far more often than alpha (about 3 times at 20 looks). Two ways keep the rate:

* a confidence sequence (Howard, Ramdas, McAuliffe & Sekhon 2021): an interval valid at every
  sample size at once, so any stopping rule is allowed and no maximum is needed. The price is
  width: with a handful of rerun means a side, an anytime-valid interval for a mean of unknown
  variance is several times wider than the t interval, and 5 % would need far more invocations
  than the fixed design;
* group-sequential alpha spending (Lan & DeMets 1983): a maximum M_max is fixed beforehand, and
  each look spends part of alpha, as much as the spending function allows at its information
  fraction M / M_max. With O'Brien-Fleming-type spending, alpha(t) = 2 - 2 Phi(z_{1-alpha/2} /
  sqrt(t)), early looks spend almost nothing and the last look tests at nearly alpha, so the power
  at M_max is close to the fixed design's while a large change stops early.

The kit uses the second: it has a maximum anyway (--max-reruns, the budget), and it must not cost
power against the fixed design of the plan. Looks that a budget cuts off leave their alpha unspent,
which only lowers the error rate.

Boundaries: the nominal p-value c_M below which a look at M reruns a side rejects, for Welch's test
on rerun means, found by simulation under the null (standard normal rerun means; the sequence of
Welch p-values of normal data does not depend on their mean or variance): at each look, the
c_M that makes the share of null sequences first rejected there equal to the alpha spent there
(20,000 sequences, seed 0, cached).

The decision per row at a look with M reruns a side, in a Holm family of k rows tested at alpha / k
each (Bonferroni: Holm's recycling of alpha between group-sequential rows, Maurer & Bretz 2013,
is not used):
* "slower"/"faster": Welch p < c_M and the ratio beyond the threshold (compare's rule at c_M);
* "~" (decided): the repeated confidence interval (Jennison & Turnbull) at level 1 - c_M lies
  within +- threshold: no change as large as the threshold, by equivalence;
* otherwise undecided: one more pair, or, at M_max or the end of the budget, inconclusive.
A wrong "~" under a real change needs the repeated interval to miss it, which happens with
probability at most alpha / k over all looks; a wrong "slower"/"faster" needs a null crossing.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import scipy.stats

START = 3               # the first look: Welch's t on 2 means a side has 1-2 df
SIMULATIONS = 20_000
SEED = 0


def spent(t, alpha):
    """O'Brien-Fleming-type spending: alpha spent by information fraction t (Lan & DeMets 1983)."""
    return 2 * (1 - scipy.stats.norm.cdf(scipy.stats.norm.ppf(1 - alpha / 2) / math.sqrt(t))) if t > 0 else 0.0


@functools.lru_cache(maxsize=64)
def boundaries(alpha, max_reruns, start=START, simulations=SIMULATIONS, seed=SEED):
    """{M: nominal p threshold} for the looks at M = start .. max_reruns reruns a side (the
    report's claims under `timekit run --until-decided` use analysis.tools.plan.share_spending)."""
    rng = np.random.default_rng([seed, max_reruns, start])
    a = rng.standard_normal((simulations, max_reruns))
    b = rng.standard_normal((simulations, max_reruns))
    alive = np.ones(simulations, dtype=bool)
    out, before = {}, 0.0
    for m in range(start, max_reruns + 1):
        p = scipy.stats.ttest_ind(a[:, :m], b[:, :m], axis=1, equal_var=False).pvalue
        quota = int(round((spent(m / max_reruns, alpha) - before) * simulations))
        candidates = np.sort(p[alive])
        c = float(candidates[quota - 1]) * (1 + 1e-12) if quota > 0 else 0.0
        if quota > 0 and quota < candidates.size:  # between the quota-th and the next p: no ties at the edge
            c = float((candidates[quota - 1] + candidates[quota]) / 2)
        out[m] = c
        alive &= ~(p < c)
        before = spent(m / max_reruns, alpha)
    return out


@dataclass
class Decision:
    verdict: str           # slower, faster, ~ (equivalent), or '' while undecided
    decided: bool
    reruns: int            # M a side at this look
    p: float               # Welch p on the rerun means
    level: float           # nominal p threshold of this look
    ratio: float
    rci_low: float         # repeated confidence interval of the ratio at level 1 - level
    rci_high: float


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
        return Decision("slower" if ratio > 1 else "faster", True, m, p, level, ratio, low, high)
    if 1 - threshold < low and high < 1 + threshold:
        return Decision("~", True, m, p, level, ratio, low, high)
    return Decision("", False, m, p, level, ratio, low, high)


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
