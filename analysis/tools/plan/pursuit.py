"""
Give up what the budget cannot decide, so that rounds are not spent on claims whose estimate sits
too near their bound for any M the budget allows.

From look M = GIVE_UP_FROM on, a claim is no longer waited for when even an optimistic forecast
(its estimate one SE nearer a decision, its SD at a 90 % lower bound) needs more reruns than the
budget allows. Giving up changes no verdict and no level. docs/calibration.md, "Decide, then
stop: `timekit run --until-decided`".
"""

from __future__ import annotations

import math

import scipy.stats

from analysis.tools.plan import run_summary


GIVE_UP_FROM = 5  # before this M the SE itself rests on too few reruns to give a claim up
SPREAD_CONFIDENCE = 0.9  # the forecast's SD: the lower bound of its one-sided 90 % interval


def needed_reruns(finding, reruns, allowed):
    """The M an optimistic forecast needs to decide the finding (math.inf: no M decides it), or
    None when its fields do not say (the claim is then waited for)."""
    decide = finding.decide or {}
    if "grid" in decide or decide.get("cause") == "grid":
        return math.inf
    levels = [p.claim_level for p in finding.parts if p.repeated and p.claim_level]
    if not levels or reruns < 2:
        return None
    confidence = levels[0]
    if "never" in decide:
        distance = 0.0  # in SEs: on the bound, or as good as
    elif "reruns" in decide:
        x = decide["reruns"]
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
        if run_summary.recorded(given_up, finding):
            continue
        needed = needed_reruns(finding, reruns, allowed)
        if needed is None or needed <= allowed:
            continue
        needs = "no number of reruns decides it on its grid" if math.isinf(needed) else f"needs about M = {needed}"
        given_up[run_summary.key(finding)] = {"claim": finding.claim,
            "reruns": reruns, "needed": None if math.isinf(needed) else needed, "allowed": allowed,
            "why": (f"Not pursued from look M = {reruns}: {needs} even with its estimate one SE nearer a "
                    f"decision, the budget allows {allowed}.")}
        new.append(finding.claim)
    return new
