"""
One verdict policy for every finding (docs/verdicts.md), applied by the functions here.

A finding judges a claim about one quantity (a ratio, a time, a CV) on a confidence interval of it,
never on a point estimate, and says on what unit of replication the interval rests: reruns
(benchexec invocations, rounds) wherever there are two or more, else runs of one invocation.
Four kinds of claim, one rule each:

- at_least: "an effect of at least X" (some cores > 10 % faster). Confirmed when the whole CI lies
  beyond X, refuted when the whole CI lies short of X, else inconclusive.
- no_effect: "no effect", "left alone". Confirmed only by equivalence: the CI (a 90 % CI is the
  TOST at alpha 5 %) lies inside the stated margin around the null; refuted when the whole CI lies
  outside the margin; else inconclusive. Nothing significant is not evidence of no effect.
- about: "about X". Confirmed when the CI lies within a factor ABOUT_FACTOR of X, refuted when it
  lies entirely outside that band, else inconclusive. One meaning of "about" across the report.
- direction: "A is larger than B" (ratio > 1). Confirmed when the CI excludes the null on the
  claimed side, refuted when it excludes it on the other side, else inconclusive.

A measurement on a visible grid (timer steps, TSC ticks) cannot be placed more finely than its
step: its CI is widened by half a step on each side, and a tolerance band narrower than one step
gives "inconclusive" with that reason.

An inconclusive verdict names what would decide it: the smallest number of reruns (or runs) whose
t interval would be narrow enough, from the t quantile (analysis.core.deciding), the estimate
staying where it is; where none would (the estimate on the bound, half a grid step as wide as the
distance to it) it says "no number of reruns decides it" and why, never an M. Where the estimate
lies on the refuting side of its bound it adds "(as refuted)": a claim of parts that must all
hold (all_of) is refuted by any one part, so the soonest refuting part decides it, however many
reruns its other parts would need (needed_sizes).
"""

import math
import re
from dataclasses import dataclass, field

