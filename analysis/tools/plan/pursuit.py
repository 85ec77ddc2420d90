"""
Give up what the budget cannot decide.

A 15-minute run of time-apis spent most of its rounds on claims whose estimate sat so near their
bound that no M the budget allowed could decide them, while the claims that could be decided had
been decided early. From look M = GIVE_UP_FROM on, a claim is no longer waited for when even an
optimistic forecast needs more reruns than the budget allows: its estimate one standard error
further from the bound (nearer a decision) than now, its SE shrinking as 1/sqrt(M), and the
interval at the claim's own level (the final look tests at nearly that; earlier looks are
wider), and its spread at the 90 % lower confidence bound of the standard deviation (chi-square
on M - 1 df): at M = 5 the sample SD can be 1.4 x the true one by chance alone, and one disturbed
invocation among five (the VM's host took half a core from five runs of one invocation of a
15-minute run here: its ratio read 1.5) inflates it far more, so a forecast from today's SD gave
claims up at M = 5 that fewer reruns, if like the others, might have decided. The loop stops
when no claim that can still be decided waits. Giving up changes no verdict and no level: the
claim is still judged at every look, and is recorded if a look decides it; it only no longer
keeps rounds going.

The forecast is read from the finding's evidence, where the verdict policy already wrote what
would decide it (analysis.core.verdicts._needed: about M = X reruns, sized on the interval at
the claim's own level, Estimate.sizing): X = M (t * SE / d)^2, so the distance to the bound in
SEs is d / SE = t * sqrt(M / X), t the quantile of the claim's level at M - 1 df. With the SE
scaled to the optimistic spread (factor f) the distance is D = d / (f SE), and with the estimate
one such SE nearer a decision it needs M' = M (t' / (D + 1))^2, t' at the df the budget allows.
The parts of a claim must all be decided, so the largest X of its parts counts, unless a part
lies on the refuting side (its evidence says "would decide it (as refuted)"): one refuted part
decides the claim, so the smallest X of those counts, whatever the others say.
"""

from __future__ import annotations

import math
import re

import scipy.stats

from analysis.core import verdicts
from analysis.tools.plan.share_spending import MARK

GIVE_UP_FROM = 5  # before this M the SE itself rests on too few reruns to give a claim up
SPREAD_CONFIDENCE = 0.9  # the forecast's SD: the lower bound of its one-sided 90 % interval
_LEVEL = re.compile(r"\(([\d.]+) %; " + MARK)  # the claim's own level, as replication.over_reruns writes it
# what analysis.core.verdicts writes when no M decides a part: a grid as wide as the margin (never),
# or an estimate on the bound or within half a grid step of it, as it stands (one SE nearer, the
# optimistic forecast, it might)
_NEVER = ("grid step is at least the margin's width", "grid step is as wide as the band")
_ON_BOUND = ("more reruns than is practical would be needed", "the estimate sits on the bound",
             "on this grid, half a step")


def needed_reruns(evidence, reruns, allowed):
    """The M an optimistic forecast needs to decide the claim (math.inf: no M decides it), or None
    when its evidence does not say (the claim is then waited for)."""
    sizes = verdicts.needed_sizes(evidence)
    refuting = sizes.get("refuting") and "reruns" in sizes  # one refuted part decides, whatever the others
    if not refuting and any(text in evidence for text in _NEVER):
        return math.inf
    level = _LEVEL.search(evidence)
    if not level or reruns < 2:
        return None
    confidence = float(level.group(1)) / 100
    if not refuting and any(text in evidence for text in _ON_BOUND):
        distance = 0.0  # in SEs: on the bound, or as good as
    elif "reruns" in sizes:
        x = sizes["reruns"]
        distance = scipy.stats.t.ppf((1 + confidence) / 2, reruns - 1) * math.sqrt(reruns / x) / optimistic_spread(reruns)
    else:
        return None
    t_end = scipy.stats.t.ppf((1 + confidence) / 2, max(allowed, reruns) - 1)
    return max(reruns, math.ceil(reruns * (t_end / (distance + 1)) ** 2))


def optimistic_spread(reruns):
    """The 90 % lower confidence bound of a standard deviation from `reruns` values, as a share of
    the sample's own: sqrt((M - 1) / chi2_0.9(M - 1)) (0.72 at M = 5, 0.81 at M = 14)."""
    return math.sqrt((reruns - 1) / scipy.stats.chi2.ppf(SPREAD_CONFIDENCE, reruns - 1))


def give_up(record, waiting, reruns, allowed):
    """Record in `given_up` the waiting findings that an optimistic forecast cannot decide
    within `allowed` reruns (from look M = GIVE_UP_FROM on); returns the claims newly given up."""
    given_up = record.setdefault("given_up", {})
    if reruns < GIVE_UP_FROM or allowed <= reruns:  # no round left: the budget stops the loop anyway
        return []
    new = []
    for finding in waiting:
        if finding.claim in given_up:
            continue
        needed = needed_reruns(finding.evidence, reruns, allowed)
        if needed is None or needed <= allowed:
            continue
        needs = "no number of reruns decides it on its grid" if math.isinf(needed) else f"needs about M = {needed}"
        given_up[finding.claim] = {
            "reruns": reruns, "needed": None if math.isinf(needed) else needed, "allowed": allowed,
            "why": (f"Not pursued from look M = {reruns}: {needs} even with its estimate one SE nearer a "
                    f"decision, the budget allows {allowed}.")}
        new.append(finding.claim)
    return new
