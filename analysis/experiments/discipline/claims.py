"""
The talk's claims (seed 001) judged on the discipline experiment's conditions and reruns, by the
report's verdict policy (docs/verdicts.md).

The rerun is the unit of replication: the conditions run interleaved in every rerun, so each
rerun pairs them, and every interval is a t interval over per-rerun values (ratios of means,
ratios of CVs). A claim made of k parts judges each on a 1 - alpha/k interval (Bonferroni). One
function per claim; each returns its findings as a list (empty where the data cannot judge it)
and names each part's quantity (Part.quantity) for the report's contradiction check.
"""

from analysis.core import verdicts
from analysis.core.report import Claim, Finding
from analysis.core.verdicts import FAR_FACTOR, ClaimSpec, Verdict, family
from analysis.experiments.discipline.samples import LABEL
from analysis.experiments.discipline.variation import cv_ratio, mean_ratio, rerun_effect
from analysis.machine.scheduling import nice_can_act

NEGLIGIBLE = 0.02  # "left alone", "as without it": the mean within 1 +- 2 %
CV_MARGIN = 0.5  # ... and the CV within 1 +- 0.5 of the CV alone (CVs of 10 runs vary by ~25 % by chance)
PRIORITY_BENEFIT = 0.90  # "nice 19 helps": niced / plain competitor at most 0.9 (at least 10 % faster)
NICE_19_SHARE = 1024 / (1024 + 15)  # CFS weights: nice 0 = 1024, nice 19 = 15
# runs per rerun n and reruns M of the presets (quick: 10 x 5, talk: 30 x 5)
SIZES = {"quick": (10, 5), "talk": (30, 5)}

# the claims whose estimate is a ratio of means over reruns, as the calibration simulates it; the
# CV ratios are calibrated by tests/test_verdict_cases.py, whose simulation draws per-rerun CVs
CALIBRATION = (
    ClaimSpec("discipline: the same core takes longer than separate cores", "direction", 1.0, SIZES,
              confidence=family(0.95, 2)),
    ClaimSpec("discipline: a separate core leaves the mean alone (within 2 %)", "no_effect", NEGLIGIBLE, SIZES,
              confidence=family(0.90, 2)),
    ClaimSpec("discipline: a competitor at nice 19 slows the task at least 10 % less", "at_least", PRIORITY_BENEFIT,
              SIZES, larger=False),
)


def _needs_reruns(what):
    return Verdict("inconclusive", f"{what}: needs two or more reruns with two or more runs each in both conditions.",
                   decide={"reruns": 2})


def _judge(estimate, rule, *args, what="", **kwargs):
    return rule(estimate, *args, **kwargs) if estimate is not None else _needs_reruns(what)


def _pair(a, b):
    return f"{LABEL.get(a, a)} / {LABEL.get(b, b)}"


def same_core_noisier(runs, cpus):
    """Two CPU-bound tasks on one core take longer and vary far more than on separate cores."""
    claim = Claim("Two CPU-bound tasks on the same core take longer and vary far more than on separate cores",
                  "talk, bare metal: CV 23.9 % vs 0.04 %, mean 1538 vs 737 ms", sentence=True)
    present = set(runs.condition.tolist())
    if not {"same-core", "separate-cores"} <= present:
        return [Finding(claim=claim, verdict="not testable here", id="discipline/same-core-noisier",
                        evidence=f"needs two usable CPUs; this sweep had {cpus or 'unknown'}.")]
    level = family(0.95, 2)
    longer = _judge(mean_ratio(runs, "same-core", "separate-cores", confidence=level), verdicts.direction,
                    what="mean ratio")
    spread = cv_ratio(runs, "same-core", "separate-cores", confidence=level)
    far = _judge(spread, verdicts.at_least, FAR_FACTOR, what="CV ratio")
    more = _judge(spread, verdicts.direction, what="CV ratio")
    return [Finding(
        claim=claim, verdict=verdicts.all_of([longer, far]), id="discipline/same-core-noisier",
        parts=[longer.as_part("takes longer (wall mean)", "wall mean same-core / separate-cores"),
               far.as_part(f"varies far more (wall CV, >= {FAR_FACTOR:g}x)", "wall CV same-core / separate-cores")],
        evidence=f"Two parts, each on a {level:.1%} interval (Bonferroni over 2). Takes longer (wall mean "
                 f"{_pair('same-core', 'separate-cores')}): {longer.evidence} Varies far more ('far' = at least "
                 f"{FAR_FACTOR:g}x the CV, the report's one meaning; CVs per rerun, so one noisy rerun counts once): "
                 f"{far.evidence} Varies more at all: {more.verdict}. Without SMT here, 'same core' is one logical "
                 "CPU shared by time slicing, the closest this machine has to the talk's sibling threads.")]