ABOUT_FACTOR = 2.0  # "about X" = within a factor 2 of X
FAR_FACTOR = 10.0  # "far more", "far cheaper", "tens of times" = at least a factor 10
DRIFT = 0.02  # between-invocation CV of a mean on this VM (docs/calibration.md: 1-5 %), for calibrate --claims
MAX_SUGGESTED = 10_000  # beyond this many reruns/runs the claim is said to be undecidable in practice


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its confidence interval, and what the interval rests on."""

    value: float
    low: float
    high: float
    # "reruns" (invocations/rounds), "runs" (of one invocation), "samples" (of one run) or "cases": a
    # share of n cases (binomial), whose interval narrows only with more cases, not with more runs
    unit: str = "runs"
    n: int = 0  # runs per condition (per rerun, when the unit is reruns)
    m: int = 1  # reruns per condition
    method: str = ""  # e.g. "Welch t on rerun means, 95 % CI"
    grid: float = 0.0  # step of the grid the measurement sits on (0: none visible)
    scale: str = ""  # how to print the quantity: "ratio", "pct" or a unit such as "ns"
    level: float = 0.0  # the level the interval was computed at (a sequential look's, if stricter); 0: not recorded

    def widened(self):
        """The CI widened by half a grid step on each side."""
        half = self.grid / 2
        return self.low - half, self.high + half

    def sizing(self):
        """(low, high, level) of the interval that says how many repetitions would decide: the CI,
        or for a repeated interval the one at the claim's own level, because an early look's
        interval is far wider (unbounded while it spends no alpha) than the one the last looks test with."""
        fixed = getattr(self, "fixed", ())
        if not (fixed and self.value and all(map(math.isfinite, fixed))):
            return self.low, self.high, self.level
        low, high = sorted((self.value * fixed[0], self.value * fixed[1]))
        return low, high, getattr(self, "fixed_level", 0.0)

    def replication(self):
        if self.unit == "reruns":
            return f"unit: reruns, M = {self.m} of n = {self.n} runs"
        if self.unit == "samples":
            return f"unit: samples of one run, n = {self.n}"
        if self.unit == "cases":
            return f"unit: a share of n = {self.n} cases"
        if self.unit == "pooled":
            return "unit: one figure pooled over the runs of one invocation (no interval; holds for this invocation)"
        return f"unit: runs of one invocation, n = {self.n}" + (f" (M = {self.m}: rerun level not used)" if self.m > 1 else "")


@dataclass(frozen=True)
class RepeatedEstimate(Estimate):
    """An Estimate on a repeated interval (a look of `timekit run --until-decided`), which also
    carries the interval at the claim's own confidence, as (low, high) / value: relative, so that
    scaling the estimate keeps it. A class of its own so that fixed designs' estimates (and the
    report data made of them) stay as they were."""

    fixed: tuple = ()
    fixed_level: float = 0.0  # the claim's own confidence, at which `fixed` is computed


@dataclass(frozen=True)
class Verdict:
    verdict: str  # confirmed, refuted, inconclusive
    evidence: str
    implies: tuple = field(default=(-math.inf, math.inf))  # where the quantity lies if the verdict holds


def _fmt(x, scale):
    if not math.isfinite(x):
        return "∞" if x > 0 else "-∞"
    if scale == "pct":
        return f"{x:.2%}"
    if scale in ("", "ratio"):
        return f"{x:.4g}"
    return f"{x:.4g} {scale}"


def _ci_text(est):
    low, high = est.widened()
    grid = f", widened by half the {_fmt(est.grid, est.scale)} grid step" if est.grid else ""
    method = f" ({est.method})" if est.method else ""
    return f"{_fmt(est.value, est.scale)}, CI [{_fmt(low, est.scale)}, {_fmt(high, est.scale)}]{grid}{method}; {est.replication()}"


UNDECIDABLE = "no number of"  # how every "nothing decides it" text starts (needed_sizes, undecidable)


def _never(est, why):
    noun = "reruns" if est.unit == "reruns" else "runs or reruns"
    return f"{UNDECIDABLE} {noun} decides it: {why}"


def _needed(est, distance, refuting=False):
    """What would decide: the smallest M (or n) whose t interval, widened by half the grid step,
    fits within `distance` (the gap between the estimate and the nearest bound that would decide),
    or why no number does. Today's half-width is the wider side of the interval (a ratio's interval
    of the logs is wider above), so the size named is not too small; for a repeated interval it is
    the interval at the claim's own level (Estimate.sizing)."""
    low, high, level = est.sizing()
    half = max(est.value - low, high - est.value)
    if not (math.isfinite(half) and half > 0):
        return "no spread to judge by"
    if distance <= 0:
        return _never(est, "the estimate sits on the bound")
    room = distance - est.grid / 2
    if room <= 0:
        return _never(est, f"on this grid, half a step ({_fmt(est.grid / 2, est.scale)}) is as wide as the "
                           f"distance from the estimate to the bound ({_fmt(distance, est.scale)})")
    if est.unit == "cases":
        # the binomial half-width shrinks as 1/sqrt(cases) (normal approximation), the share held
        cases = math.ceil(est.n * (half / room) ** 2)
        return _never(est, f"a share of {est.n} cases narrows only with more cases, not with runs or reruns, "
                           f"about {cases} cases with this share would decide it")
    from analysis.core import deciding  # scipy: only when a verdict is inconclusive

    size = est.m if est.unit == "reruns" else est.n
    needed = deciding.smallest_size(half, size, level, room, MAX_SUGGESTED)
    how = REFUTING if refuting else ""
    if est.unit == "reruns":
        return (f"about M = {needed} reruns would decide it{how}" if needed
                else "more reruns than is practical would be needed")
    return (f"about n = {needed} runs (or M >= 2 reruns to judge drift) would decide it{how}" if needed
            else "more runs than is practical would be needed")


REFUTING = " (as refuted)"  # the estimate lies on the refuting side of its bound
_NEEDED_RERUNS = re.compile(r"about M = (\d+) reruns would decide it( \(as refuted\))?")
_NEEDED_RUNS = re.compile(r"n = (\d+)[^;]*;[^;]*?about n = (\d+) runs \(or M >= 2 reruns to judge drift\) would decide it"
                          r"( \(as refuted\))?")
_UNDECIDABLE = re.compile(UNDECIDABLE + r" [a-z ]+ decides it: [^.;]*(?:\.\d[^.;]*)*")


def needed_sizes(evidence):
    """The sizes `_needed` wrote into a finding's evidence, read back: {'reruns': M} and/or
    {'runs': n, 'runs_factor': n / n now}, plus 'refuting': True where they are a refuting part's;
    {} when it names none. Every part must be decided, so the largest over the parts counts, unless
    a part lies on the refuting side: one refuted part decides the claim, so the smallest over the
    refuting parts counts. Kept beside `_needed` so that the two texts cannot drift apart."""
    sizes = {}
    reruns = [(int(m), verb) for m, verb in _NEEDED_RERUNS.findall(evidence)]
    refuting = [m for m, verb in reruns if verb]
    if reruns:
        sizes["reruns"] = min(refuting) if refuting else max(m for m, _ in reruns)
    runs = [(int(now), int(need), verb) for now, need, verb in _NEEDED_RUNS.findall(evidence)]
    refuting_runs = [(now, need) for now, need, verb in runs if verb]
    if runs:
        chosen = [min(refuting_runs, key=lambda r: r[1])] if refuting_runs else [(now, need) for now, need, _ in runs]
        sizes["runs"] = max(need for _, need in chosen)
        sizes["runs_factor"] = max(need / now for now, need in chosen if now)
    if refuting or refuting_runs:
        sizes["refuting"] = True
    return sizes


