"""
The scheduling-noise experiment (seed 004, experiment A): when is a process that never blocks not
running, how often, for how long, and what does a context switch cost?

This module assembles the section from the tracer's periods (periods.py), the gaps against the
kernel's tick (period.py, gaps.py), the clocks (clocks.py) and the seed's claims (claims.py); the
names tests use stay importable from here (docs/experiments.md, "scheduling-noise").
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath

import numpy as np

from analysis.core import plots
from analysis.core.fmt import us
from analysis.core.report import Figure, Section
from analysis.experiments.scheduling_noise import claims
from analysis.experiments.scheduling_noise import plots as noise_plots
from analysis.experiments.scheduling_noise import tables as section_tables
from analysis.experiments.scheduling_noise.claims import SEED_TICK_MS
from analysis.experiments.scheduling_noise.clocks import clocks
from analysis.experiments.scheduling_noise.gaps import finite_median, pooled
from analysis.experiments.scheduling_noise.period import BIN_MS, MAX_MS, MIN_MS, dominant_period, pair_lags, periodic_mask
from analysis.experiments.scheduling_noise.periods import (COLUMNS, PERIODS_HEADER, PeriodsError, collect, read_periods,
                                                           result_files_dir)
from analysis.machine import facts as machine_facts

# re-exported: the experiment's declaration and the tests use them from here
__all__ = ["COLUMNS", "PERIODS_HEADER", "PeriodsError", "dominant_period", "pair_lags", "periodic_mask", "read_periods",
           "result_files_dir", "section"]

TIMELINE_MS = 12.0


def section(tables, facts=None):
    """The report section of scheduling-noise results (RunTables of tool `tracer`).

    facts: the measured machine as its sweep recorded it (analysis.machine.facts.Facts): CONFIG_HZ,
    and the kernel log's TSC lines for when the runs could not read them (inside BenchExec's
    container they cannot). Without a sweep, this host's, if the results were made here.
    Returns (Section, data).
    """
    facts = facts if facts is not None else machine_facts.for_results(tables)
    sec = Section(id="scheduling-noise", title="Scheduling noise: interruptions, the TSC and context switches")
    runs, excluded, warnings = collect(tables)
    sec.warnings += warnings
    if excluded:
        sec.warnings.append(f"{len(excluded)} run(s) did not finish and are left out: "
                            + ", ".join(f"{k} ({v})" for k, v in excluded.items()))
    sec.paragraphs += _method()
    data = {"runs": [], "excluded": excluded}
    if not runs:
        sec.warnings.append("no tracer run finished: nothing to analyse")
        sec.findings.append(claims.untestable("no finished tracer runs"))
        return sec, data

    trace_runs = [r for r in runs if r.mode == "trace"]
    cs_runs = [r for r in runs if r.mode == "context-switch"]
    hz_config, hz_source = facts.config_hz, facts.config_hz_source
    tick_ms = 1000.0 / hz_config if hz_config else math.nan
    gaps = pooled(trace_runs, tick_ms)
    runs_table, data["runs"] = section_tables.runs(runs)
    clk = clocks(runs, facts)
    sec.warnings += clk.warnings
    sec.tables += [runs_table, section_tables.clocks(runs, clk),
                   section_tables.periodic(gaps, trace_runs, tick_ms, hz_config, hz_source)]
    cs_table = section_tables.context_switches(cs_runs, gaps.periodic_median_us)
    if cs_table is not None:
        sec.tables.append(cs_table)
    data.update(_measured(gaps, clk, hz_config, hz_source, tick_ms, cs_runs))
    sec.figures += _figures(runs, trace_runs, cs_runs, gaps.period, tick_ms, gaps.all_us)
    sec.findings += claims.findings(gaps, clk, tick_ms, hz_source, runs)
    return sec, data


def _method():
    return [
        "Seed 004 (experiment A) traced a process that polls the time-stamp counter (TSC) in a tight loop: "
        "a gap between two reads far above the usual one means the process was not running. programs/tracer "
        "does the same under BenchExec, pinned to one CPU; its threshold is a multiple of the median gap between "
        "two reads, measured first (table of runs). In context-switch mode a parent and a child share one CPU and "
        "each one's gaps are filled by the other's activity plus the switches.",
        "The dominant period is the most frequent distance between the starts of two gaps (all pairs up to "
        f"{MAX_MS:g} ms apart, {BIN_MS:g} ms bins, distances below {MIN_MS:g} ms left out so that gaps of one burst "
        "do not count), reduced to its fundamental.",
    ]


def _measured(gaps, clk, hz_config, hz_source, tick_ms, cs_runs):
    """The section's numbers for report.json."""
    period, all_us = gaps.period, gaps.all_us
    return {
        "config_hz": hz_config, "config_hz_source": hz_source, "tick_ms": tick_ms,
        "dominant_period_ms": period.period_ms, "dominant_peak_ms": period.peak_ms, "lag_base": period.base,
        "peak_near_1ms": {"lag_ms": gaps.near_1ms, "z": gaps.z_1ms}, "peak_near_tick": {"lag_ms": gaps.near_tick, "z": gaps.z_tick},
        "inactive_us": {"n": int(all_us.size), "mean": float(all_us.mean()) if all_us.size else None,
                        "median": float(np.median(all_us)) if all_us.size else None},
        "periodic_gap_median_us": gaps.periodic_median_us, "lost_us_per_ms": gaps.lost_us_per_ms,
        "lost_us_per_ms_below_slice": gaps.lost_short_us_per_ms,
        "gaps_of_a_slice_or_more": int(all_us.size - gaps.short_us.size),
        "tsc_hz": clk.tsc, "core_hz": clk.core, "core_clock": {"how": clk.core_reading.how, "problem": clk.core_reading.problem},
        "arch": clk.arch.value, "tsc_invariant": clk.invariant, "clocksources": clk.clocksources,
        "tsc_reference": {"label": clk.reference[0], "hz": clk.reference[1], "deviation": clk.deviation},
        "context_switch_us": finite_median(us(r.value("context-switch")) for r in cs_runs),
    }


