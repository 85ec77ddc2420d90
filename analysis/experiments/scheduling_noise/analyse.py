"""
The scheduling-noise experiment (seed 004, experiment A): when is a process that never blocks not
running, how often, for how long, and what does a context switch cost?

Input: BenchExec result files of `benchmark-defs/scheduling-noise.xml` (tool `tracer`). Each run's
summary values come from its result file; its active and inactive periods from the result file
BenchExec kept, `periods.csv`, in `<result name up to .results.>.files/<run definition>/<task file
name>/`. From these: an activity timeline, the lengths of inactive periods, the distances between
gaps (whose most frequent value is the period of the interruptions) against the kernel's tick
(CONFIG_HZ), the TSC frequency against the kernel's, the core clock beside it, the context-switch
cost, and the seed's claims with this machine's verdicts.

The dominant period here is the same computation as the tracer's own (`programs/tracer.c`,
`summarize`): the histogram of distances between the starts of all pairs of gaps up to 20 ms
apart in 0.01 ms bins, lags below 0.5 ms left out, three neighbouring bins summed; the highest
peak above the median count, reduced to its fundamental. The tests check that both agree.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from analysis.experiments.scheduling_noise import plots as noise_plots
from analysis.core import plots
from analysis.machine import facts as machine_facts
from analysis.machine.kernel import kernel_log_tsc
from analysis.core.report import Figure, Finding, Section, Table
from analysis.core.tasks import input_of

# the result columns this analysis reads
COLUMNS = ("status", "category", "tsc-frequency", "kernel-tsc", "kernel-tsc-source", "core-clock", "tsc-invariant",
           "clocksource", "cpu", "threshold", "threshold-cycles", "median-gap-cycles", "gaps", "dominant-period",
           "dominant-period-share", "interruption-mean", "interruption-median", "interruption-max", "lost-per-ms",
           "trace-duration", "switches", "third-party-gaps", "context-switch", "context-switch-mean", "context-switch-seed")
PERIODS_FILE = "periods.csv"
PERIODS_HEADER = ["process", "kind", "index", "start_cycles", "duration_cycles", "start_ms", "duration_ms"]

# the tracer's defaults for the dominant period (tracer.c: min-period-ms, max-period-ms, period-bin-ms)
BIN_MS = 0.01
MIN_MS = 0.5
MAX_MS = 20.0
PARTNER_BINS = 3  # a gap is periodic if another starts one period before or after it, +- 3 bins

# the seed's figures (seed 004, experiment A part 1)
SEED_TICK_MS = 1.0
SEED_INTERRUPT_US = 3.1
SEED_LOST_US_PER_MS = 2.62
TSC_TOLERANCE = 0.01  # the issue: the TSC estimate within 1 % of the kernel's
TIMELINE_MS = 12.0
# a gap this long is another task's (or the host's) turn on the CPU, not an interrupt being handled
SLICE_MS = 1.0


class PeriodsError(Exception):
    """A periods file that cannot be read; str(e) is one line: '<path>: <what>'."""

    def __init__(self, path, problem):
        super().__init__(f"{path}: {problem}")


@dataclass
class Periods:
    """The active and inactive periods of one tracer run, one entry per period, file order."""

    process: np.ndarray  # 'tracer', or 'parent'/'child' in context-switch mode
    inactive: np.ndarray  # bool
    start_ms: np.ndarray
    duration_ms: np.ndarray
    start_cycles: np.ndarray
    duration_cycles: np.ndarray

    @property
    def processes(self):
        return list(dict.fromkeys(self.process.tolist()))

    def gaps(self, process=None):
        """(start_ms, duration_ms) of the inactive periods, of one process or all."""
        mask = self.inactive if process is None else self.inactive & (self.process == process)
        return self.start_ms[mask], self.duration_ms[mask]

    def lane(self, process):
        mask = self.process == process
        return self.start_ms[mask], self.duration_ms[mask], self.inactive[mask]


def read_periods(path):
    """Read a tracer's periods.csv; anything wrong is a PeriodsError."""
    path = Path(path)
    try:
        with open(path, newline="") as handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header != PERIODS_HEADER:
                raise PeriodsError(path, f"header {header} is not the tracer's {PERIODS_HEADER}")
            rows = list(reader)
    except OSError as e:
        raise PeriodsError(path, f"cannot be read ({e.strerror})") from None
    if any(len(r) != len(PERIODS_HEADER) for r in rows):
        raise PeriodsError(path, f"a row has not the {len(PERIODS_HEADER)} fields 'process,kind,index,cycles,cycles,ms,ms'")
    try:
        process = np.array([r[0] for r in rows], dtype=object)
        kind = np.array([r[1] for r in rows], dtype=object)
        numbers = np.array([[float(x) for x in r[3:7]] for r in rows]).reshape(-1, 4)
    except (ValueError, IndexError):
        raise PeriodsError(path, "a row is not 'process,kind,index,cycles,cycles,ms,ms'") from None
    if not np.isfinite(numbers).all():
        raise PeriodsError(path, "a start or duration is not a finite number")
    if not set(kind.tolist()) <= {"active", "inactive"}:
        raise PeriodsError(path, f"unknown kind of period: {sorted(set(kind.tolist()) - {'active', 'inactive'})}")
    return Periods(process=process, inactive=kind == "inactive", start_ms=numbers[:, 2], duration_ms=numbers[:, 3],
                   start_cycles=numbers[:, 0].astype(np.int64), duration_cycles=numbers[:, 1].astype(np.int64))