def undecidable(evidence):
    """The first "no number of reruns decides it: why" of a finding's evidence (one of its parts
    that no size decides), '' when every undecided part names a size."""
    found = _UNDECIDABLE.search(evidence)
    return found.group(0) if found else ""


def at_least(est, threshold, *, larger=True):
    """Claim: the quantity is at least `threshold` (larger=True) or at most it (larger=False)."""
    low, high = est.widened()
    side = ">=" if larger else "<="
    head = f"claim: {side} {_fmt(threshold, est.scale)}; {_ci_text(est)}"
    if (low >= threshold) if larger else (high <= threshold):
        return Verdict("confirmed", f"{head}: the whole CI is beyond the claimed bound.",
                       (threshold, math.inf) if larger else (-math.inf, threshold))
    if (high < threshold) if larger else (low > threshold):
        return Verdict("refuted", f"{head}: the whole CI is short of the claimed bound.",
                       (-math.inf, threshold) if larger else (threshold, math.inf))
    distance = abs(est.value - threshold)
    short = (est.value < threshold) if larger else (est.value > threshold)
    return Verdict("inconclusive", f"{head}: the CI contains the bound; {_needed(est, distance, short)}.")


def grid_bound(est, margin):
    """True when the estimate's grid step is at least 2 x the margin: its interval, widened by half
    a step on each side, can never lie inside null ± margin, whatever M."""
    return bool(est is not None and est.grid and est.grid >= 2 * margin)


def no_effect(est, margin, *, null=1.0):
    """Claim: no effect, judged by equivalence within null ± margin (pass a 90 % CI for TOST at 5 %)."""
    low, high = est.widened()
    lo_m, hi_m = null - margin, null + margin
    head = f"claim: no effect beyond ±{_fmt(margin, est.scale)} of {_fmt(null, est.scale)}; {_ci_text(est)}"
    if low > hi_m or high < lo_m:  # a coarse grid never keeps a clear difference from refuting
        return Verdict("refuted", f"{head}: the whole CI lies outside the margin.",
                       (hi_m, math.inf) if low > hi_m else (-math.inf, lo_m))
    if grid_bound(est, margin):
        return Verdict("inconclusive", f"{head}: " + _never(est, f"the {_fmt(est.grid, est.scale)} grid step is at "
                                                                 f"least the margin's width (±{_fmt(margin, est.scale)})") + ".")
    if lo_m <= low and high <= hi_m:
        return Verdict("confirmed", f"{head}: the whole CI lies inside the margin (equivalence).", (lo_m, hi_m))
    inside = lo_m <= est.value <= hi_m
    distance = min(hi_m - est.value, est.value - lo_m) if inside else min(abs(est.value - hi_m), abs(est.value - lo_m))
    return Verdict("inconclusive", f"{head}: the CI is neither inside nor outside the margin; "
                                   f"{_needed(est, distance, not inside)}.")


def about(est, target, factor=ABOUT_FACTOR):
    """Claim: the quantity is about `target`, i.e. within a factor `factor` of it."""
    low, high = est.widened()
    band = (target / factor, target * factor)
    head = (f"claim: about {_fmt(target, est.scale)} (within a factor {factor:g}: {_fmt(band[0], est.scale)}–"
            f"{_fmt(band[1], est.scale)}); {_ci_text(est)}")
    if high < band[0] or low > band[1]:
        return Verdict("refuted", f"{head}: the whole CI lies outside the band.",
                       (-math.inf, band[0]) if high < band[0] else (band[1], math.inf))
    if est.grid and est.grid >= band[1] - band[0]:
        return Verdict("inconclusive", f"{head}: " + _never(est, f"the {_fmt(est.grid, est.scale)} grid step is as "
                                                                 "wide as the band") + ".")
    if band[0] <= low and high <= band[1]:
        return Verdict("confirmed", f"{head}: the whole CI lies in the band.", band)
    distance = min(abs(est.value - band[0]), abs(est.value - band[1]))
    outside = not band[0] <= est.value <= band[1]
    return Verdict("inconclusive", f"{head}: the CI straddles the band's edge; {_needed(est, distance, outside)}.")


