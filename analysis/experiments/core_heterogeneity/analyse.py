"""
Core-to-core heterogeneity (seed 002: Reif et al., "Nearly Symmetric Multi-Core Processors",
APSys 2020): are the cores of one processor equally fast?

This module assembles the report section from its parts (samples, similarity, ranking, measures,
tables, claims, plots); the names other tools and the tests use (rank, load, collect, plan,
WARMUPS, ALPHA, CoresError ...) stay importable from here. The paper's design and findings, and
each part: docs/experiments.md, "core-heterogeneity".
"""

from __future__ import annotations

import numpy as np

from analysis.core.report import Figure, Section, jsonable
from analysis.experiments.core_heterogeneity import claims
from analysis.experiments.core_heterogeneity import measures
from analysis.experiments.core_heterogeneity import tables as section_tables
from analysis.experiments.core_heterogeneity.claims import PAPER_GAP
from analysis.experiments.core_heterogeneity.labels import core_label, sibling_pairs
from analysis.experiments.core_heterogeneity.ranking import rank, slowest_vs_fastest
from analysis.experiments.core_heterogeneity.samples import (COLUMNS, LABEL, WARMUPS, WORKLOADS, CoresError, Samples,
                                                             benchexec_arguments, collect, load, plan, samples_from_groups)
from analysis.experiments.core_heterogeneity.similarity import ALPHA, similarity
from analysis.machine import facts as machine_facts

# re-exported: tools (the fleet) and the tests use them from here
__all__ = ["ALPHA", "COLUMNS", "LABEL", "WARMUPS", "WORKLOADS", "CoresError", "Samples", "analyse", "benchexec_arguments",
           "collect", "load", "plan", "rank", "samples_from_groups", "section", "similarity"]

CONTENDED = 0.95  # a run whose kernel got less than 95 % of its wall time as CPU time shared its core


def section(tables, facts=None, *, warmups=WARMUPS, notes=()):
    """The report section of core-heterogeneity results: (Section, data)."""
    samples = collect(tables, warmups)
    return analyse(samples, facts if facts is not None else machine_facts.for_results(tables), notes=notes)


def analyse(samples, facts, *, notes=()):
    """The section from Samples (collect) or None; `facts`: the measured machine as recorded
    (analysis.machine.facts.Facts: topology, CPU flags, RAPL)."""
    topology_cpus = facts.topology_cpus()
    sec = Section(id="core-heterogeneity", title="Core-to-core heterogeneity (one core at a time)")
    sec.paragraphs += [*_method(), *notes]
    data = {"alpha": ALPHA, "workloads": {}}
    if samples is None or not samples.counted.any():
        sec.warnings.append("No counted runs of the core-heterogeneity workloads: nothing to analyse.")
        sec.findings += claims.untestable("no counted runs")
        return sec, data
    if "hypervisor" in set(facts.cpu_flags):
        sec.warnings.append("This machine is a virtual machine: its CPUs are vCPUs, which the hypervisor maps to "
                            "physical cores as it likes and may move at any time; a difference between vCPUs need "
                            "not be a property of one physical core.")
    groups = samples.groups()
    cores = samples.cores()
    counts = _counts(samples, cores)
    data.update(counts)
    sec.paragraphs.append(_what_was_measured(counts, groups, topology_cpus))

    summary_table, summaries = section_tables.summary(samples, groups, topology_cpus)
    similarities = {w: similarity(by_core) for w, by_core in groups.items()}
    ratios = {w: spread for w, by_core in groups.items() if (spread := slowest_vs_fastest(by_core)) is not None}
    data["workloads"] = _per_workload(summaries, similarities, ratios)
    round_rows, consistency = measures.per_round(samples, ratios)
    data["per_round"] = consistency
    siblings = sibling_pairs(topology_cpus)
    ranking = rank(groups, boot_time=facts.boot_time, host=facts.hostname or None)
    data["ranking"] = jsonable(ranking)
    sec.tables += [summary_table, section_tables.slowest_vs_fastest(ratios, topology_cpus),
                   section_tables.per_round(round_rows, cores, topology_cpus),
                   section_tables.pairs(similarities, siblings), section_tables.ranking(ranking, topology_cpus)]

    energy_rows, energy_note = measures.energy(samples, facts.rapl)
    data["energy"] = {"available": bool(energy_rows), "note": energy_note}
    if energy_rows:
        sec.tables.append(section_tables.energy(energy_rows, energy_note))
    else:
        sec.paragraphs.append(f"Energy (paper Fig. 4a): {energy_note}")
    sec.warnings += _excluded_warnings(samples, data) + _contention_warnings(samples, data)

    correlation = measures.correlation(groups)
    data["correlation"] = correlation
    sec.figures += _figures(groups, ratios, similarities, correlation, topology_cpus)
    sec.findings += claims.findings(groups, similarities, ratios, siblings, correlation, energy_rows, energy_note,
                                    topology_cpus, consistency)
    return sec, data