def result_files_dir(table):
    """Where BenchExec 3.35 keeps a run set's result files: `<output base>.files/<run definition>/`,
    the output base being the result file's name up to `.results.`."""
    name = table.path.name
    if ".results." not in name:
        raise PeriodsError(table.path, "is not named like a BenchExec result file (*.results.*)")
    base = table.path.parent / (name.split(".results.")[0] + ".files")
    return base / table.rundefinition if table.rundefinition else base


def periods_path(table, task):
    """The periods file of one run: the task file's name is the run's folder."""
    return result_files_dir(table) / PurePosixPath(task).name / PERIODS_FILE


# ---------------------------------------------------------------------------------------------
# the runs


@dataclass
class Run:
    task: str
    input: str
    values: dict  # numeric columns in SI units (s, Hz), nan where missing
    texts: dict
    periods: Periods | None

    @property
    def mode(self):
        if self.periods is not None:
            return "context-switch" if "parent" in self.periods.processes else "trace"
        return "context-switch" if np.isfinite(self.values.get("switches", np.nan)) else "trace"

    def value(self, name):
        return float(self.values.get(name, np.nan))


def collect(tables):
    """(runs that finished, {excluded task: reason}, [warnings]) of tracer result tables."""
    runs, excluded, warnings = [], {}, []
    for table in tables:
        valid = table.valid()
        for i, task in enumerate(table.tasks.tolist()):
            label = f"{table.name}/{PurePosixPath(task).name}"
            gaps = table.columns.get("gaps")
            if not valid[i] or gaps is None or not np.isfinite(gaps[i]):
                excluded[label] = table.status[i] or "no status"
                continue
            values = {k: float(v[i]) for k, v in table.columns.items()}
            texts = {k: str(v[i]) for k, v in table.text_columns.items()}
            path = periods_path(table, task)
            periods = None
            try:
                periods = read_periods(path)
            except PeriodsError as e:
                warnings.append(f"{e}; the run's summary values are used, its periods are not")
            runs.append(Run(task=label, input=input_of(task), values=values, texts=texts, periods=periods))
    return runs, excluded, warnings


# ---------------------------------------------------------------------------------------------
# the distances between gaps


