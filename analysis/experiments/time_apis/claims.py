"""
The thesis's claims about timing APIs, each judged on one input's samples by the report's
verdict policy (docs/verdicts.md): ratios over reruns where there are two or more, each of k parts
on a 1 - alpha/k interval, and a part on a timer grid twice the margin set aside unless it refutes
(docs/experiments.md, "Claims and ratios"). One function per claim returns its findings as a list
(empty where the data cannot judge it); each part names its quantity for the contradiction check.
"""

import dataclasses
import math

import numpy as np

from analysis.core import fmt, replication, timers, verdicts
from analysis.core.report import Claim, Finding
from analysis.core.verdicts import ClaimSpec, Estimate, Verdict, family
from analysis.experiments.time_apis import modes
from analysis.experiments.time_apis.comparisons import load_ratio, ratio, ratio_grid
from analysis.experiments.time_apis.samples import api_label

NEGLIGIBLE = 0.02  # "does not change", "does not increase", "stays flat": the mean within 1 +- 2 %
CLOSE = 0.05  # "close": within 5 %
OFTEN = 0.5  # "often": in at least half of the (API, load) distributions
ON_GRID = 0.95  # "reports in steps of X": at least 95 % of the values on X's grid
TIMER_STEPS = {"gnu": 0.01, "bash": 0.001}
# runs per rerun n and reruns M of the presets (quick: 10 x 3; thesis: 100 x 10, its 1000 runs per level)
SIZES = {"quick": (10, 3), "thesis": (100, 10)}
# parts of the claims at the quick preset's 4 APIs and loads 0-2 on 2 CPUs (the family each part is judged in;
# a grid-bound part counts in it, as it may still refute)
QUICK_PARTS = {"api": 3, "cpu": 8, "wall": 8}

CALIBRATION = (
    ClaimSpec("time-apis: the timing API does not change the CPU time (each API within 2 % of RunExec)", "no_effect",
              NEGLIGIBLE, SIZES, confidence=family(0.90, QUICK_PARTS["api"])),
    ClaimSpec("time-apis: background load does not increase the CPU time (each level within 2 %)", "no_effect",
              NEGLIGIBLE, SIZES, confidence=family(0.90, QUICK_PARTS["cpu"])),
    ClaimSpec("time-apis: wall time stays flat below the CPU count (within 2 %)", "no_effect", NEGLIGIBLE, SIZES,
              confidence=family(0.90, QUICK_PARTS["wall"])),
    ClaimSpec("time-apis: wall time rises once all CPUs are busy", "direction", 1.0, SIZES,
              confidence=family(0.95, QUICK_PARTS["wall"])),
    ClaimSpec("time-apis: clock() is within 5 % of the cgroup's CPU time", "no_effect", CLOSE, SIZES, confidence=0.90),
)


def _missing(what):
    return Verdict("inconclusive", f"{what}: fewer than two valid runs on a side.",
                   decide=verdicts.never("fewer than two valid runs on a side: the runs failed", "bound"))


def _slug(label):
    """'input 43434343' -> 'input-43434343': the input's part of a finding id."""
    return "-".join(label.lower().replace(":", " ").split())


def _parts_evidence(parts, level, kind, aside=(), family_size=None):
    """'k parts, each on a L interval (kind, Bonferroni over k): label: evidence ... Grid-bound parts: ...'."""
    k = family_size or len(parts)
    head = (f"{len(parts)} part(s), each on a {level:.2%} interval ({kind}"
            + (f", Bonferroni over {k}" if k > 1 else "") + "). ")
    return head + " ".join(f"{label}: {v.evidence}" for label, v in parts) + _aside_text(aside)


def _aside_text(aside):
    """' Grid-bound parts (...): label: why; ...' ('' for none); aside holds (part, why)."""
    return (" Grid-bound parts (more reruns cannot narrow an interval below the grid; not outside the margin "
            "either): " + "; ".join(f"{part[0]}: {why}" for part, why in aside) + ".") if aside else ""


def _split_on_grid(samples, quantity, candidates, margin):
    """(the candidates, (label, base mask, other mask, ...), whose grid allows deciding ±margin,
    [(part, why)] of those that can only refute)."""
    kept, aside = [], []
    for part in candidates:
        label, base, other = part[:3]
        why = ratio_grid(samples, quantity, base, other).too_coarse(margin)
        (aside.append((part, why)) if why else kept.append(part))
    return kept, aside