def direction(est, *, null=1.0, larger=True):
    """Claim: the quantity is larger (or smaller) than `null`."""
    low, high = est.widened()
    side = ">" if larger else "<"
    head = f"claim: {side} {_fmt(null, est.scale)}; {_ci_text(est)}"
    if (low > null) if larger else (high < null):
        return Verdict("confirmed", f"{head}: the CI excludes {_fmt(null, est.scale)} on the claimed side.",
                       (null, math.inf) if larger else (-math.inf, null))
    if (high < null) if larger else (low > null):
        return Verdict("refuted", f"{head}: the CI excludes {_fmt(null, est.scale)} on the other side.",
                       (-math.inf, null) if larger else (null, math.inf))
    other_side = (est.value < null) if larger else (est.value > null)
    return Verdict("inconclusive", f"{head}: the CI contains {_fmt(null, est.scale)}; "
                                   f"{_needed(est, abs(est.value - null), other_side)}.")


def all_of(parts):
    """The verdict of a claim made of parts that must all hold: confirmed when every part is,
    refuted when any part is, else inconclusive. (Judge the parts on 1 - alpha/k intervals,
    `family`, so that one wrongly refuted part of k is as rare as for a single claim.)"""
    verdicts = [p.verdict for p in parts]
    if verdicts and all(v == "confirmed" for v in verdicts):
        return "confirmed"
    return "refuted" if "refuted" in verdicts else "inconclusive"


def family(confidence, k):
    """The confidence of each of k intervals judged together (Bonferroni): 1 - (1 - confidence) / k."""
    return 1 - (1 - confidence) / max(k, 1)


def contradictions(judged):
    """Pairs of verdicts on the same quantity that cannot both hold: [(claim a, claim b, why)].

    `judged` is [(quantity key, claim text, Verdict)]; a verdict implies an interval for its
    quantity (confirmed 'at least 1.1' implies [1.1, inf)); two that do not overlap contradict."""
    found = []
    for i, (key_a, claim_a, a) in enumerate(judged):
        for key_b, claim_b, b in judged[i + 1:]:
            if key_a != key_b or a.verdict == "inconclusive" or b.verdict == "inconclusive":
                continue
            if max(a.implies[0], b.implies[0]) > min(a.implies[1], b.implies[1]):
                found.append((claim_a, claim_b, f"'{claim_a}' is {a.verdict} and '{claim_b}' is {b.verdict}, "
                                                f"which cannot both hold for {key_a}"))
    return found


def contradiction_warnings(judged):
    """The section warnings for `contradictions(judged)`: one line per pair that cannot both hold."""
    return [f"Contradictory verdicts: {why}." for _, _, why in contradictions(judged)]


@dataclass(frozen=True)
class ClaimSpec:
    """How a finding judges its claim, declared beside it so that `timekit calibrate --claims`
    can feed the same rule simulated data (analysis.tools.calibrate.claims)."""

    claim: str
    kind: str  # "at_least", "no_effect", "about" or "direction"
    bound: float = 1.0  # X of 'at least X', the margin of 'no effect', the target of 'about'
    sizes: dict = field(default_factory=dict)  # preset -> (runs per rerun n, reruns M)
    larger: bool = True  # for at_least and direction: the claimed side
    confidence: float = 0.95  # 0.90 for equivalence: the TOST at alpha 5 %
    instruments: tuple = ()  # analysis.core.instruments.Trust of every quantity and machine fact it rests on

    def untestable(self, readings):
        """Why the finding is 'not testable here' on these readings (quantity -> instruments.Reading):
        the first instrument check that fails, '' when all pass."""
        return next((why for why in (trust.check(readings) for trust in self.instruments) if why), "")

    def judge(self, est):
        if self.kind == "at_least":
            return at_least(est, self.bound, larger=self.larger)
        if self.kind == "no_effect":
            return no_effect(est, self.bound)
        if self.kind == "about":
            return about(est, self.bound)
        return direction(est, larger=self.larger)

    def cases(self):
        """True values of the quantity where the claim is true, false, and exactly at its bound."""
        if self.kind == "at_least":
            beyond, short = (1.05, 1 / 1.05) if self.larger else (1 / 1.05, 1.05)
            return {"true": self.bound * beyond, "false": self.bound * short, "boundary": self.bound}
        if self.kind == "no_effect":
            return {"true": 1.0, "false": 1.0 + 2 * self.bound, "boundary": 1.0 + self.bound}
        if self.kind == "about":
            return {"true": self.bound, "false": self.bound * ABOUT_FACTOR * 1.5, "boundary": self.bound * ABOUT_FACTOR}
        sign = 1 if self.larger else -1
        return {"true": 1 + 0.05 * sign, "false": 1 - 0.05 * sign, "boundary": 1.0}