def pair_lags(starts_ms, min_ms=MIN_MS, max_ms=MAX_MS):
    """Distances between the starts of all pairs of gaps, min_ms <= lag <= max_ms."""
    s = np.sort(np.asarray(starts_ms, dtype=float))
    parts = []
    for k in range(1, len(s)):
        d = s[k:] - s[:-k]
        if d.min() > max_ms:  # d grows with k element by element: no later k can fall in range
            break
        parts.append(d[(d >= min_ms) & (d <= max_ms)])
    return np.concatenate(parts) if parts else np.empty(0)


def lag_counts(lags, bin_ms=BIN_MS, max_ms=MAX_MS):
    bins = math.ceil(max_ms / bin_ms) + 2
    index = np.floor(np.asarray(lags) / bin_ms).astype(np.int64)
    return np.bincount(index[index < bins], minlength=bins)


@dataclass
class Period:
    period_ms: float  # nan if none
    peak_ms: float  # the highest peak before reducing it to its fundamental
    base: float  # median of the smoothed counts: what random coincidences give
    noise: float  # robust sd of the smoothed counts
    smooth: np.ndarray
    bin_ms: float
    pairs: int

    def excess_near(self, lo_ms, hi_ms):
        """(lag of the highest smoothed count in [lo, hi] ms, its excess over base in noise sd)."""
        lo, hi = int(lo_ms / self.bin_ms), int(hi_ms / self.bin_ms)
        window = self.smooth[lo:hi + 1]
        if not window.size:
            return math.nan, math.nan
        top = lo + int(np.argmax(window))
        z = (self.smooth[top] - self.base) / self.noise if self.noise > 0 else math.nan
        return (top + 0.5) * self.bin_ms, float(z)