def _judge_grid_bound(aside, judge):
    """A grid-bound part can never be confirmed, but one whose interval lies wholly outside the
    margin refutes: ([(part, verdict)] of those that refute, [(part, why)] of those set aside).
    judge(part) -> Verdict, at the whole family's level."""
    refuting, still_aside = [], []
    for part, why in aside:
        v = judge(part)
        (refuting.append((part, v)) if v.verdict == "refuted" else still_aside.append((part, why)))
    return refuting, still_aside


def _none_left(claim, aside, id):
    return Finding(claim, "not testable here", "every part's grid is too coarse for the margin, so no number of "
                                               "reruns decides any of them." + _aside_text(aside), id=id,
                   why="every part's timer grid is too coarse for the 2 % margin")


def _judged_equivalences(samples, quantity, candidates, estimate, others=0):
    """The 'no effect beyond ±NEGLIGIBLE' parts of a claim, judged as one Bonferroni family with
    `others` parts of another kind: ([(part, verdict)] of the parts judged, [(part, why)] of the
    grid-bound parts set aside, the family's size). estimate(part, level) -> Estimate or None."""
    kept, aside = _split_on_grid(samples, quantity, candidates, NEGLIGIBLE)
    k = len(kept) + len(aside) + others
    level = family(0.90, k)

    def judge(part):
        est = estimate(part, level)
        return verdicts.no_effect(est, NEGLIGIBLE) if est else _missing(part[0])

    refuting, aside = _judge_grid_bound(aside, judge)
    return [(part, judge(part)) for part in kept] + refuting, aside, k


def api_does_not_matter(samples, apis, base, label):
    """The choice of timing API does not change the measured CPU time (at the lowest load)."""
    claim = Claim("the choice of timing API does not change the measured CPU time", "thesis, ch. 3.3", label)
    id = f"time-apis/{_slug(label)}/api-leaves-cpu-time"
    others = [a for a in apis if a != "runexec"]
    if "runexec" not in apis or not others:
        return [Finding(claim, "not testable here", "needs RunExec (the cgroup) and at least one other timing API.",
                        id=id)]
    reference = (samples.api == "runexec") & (samples.load == base)
    candidates = [(f"{api_label(api)} / RunExec at load {base}", reference, (samples.api == api) & (samples.load == base),
                   api) for api in others]
    judged_parts, aside, k = _judged_equivalences(
        samples, "observed_cpu", candidates,
        lambda part, level: ratio(samples, "observed_cpu", *part[1:3], level, f"CPU time of {part[3]} / runexec"))
    if not judged_parts:
        return [_none_left(claim, aside, id)]
    parts = [(part[0], v) for part, v in judged_parts]
    return [Finding(claim, verdicts.all_of([v for _, v in parts]),
                    _parts_evidence(parts, family(0.90, k), "equivalence", aside, k) + " Each timer's own offset is in the "
                    "table of timer resolution and bias.", id=id,
                    parts=[v.as_part(part[0], f"{label}: CPU time {part[3]} / runexec at load {base}")
                           for part, v in judged_parts])]


def _load_masks(samples, api, base, load):
    mask = samples.api == api
    return mask & (samples.load == base), mask & (samples.load == load)


def load_leaves_cpu_time(samples, apis, loads, base, label):
    """Background load does not increase the CPU time the program uses."""
    claim = Claim("background processes do not increase the CPU time the program uses", "thesis, Fig. 3.4", label)
    id = f"time-apis/{_slug(label)}/load-leaves-cpu-time"
    pairs = [(api, load) for api in apis for load in loads if load != base]
    if not pairs:
        return [Finding(claim, "not testable here", "only one load level measured.", id=id)]
    candidates = [(f"{api_label(api)} {base}→{load}", *_load_masks(samples, api, base, load), api, load)
                  for api, load in pairs]
    judged_parts, aside, k = _judged_equivalences(
        samples, "observed_cpu", candidates,
        lambda part, level: load_ratio(samples, "observed_cpu", part[3], base, part[4], level))
    if not judged_parts:
        return [_none_left(claim, aside, id)]
    parts = [(part[0], v) for part, v in judged_parts]
    return [Finding(claim, verdicts.all_of([v for _, v in parts]),
                    _parts_evidence(parts, family(0.90, k), "equivalence", aside, k), id=id,
                    parts=[v.as_part(part[0], f"{label}: CPU time {part[3]} load {part[4]} / load {base}")
                           for part, v in judged_parts])]


