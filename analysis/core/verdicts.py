"""
One verdict policy for every finding (docs/verdicts.md), applied by the functions here.

A finding judges a claim about one quantity on a confidence interval of it, never on a point
estimate, over reruns wherever there are two or more, else over the runs of one invocation. Four
kinds of claim (at_least, no_effect, about, direction) have one rule each; a visible grid widens
the interval by half a step. Every verdict is data first (Part), and an inconclusive one names
what would decide it (decide_of).
"""

import math
from dataclasses import dataclass, field, replace

from analysis.core.estimates import BracketUnion, Estimate, RepeatedEstimate, format_value  # noqa: F401 (the verdicts' names too)

ABOUT_FACTOR = 2.0  # "about X" = within a factor 2 of X
FAR_FACTOR = 10.0  # "far more", "far cheaper", "tens of times" = at least a factor 10
DRIFT = 0.02  # between-invocation CV of a mean on this VM (docs/calibration.md: 1-5 %), for calibrate --claims
MAX_SUGGESTED = 10_000  # beyond this many reruns/runs the claim is said to be undecidable in practice


@dataclass(frozen=True)
class Part:
    """One judged quantity of a claim, as data: what report.json's finding.parts holds, and what
    cost lines, `--until-decided`, `plan`, the fleet and the contradiction check read. `low` and
    `high` are the interval the verdict was taken on (widened by half the grid step); `decide` is,
    for an inconclusive part, what would decide it: {"reruns": M}, {"runs": n}, {"cases": k},
    {"grid": what would} or {"never": why}, with "refuting": True where the estimate lies on the
    refuting side (one such part decides a claim of parts); None once decided."""

    verdict: str
    estimate: float = math.nan
    low: float = math.nan
    high: float = math.nan
    level: float = 0.0  # the interval's confidence (a sequential look's nominal one, if stricter)
    unit: str = ""  # how the quantity reads: "ratio", "pct", "ns", "cycles", ...
    replication: str = ""  # what the interval rests on: reruns, runs, samples, cases, pooled
    m: int = 0
    n: int = 0
    why: str = ""  # why the verdict follows from the interval, a few words
    decide: dict | None = None
    label: str = ""
    quantity: str = ""  # the quantity's key for the contradiction check ('' : none shared)
    implies: tuple = (-math.inf, math.inf)  # where the quantity lies if the verdict holds
    repeated: bool = False  # judged on a repeated interval (a look of `timekit run --until-decided`)
    claim_level: float = 0.0  # the claim's own confidence, at which `decide` is sized

    def labelled(self, label, quantity=""):
        return replace(self, label=label, quantity=quantity or self.quantity)


@dataclass(frozen=True)
class Verdict:
    verdict: str  # confirmed, refuted, inconclusive
    evidence: str
    implies: tuple = field(default=(-math.inf, math.inf))  # where the quantity lies if the verdict holds
    part: Part | None = None  # the same judgement as data (None: a verdict with no interval)
    decide: dict | None = None  # for an inconclusive verdict without an interval: what would decide it

    def as_part(self, label="", quantity=""):
        """This verdict as a part of a finding: its interval's Part, or one with no interval."""
        if self.part is not None:
            return self.part.labelled(label, quantity)
        return Part(self.verdict, why=self.evidence, decide=self.decide if self.verdict == "inconclusive" else None,
                    label=label, quantity=quantity, implies=self.implies)


def format_interval(low, high, scale, digits=4):
    """An interval's ends as text to the same significant digits, trailing zeros kept where one end
    has fewer (0.2691–7.000, not 0.2691–7; 32–48 stays)."""
    texts = [format_value(x, scale, digits) for x in (low, high)]
    if scale == "pct" or not all(x and math.isfinite(x) for x in (low, high)):
        return texts
    same = max(_significant(text) for text in texts)
    return [format_value(x, scale, same, zeros=True) for x in (low, high)]


def _significant(text):
    """The significant digits of a number as format_value printed it ('0.9950 µs' -> 4, '7' -> 1)."""
    return len(text.split()[0].split("e")[0].lstrip("-").replace(".", "").lstrip("0"))