def dominant_period(lags, bin_ms=BIN_MS, min_ms=MIN_MS, max_ms=MAX_MS):
    """The tracer's dominant-period rule (see the module docstring) on a set of lags."""
    lags = np.asarray(lags, dtype=float)
    counts = lag_counts(lags, bin_ms, max_ms)
    bins = len(counts)
    smooth = np.zeros(bins, dtype=np.int64)
    smooth[1:-1] = counts[:-2] + counts[1:-1] + counts[2:]
    first, last = math.ceil(min_ms / bin_ms) + 1, bins - 2
    nothing = Period(math.nan, math.nan, math.nan, math.nan, smooth, bin_ms, 0)
    if last <= first:
        return nothing
    ranged = np.sort(smooth[first:last + 1])
    base = float(ranged[len(ranged) // 2])
    mad = float(np.median(np.abs(smooth[first:last + 1] - np.median(smooth[first:last + 1]))))
    nothing.base, nothing.noise = base, 1.4826 * mad
    best = first + int(np.argmax(smooth[first:last + 1]))
    top_excess = smooth[best] - base
    if smooth[best] == 0 or top_excess <= 0:
        return nothing
    chosen = best
    for k in range(best // first, 1, -1):
        supported, first_top = True, 0
        for m in range(1, k + 1):
            centre = math.floor(best * m / k + 0.5)
            lo = centre - 2 if centre > first + 2 else first
            hi = min(centre + 2, last)
            top = lo + int(np.argmax(smooth[lo:hi + 1])) if hi >= lo else 0
            if not top or 2 * (smooth[top] - base) < top_excess:
                supported = False
                break
            if m == 1:
                first_top = top
        if supported:
            chosen = first_top
            break
    lo_ms, hi_ms = (chosen - 1) * bin_ms, (chosen + 2) * bin_ms
    in_bins = lags[(lags >= lo_ms) & (lags < hi_ms) & (lags >= min_ms)]
    if not in_bins.size:
        return nothing
    return Period(float(in_bins.mean()), (best + 0.5) * bin_ms, base, 1.4826 * mad, smooth, bin_ms, int(in_bins.size))


def periodic_mask(starts_ms, period_ms, tolerance_ms=PARTNER_BINS * BIN_MS):
    """Gaps in a train of that period: other gaps start one period before and after, or one and
    two periods after, or one and two before (+- tolerance), so the ends of a train count too.
    A random gap has two such partners by chance only where gaps are dense."""
    s = np.asarray(starts_ms, dtype=float)
    if len(s) < 2 or not np.isfinite(period_ms):
        return np.zeros(len(s), dtype=bool)
    order = np.sort(s)
    has = {}
    for k in (-2, -1, 1, 2):
        target = s + k * period_ms
        i = np.clip(np.searchsorted(order, target), 1, len(order) - 1)
        has[k] = np.minimum(np.abs(order[i] - target), np.abs(order[i - 1] - target)) <= tolerance_ms
    return (has[-1] & has[1]) | (has[1] & has[2]) | (has[-2] & has[-1])


# ---------------------------------------------------------------------------------------------
# the kernel: its tick and its TSC frequency


# ---------------------------------------------------------------------------------------------
# the section


def _int_or_none(value):
    return int(value) if np.isfinite(value) else None


def _median(values):
    values = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    return float(np.median(values)) if values.size else math.nan


def _us(seconds):
    return seconds * 1e6


def _range(values, scale=1.0, digits=4):
    values = [v * scale for v in values if np.isfinite(v)]
    if not values:
        return "–"
    lo, hi = min(values), max(values)
    return f"{lo:.{digits}g}" if lo == hi else f"{lo:.{digits}g} – {hi:.{digits}g}"


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
    sec.paragraphs += [
        "Seed 004 (experiment A) traced a process that polls the time-stamp counter (TSC) in a tight loop: "
        "a gap between two reads far above the usual one means the process was not running. programs/tracer "
        "does the same under BenchExec, pinned to one CPU; its threshold is a multiple of the median gap between "
        "two reads, measured first (table of runs). In context-switch mode a parent and a child share one CPU and "
        "each one's gaps are filled by the other's activity plus the switches.",
        "The dominant period is the most frequent distance between the starts of two gaps (all pairs up to "
        f"{MAX_MS:g} ms apart, {BIN_MS:g} ms bins, distances below {MIN_MS:g} ms left out so that gaps of one burst "
        "do not count), reduced to its fundamental.",
    ]
    data = {"runs": [], "excluded": excluded}
    if not runs:
        sec.warnings.append("no tracer run finished: nothing to analyse")
        sec.findings.append(Finding("The timer interrupts the process every 1 ms (seed 004, A1.1)", "not testable here",
                                    "no finished tracer runs"))
        return sec, data

    trace_runs = [r for r in runs if r.mode == "trace"]
    cs_runs = [r for r in runs if r.mode == "context-switch"]
    hz_config, hz_source = facts.config_hz, facts.config_hz_source
    tick_ms = 1000.0 / hz_config if hz_config else math.nan

    # pooled distances between gaps of all single-tracer runs
    pooled_lags = [pair_lags(r.periods.gaps()[0]) for r in trace_runs if r.periods is not None]
    period = dominant_period(np.concatenate(pooled_lags) if pooled_lags else np.empty(0))
    near_1ms, z_1ms = period.excess_near(0.95, 1.10) if np.isfinite(period.base) else (math.nan, math.nan)
    near_tick, z_tick = period.excess_near(tick_ms * 0.97, tick_ms * 1.03) if np.isfinite(tick_ms) and np.isfinite(period.base) \
        else (math.nan, math.nan)

    gap_lengths, periodic_lengths, other_lengths = [], [], []
    total_inactive = total_time = 0.0
    for r in trace_runs:
        if r.periods is None:
            continue
        starts, lengths = r.periods.gaps()
        gap_lengths.append(lengths)
        total_inactive += lengths.sum()
        total_time += r.periods.start_ms[-1] + r.periods.duration_ms[-1] - r.periods.start_ms[0]
        if np.isfinite(period.period_ms):
            mask = periodic_mask(starts, period.period_ms)
            periodic_lengths.append(lengths[mask])
            other_lengths.append(lengths[~mask])
    all_gaps_us = np.concatenate(gap_lengths) * 1e3 if gap_lengths else np.empty(0)
    short_us = all_gaps_us[all_gaps_us < SLICE_MS * 1e3]
    lost_short_us_per_ms = short_us.sum() / 1e3 / total_time * 1e3 if total_time else math.nan
    periodic_us = np.concatenate(periodic_lengths) * 1e3 if periodic_lengths else np.empty(0)
    other_us = np.concatenate(other_lengths) * 1e3 if other_lengths else np.empty(0)
    lost_us_per_ms = total_inactive / total_time * 1e3 if total_time else math.nan

    # runs table
    rows = []
    for r in runs:
        py_period = dominant_period(pair_lags(r.periods.gaps()[0])).period_ms if r.periods is not None and r.mode == "trace" else None
        rows.append([r.task, r.mode, int(r.value("gaps")), _us(r.value("threshold")), int(r.value("median-gap-cycles")),
                     r.value("dominant-period") * 1e3, 100 * r.value("dominant-period-share"),
                     _us(r.value("interruption-mean")), _us(r.value("interruption-median")), _us(r.value("interruption-max")),
                     _us(r.value("lost-per-ms")), r.value("tsc-frequency") / 1e6, r.value("core-clock") / 1e6,
                     _us(r.value("context-switch")) if r.mode == "context-switch" else None])
        data["runs"].append({"task": r.task, "mode": r.mode, "values": r.values, "texts": r.texts,
                             "periods_file": r.periods is not None,
                             "dominant_period_ms_python": py_period})
    sec.tables.append(Table(
        title="Runs: gaps, dominant period and interruptions as the tracer reported them",
        columns=["run", "mode", "gaps", "threshold (µs)", "median gap (cycles)", "dominant period (ms)",
                 "gaps one period apart (%)", "mean gap (µs)", "median gap (µs)", "max gap (µs)", "lost per ms (µs)",
                 "TSC (MHz)", "core clock (MHz)", "context switch (µs)"],
        rows=rows,
        caption="Threshold = threshold-factor × the median distance between two TSC reads, measured before tracing. In "
                "context-switch mode the gap columns describe the parent, whose gaps include the child's turns.",
    ))

    # clocks
    tsc = _median(r.value("tsc-frequency") for r in runs)
    core = _median(r.value("core-clock") for r in runs)
    invariant = all(r.value("tsc-invariant") == 1 for r in runs)
    clocksources = sorted({r.texts.get("clocksource", "unknown") for r in runs})
    references = []
    for source in sorted({r.texts.get("kernel-tsc-source", "") for r in runs}):
        values = [r.value("kernel-tsc") for r in runs if r.texts.get("kernel-tsc-source", "") == source]
        label = {"kernel-log-refined": "kernel log, refined calibration (read by the tracer)",
                 "kernel-log-detected": "kernel log, detected (read by the tracer)",
                 "proc-cpuinfo": "/proc/cpuinfo 'cpu MHz' (read by the tracer; approximate where cpufreq changes it)"}.get(
            source, source or "unknown")
        references.append((label, _median(values), source.startswith("kernel-log")))
    if not any(exact for *_, exact in references):
        mhz, line = kernel_log_tsc(facts.kernel_log) if facts.kernel_log else (None, None)
        if mhz:
            references.insert(0, (f"{line} ({facts.origin})", mhz * 1e6, True))
        else:
            sec.warnings.append("the kernel log is unreadable here (needs root) and the tracer could not read it inside "
                                "BenchExec's container either: the TSC is compared with /proc/cpuinfo only")
    reference = next(((label, value) for label, value, exact in references if exact),
                     references[0][:2] if references else (None, math.nan))
    deviation = (tsc - reference[1]) / reference[1] if np.isfinite(reference[1]) and np.isfinite(tsc) else math.nan
    clock_rows = [["TSC frequency, this kit (ticks per second of CLOCK_MONOTONIC_RAW)", tsc / 1e6,
                   f"median of {len(runs)} runs: {_range([r.value('tsc-frequency') for r in runs], 1e-6, 9)} MHz", None]]
    for label, value, _ in references:
        clock_rows.append([f"kernel: {label}", value / 1e6, "",
                           100 * (tsc - value) / value if np.isfinite(value) and np.isfinite(tsc) else None])
    clock_rows += [
        ["core clock (dependent adds, 1 cycle each)", core / 1e6,
         f"{_range([r.value('core-clock') for r in runs], 1e-6)} MHz; {'invariant' if invariant else 'NOT invariant'} TSC",
         100 * (core - tsc) / tsc if np.isfinite(core) and np.isfinite(tsc) else None],
    ]
    sec.tables.append(Table(
        title="Clocks: the TSC against the kernel's value, and the core clock",
        columns=["quantity", "MHz", "note", "difference to the TSC estimate (%)"],
        rows=clock_rows,
        caption=f"Clock source: {', '.join(clocksources)}. With the TSC as clock source the kernel turns TSC ticks into "
                "CLOCK_MONOTONIC_RAW with its own TSC frequency, so agreement checks the measurement, not the kernel's "
                "calibration. The core clock is what the CPU ran at during the add loop (boost included).",
    ))

    # periodic interruptions
    sec.tables.append(Table(
        title="Periodic interruptions (all single-tracer runs pooled)",
        columns=["quantity", "value", "note"],
        rows=[
            ["dominant period (ms)", period.period_ms,
             f"{period.pairs} pairs of gaps in its bins; highest peak at {period.peak_ms:.3g} ms; per run: "
             f"{_range([r.value('dominant-period') for r in trace_runs], 1e3)} ms"],
            ["kernel tick 1/CONFIG_HZ (ms)", tick_ms if np.isfinite(tick_ms) else None, f"CONFIG_HZ={hz_config} from {hz_source}"],
            ["peak near the tick (z)", z_tick if np.isfinite(z_tick) else None,
             f"at {near_tick:.3g} ms" if np.isfinite(near_tick) else "tick unknown"],
            ["peak near 1 ms (z)", z_1ms if np.isfinite(z_1ms) else None,
             f"highest count in 0.95–1.10 ms at {near_1ms:.3g} ms, in robust sd above the median"],
            ["gaps in the periodic train: median (µs)", float(np.median(periodic_us)) if periodic_us.size else None,
             f"n = {periodic_us.size}: gaps with others one period before and after, or two on one side (±{PARTNER_BINS * BIN_MS:g} ms); "
             f"90th percentile {np.percentile(periodic_us, 90) if periodic_us.size else math.nan:.3g} µs"],
            ["other gaps: median (µs)", float(np.median(other_us)) if other_us.size else None, f"n = {other_us.size}"],
            ["inactive time per ms (µs)", lost_us_per_ms, f"{total_time:.0f} ms traced"],
            [f"inactive time per ms in gaps below {SLICE_MS:g} ms (µs)", lost_short_us_per_ms,
             f"{all_gaps_us.size - short_us.size} gaps of {SLICE_MS:g} ms or more left out: another task or the host had the CPU"],
        ],
        caption="z = (count − median count) / (1.4826 × MAD of counts) of the smoothed distance histogram. In a virtual "
                "machine the host's interruptions (its timer, other guests, exits) show up beside the guest's own tick.",
    ))

    # context switches
    tick_gap_us = float(np.median(periodic_us)) if periodic_us.size else math.nan
    cs_rows = [[r.task, int(r.value("switches")), _int_or_none(r.value("third-party-gaps")), _us(r.value("context-switch")),
                _us(r.value("context-switch-mean")), _us(r.value("context-switch-seed"))] for r in cs_runs]
    cs_median = _median(_us(r.value("context-switch")) for r in cs_runs)
    if cs_runs:
        sec.tables.append(Table(
            title="Context switches: parent and child on one CPU",
            columns=["run", "switches", "gaps with a third task", "per switch, median (µs)", "per switch, mean (µs)",
                     "seed's estimate (µs)"],
            rows=cs_rows,
            caption="Per switch: from one side's last TSC read to the other side's first read, at both ends of each gap "
                    "that the other side's activity fills. Seed's estimate: (gap − the other side's active time in it) / 2, "
                    "averaged. Gaps whose hand-over at either end exceeds 1 ms had a third task in between and are left "
                    "out (third column). Both include the interrupt that triggered the switch (a preemption happens at a tick) and "
                    "any interrupt in between; gaps of the periodic train of the single-tracer runs, for comparison: "
                    f"median {tick_gap_us:.3g} µs.",
        ))
    data.update({
        "config_hz": hz_config, "config_hz_source": hz_source, "tick_ms": tick_ms,
        "dominant_period_ms": period.period_ms, "dominant_peak_ms": period.peak_ms, "lag_base": period.base,
        "peak_near_1ms": {"lag_ms": near_1ms, "z": z_1ms}, "peak_near_tick": {"lag_ms": near_tick, "z": z_tick},
        "inactive_us": {"n": int(all_gaps_us.size), "mean": float(all_gaps_us.mean()) if all_gaps_us.size else None,
                        "median": float(np.median(all_gaps_us)) if all_gaps_us.size else None},
        "periodic_gap_median_us": tick_gap_us, "lost_us_per_ms": lost_us_per_ms,
        "lost_us_per_ms_below_slice": lost_short_us_per_ms, "gaps_of_a_slice_or_more": int(all_gaps_us.size - short_us.size),
        "tsc_hz": tsc, "core_hz": core, "tsc_invariant": invariant, "clocksources": clocksources,
        "tsc_reference": {"label": reference[0], "hz": reference[1], "deviation": deviation},
        "context_switch_us": cs_median,
    })

    sec.figures += _figures(runs, trace_runs, cs_runs, period, tick_ms, all_gaps_us)
    sec.findings += _findings(period, tick_ms, hz_source, z_1ms, near_1ms, all_gaps_us, lost_us_per_ms, lost_short_us_per_ms,
                              tsc, core, invariant, reference, deviation, clocksources)
    return sec, data


def _figures(runs, trace_runs, cs_runs, period, tick_ms, all_gaps_us):
    figures = []
    lanes = []
    first_trace = next((r for r in trace_runs if r.periods is not None), None)
    first_cs = next((r for r in cs_runs if r.periods is not None), None)
    if first_trace:
        lanes.append((f"alone\n{PurePosixPath(first_trace.task).name}", *first_trace.periods.lane("tracer")))
    if first_cs:
        for process in ("parent", "child"):
            lanes.append((f"{process}\n{PurePosixPath(first_cs.task).name}", *first_cs.periods.lane(process)))
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
    threshold = _median(r.value("threshold") for r in runs) * 1e6
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


def _findings(period, tick_ms, hz_source, z_1ms, near_1ms, all_gaps_us, lost_us_per_ms, lost_short_us_per_ms, tsc, core,
              invariant, reference, deviation, clocksources):
    findings = []
    p = period.period_ms
    if np.isfinite(p):
        verdict = "confirmed" if abs(p - SEED_TICK_MS) / SEED_TICK_MS < 0.1 else "refuted"
        evidence = (f"dominant period here {p:.4g} ms (pooled single-tracer runs); the kernel's tick is "
                    f"{tick_ms:.4g} ms ({hz_source}). " if np.isfinite(tick_ms) else
                    f"dominant period here {p:.4g} ms; CONFIG_HZ unknown ({hz_source}). ")
        evidence += (f"Near 1 ms the distance histogram peaks at {near_1ms:.3g} ms, {z_1ms:.1f} robust sd above the "
                     "median count" + (" (a periodic source besides the tick, e.g. the host)" if z_1ms > 5 else " (no clear periodic source there)")
                     + ". Confirmed if the dominant period is within 10 % of 1 ms.")
    else:
        verdict, evidence = "inconclusive", "no periodic pattern found in the gaps"
    findings.append(Finding("The timer interrupts the process every 1 ms (seed 004, A1.1)", verdict, evidence))

    if np.isfinite(p) and np.isfinite(tick_ms):
        match = abs(p - tick_ms) / tick_ms < 0.05
        findings.append(Finding(
            "The dominant period between interruptions is the kernel's tick, 1/CONFIG_HZ (kit check)",
            "confirmed" if match else "refuted",
            f"{p:.4g} ms against {tick_ms:.4g} ms; match = within 5 %."
            + ("" if match else " In a virtual machine the host's interruptions also stop the guest; they need not follow the guest's tick."),
        ))

    short = all_gaps_us[all_gaps_us < SLICE_MS * 1e3]
    if short.size:
        mean, median = float(short.mean()), float(np.median(short))
        findings.append(Finding(
            f"Handling an interrupt takes about {SEED_INTERRUPT_US:g} µs: the mean inactive period of a process alone on "
            "a CPU (seed 004, A1.2)",
            "confirmed" if SEED_INTERRUPT_US / 2 <= mean <= SEED_INTERRUPT_US * 2 else "refuted",
            f"mean {mean:.3g} µs, median {median:.3g} µs over the n = {short.size} inactive periods shorter than {SLICE_MS:g} ms "
            f"({all_gaps_us.size - short.size} longer ones, another task's or the host's turn, left out; with them the mean is "
            f"{all_gaps_us.mean():.3g} µs); {100 * np.mean(short > 20):.1f} % of the short ones exceed 20 µs. Confirmed if "
            "the mean (the seed's estimator) is within a factor of 2 of 3.1 µs.",
        ))
        findings.append(Finding(
            f"A process alone on a CPU loses about {SEED_LOST_US_PER_MS:g} µs per ms (0.26 %) to interrupts (seed 004, A1.4)",
            "confirmed" if SEED_LOST_US_PER_MS / 2 <= lost_short_us_per_ms <= SEED_LOST_US_PER_MS * 2 else "refuted",
            f"{lost_short_us_per_ms:.3g} µs per ms ({lost_short_us_per_ms / 10:.3g} %) in gaps shorter than {SLICE_MS:g} ms; "
            f"{lost_us_per_ms:.3g} µs per ms with all gaps. Confirmed within a factor of 2.",
        ))

    if np.isfinite(core) and np.isfinite(tsc):
        ratio = core / tsc
        findings.append(Finding(
            "The TSC counts the CPU's cycles (seed 004, A1 introduction)",
            ("refuted" if abs(ratio - 1) > 0.05 else "confirmed") if invariant else "inconclusive",
            f"core clock {core / 1e6:.0f} MHz from dependent adds, TSC {tsc / 1e6:.1f} MHz (ratio {ratio:.3f}); the TSC is "
            + ("invariant (constant_tsc, nonstop_tsc): it ticks at a fixed rate whatever the core clock does"
               if invariant else "not invariant here, so the two can coincide")
            + ". Refuted if they differ by more than 5 %.",
        ))

    if np.isfinite(deviation):
        findings.append(Finding(
            "The TSC frequency measured against CLOCK_MONOTONIC_RAW is the kernel's, within 1 % (kit check)",
            "confirmed" if abs(deviation) <= TSC_TOLERANCE else "refuted",
            f"{tsc / 1e6:.4f} MHz against {reference[1] / 1e6:.4f} MHz ({reference[0]}): {100 * deviation:+.5f} %. "
            f"Clock source {', '.join(clocksources)}"
            + (": the kernel derives CLOCK_MONOTONIC_RAW from the TSC with this frequency, so this checks the measurement."
               if clocksources == ["tsc"] else "."),
        ))
    else:
        findings.append(Finding("The TSC frequency measured against CLOCK_MONOTONIC_RAW is the kernel's, within 1 % (kit check)",
                                "not testable here", "no kernel value of the TSC frequency was readable"))
    return findings
