"""
The tracer's runs: each run's summary values from its result file, and its active and inactive
periods from the result file BenchExec kept, `periods.csv`, in `<result name up to
.results.>.files/<run definition>/<task file name>/`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np

from analysis.core import validity
from analysis.core.errors import UserError
from analysis.core.instruments import CLOCK_KEYS
from analysis.core.tasks import input_of

# the result columns this analysis reads (core-clock: the one core-clock figure of older tracers, in Hz)
COLUMNS = ("status", "category", "tsc-frequency", "kernel-tsc", "kernel-tsc-source", *CLOCK_KEYS, "core-clock", "tsc-invariant",
           "clocksource", "cpu", "threshold", "threshold-cycles", "median-gap-cycles", "gaps", "dominant-period",
           "dominant-period-share", "interruption-mean", "interruption-median", "interruption-max", "lost-per-ms",
           "trace-duration", "switches", "third-party-gaps", "context-switch", "context-switch-mean", "context-switch-seed")
PERIODS_FILE = "periods.csv"
PERIODS_HEADER = ["process", "kind", "index", "start_cycles", "duration_cycles", "start_ms", "duration_ms"]


class PeriodsError(UserError):
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


@dataclass
class Run:
    task: str
    input: str
    values: dict  # numeric columns in SI units (s, Hz), nan where missing
    texts: dict
    periods: Periods | None
    invocation: str = ""  # the benchexec invocation (result name up to '.results.') that made the run

    @property
    def mode(self):
        if self.periods is not None:
            return "context-switch" if "parent" in self.periods.processes else "trace"
        return "context-switch" if np.isfinite(self.values.get("switches", np.nan)) else "trace"

    def value(self, name):
        return float(self.values.get(name, np.nan))

    def printed(self):
        """What the tracer printed: numbers (finite ones) and texts by key."""
        return {**{k: v for k, v in self.values.items() if np.isfinite(v)}, **{k: v for k, v in self.texts.items() if v}}


def collect(tables):
    """(runs that finished, {excluded task: reason}, [warnings]) of tracer result tables."""
    runs, excluded, warnings = [], {}, []
    for table in tables:
        valid = table.valid()
        gaps = validity.of_column(table, "gaps", valid)
        for i, task in enumerate(table.tasks.tolist()):
            label = f"{table.name}/{PurePosixPath(task).name}"
            if not gaps.usable[i]:
                excluded[label] = f"gaps: {gaps.reason(i)}" if valid[i] else table.status[i] or "no status"
                continue
            values = {k: float(v[i]) for k, v in table.columns.items()}
            texts = {k: str(v[i]) for k, v in table.text_columns.items()}
            path = periods_path(table, task)
            periods = None
            try:
                periods = read_periods(path)
            except PeriodsError as e:
                warnings.append(f"{e}; the run's summary values are used, its periods are not")
            runs.append(Run(task=label, input=input_of(task), values=values, texts=texts, periods=periods,
                            invocation=table.path.name.split(".results.")[0]))
    return runs, excluded, warnings
