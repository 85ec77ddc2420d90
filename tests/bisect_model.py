"""Simulated steps for the bisect search: each commit's true cost against GOOD plus noise, decided as
the kit's A/B rule decides a row (analysis.tools.plan.sequential.decide): "slower"/"faster" where the
change is significant and beyond the threshold, "same" where the two one-sided tests put it within
+-threshold, else one more look, up to `looks`, then "undecided". The looks split the step's alpha
(Bonferroni), so a step errs at most at its alpha, as the real comparator must.

This is where a model belongs: the search is tested against it; the real steps come from `timekit ab`.
"""

import functools
import math

import numpy as np
from scipy.stats import norm

from analysis.products.bisect.search import Step


@functools.lru_cache(maxsize=None)
def _z(p):
    return float(norm.ppf(p))


class Model:
    """compare(commit) over `truth` (commit -> true ratio to GOOD; read when asked) with a relative noise `sigma` per look."""

    def __init__(self, truth, sigma, threshold, alpha, rng, looks=4, skipped=()):
        self.truth, self.sigma, self.threshold, self.alpha = truth, sigma, threshold, alpha
        self.rng, self.looks, self.skipped = rng, looks, set(skipped)
        self.calls = []

    def __call__(self, commit):
        self.calls.append(commit)
        if commit in self.skipped:
            return Step("skipped", detail={"build": "failed"})
        r, level = self.truth[commit], self.alpha / self.looks
        total = 0.0
        for look in range(1, self.looks + 1):
            total += r * (1 + self.sigma * self.rng.standard_normal())
            est, sd = total / look, self.sigma / math.sqrt(look)
            half = _z(1 - level / 2) * sd
            if abs(est - 1) > half and abs(est - 1) > self.threshold:
                verdict = "slower" if est > 1 else "faster"
                return Step(verdict, est, est - half, est + half, 1 - level, {"looks": look})
            one = _z(1 - level) * sd
            if 1 - self.threshold < est - one and est + one < 1 + self.threshold:
                return Step("same", est, est - one, est + one, 1 - 2 * level, {"looks": look})
        return Step("undecided", est, est - half, est + half, 1 - level, {"looks": self.looks})


class Flipping:
    """The worst case the bound allows: the right verdict (slower at or beyond the threshold, else
    same), turned into the opposite one with probability exactly `alpha` on every step."""

    def __init__(self, truth, threshold, alpha, rng):
        self.truth, self.threshold, self.alpha, self.rng = dict(truth), threshold, alpha, rng

    def __call__(self, commit):
        r = self.truth[commit]
        right = "slower" if r - 1 >= self.threshold else "same"
        verdict = ({"slower": "same", "same": "slower"}[right] if self.rng.random() < self.alpha else right)
        return Step(verdict, r, r - 0.002, r + 0.002, 0.95)


def cumulative(steps):
    """True ratios to GOOD of commits 1..n, each adding steps[k - 1] of GOOD's cost."""
    out, r = [], 1.0
    for s in steps:
        r += s
        out.append(r)
    return out


def noise_of(steps):
    """The SD of one invocation's log ratio behind real steps ({"low", "high", "invocations"}, 95 %
    CIs): half-width / t(0.975, n - 1) x sqrt(n), the median over the steps; and the median
    invocations a step took, which the Model's looks stand for."""
    from scipy.stats import t as t_dist

    sds = [(math.log(s["high"]) - math.log(s["low"])) / 2 / float(t_dist.ppf(0.975, s["invocations"] - 1))
           * math.sqrt(s["invocations"]) for s in steps if s.get("low") and s.get("high") and s["invocations"] > 1]
    looks = sorted(s["invocations"] for s in steps)[len(steps) // 2]
    return (float(np.median(sds)) if sds else math.nan), looks


def wrong_share(commits, rise, sigma, looks, seeds, threshold=0.02, alpha=0.05):
    """The share of `seeds` simulated searches over `commits` commits, one of them (drawn per seed)
    adding `rise`, that name a commit or range without it; each step a Model at `sigma` and `looks`."""
    from analysis.products.bisect.search import search, step_alpha

    names = [f"c{k}" for k in range(1, commits + 1)]
    wrong = 0
    for seed in range(seeds):
        rng = np.random.default_rng([seed, commits])
        culprit = int(rng.integers(1, commits + 1))
        truth = dict(zip(names, cumulative([rise if k + 1 == culprit else 0.0 for k in range(commits)])))
        outcome = search(names, Model(truth, sigma, threshold, step_alpha(alpha, commits), rng, looks=looks),
                         step_alpha(alpha, commits))
        wrong += outcome.found and not outcome.lo + 1 <= culprit - 1 <= outcome.hi
    return wrong / seeds