def separate_core_leaves_alone(runs):
    """A CPU-bound task on a separate core leaves the measured task alone: mean and CV as alone."""
    if not {"separate-cores", "alone"} <= set(runs.condition.tolist()):
        return []
    level = family(0.90, 2)  # equivalence (TOST at 5 %) of two parts
    mean = _judge(mean_ratio(runs, "separate-cores", "alone", confidence=level), verdicts.no_effect, NEGLIGIBLE,
                  what="mean ratio")
    cv = _judge(cv_ratio(runs, "separate-cores", "alone", confidence=level), verdicts.no_effect, CV_MARGIN,
                what="CV ratio")
    verdict = verdicts.all_of([mean, cv])
    cpu = cv_ratio(runs, "separate-cores", "alone", "cpu")
    slowed = (f" The run's own CPU time varies more too (CPU-time CV ratio {cpu.value:.2f}, 95 % CI [{cpu.low:.2f}, "
              f"{cpu.high:.2f}]): the competitor slowed its execution, not just its scheduling; in a VM two vCPUs can "
              "be hardware threads of one host core, the talk's SMT contention arriving through the hypervisor."
              if verdict != "confirmed" and cpu is not None and cpu.low > 1 else "")
    return [Finding(
        claim=Claim("A CPU-bound task on a separate core leaves the measured task alone", "talk: CV 0.04 %, as without it",
                    sentence=True),
        verdict=verdict, id="discipline/separate-core-leaves-alone",
        parts=[mean.as_part("wall mean", "wall mean separate-cores / alone"),
               cv.as_part("wall CV", "wall CV separate-cores / alone")],
        evidence=f"Two parts, each on a {level:.1%} interval (equivalence, Bonferroni over 2). Wall mean "
                 f"{_pair('separate-cores', 'alone')}: {mean.evidence} Wall CV {_pair('separate-cores', 'alone')}: "
                 f"{cv.evidence}{slowed}")]


PRIORITY_CLAIM = Claim("Priority helps: a competitor at nice 19 slows the measured task less than one at nice 0",
                       "talk: set process priority", sentence=True)


def nice_was_testable(placements):
    """(True, False or None, why): whether nice could act against the measured runs in every niced
    step, from what the runner recorded per step (analysis.machine.scheduling), never from this machine."""
    answers = [nice_can_act(p) for p in placements] or [nice_can_act(None)]
    for can, why in answers:
        if can is not True:
            return can, why
    return True, answers[0][1] + (f", in all {len(answers)} niced reruns" if len(answers) > 1 else "")


def priority_helps(runs, placements=()):
    """A competitor at nice 19 slows the measured task at least 10 % less than one at nice 0; only
    where the runner recorded that nice could act (competitor and runs in one scheduling group)."""
    if not {"same-core-niced", "same-core"} <= set(runs.condition.tolist()):
        return []
    testable, where = nice_was_testable(placements)
    if not testable:
        return [Finding(claim=PRIORITY_CLAIM, verdict="not testable here", id="discipline/nice-19-helps",
                        why=f"nice could not be shown to act on the runs: {where}",
                        evidence=f"nice weighs a task only against the tasks of its own scheduling group (its cgroup of "
                                 f"the cpu controller and, where sched_autogroup_enabled is 1, its session's autogroup: "
                                 f"sched(7)); {where}.")]
    helps = _judge(mean_ratio(runs, "same-core-niced", "same-core"), verdicts.at_least, PRIORITY_BENEFIT, larger=False,
                   what="mean ratio")
    slowdown = mean_ratio(runs, "same-core", "alone") if "alone" in set(runs.condition.tolist()) else None
    working = (f"; a plain competitor slows the task {slowdown.value:.2f}x here, and a working nice 19 (CFS weight 15 "
               f"against 1024: {NICE_19_SHARE:.1%} of the CPU for the task) would undo most of that, a ratio near "
               f"{1 / slowdown.value:.2f}" if slowdown is not None else "")
    return [Finding(
        claim=PRIORITY_CLAIM,
        verdict=helps.verdict, id="discipline/nice-19-helps",
        parts=[helps.as_part("wall mean niced / plain competitor", "wall mean same-core-niced / same-core")],
        evidence=f"Wall mean {_pair('same-core-niced', 'same-core')}: {helps.evidence} 'Helps' = at least "
                 f"{1 - PRIORITY_BENEFIT:.0%} faster with the niced competitor{working}. Nice can act here: {where} "
                 "(recorded by the runner per niced step). The competitor runs outside BenchExec's measuring cgroups, "
                 "so its CPU time is not counted in the runs'.")]


