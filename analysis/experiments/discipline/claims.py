"""
The talk's claims (seed 001) judged on the discipline experiment's conditions and reruns.

One function per claim; each returns its findings as a list (empty where the data cannot judge
it), and ``findings`` collects them in the report's order. ``data`` is the section's data: per
condition the summaries and variation, per quantity the conditions compared.
"""

import numpy as np

from analysis.core import fmt
from analysis.core.report import Finding
from analysis.experiments.discipline.variation import ALPHA, CV_WARNING


def _pairs(data, quantity):
    return {r["a"] + "|" + r["b"]: r for r in data["comparisons"][quantity]}


def same_core_noisier(data, cpus):
    """Two CPU-bound tasks on one core take longer and vary more than on separate cores."""
    pair = _pairs(data, "wall").get("same-core|separate-cores")
    if not pair:
        return [Finding(claim="Same core vs separate cores.", verdict="not testable here",
                        evidence=f"needs two usable CPUs; this sweep had {cpus or 'unknown'}.")]
    noisier = pair["levene_p_holm"] < ALPHA and pair["cv_a"] > pair["cv_b"]
    return [Finding(
        claim="Two CPU-bound tasks on the same core take longer and vary far more than on separate cores "
              "(talk, bare metal: CV 23.9 % vs 0.04 %, mean 1538 vs 737 ms).",
        verdict="confirmed" if noisier and pair["welch_p_holm"] < ALPHA and pair["ratio"] > 1 else "refuted",
        evidence=f"wall CV {pair['cv_a']:.2%} vs {pair['cv_b']:.2%}, mean ratio {pair['ratio']:.2f}; Brown-Forsythe "
                 f"p (Holm) = {pair['levene_p_holm']:.3g}, Welch p (Holm) = {pair['welch_p_holm']:.3g}, alpha = {ALPHA}, "
                 f"n = {pair['n_a']} and {pair['n_b']}. Without SMT here, 'same core' is one logical CPU shared "
                 "by time slicing, the closest this machine has to the talk's sibling threads."
                 + (" Here the competitor on the other CPU disturbed more: see the separate-core finding."
                    if pair["cv_b"] > pair["cv_a"] else ""))]


def separate_core_leaves_alone(data):
    """A CPU-bound task on a separate core leaves the measured task alone."""
    apart = _pairs(data, "wall").get("separate-cores|alone")
    if not apart:
        return []
    disturbed = (apart["levene_p_holm"] < ALPHA and apart["cv_a"] > apart["cv_b"]) or (
        apart["welch_p_holm"] < ALPHA and apart["ratio"] > 1 + CV_WARNING / 2)
    cpu = _pairs(data, "cpu").get("separate-cores|alone", {})
    return [Finding(
        claim="A CPU-bound task on a separate core leaves the measured task alone (talk: CV 0.04 %, as without it).",
        verdict="refuted" if disturbed else "confirmed",
        evidence=f"wall CV {apart['cv_a']:.2%} with the competitor on another CPU vs {apart['cv_b']:.2%} alone, mean ratio "
                 f"{apart['ratio']:.3f}; Brown-Forsythe p (Holm) = {apart['levene_p_holm']:.3g}, Welch p (Holm) = "
                 f"{apart['welch_p_holm']:.3g}, alpha = {ALPHA}, n = {apart['n_a']} and {apart['n_b']}; CPU-time CV "
                 f"{cpu.get('cv_a', float('nan')):.2%} vs {cpu.get('cv_b', float('nan')):.2%}."
                 + (" The run's own CPU time varies too, so the competitor slowed its execution, not just its "
                    "scheduling: in a VM two vCPUs can be hardware threads of one host core, the talk's SMT "
                    "contention arriving through the hypervisor." if disturbed and cpu.get("cv_a", 0) > 2 * cpu.get("cv_b", 1) else ""))]


def priority_helps(data):
    """A competitor at nice 19 slows the measured task less than one at nice 0."""
    niced = _pairs(data, "wall").get("same-core-niced|same-core")
    if not niced:
        return []
    return [Finding(
        claim="Priority helps: a competitor at nice 19 slows the measured task less than one at nice 0 "
              "(talk: set process priority).",
        verdict="confirmed" if niced["welch_p_holm"] < ALPHA and niced["ratio"] < 1 else "inconclusive",
        evidence=f"wall mean ratio niced/plain {niced['ratio']:.3f}, Welch p (Holm) = {niced['welch_p_holm']:.3g}, "
                 f"alpha = {ALPHA}, n = {niced['n_a']} and {niced['n_b']}. The competitor runs outside BenchExec's "
                 "cgroup; with group scheduling, nice weighs a task only against tasks of its own cgroup, so "
                 "under BenchExec priority is better set with cgroup CPU shares or by pinning.")]


def _cv_range(per_rerun):
    """'lo%-hi%' of the reruns' CVs, 'unknown' when none is finite."""
    cvs = [s["cv"] for s in per_rerun.values() if np.isfinite(s["cv"])]
    return f"{fmt.pct(min(cvs))}-{fmt.pct(max(cvs))}" if cvs else "unknown"


def reruns_differ(data):
    """Reruns differ beyond their within-run noise, so M >= 5 reruns are needed."""
    alone = data["conditions"].get("alone") or data["conditions"].get("unpinned")
    if not alone:
        return []
    v = alone["variation"]
    p = v["kruskal_p"]
    return [Finding(
        claim="Reruns of the same benchmark differ beyond their within-run noise, so M >= 5 reruns are needed "
              "(talk: 5 runs with CV 2.2-3.2 % each, 2.94 % pooled).",
        verdict="confirmed" if np.isfinite(p) and p < ALPHA else "inconclusive",
        evidence=f"{len(v['per_rerun'])} reruns of the task alone: Kruskal-Wallis H = {v['kruskal_h']:.3g}, p = {p:.3g}, "
                 f"alpha = {ALPHA}, n = {alone['wall']['n']}; within-run CV "
                 f"{_cv_range(v['per_rerun'])}, pooled {alone['wall']['cv']:.2%}, CV of rerun means {v['between_cv']:.2%}.")]


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
        claim="Disabling dynamic frequency scaling cuts variation about 10x (talk: CV 0.383 % -> 0.041 %).",
        verdict="not testable here",
        evidence=_frequency_reason(probes.get("frequency governor", {})))]


def smt_contention(probes):
    """Disabling SMT removes contention between siblings: not testable where SMT is off."""
    smt = probes.get("SMT", {})
    if smt.get("value") in (None, "on"):
        return []
    return [Finding(
        claim="Disabling SMT removes contention between sibling threads.", verdict="not testable here",
        evidence=f"SMT is '{smt.get('value', 'unknown')}' on this machine: there are no siblings to compare; "
                 "the same-core condition above shows time-slicing contention instead.")]


def findings(data, environment, cpus):
    """The talk's claims in the report's order; ``environment``: a sweep's probe list."""
    probes = {p["name"]: p for p in environment}
    return [*same_core_noisier(data, cpus), *separate_core_leaves_alone(data), *priority_helps(data),
            *reruns_differ(data), *fixed_frequency_cuts_variation(probes), *smt_contention(probes)]