def _ci_text(est):
    low, high = est.widened()
    grid = f", widened by half the {format_value(est.grid, est.scale)} grid step" if est.grid else ""
    method = f" ({est.method})" if est.method else ""
    value, (low, high) = format_value(est.value, est.scale), format_interval(low, high, est.scale)
    return f"{value}, CI [{low}, {high}]{grid}{method}; {est.replication()}"


def never(why, cause="bound"):
    """What would decide a part that no number of reruns decides: `cause` is "grid" (a grid step
    as wide as the tolerance: nothing ever will), "bound" (the estimate on the bound, or within
    half a step of it, as it stands) or "practical" (beyond MAX_SUGGESTED)."""
    return {"never": why, "cause": cause}


def _needed(est, edges, refuting=False):
    """What would decide, as data (Part.decide): the smallest M (or n) whose interval, widened by
    half the grid step, clears `edges` (the bound it must exclude, or the band's two edges it must
    fit inside) with the estimate where it is, or why no number does. A t interval is sized by its
    wider side (a bootstrap's is not symmetric), a log-t interval on the log scale
    (deciding.on_log_scale), an F interval by the F quantiles; for a repeated interval it is the
    one at the claim's own level (Estimate.sizing)."""
    low, high, level = est.sizing()
    flag = {"refuting": True} if refuting else {}
    bound = min(edges, key=lambda e: abs(est.value - e))
    distance = abs(est.value - bound)
    if distance <= 0:
        return never("the estimate sits on the bound")
    room = distance - est.grid / 2
    if room <= 0:  # before the spread: identical medians on a grid have none, and the grid is why
        return never(f"on this {format_value(est.grid, est.scale)} grid, half a step ({format_value(est.grid / 2, est.scale)}) "
                     f"is at least the distance from the estimate to the bound ({format_value(distance, est.scale)})")
    half = max(est.value - low, high - est.value)
    if not (math.isfinite(half) and half > 0):
        return never("no spread to judge by", "bound")
    if est.unit == "cases":
        # the binomial half-width shrinks as 1/sqrt(cases) (normal approximation), the share held
        return {"cases": math.ceil(est.n * (half / room) ** 2), **flag}
    if est.unit == "bracket":  # lies between two measured points: only points between them narrow it
        between = f"a point measured between {format_value(est.low, est.scale)} and {format_value(est.high, est.scale)}"
        if isinstance(est, BracketUnion) and not est.agree():
            between += ", in invocations that agree where the step lies"
        return {"grid": between, **flag}
    if est.unit == "pooled":
        return never("one figure pooled over the runs has no interval that reruns narrow", "grid")
    from analysis.core import deciding  # scipy: only when a verdict is inconclusive

    if est.interval == "F":
        needed = deciding.smallest_f_reruns(est.value, bound, est.m, est.n, level, MAX_SUGGESTED)
        return {"reruns": needed, **flag} if needed else never("more reruns than is practical would be needed", "practical")
    if est.interval == "log t":
        half, room = deciding.on_log_scale(est.value, low, high, edges, est.grid) or (half, room)
    size = est.m if est.unit == "reruns" else est.n
    needed = deciding.smallest_size(half, size, level, room, MAX_SUGGESTED)
    if not needed:
        return never(f"more {'reruns' if est.unit == 'reruns' else 'runs'} than is practical would be needed", "practical")
    return {"reruns" if est.unit == "reruns" else "runs": needed, **flag}


def decide_text(decide):
    """The sentence an evidence paragraph and a cost line say about `decide`."""
    if not decide:
        return ""
    how = " (as refuted)" if decide.get("refuting") else ""
    if "quiet" in decide:
        return f"rerun on a quiet machine: {decide['quiet']}"
    if "never" in decide:
        return f"no number of reruns decides it: {decide['never']}"
    if "reruns" in decide:
        return f"about M = {decide['reruns']} reruns would decide it{how}"
    if "runs" in decide:
        return f"about n = {decide['runs']} runs (or M >= 2 reruns to judge drift) would decide it{how}"
    if "cases" in decide:
        return (f"a share or a correlation narrows only with more cases, not with runs or reruns: about "
                f"{decide['cases']} cases would decide it{how}")
    if "grid" in decide:
        return f"no number of reruns narrows it; {decide['grid']} would decide it"
    return ""


