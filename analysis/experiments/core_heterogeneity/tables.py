"""The tables of the core-heterogeneity section, one function each; times in ms (analysis.core.fmt)."""

from __future__ import annotations

from analysis.core import stats
from analysis.core.fmt import ms
from analysis.core.report import Table
from analysis.experiments.core_heterogeneity.labels import core_label
from analysis.experiments.core_heterogeneity.similarity import ALPHA


def summary(samples, groups, topology_cpus):
    """(Table of the kernel time per workload and core, {workload: [summary per core]} for the data)."""
    rows, data = [], {}
    for workload, by_core in groups.items():
        entries = data[workload] = []
        for core, values in by_core.items():
            s = stats.summarize(values)
            mask = (samples.workload == workload) & (samples.core == core)
            excluded = int(((samples.reason != "") & mask).sum())
            rows.append([workload, core_label(core, topology_cpus), s.n, excluded, ms(s.mean), ms(s.sd),
                         100 * s.cv, ms(s.median), ms(s.min), ms(s.max), f"{ms(s.ci_low):.4g} – {ms(s.ci_high):.4g}"])
            entries.append({"core": core, "excluded": excluded, **s.as_dict()})
    return Table(
        title="Kernel time (self-seconds) per workload and core",
        columns=["workload", "core", "n", "excluded", "mean (ms)", "sd (ms)", "CV (%)", "median (ms)", "min (ms)",
                 "max (ms)", "95 % CI (ms)"],
        rows=rows,
        caption="n counts runs after warm-ups that finished and started and ended on the assigned core; "
                "'excluded' runs (failed, moved, wrong core) are left out of every statistic."), data


def slowest_vs_fastest(ratios, topology_cpus):
    return Table(
        title="Slowest core against fastest core, per workload (paper Fig. 2/3)",
        columns=["workload", "fastest", "slowest", "mean slowest / fastest", "95 % CI", "method"],
        rows=[[w, core_label(f, topology_cpus), core_label(s, topology_cpus), r.ratio, f"{r.ci_low:.4f} – {r.ci_high:.4f}",
               r.method] for w, (f, s, r) in ratios.items()],
        caption="Cores chosen by their mean; the paper normalised the slowest core's mean to the fastest's.")


def per_round(round_rows, cores, topology_cpus):
    return Table(
        title="Mean kernel time per round and core: is a core difference the same in every round?",
        columns=["workload", "round", *[core_label(c, topology_cpus) for c in cores], "slowest core this round"],
        rows=round_rows,
        caption="Mean (ms) of the counted runs of each benchexec invocation. Runs within one invocation are not "
                "independent (they share its moment's machine state), so a difference that flips between rounds is "
                "drift, not a core property, however small its p.")


def pairs(similarities, sibling_pairs):
    rows = []
    for workload, sim in similarities.items():
        for i, j in sim.pairs():
            a, b = sim.cores[i], sim.cores[j]
            rows.append([workload, a, b, "yes" if (min(a, b), max(a, b)) in sibling_pairs else "no", sim.n[i], sim.n[j],
                         sim.ks[i, j], sim.ad_statistic[i, j], sim.p[i, j], sim.p_adjusted[i, j],
                         "similar" if sim.similar[i, j] else "different", sim.notes[i, j]])
    resamples = sorted({sim.resamples for sim in similarities.values()})
    return Table(
        title="Core similarity: every pair of cores (paper Fig. 5)",
        columns=["workload", "CPU A", "CPU B", "SMT siblings", "n A", "n B", "KS D", "AD statistic", "AD p",
                 "AD p (Holm)", f"alpha {ALPHA}", "how p was obtained"],
        rows=rows,
        caption=f"k-sample Anderson-Darling (k = 2, midrank); where scipy's p is capped (0.25) or floored (0.001), p "
                f"comes from a permutation test ({', '.join(map(str, resamples))} resamples); Holm over the k(k-1)/2 pairs "
                f"of each workload. From 7 cores on, no affordable permutation resolves alpha/m: a floored p is bounded "
                f"by the two-sample KS p and a capped one stays 'p >= 0.25' (similar under any correction); the last "
                f"column says which applied.")


def ranking(ranked, topology_cpus):
    rows = []
    for workload, entry in ranked["workloads"].items():
        for position, core in enumerate(entry["order"], start=1):
            summary_ = entry["cores"][position - 1]
            pair = entry["adjacent"][position - 2] if position > 1 else None
            rows.append([workload, position, core_label(core, topology_cpus), summary_["n"], ms(summary_["mean"]),
                         None if pair is None else pair["ratio"], None if pair is None else pair["p_adjusted"],
                         "" if pair is None else ("significantly slower" if pair["significant"] else "~")])
    return Table(title="Ranking: cores fastest to slowest per workload",
                 columns=["workload", "rank", "core", "n", "mean (ms)", "ratio to the core before", "Welch p (Holm)",
                          "vs the core before"],
                 rows=rows,
                 caption=f"{ranked['test']}. 'timekit cores rank RESULTS' saves this ranking; 'timekit cores run -k K "
                         "-- COMMAND' runs a command on the K fastest cores (by the cache-stress microbenchmark, as the "
                         "paper's golden-run).")


def energy(energy_rows, energy_note):
    return Table(title="CPU energy per run (BenchExec's cpuenergy column)",
                 columns=["workload", "core", "n", "mean energy (J)", "mean power (W)"],
                 rows=energy_rows, caption=energy_note)
