"""
Power of the paired designs' test (the one-sample t over M invocations' log ratios) and what M
an undecided row needs: for `timekit plan DIR` on a paired run and for the last lines of
`timekit ab --until-decided`.
"""

from __future__ import annotations

import math

import scipy.stats

from analysis.tools.plan.args import FIRST_LOOK
from analysis.tools.plan.verdict_record import WouldDecide

MAX_INVOCATIONS = 200


def power(m, sd, effect, level):
    """Power of the two-sided one-sample t test of m log ratios (sd each) against a change `effect`."""
    if sd <= 0:
        return 1.0
    df, nc = m - 1, math.log1p(effect) * math.sqrt(m) / sd
    crit = scipy.stats.t.ppf(1 - level / 2, df)
    exact = float(scipy.stats.nct.sf(crit, df, nc) + scipy.stats.nct.cdf(-crit, df, nc))
    if math.isfinite(exact):
        return exact
    # scipy's noncentral t gives NaN far out in its tail (here: power near 1 at large M); the
    # normal approximation is exact enough there
    return float(scipy.stats.norm.sf(crit - nc) + scipy.stats.norm.cdf(-crit - nc))


def invocations_needed(sd, effect, level, wanted):
    """The smallest M (from FIRST_LOOK) with `wanted` power, None beyond MAX_INVOCATIONS. Power
    grows with M, so a bisection: every look of `ab --until-decided` asks this of each row."""
    if power(MAX_INVOCATIONS, sd, effect, level) < wanted:
        return None
    low, high = FIRST_LOOK, MAX_INVOCATIONS
    while low < high:
        mid = (low + high) // 2
        low, high = (low, mid) if power(mid, sd, effect, level) >= wanted else (mid + 1, high)
    return low


def smallest_effect(m, sd, level, wanted):
    """The smallest relative slowdown m invocations show with `wanted` power (bisection)."""
    low, high = 0.0, 1.0
    if m < 2 or power(m, sd, high, level) < wanted:
        return math.nan
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if power(m, sd, mid, level) < wanted else (low, mid)
    return high


def advice(sd, ratio, level, threshold, seconds, wanted=0.9):
    """Advice for a row whose invocations' log ratios spread by `sd`, measured at `ratio`: the M at
    which the one-sample t at `level` calls the measured change (with `wanted` power), or, where the
    change lies within the threshold, the M at which the interval of the two one-sided tests (at
    1 - 2 level) fits between it and the threshold."""
    log_change = abs(math.log(ratio))
    if ratio - 1 > threshold or 1 - ratio > threshold:
        goal, m = "change", invocations_needed(sd, math.expm1(log_change), level, wanted)
    else:
        goal, margin, m = "within", math.log1p(threshold) - log_change, None
        for k in range(FIRST_LOOK, MAX_INVOCATIONS + 1):
            if scipy.stats.t.ppf(1 - level, k - 1) * sd / math.sqrt(k) < margin:   # one-sided: TOST
                m = k
                break
    return WouldDecide(goal, ratio - 1, m, (m or MAX_INVOCATIONS) * seconds / 60, wanted, sd=sd)


def render_advice(a, threshold, outdir):
    what = (f"to call the measured {100 * a.change:+.1f} % a change with {100 * a.power:.0f} % power" if a.goal == "change"
            else f"to show that the change ({100 * a.change:+.1f} %) stays within ±{100 * threshold:g} %")
    spread = f"an invocation's log ratio has an sd of {100 * a.sd:.2f} % here"
    if a.invocations is None:
        remedy = "a quieter machine" if a.goal == "change" else "a quieter machine, or a larger --threshold"
        return f"{what}: more than {MAX_INVOCATIONS} invocations, over {a.minutes:.0f} min ({spread}): out of reach here; {remedy}"
    return (f"{what}: about M = {a.invocations} invocations, {a.minutes:.1f} min here ({spread}; continue with "
            f"timekit ab --resume --output {outdir} --until-decided --max-reruns {a.invocations})")
