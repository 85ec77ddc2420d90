"""
The memory-bandwidth experiment (seed 004, experiment B): STREAM per (CPU node, memory node) pair
against the firmware's NUMA distances.

pairs.py reads the runs and makes the bandwidth matrix (median triad bandwidth per pair),
distances.py finds the firmware's table and turns bandwidths into distances, claims.py judges the
seed's claims, plots.py draws the heatmaps; this module assembles the section. On a machine with
one node all this is a 1 x 1 matrix: the section says so and the seed's claims are not testable.
"""

from __future__ import annotations

import numpy as np

from analysis.core import fmt, memory_level, plots
from analysis.core.report import Figure, Section, Table
from analysis.experiments.memory_bandwidth import claims
from analysis.experiments.memory_bandwidth.definition import benchmark_for_nodes
from analysis.experiments.memory_bandwidth.distances import derived_distance, firmware_table
from analysis.experiments.memory_bandwidth.pairs import COLUMNS, KERNELS, Pairs, bandwidth_matrix, collect, read_pairs_csv
from analysis.experiments.memory_bandwidth.plots import heatmaps
from analysis.machine.numa import NumaError, parse_hardware, sysfs_hardware
from tool_info import sizing

# re-exported: the experiment's declaration and the tests use them from here
__all__ = ["COLUMNS", "KERNELS", "NumaError", "Pairs", "bandwidth_matrix", "benchmark_for_nodes", "derived_distance",
           "parse_hardware", "read_pairs_csv", "section", "section_from_pairs", "sysfs_hardware"]

METHOD = ("Seed 004 (experiment B) ran McCalpin's STREAM with every CPU node against every memory node and turned the "
          "bandwidths into distances relative to local access (10 × local / remote bandwidth) to compare them with the "
          "firmware's table from numactl --hardware. Here STREAM (programs/stream, one thread, each array 4 × the "
          "last-level cache or what the run's memory budget holds, best of trials 2–10) runs under numactl "
          "--cpunodebind=C --membind=M, one BenchExec run definition per pair; the matrix holds the median over "
          "repetitions of the triad bandwidth.")


def section(tables, facts=None, hardware=None):
    """The report section of memory-bandwidth results (RunTables of tool `stream`).

    hardware: `numactl --hardware` output (text) of the measured machine, if recorded; else the
    distances the runs recorded, else the node distances the sweep recorded (`facts`, an
    analysis.machine.facts.Facts; without a sweep, this host's /sys if the results were made here).
    Returns (Section, data).
    """
    pairs, recorded, excluded, warnings = collect(tables)
    firmware, notes = firmware_table(hardware, recorded, facts, tables)
    sizes, short = _sizes_and_checksums(tables)
    notes.append(sizes)
    sec, data = section_from_pairs(pairs, firmware, notes=notes)
    sec.warnings[:0] = warnings + short
    if excluded:
        sec.warnings.append(f"{len(excluded)} run(s) are left out: " + ", ".join(f"{k} ({v})" for k, v in excluded.items()))
    data["excluded"] = excluded
    return sec, data


def _sizes_and_checksums(tables):
    """What makes a STREAM figure valid, said once: array size against the last-level cache and
    the run's budget, trials, and how many runs validated their checksums; and the warning where
    the arrays stay short of 4 x the LLC ([] or one line)."""
    sizes, llcs, budgets, trials, ok, runs, short = set(), set(), set(), set(), 0, 0, []
    for table in tables:
        for i in np.flatnonzero(table.valid()):
            runs += 1
            run = {}
            for column, found in (("array-bytes", sizes), ("llc-bytes", llcs), ("budget-bytes", budgets), ("trials", trials)):
                value = table.columns.get(column)
                if value is not None and np.isfinite(value[i]):
                    found.add(int(value[i]))
                    run[column] = int(value[i])
            checksum = table.columns.get("checksum-ok")
            ok += int(checksum is not None and checksum[i] == 1)
            line = memory_level.not_reached(sizing.STREAM, run.get("llc-bytes"), run.get("budget-bytes"), run.get("array-bytes"))
            if line and line not in short:
                short.append(line)
    mib = lambda values: ", ".join(fmt.binary_size(v) for v in sorted(values)) or "unknown"  # noqa: E731
    budget = f", within a memory budget of {mib(budgets)} per run" if budgets else ""
    return (f"Each of STREAM's three arrays held {mib(sizes)} (the last-level cache: {mib(llcs)}; at 4 × it no kernel runs "
            f"from cache){budget}, best of {', '.join(map(str, sorted(trials))) or 'unknown'} trials; {ok} of {runs} "
            "finished runs validated their checksums (a run that does not is left out)."), short