def wall_flat_until_cores_busy(samples, apis, loads, base, label, cores):
    """Wall time stays flat until all cores are busy, then rises. The 'rises' parts have no margin
    and are never set aside; with every 'flat' part set aside, half the claim cannot be judged."""
    if not (cores and len(loads) > 1):
        return []
    claim = Claim(f"wall time stays flat until all {cores} cores are busy, then rises", "thesis, Fig. 3.8", label)
    id = f"time-apis/{_slug(label)}/wall-flat-then-rises"
    below = [(api, load) for api in apis for load in loads if base < load < cores]
    above = [(api, load) for api in apis for load in loads if load >= cores and load != base]
    if not below or not above:
        return [Finding(claim, "inconclusive", f"needs load levels below and at/above {cores} (measured: "
                                               f"{', '.join(map(str, loads))}).", id=id,
                        decide={"grid": f"load levels below and at or above {cores} busy processes"})]
    candidates = [(f"flat: {api_label(api)} {base}→{load}", *_load_masks(samples, api, base, load), api, load)
                  for api, load in below]
    flat, aside, k = _judged_equivalences(
        samples, "observed_wall", candidates,
        lambda part, level: load_ratio(samples, "observed_wall", part[3], base, part[4], level), others=len(above))
    if not flat:
        return [Finding(claim, "not testable here", "no 'flat' part is left to judge: every one's grid is too coarse "
                                                    "for the margin." + _aside_text(aside), id=id,
                        why="every 'flat' part's timer grid is too coarse for the 2 % margin")]
    parts, data = [], []
    for (part_label, _, _, api, load), v in flat:
        parts.append((part_label, v))
        data.append(v.as_part(part_label, f"{label}: wall time {api} load {load} / load {base}"))
    for api, load in above:
        est = load_ratio(samples, "observed_wall", api, base, load, family(0.95, k))
        v = verdicts.direction(est) if est else _missing(f"{api} load {load}")
        parts.append((f"rises: {api_label(api)} {base}→{load}", v))
        data.append(v.as_part(parts[-1][0], f"{label}: wall time {api} load {load} / load {base}"))
    return [Finding(claim, verdicts.all_of([v for _, v in parts]), parts=data, id=id, evidence=
                    f"{k} parts: 'flat' below {cores} busy processes = equivalence within ±{NEGLIGIBLE:.0%} on "
                    f"{family(0.90, k):.2%} intervals, 'rises' at or above = ratio > 1 on {family(0.95, k):.2%} "
                    f"intervals (Bonferroni over {k}). " + " ".join(f"{lab}: {v.evidence}" for lab, v in parts)
                    + _aside_text(aside))]


def self_clock_close(samples, label):
    """The program's own clock() time is close to the observed (cgroup) CPU time."""
    runexec = samples.select((samples.api == "runexec") & samples.valid & np.isfinite(samples.self_clock))
    est = replication.paired_ratio(runexec.cgroup_cpu, runexec.self_clock, runexec.rerun, confidence=0.90,
                                   what="clock() / cgroup CPU time")
    if est is None:
        return []
    v = verdicts.no_effect(est, CLOSE)
    diff = timers.bias_against(runexec.self_clock, runexec.cgroup_cpu)
    return [Finding(
        claim=Claim("the program's own clock() time is close to the observed CPU time", "thesis, Fig. 3.5", label),
        verdict=v.verdict, id=f"time-apis/{_slug(label)}/clock-close-to-cgroup",
        parts=[v.as_part("clock() / cgroup CPU time", f"{label}: clock() / cgroup CPU time")],
        evidence=f"RunExec runs of all load levels, 'close' = within {CLOSE:.0%} (equivalence, 90 % interval): "
                 f"{v.evidence} Per run, clock() minus cgroup CPU time = {fmt.ms(diff.mean_diff):.3f} ms (95 % CI "
                 f"{fmt.ms(diff.ci_low):.3f} – {fmt.ms(diff.ci_high):.3f}, n = {diff.n}): clock() misses process "
                 "start-up and exit, which the cgroup counts.")]