def reruns_differ(runs):
    """Reruns differ beyond their within-run noise, so M >= 5 reruns are needed."""
    condition = next((c for c in ("alone", "unpinned") if c in set(runs.condition.tolist())), None)
    if condition is None:
        return []
    mask = runs.of(condition)
    differ = _judge(rerun_effect(runs.wall[mask], runs.rerun[mask]), verdicts.direction, what="rerun effect")
    return [Finding(
        id="discipline/reruns-differ", parts=[differ.as_part("theta", f"rerun effect {condition}")],
        claim=Claim("Reruns of the same benchmark differ beyond their within-run noise, so M >= 5 reruns are needed",
                    "talk: 5 runs with CV 2.2-3.2 % each, 2.94 % pooled", sentence=True),
        verdict=differ.verdict,
        evidence=f"{LABEL.get(condition, condition)}, wall time; the quantity is theta = 1 + n var(rerun means) / "
                 f"var(within reruns), 1 when reruns differ only by chance: {differ.evidence}")]


def _frequency_reason(governor):
    value = governor.get("value")
    if value is None:
        return "the frequency governor was not recorded with these results, so frequency scaling cannot be judged."
    if value == "no cpufreq":
        return ("not controllable here: the kernel exposes no cpufreq (no scaling_governor files; the hypervisor sets "
                "the clock), so frequency scaling cannot be switched on and off for a comparison.")
    return (f"governor is '{value}'; the kit does not switch it during a sweep. Compare a sweep made after "
            "'timekit env tune' (performance governor, no boost) with one made before, using 'timekit compare'.")


def fixed_frequency_cuts_variation(probes):
    """Disabling dynamic frequency scaling cuts variation about 10x: not varied by a sweep."""
    return [Finding(
        id="discipline/fixed-frequency-cuts-variation",
        claim=Claim("Disabling dynamic frequency scaling cuts variation about 10x", "talk: CV 0.383 % -> 0.041 %",
                    sentence=True),
        verdict="not testable here",
        evidence=_frequency_reason(probes.get("frequency governor", {})))]


def smt_contention(probes):
    """Disabling SMT removes contention between siblings: not testable where SMT is off."""
    smt = probes.get("SMT", {})
    if smt.get("value") in (None, "on"):
        return []
    return [Finding(
        claim=Claim("Disabling SMT removes contention between sibling threads", sentence=True), verdict="not testable here",
        id="discipline/smt-contention", why=f"SMT is '{smt.get('value', 'unknown')}': no siblings to compare",
        evidence=f"SMT is '{smt.get('value', 'unknown')}' on this machine: there are no siblings to compare; "
                 "the same-core condition above shows time-slicing contention instead.")]


def findings(runs, environment, cpus, placements=()):
    """The talk's claims in the report's order; ``environment``: a sweep's probe list; ``placements``: what the runner recorded per niced step
    about the scheduling groups of the competitor and the runs (Step.scheduling)."""
    probes = {p["name"]: p for p in environment}
    return [*same_core_noisier(runs, cpus), *separate_core_leaves_alone(runs), *priority_helps(runs, placements),
            *reruns_differ(runs), *fixed_frequency_cuts_variation(probes), *smt_contention(probes)]
