"""
The os-microbench experiment (seed 003): lmbench-style OS and memory microbenchmarks.

``programs/osbench.c`` measures eleven operations (clock reads, loop, procedure calls, system
calls, process and thread creation and switches, memory latency and bandwidth, page faults),
each in its own BenchExec run. This module assembles the report section from the parts, one
job each: samples (collect the runs), levels (latency plateaus and bandwidth points against
the caches), measurements (rows with published ranges), predictions (the model), tables,
figures and claims (the seed's claims, judged); seed holds the published figures.
"""

from __future__ import annotations

from analysis.core import fmt, instruments, memory_level
from analysis.core.report import Section
from analysis.experiments.os_microbench import tables
from analysis.experiments.os_microbench.claims import findings
from analysis.experiments.os_microbench.figures import figures
from analysis.experiments.os_microbench.levels import latency_levels
from analysis.experiments.os_microbench.measurements import measurement_rows
from analysis.experiments.os_microbench.predictions import predictions
from analysis.experiments.os_microbench.output import MEASURES
from analysis.experiments.os_microbench.samples import clock_check, collect
from analysis.experiments.os_microbench.seed import MODEL, SEED, SOURCES
from analysis.machine import facts as machine_facts
from tool_info import sizing

def _paragraphs(caches):
    return [
        "Seed 003 (course report 'Performance Measurement', CSC-501) measured eleven operations after lmbench on an "
        "Intel i7-4710HQ at 2.5 GHz and compared each with a prediction. Here each operation is one BenchExec run of "
        "programs/osbench.c pinned to one CPU; every variant reports median, p10, p90, min and n over its own samples "
        "after a warm-up. Timed regions use LFENCE;RDTSCP;LFENCE with the TSC calibrated against CLOCK_MONOTONIC_RAW "
        "(clock_gettime where the TSC is not invariant); cycle counts come only from the core clock of the kit's probe "
        "(chains of dependent adds and of imul, and perf's cycle counter where the kernel exposes a PMU), and only where "
        "its estimates agree and lie in a CPU's physical range.",
        "Cache sizes used here: " + (", ".join(f"L{k} {fmt.binary_size(v)}" for k, v in sorted(caches.items())) or "unknown")
        + " (/sys/devices/system/cpu/cpu0/cache).",
    ]


def _excluded_warning(data):
    """The runs left out, counted by status, naming their measurements."""
    if not data["excluded"]:
        return []
    counts = {}
    for e in data["excluded"]:
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    return [f"{len(data['excluded'])} run(s) left out of every statistic: "
            + ", ".join(f"{k}: {v}" for k, v in counts.items()) + " ("
            + ", ".join(sorted({e['measure'] for e in data['excluded']})) + ")"]


def _measurement_warnings(data):
    """Measurements missing, regions that migrated, and a TSC that could not be used."""
    out = []
    missing = [m for m in MEASURES if m not in data["runs"]]
    if missing:
        out.append("not measured: " + ", ".join(missing))
    migrations = sum(i.get("migrations", 0) for i in data["info"].values())
    if migrations:
        out.append(f"{migrations} timed region(s) started and ended on different CPUs despite pinning")
    why = clock_check(data)
    if why:
        out.append(f"core clock: {why}; every figure in cycles is left out")
    if any(i.get("timer-source") == "clock_gettime" for i in data["info"].values()):
        out.append("the TSC is not invariant here (constant_tsc/nonstop_tsc missing) or not usable: "
                   "regions were timed with clock_gettime(CLOCK_MONOTONIC)")
    return out


def _memory_not_reached(data, caches):
    """One line per memory curve whose largest size stays below 2 x the LLC (its budget held no
    more, or the committed cap of older results): beyond it no point can be memory."""
    out = []
    for measure, curve in (("mem-latency", data.get("latency")), ("mem-bandwidth", data.get("bandwidth"))):
        info = data["info"].get(measure, {})
        llc = caches[max(caches)] if caches else info.get("llc-bytes")
        line = memory_level.not_reached(sizing.CURVES, llc, info.get("budget-bytes"), curve["bytes"][-1]) if curve else None
        if line:
            out.append(f"{measure}: {line}")
    return out


def section(result_tables, caches=None):
    """The report section of os-microbench result tables: (Section, data for report.json).

    ``caches`` maps cache level to bytes (data/unified caches) of the measured machine, as its
    sweep recorded them; default: analysis.machine.facts.for_results (this host's only if the
    results were made here).
    """
    data = collect(result_tables)
    caches = dict(machine_facts.for_results(result_tables).caches if caches is None else caches)
    sec = Section(id="os-microbench", title="OS and memory microbenchmarks (lmbench-style, seed 003)")
    sec.paragraphs += _paragraphs(caches)
    sec.warnings += _excluded_warning(data)
    if not data["runs"]:
        sec.warnings.append("no valid os-microbench run in the given result files")
        return sec, data
    sec.warnings += _measurement_warnings(data)
    sec.warnings += _memory_not_reached(data, caches)

    rows = measurement_rows(data, caches)
    found, matches = latency_levels(data, caches)
    predicted = predictions(data, caches, found)
    sec.tables.append(tables.measurement_table(rows, data))
    sec.tables.append(tables.prediction_table(predicted, data))
    if data.get("latency"):
        sec.tables += tables.latency_tables(found, matches, data)
    if data["variants"].get("process-switch") or data["variants"].get("thread-switch"):
        sec.tables.append(tables.switch_table(data))
    if data["variants"].get("anon-write-page"):
        sec.tables.append(tables.fault_table(data))
    sec.tables.append(tables.environment_table(data))
    sec.figures += figures(data, caches, found, rows)
    sec.findings += findings(data, caches, found, matches)

    data["caches"] = {str(k): v for k, v in caches.items()}
    data["measurements"] = rows
    data["plateaus"] = found
    data["cache_matches"] = matches
    data["predictions"] = predicted
    data["model"] = dict(MODEL)
    data["sources"] = dict(SOURCES)
    data["seed"] = SEED
    # report.json names a clock only where a core can have it (the claims above read the raw figures)
    data["probes"] = [instruments.named_as_measured(p) for p in data["probes"]]
    data["info"] = {m: instruments.named_as_measured(v) for m, v in data["info"].items()}
    return sec, data