def distributions_multimodal(label, data):
    """CPU-time distributions are often bi- or tri-modal: judged only at an n where the mode rule
    can see a second mode of the size claimed."""
    rows = data["modality"]
    if not rows:
        return []
    multi = [m for m in rows if m["modes"] >= 2]
    n = min(m["n"] for m in rows)
    value, low, high = replication.share(len(multi), len(rows))
    est = Estimate(value, low, high, unit="cases", n=len(rows), m=data.get("reruns", 1), scale="ratio",
                   method=f"share of the {len(rows)} (API, load) distributions with 2+ modes, Clopper-Pearson 95 %")
    v = verdicts.at_least(est, OFTEN)
    blind = n < modes.DETECTS_FROM
    if v.verdict == "refuted" and blind:
        blind_why = f"at n = {n} runs per distribution the mode rule cannot see a second mode"
        v = Verdict("inconclusive", part=dataclasses.replace(
            v.part, verdict="inconclusive", why=blind_why, implies=(-math.inf, math.inf),
            decide={"runs": modes.DETECTS_FROM}), evidence=f"{v.evidence} Yet at n = {n} runs per distribution the mode rule cannot see a "
                                    f"second mode holding {modes.SECOND_MODE:.0%} of the runs (it keeps a mode only with "
                                    f"at least {modes.rule_floor(n):.1%} of them), so finding none is no evidence against "
                                    f"the claim: inconclusive. n >= {modes.DETECTS_FROM} runs per (API, load) would let "
                                    f"it see one (found in >= {modes.POWER:.0%} of simulated samples, two modes "
                                    f"{modes.SEPARATION:g} sd apart).")
    found = ", ".join(f"{api_label(m['api'])} load {m['load']}: {m['modes']}" for m in multi) or "none"
    return [Finding(
        claim=Claim("CPU-time distributions are often bi- or tri-modal", "thesis, Fig. 3.6/3.7", label),
        verdict=v.verdict, id=f"time-apis/{_slug(label)}/often-multimodal",
        parts=[v.as_part("share of distributions with 2+ modes", f"{label}: share of multimodal distributions")],
        evidence=f"'Often' = in at least {OFTEN:.0%} of them: {v.evidence} Distributions with 2+ modes: {found}. "
                 f"Runs of all reruns pooled per distribution. Method: {rows[0]['method']}.")]


def timer_steps(samples, apis, label, data):
    """GNU time reports in steps of 10 ms, bash in steps of 1 ms: one finding per such timer."""
    found = []
    for q in data["timer_quality"]:
        step = TIMER_STEPS.get(q["api"])
        if step is None:
            continue
        group = samples.select((samples.api == q["api"]) & samples.valid)
        values = np.concatenate([group.timer_user, group.timer_real])
        values = values[np.isfinite(values) & (values != 0)]
        share, low, high = replication.share(round(timers.share_on_grid(values, step) * values.size), values.size)
        runs, invocations = int(group.valid.size), len(set(zip(group.load.tolist(), group.rerun.tolist())))
        on_grid = verdicts.at_least(Estimate(share, low, high, unit="cases", n=int(values.size), scale="ratio",
                                             m=invocations, level=0.95,
                                             method=f"share of the {values.size} user and real times of {runs} runs "
                                                    f"from {invocations} invocation(s) on the {step * 1e3:g} ms grid, "
                                                    "Clopper-Pearson 95 %"), ON_GRID)
        coarser = q["resolution"]["step"]
        verdict, why, part = on_grid.verdict, "", on_grid.as_part("share of values on the grid")
        if np.isfinite(coarser) and coarser > step * 1.5:
            verdict = "refuted"
            part = dataclasses.replace(part, verdict="refuted", decide=None,
                                       why=f"the values lie on a coarser {coarser * 1e3:g} ms grid")
            why = (f" The values lie on a coarser grid, {coarser * 1e3:g} ms ({100 * q['resolution']['share_on_grid']:.1f} "
                   "% of them), so the steps are larger than claimed.")
        found.append(Finding(
            claim=Claim(f"{api_label(q['api'])} reports in steps of {step * 1e3:g} ms", label=label),
            verdict=verdict, id=f"time-apis/{_slug(label)}/{q['api']}-steps", parts=[part],
            evidence=f"'In steps of X' = at least {ON_GRID:.0%} of the values on X's grid and no coarser grid holding "
                     f"99 % of them: {on_grid.evidence}{why} Coarsest grid holding 99 %: "
                     f"{coarser * 1e3:g} ms; CPU bias against the cgroup {q['cpu_bias']['mean_diff'] * 1e3:.3f} ms "
                     f"({q['cpu_bias']['summary']}), n = {q['cpu_bias']['n']}."))
    return found


def findings(samples, apis, loads, label, cores, data):
    """The thesis's claims for one input, in the report's order."""
    base = min(loads)
    return [*api_does_not_matter(samples, apis, base, label),
            *load_leaves_cpu_time(samples, apis, loads, base, label),
            *wall_flat_until_cores_busy(samples, apis, loads, base, label, cores),
            *self_clock_close(samples, label), *distributions_multimodal(label, data),
            *timer_steps(samples, apis, label, data)]