def section_from_pairs(pairs, firmware, notes=()):
    """The section from per-pair STREAM values and the firmware's table (Hardware or None)."""
    sec = Section(id="memory-bandwidth", title="Memory bandwidth per NUMA node pair (STREAM)")
    nodes = firmware.nodes if firmware is not None else pairs.nodes
    n = len(nodes)
    sec.paragraphs += [METHOD, *notes]
    data = {"nodes": nodes, "firmware_source": firmware.source if firmware else None}
    sec.warnings += _firmware_warnings(firmware, nodes, pairs.nodes)
    firmware_matrix = np.full((n, n), np.nan) if firmware is None else firmware.distance
    if not pairs.values:
        sec.warnings.append("no STREAM run finished: nothing to analyse")
        sec.findings += claims.untestable("no finished STREAM runs")
        return sec, data

    bandwidth = {k: bandwidth_matrix(pairs, nodes, k) for k in KERNELS}
    triad = bandwidth["triad"]
    derived = derived_distance(triad)
    difference = derived - firmware_matrix
    if n == 1:
        sec.paragraphs.append(f"This machine has one NUMA node ({nodes[0]}): the matrices are 1 × 1, local access only "
                              "(derived distance 10 by definition), so nothing here compares local with remote memory.")
    sec.warnings += _unmeasured_warnings(pairs, nodes)
    sec.tables.append(_bandwidth_table(pairs, nodes, bandwidth, firmware_matrix, derived, difference))
    if firmware is not None:
        sec.tables.append(_firmware_table(firmware, nodes, firmware_matrix))
    sec.figures.append(Figure(
        f"Bandwidth and distance per node pair ({n} × {n})",
        plots.to_png(heatmaps(nodes, triad, derived, firmware_matrix,
                              f"STREAM triad per (CPU node, memory node), {n} × {n}")),
        "Left: median triad bandwidth. Right: the distance it implies, 10 × local / this pair's bandwidth. Each cell also "
        "shows the firmware's distance for the pair.",
    ))
    sec.findings += claims.findings(nodes, triad, derived, firmware_matrix)
    data.update({
        "bandwidth_mbs": {k: v.tolist() for k, v in bandwidth.items()},
        "derived_distance": derived.tolist(),
        "firmware_distance": firmware_matrix.tolist(),
        "difference": difference.tolist(),
        "runs_per_pair": {f"{c},{m}": int(len(v["triad"])) for (c, m), v in pairs.values.items()},
    })
    return sec, data


def _firmware_warnings(firmware, nodes, measured_nodes):
    if firmware is None:
        return ["no firmware distance table: neither numactl --hardware output, nor distances recorded by the "
                "runs, nor /sys/devices/system/node are available"]
    missing = [x for x in measured_nodes if x not in nodes]
    return [f"runs name node(s) {missing} that the firmware's table ({firmware.source}) does not have"] if missing else []


def _unmeasured_warnings(pairs, nodes):
    unmeasured = [(c, m) for c in nodes for m in nodes if (c, m) not in pairs.values]
    if not unmeasured:
        return []
    return [f"{len(unmeasured)} of {len(nodes) ** 2} node pairs have no STREAM result: "
            + ", ".join(f"({c}, {m})" for c, m in unmeasured[:12]) + ("…" if len(unmeasured) > 12 else "")]


def _bandwidth_table(pairs, nodes, bandwidth, firmware_matrix, derived, difference):
    rows = []
    for i, c in enumerate(nodes):
        for j, m in enumerate(nodes):
            if (c, m) not in pairs.values:
                continue
            values = pairs.values[(c, m)]["triad"]
            rows.append([c, m, len(values), *(bandwidth[k][i, j] for k in KERNELS),
                         f"{values.min():.0f} – {values.max():.0f}", firmware_matrix[i, j], derived[i, j], difference[i, j]])
    return Table(
        title="STREAM bandwidth per (CPU node, memory node) and the distances",
        columns=["CPU node", "memory node", "runs", "copy (MB/s)", "scale (MB/s)", "add (MB/s)", "triad (MB/s)",
                 "triad range (MB/s)", "firmware distance", "derived distance", "derived − firmware"],
        rows=rows,
        caption="Medians over runs of STREAM's best rate (MB/s = 10^6 bytes per second). Derived distance = 10 × triad "
                "bandwidth of the CPU node's own memory / triad bandwidth of this pair.",
    )


def _firmware_table(firmware, nodes, firmware_matrix):
    return Table(
        title=f"Firmware NUMA distances ({firmware.source})",
        columns=["node", *[str(x) for x in nodes], "CPUs", "size (MB)"],
        rows=[[c, *firmware_matrix[i].tolist(), _cpu_text(firmware.cpus.get(c)), firmware.size_mb.get(c)]
              for i, c in enumerate(nodes)],
    )


def _cpu_text(cpus):
    """[0, 1, 2, 3, 8] -> '0-3,8' (the kernel's list syntax), None without CPUs."""
    if not cpus:
        return None
    ranges, start = [], cpus[0]
    for a, b in zip(cpus, cpus[1:] + [None]):
        if b != a + 1:
            ranges.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ",".join(ranges)
