"""The tables of the scheduling-noise section, one function each; times in µs (analysis.core.fmt)."""

from __future__ import annotations

import math

import numpy as np

from analysis.core import instruments
from analysis.core.fmt import us, value_range
from analysis.core.instruments import CORE_CLOCK
from analysis.core.report import Table
from analysis.experiments.scheduling_noise.gaps import SLICE_MS
from analysis.experiments.scheduling_noise.period import BIN_MS, PARTNER_BINS, dominant_period, pair_lags


def runs(all_runs):
    """(Table of every run as the tracer reported it, the runs' entries for the data)."""
    rows, entries = [], []
    for r in all_runs:
        py_period = dominant_period(pair_lags(r.periods.gaps()[0])).period_ms if r.periods is not None and r.mode == "trace" else None
        rows.append([r.task, r.mode, int(r.value("gaps")), us(r.value("threshold")), int(r.value("median-gap-cycles")),
                     r.value("dominant-period") * 1e3, 100 * r.value("dominant-period-share"),
                     us(r.value("interruption-mean")), us(r.value("interruption-median")), us(r.value("interruption-max")),
                     us(r.value("lost-per-ms")), r.value("tsc-frequency") / 1e6, _core_mhz(r),
                     us(r.value("context-switch")) if r.mode == "context-switch" else None])
        entries.append({"task": r.task, "mode": r.mode, "values": instruments.named_as_measured(r.values), "texts": r.texts,
                        "periods_file": r.periods is not None,
                        "dominant_period_ms_python": py_period})
    return Table(
        title="Runs: gaps, dominant period and interruptions as the tracer reported them",
        columns=["run", "mode", "gaps", "threshold (µs)", "median gap (TSC ticks)", "dominant period (ms)",
                 "gaps one period apart (%)", "mean gap (µs)", "median gap (µs)", "max gap (µs)", "lost per ms (µs)",
                 "TSC (MHz)", "core clock (MHz)", "context switch (µs)"],
        rows=rows,
        caption="Threshold = threshold-factor × the median distance between two TSC reads, measured before tracing. In "
                "context-switch mode the gap columns describe the parent, whose gaps include the child's turns.",
    ), entries


def _core_mhz(run):
    """One run's core clock in MHz, None where it fails its check (analysis.core.instruments)."""
    ghz = instruments.usable(CORE_CLOCK, instruments.core_clock(run.printed()))
    return ghz * 1e3 if ghz else None


def clocks(all_runs, clk):
    tsc, core = clk.tsc, clk.core
    rows = [["TSC frequency, this kit (ticks per second of CLOCK_MONOTONIC_RAW)", tsc / 1e6,
             f"median of {len(all_runs)} runs: {value_range([r.value('tsc-frequency') for r in all_runs], 1e-6, 9)} MHz",
             None]]
    for label, value, _ in clk.references:
        rows.append([f"kernel: {label}", value / 1e6, "",
                     100 * (tsc - value) / value if np.isfinite(value) and np.isfinite(tsc) else None])
    checked = CORE_CLOCK.check({CORE_CLOCK.quantity: clk.core_reading})
    rows.append(["core clock (kit probe: dependent add and imul chains, perf cycles where there is a PMU)",
                 core / 1e6 if np.isfinite(core) else None,
                 (checked or f"{value_range([_core_mhz(r) for r in all_runs])} MHz over the runs; {clk.core_reading.how}")
                 + f"; {'invariant' if clk.invariant else 'NOT invariant'} TSC",
                 100 * (core - tsc) / tsc if np.isfinite(core) and np.isfinite(tsc) else None])
    return Table(
        title="Clocks: the TSC against the kernel's value, and the core clock",
        columns=["quantity", "MHz", "note", "difference to the TSC estimate (%)"],
        rows=rows,
        caption=f"Clock source: {', '.join(clk.clocksources)}. With the TSC as clock source the kernel turns TSC ticks into "
                "CLOCK_MONOTONIC_RAW with its own TSC frequency, so agreement checks the measurement, not the kernel's "
                "calibration. The core clock is what the CPU ran at during the probe's chains (boost included); it is "
                "shown only where its estimates agree and lie in a CPU's physical range.",
    )