def decide_of(parts):
    """What would decide a claim made of `parts` that must all hold (all_of): one refuted part
    refutes it, so where an undecided part lies on the refuting side with a size, the smallest such
    size decides it; else every undecided part must be decided, so a part that nothing decides
    makes the claim undecidable, and otherwise the largest size of each kind counts. None when no
    part is undecided."""
    open_parts = [p.decide for p in parts if p.verdict == "inconclusive" and p.decide]
    if not open_parts:
        return None
    sized = [d for d in open_parts if "never" not in d and "grid" not in d]
    refuting = [d for d in sized if d.get("refuting")]
    if refuting:
        return min(refuting, key=_size)
    blocked = [d for d in open_parts if "never" in d or "grid" in d]
    if blocked:
        return dict(blocked[0])
    decide = {}
    for kind in ("reruns", "runs", "cases"):
        sizes = [d[kind] for d in sized if kind in d]
        if sizes:
            decide[kind] = max(sizes)
    return decide or None


def _size(decide):
    return next(decide[k] for k in ("reruns", "runs", "cases") if k in decide)


def _part(est, verdict, why, decide=None, implies=(-math.inf, math.inf)):
    low, high = est.widened()
    return Part(verdict, float(est.value), float(low), float(high), float(est.level), est.scale or "ratio", est.unit,
                int(est.m), int(est.n), why, decide if verdict == "inconclusive" else None, implies=implies,
                repeated=isinstance(est, RepeatedEstimate) and bool(getattr(est, "fixed", ())),
                claim_level=float(est.sizing()[2] or est.level))


def _judged(est, verdict, head, why, decide=None, implies=(-math.inf, math.inf)):
    """The Verdict: its evidence sentence and its Part, both from the same fields."""
    tail = f"; {decide_text(decide)}" if decide else ""
    return Verdict(verdict, f"{head}: {why}{tail}.", implies, _part(est, verdict, why, decide, implies))


def at_least(est, threshold, *, larger=True):
    """Claim: the quantity is at least `threshold` (larger=True) or at most it (larger=False)."""
    low, high = est.widened()
    side = ">=" if larger else "<="
    bound = format_value(threshold, est.scale)
    head = f"claim: {side} {bound}; {_ci_text(est)}"
    # the words follow the claim's side: an "at most 0.9" holds below 0.9 and fails above it
    holds, fails = ("beyond", "short of") if larger else ("at or below", "above")
    if (low >= threshold) if larger else (high <= threshold):
        return _judged(est, "confirmed", head, f"the whole CI is {holds} the claimed bound {bound}",
                       implies=(threshold, math.inf) if larger else (-math.inf, threshold))
    if (high < threshold) if larger else (low > threshold):
        return _judged(est, "refuted", head, f"the whole CI is {fails} the claimed bound {bound}",
                       implies=(-math.inf, threshold) if larger else (threshold, math.inf))
    short = (est.value < threshold) if larger else (est.value > threshold)
    return _judged(est, "inconclusive", head, f"the CI contains the bound {bound}", _needed(est, (threshold,), short))


def grid_bound(est, margin):
    """True when the estimate's grid step is at least 2 x the margin: its interval, widened by half
    a step on each side, can never lie inside null ± margin, whatever M."""
    return bool(est is not None and est.grid and est.grid >= 2 * margin)