def _method():
    """The paragraphs that say what the paper did, what runs here, and which tests judge it."""
    return [
        "Seed 002 (Reif et al., APSys 2020) ran sequential NAS kernels and a clflush cache-stress "
        "microbenchmark on one core at a time (10 warm-ups, then 1000 runs per core). On an Intel i5-8400 "
        "the mean cg time on the slowest core was more than 10 % above the fastest; the other kernels were "
        "equal on all cores; on a 96-thread Xeon server the gap exceeded 20 %, and SMT siblings behaved alike.",
        "Here: cachestress (touch + clflush one byte per cache line, mfence per pass), cg (sparse conjugate "
        "gradient at NAS class A's matrix size, irregular access) and isort (counting sort, the control), each "
        "benchexec invocation on one core (--allowedCores K --limitCores 1), cores interleaved over rounds. "
        "Time = the kernel's own CLOCK_MONOTONIC time (self-seconds).",
        f"Tests: per pair of cores k-sample Anderson-Darling (k = 2, alpha = {ALPHA}, the paper's level) with a "
        "permutation p where scipy's tabulated p is capped to 0.001-0.25, Holm-corrected over the k(k-1)/2 pairs; "
        "'similar' when the corrected p is at least alpha. The two-sample KS statistic D measures the distance. "
        "Slowest vs fastest core: ratio of means with a bootstrap (BCa) 95 % CI; the cores are chosen by their "
        "sample means, so with many cores the ratio is biased upwards (the largest of several noisy means).",
    ]


def _per_workload(summaries, similarities, ratios):
    """report.json's entry per workload: per-core summaries, similarity, slowest against fastest."""
    entries = {}
    for workload, summary in summaries.items():
        entry = entries[workload] = {"summary": summary, "similarity": similarities[workload].as_dict()}
        if workload in ratios:
            fast, slow, ratio = ratios[workload]
            entry["slowest_vs_fastest"] = {"fastest": fast, "slowest": slow, **ratio.as_dict()}
    return entries


def _counts(samples, cores):
    """Cores, rounds and warm-ups of the measurement, for the data and the paragraph."""
    rounds = sorted(set(samples.round[samples.counted].tolist()))
    return dict(cores=cores, rounds=rounds, warmups_dropped=int((samples.warmup & (samples.reason == "")).sum()),
                warmups_per_invocation=measures.warmups_per_invocation(samples))


def _what_was_measured(counts, groups, topology_cpus):
    """The paragraph of cores, rounds, warm-ups and counted runs."""
    return (f"Cores measured: {', '.join(core_label(c, topology_cpus) for c in counts['cores'])}; "
            f"rounds: {len(counts['rounds'])}; warm-ups dropped: {counts['warmups_dropped']} (the first "
            f"{counts['warmups_per_invocation']} of each workload in each invocation); counted runs per workload and core: "
            + ", ".join(f"{w} {min(len(v) for v in groups[w].values())}-{max(len(v) for v in groups[w].values())}"
                        for w in groups) + ".")


def _excluded_warnings(samples, data):
    """Runs left out of every statistic, counted by reason."""
    excluded = samples.reason[samples.reason != ""]
    data["excluded"] = int(excluded.size)
    if not excluded.size:
        return []
    counts = {}
    for why in excluded.tolist():
        counts[why] = counts.get(why, 0) + 1
    return [f"{excluded.size} of {len(samples.reason)} runs were left out of every statistic: "
            + "; ".join(f"{k}: {v}" for k, v in counts.items())]


def _contention_warnings(samples, data):
    """Counted runs that got less CPU time than wall time: another process shared their core."""
    counted = samples.select(samples.counted)
    known = np.isfinite(counted.self_cputime)
    if not known.any():
        return []
    contended = known & (counted.self_cputime < CONTENDED * counted.seconds)
    data["contended"] = {"runs": int(contended.sum()), "of": int(known.sum()), "threshold": CONTENDED}
    if not contended.any():
        return []
    return [f"{int(contended.sum())} of {int(known.sum())} counted runs got less than {CONTENDED:.0%} of their wall time "
            "as CPU time (self-cputime < 0.95 self-seconds): other processes shared their core, and their time "
            "says more about that load than about the core. Measure on a quiet machine."]


def _figures(groups, ratios, similarities, correlation, topology_cpus):
    from analysis.experiments.core_heterogeneity import plots as cores_plots

    figures = [
        Figure("Kernel time CDF per core (paper Fig. 1)",
               cores_plots.to_png(cores_plots.cdf_per_core(groups, LABEL, topology_cpus)),
               "Empirical CDF of the kernel time of every counted run, one line per core; a core whose curve lies "
               "to the right is slower. Run-to-run spread is the width of each curve."),
        Figure("Slowest core normalised to the fastest (paper Fig. 2/3)",
               cores_plots.to_png(cores_plots.slowest_vs_fastest(ratios, LABEL, PAPER_GAP)),
               "Mean kernel time of the slowest core divided by the fastest core's, with bootstrap 95 % CI. "
               "The dashed line marks the paper's 10 % gap."),
        Figure("Core similarity matrices (paper Fig. 5)",
               cores_plots.to_png(cores_plots.similarity_matrices(similarities, LABEL, topology_cpus)),
               f"Colour: two-sample KS statistic D between the cores' kernel-time distributions (blue: close, red: far). "
               f"Black dot: 'similar' (Anderson-Darling, Holm, alpha {ALPHA}). Axes: Linux CPU numbers; "
               "white frames mark SMT siblings (CPUs of one physical core)."),
    ]
    if correlation.get("points"):
        figures.append(Figure(
            "cg against the microbenchmark, one point per core (paper Fig. 4b)",
            cores_plots.to_png(cores_plots.correlation(correlation["points"], "cachestress mean / fastest core",
                                                       "cg mean / fastest core", topology_cpus)),
            "Each core's mean kernel time, normalised to the fastest core of that workload."))
    return figures