def _finite_or_none(value):
    return value if np.isfinite(value) else None


def periodic(gaps, trace_runs, tick_ms, hz_config, hz_source):
    period, periodic_us, other_us = gaps.period, gaps.periodic_us, gaps.other_us
    return Table(
        title="Periodic interruptions (all single-tracer runs pooled)",
        columns=["quantity", "value", "note"],
        rows=[
            ["dominant period (ms)", period.period_ms,
             f"{period.pairs} pairs of gaps in its bins; highest peak at {period.peak_ms:.3g} ms; per run: "
             f"{value_range([r.value('dominant-period') for r in trace_runs], 1e3)} ms"],
            ["kernel tick 1/CONFIG_HZ (ms)", _finite_or_none(tick_ms), f"CONFIG_HZ={hz_config} from {hz_source}"],
            ["peak near the tick (z)", _finite_or_none(gaps.z_tick),
             f"at {gaps.near_tick:.3g} ms" if np.isfinite(gaps.near_tick) else "tick unknown"],
            ["peak near 1 ms (z)", _finite_or_none(gaps.z_1ms),
             f"highest count in 0.95–1.10 ms at {gaps.near_1ms:.3g} ms, in robust sd above the median"],
            ["gaps in the periodic train: median (µs)", float(np.median(periodic_us)) if periodic_us.size else None,
             f"n = {periodic_us.size}: gaps with others one period before and after, or two on one side (±{PARTNER_BINS * BIN_MS:g} ms); "
             f"90th percentile {np.percentile(periodic_us, 90) if periodic_us.size else math.nan:.3g} µs"],
            ["other gaps: median (µs)", float(np.median(other_us)) if other_us.size else None, f"n = {other_us.size}"],
            ["inactive time per ms (µs)", gaps.lost_us_per_ms, f"{gaps.total_ms:.0f} ms traced"],
            [f"inactive time per ms in gaps below {SLICE_MS:g} ms (µs)", gaps.lost_short_us_per_ms,
             f"{gaps.all_us.size - gaps.short_us.size} gaps of {SLICE_MS:g} ms or more left out: another task or the host had the CPU"],
        ],
        caption="z = (count − median count) / (1.4826 × MAD of counts) of the smoothed distance histogram. In a virtual "
                "machine the host's interruptions (its timer, other guests, exits) show up beside the guest's own tick.",
    )


def _int_or_none(value):
    return int(value) if np.isfinite(value) else None


def context_switches(cs_runs, tick_gap_us):
    """The context-switch table, None without context-switch runs."""
    if not cs_runs:
        return None
    return Table(
        title="Context switches: parent and child on one CPU",
        columns=["run", "switches", "gaps with a third task", "per switch, median (µs)", "per switch, mean (µs)",
                 "seed's estimate (µs)"],
        rows=[[r.task, int(r.value("switches")), _int_or_none(r.value("third-party-gaps")), us(r.value("context-switch")),
               us(r.value("context-switch-mean")), us(r.value("context-switch-seed"))] for r in cs_runs],
        caption="Per switch: from one side's last TSC read to the other side's first read, at both ends of each gap "
                "that the other side's activity fills. Seed's estimate: (gap − the other side's active time in it) / 2, "
                "averaged. Gaps whose hand-over at either end exceeds 1 ms had a third task in between and are left "
                "out (third column). Both include the interrupt that triggered the switch (a preemption happens at a tick) and "
                "any interrupt in between; gaps of the periodic train of the single-tracer runs, for comparison: "
                f"median {tick_gap_us:.3g} µs.",
    )