def no_effect(est, margin, *, null=1.0):
    """Claim: no effect, judged by equivalence within null ± margin (pass a 90 % CI for TOST at 5 %)."""
    low, high = est.widened()
    lo_m, hi_m = null - margin, null + margin
    band = f"{format_value(null, est.scale)} ± {format_value(margin, est.scale)}"
    head = f"claim: no effect beyond ±{format_value(margin, est.scale)} of {format_value(null, est.scale)}; {_ci_text(est)}"
    if low > hi_m or high < lo_m:  # a coarse grid never keeps a clear difference from refuting
        return _judged(est, "refuted", head, f"the whole CI lies outside {band}",
                       implies=(hi_m, math.inf) if low > hi_m else (-math.inf, lo_m))
    if grid_bound(est, margin):
        return _judged(est, "inconclusive", head, f"the CI straddles {band}",
                       never(f"the {format_value(est.grid, est.scale)} grid step is at least the margin's width "
                             f"(±{format_value(margin, est.scale)})", "grid"))
    if lo_m <= low and high <= hi_m:
        return _judged(est, "confirmed", head, f"the whole CI lies inside {band} (equivalence)", implies=(lo_m, hi_m))
    inside = lo_m <= est.value <= hi_m  # inside, the interval must fit between both edges; outside, clear the nearer
    edges = (lo_m, hi_m) if inside else (min((lo_m, hi_m), key=lambda e: abs(est.value - e)),)
    return _judged(est, "inconclusive", head, f"the CI is neither inside nor outside {band}", _needed(est, edges, not inside))


def about(est, target, factor=ABOUT_FACTOR):
    """Claim: the quantity is about `target`, i.e. within a factor `factor` of it."""
    low, high = est.widened()
    band = (target / factor, target * factor)
    span = f"{format_value(band[0], est.scale)}–{format_value(band[1], est.scale)}"
    head = f"claim: about {format_value(target, est.scale)} (within a factor {factor:g}: {span}); {_ci_text(est)}"
    if high < band[0] or low > band[1]:
        return _judged(est, "refuted", head, f"the whole CI lies outside {span}",
                       implies=(-math.inf, band[0]) if high < band[0] else (band[1], math.inf))
    if est.grid and est.grid >= band[1] - band[0]:
        return _judged(est, "inconclusive", head, f"the CI straddles an edge of {span}",
                       never(f"the {format_value(est.grid, est.scale)} grid step is as wide as the band", "grid"))
    if band[0] <= low and high <= band[1]:
        return _judged(est, "confirmed", head, f"the whole CI lies in {span}", implies=band)
    outside = not band[0] <= est.value <= band[1]
    edges = (min(band, key=lambda e: abs(est.value - e)),) if outside else band
    return _judged(est, "inconclusive", head, f"the CI straddles an edge of {span}", _needed(est, edges, outside))


def direction(est, *, null=1.0, larger=True):
    """Claim: the quantity is larger (or smaller) than `null`."""
    low, high = est.widened()
    side = ">" if larger else "<"
    bound = format_value(null, est.scale)
    head = f"claim: {side} {bound}; {_ci_text(est)}"
    if (low > null) if larger else (high < null):
        return _judged(est, "confirmed", head, f"the CI excludes {bound} on the claimed side",
                       implies=(null, math.inf) if larger else (-math.inf, null))
    if (high < null) if larger else (low > null):
        return _judged(est, "refuted", head, f"the CI excludes {bound} on the other side",
                       implies=(-math.inf, null) if larger else (null, math.inf))
    other_side = (est.value < null) if larger else (est.value > null)
    return _judged(est, "inconclusive", head, f"the CI contains {bound}", _needed(est, (null,), other_side))


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

    `judged` is [(claim text, Part)] over every finding of a report; a decided part implies an
    interval for its quantity (confirmed 'at least 1.1' implies [1.1, inf)); two parts of the same
    quantity (Part.quantity) whose intervals do not overlap contradict."""
    found = []
    keyed = [(claim, part) for claim, part in judged if part.quantity and part.verdict in ("confirmed", "refuted")]
    for i, (claim_a, a) in enumerate(keyed):
        for claim_b, b in keyed[i + 1:]:
            if a.quantity != b.quantity:
                continue
            if max(a.implies[0], b.implies[0]) > min(a.implies[1], b.implies[1]):
                found.append((claim_a, claim_b, f"'{claim_a}' is {a.verdict} and '{claim_b}' is {b.verdict}, "
                                                f"which cannot both hold for {a.quantity}"))
    return found


def contradiction_warnings(judged):
    """The warnings for `contradictions(judged)`: one line per pair that cannot both hold."""
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