def _timeline_lanes(trace_runs, cs_runs):
    """(label, starts, durations, inactive) of the first single-tracer run and both sides of the
    first context-switch run that have their periods."""
    lanes = []
    first_trace = next((r for r in trace_runs if r.periods is not None), None)
    first_cs = next((r for r in cs_runs if r.periods is not None), None)
    if first_trace:
        lanes.append((f"alone\n{PurePosixPath(first_trace.task).name}", *first_trace.periods.lane("tracer")))
    if first_cs:
        for process in ("parent", "child"):
            lanes.append((f"{process}\n{PurePosixPath(first_cs.task).name}", *first_cs.periods.lane(process)))
    return lanes


def _figures(runs, trace_runs, cs_runs, period, tick_ms, all_gaps_us):
    figures = []
    lanes = _timeline_lanes(trace_runs, cs_runs)
    if lanes:
        figures.append(Figure(
            "Activity timeline", plots.to_png(noise_plots.timeline(lanes, TIMELINE_MS, f"Activity over the first {TIMELINE_MS:g} ms")),
            "Blue: the process read the TSC; red: a gap above the threshold. Inactive periods are drawn at least "
            f"{TIMELINE_MS / 600 * 1e3:.0f} µs wide so that short ones stay visible; their true lengths are in the histogram."))
    groups = {"alone (all runs)": all_gaps_us}
    for process in ("parent", "child"):
        lengths = [r.periods.gaps(process)[1] * 1e3 for r in cs_runs if r.periods is not None]
        if lengths:
            groups[f"{process}, context-switch mode"] = np.concatenate(lengths)
    threshold = finite_median(r.value("threshold") for r in runs) * 1e6
    figures.append(Figure(
        "Lengths of inactive periods", plots.to_png(noise_plots.inactive_histogram(groups, threshold, "Inactive periods")),
        "Log-spaced bins. Alone, the process loses the CPU only to interrupts and to the host; with a second process on "
        "the CPU its gaps also hold the other's turns (milliseconds)."))
    if period.pairs or np.isfinite(period.base):
        first = math.ceil(MIN_MS / period.bin_ms) + 1
        counts = period.smooth[first:-1]
        edges = np.arange(first, len(period.smooth)) * period.bin_ms
        marks = {"dominant period": period.period_ms, "tick (1/CONFIG_HZ)": tick_ms, "seed's tick": SEED_TICK_MS}
        figures.append(Figure(
            "Distances between gaps", plots.to_png(noise_plots.lag_histogram(
                edges, counts, period.base, marks, "Distances between the starts of two gaps (single-tracer runs pooled)")),
            "Each pair of gaps up to 20 ms apart adds one to the bin of its distance (three 0.01 ms bins summed). Periodic "
            "interruptions make peaks at their period and its multiples; the dashed line is what random coincidences give."))
    return figures
