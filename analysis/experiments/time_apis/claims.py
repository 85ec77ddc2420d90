"""
The thesis's claims about timing APIs, each judged on one input's samples and test results.

One function per claim; each returns its findings as a list (empty where the data cannot judge
it), and ``findings`` collects them in the report's order. ``data`` is what the section keeps
for the input: summaries, API tests, load effects, modality and timer quality.
"""

import numpy as np

from analysis.core import fmt
from analysis.core import stats
from analysis.core.report import Finding
from analysis.experiments.time_apis.comparisons import ALPHA, PRACTICAL
from analysis.experiments.time_apis.samples import api_label


def _load_evidence(results, base):
    if not results:
        return "only one load level measured"
    parts = [f"{api_label(r['api'])} {base}→{r['load']}: ratio {r['ratio']['ratio']:.4f} "
             f"p(Holm) {r['welch']['p_adjusted']:.3g} {r['verdict']}" for r in results]
    n = results[0]["welch"]["n_a"]
    return f"Welch t, alpha {ALPHA}, Holm, n = {n} per level: " + "; ".join(parts)


def api_does_not_matter(samples, apis, base, label, data):
    """The choice of timing API does not change the measured CPU time (at the lowest load)."""
    at_base = [t for t in data["api_tests"] if t["load"] == base and t["test"] == "Welch t"]
    ref = samples.observed_cpu[(samples.api == "runexec") & (samples.load == base) & samples.valid]
    ratios = []
    for api in apis:
        if api == "runexec" or len(ref) < 2:
            continue
        values = samples.observed_cpu[(samples.api == api) & (samples.load == base) & samples.valid]
        if len(values) >= 2:
            ratios.append((api, stats.ratio_of_means(ref, values)))
    different = [t for t in at_base if t["significant"]]
    practically = [(a, r) for a, r in ratios if abs(r.ratio - 1) >= PRACTICAL and (r.ci_low > 1 or r.ci_high < 1)]
    evidence = "; ".join(f"{api_label(a)}/RunExec = {r.ratio:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}]" for a, r in ratios)
    return [Finding(
        claim=f"{label}: the choice of timing API does not change the measured CPU time (thesis, ch. 3.3)",
        verdict="refuted" if practically else "confirmed",
        evidence=f"load {base}: Welch t over {len(at_base)} API pairs, alpha {ALPHA}, Holm: "
                 f"{len(different)} significant; ratios of means (bootstrap 95 % CI): {evidence or 'n/a'}; "
                 f"a difference counts when its CI excludes 1 and exceeds {PRACTICAL:.0%}.",
    )]


def load_leaves_cpu_time(base, label, data):
    """Background load does not increase the CPU time the program uses."""
    cpu_up = [r for r in data["cpu_vs_load"] if r["verdict"] == "slower"]
    return [Finding(
        claim=f"{label}: background processes do not increase the CPU time the program uses (thesis, Fig. 3.4)",
        verdict="refuted" if cpu_up else ("confirmed" if data["cpu_vs_load"] else "not testable here"),
        evidence=_load_evidence(data["cpu_vs_load"], base),
    )]


def wall_flat_until_cores_busy(loads, base, label, cores, data):
    """Wall time stays flat until all cores are busy, then rises."""
    if not (cores and len(loads) > 1):
        return []
    below = [r for r in data["wall_vs_load"] if r["load"] < cores]
    above = [r for r in data["wall_vs_load"] if r["load"] >= cores]
    flat_below = all(r["verdict"] == "~" for r in below)
    rises_above = bool(above) and all(r["verdict"] == "slower" for r in above)
    if not below or not above:
        verdict = "inconclusive"
    else:
        verdict = "confirmed" if flat_below and rises_above else "refuted"
    return [Finding(
        claim=f"{label}: wall time stays flat until all {cores} cores are busy, then rises (thesis, Fig. 3.8)",
        verdict=verdict,
        evidence=_load_evidence(data["wall_vs_load"], base)
        + ("" if below and above else f"; needs load levels below and at/above {cores}"),
    )]


def self_clock_close(samples, label):
    """The program's own clock() time is close to the observed (cgroup) CPU time."""
    runexec = samples.select((samples.api == "runexec") & samples.valid & np.isfinite(samples.self_clock))
    if len(runexec.api) < 2:
        return []
    ratio = stats.ratio_of_means(runexec.cgroup_cpu, runexec.self_clock)
    diff = stats.bias_against(runexec.self_clock, runexec.cgroup_cpu)
    close = abs(ratio.ratio - 1) < 0.05
    return [Finding(
        claim=f"{label}: the program's own clock() time is close to the observed CPU time (thesis, Fig. 3.5)",
        verdict="confirmed" if close else "refuted",
        evidence=f"RunExec runs, n = {diff.n}: clock() minus cgroup CPU time = {fmt.ms(diff.mean_diff):.3f} ms "
                 f"(95 % CI {fmt.ms(diff.ci_low):.3f} – {fmt.ms(diff.ci_high):.3f}); ratio of means "
                 f"{ratio.ratio:.4f} [{ratio.ci_low:.4f}, {ratio.ci_high:.4f}]; 'close' = within 5 %. "
                 "clock() misses process start-up and exit, which the cgroup counts.",
    )]


def distributions_multimodal(label, data):
    """CPU-time distributions are often bi- or tri-modal."""
    multi = [m for m in data["modality"] if m["modes"] >= 2]
    return [Finding(
        claim=f"{label}: CPU-time distributions are often bi- or tri-modal (thesis, Fig. 3.6/3.7)",
        verdict="confirmed" if multi else "refuted",
        evidence=f"{len(multi)} of {len(data['modality'])} (API, load) distributions show 2+ modes: "
                 + (", ".join(f"{api_label(m['api'])} load {m['load']}: {m['modes']}" for m in multi) or "none")
                 + f". Method: {data['modality'][0]['method'] if data['modality'] else 'n/a'}.",
    )]


def timer_steps(label, data):
    """GNU time reports in steps of 10 ms, bash in steps of 1 ms: one finding per such timer."""
    found = []
    for q in data["timer_quality"]:
        expected = {"gnu": 0.01, "bash": 0.001}.get(q["api"])
        if expected is None:
            continue
        step = q["resolution"]["step"]
        found.append(Finding(
            claim=f"{label}: {api_label(q['api'])} reports in steps of {expected * 1e3:g} ms",
            verdict="confirmed" if np.isclose(step, expected) else "refuted",
            evidence=f"finest grid holding {100 * q['resolution']['share_on_grid']:.1f} % of values: "
                     f"{step * 1e3:g} ms; CPU bias against the cgroup {q['cpu_bias']['mean_diff'] * 1e3:.3f} ms "
                     f"({q['cpu_bias']['summary']}), n = {q['cpu_bias']['n']}.",
        ))
    return found


def findings(samples, apis, loads, label, cores, data):
    """The thesis's claims for one input, in the report's order."""
    base = min(loads)
    return [*api_does_not_matter(samples, apis, base, label, data), *load_leaves_cpu_time(base, label, data),
            *wall_flat_until_cores_busy(loads, base, label, cores, data), *self_clock_close(samples, label),
            *distributions_multimodal(label, data), *timer_steps(label, data)]
