"""
The runs of the measurement-discipline experiment (seed 001): every benchexec invocation is one
(condition, rerun), named in the sweep manifest or by benchexec --name `COND-rerunM`.
"""

import re
from dataclasses import dataclass, field

import numpy as np

from analysis.core import validity

COLUMNS = ("status", "category", "cputime", "walltime")
CONDITIONS = ("unpinned", "alone", "separate-cores", "same-core", "same-core-niced")
LABEL = {
    "unpinned": "alone, unpinned",
    "alone": "alone, pinned",
    "separate-cores": "competitor on another CPU",
    "same-core": "competitor on the same CPU",
    "same-core-niced": "competitor on the same CPU, nice 19",
}
_NAME = re.compile(r"\.([a-z-]+)-rerun(\d+)$")


@dataclass
class Runs:
    """Valid runs of one experiment: condition, rerun, wall and CPU time (seconds) per run."""

    condition: np.ndarray
    rerun: np.ndarray
    wall: np.ndarray
    cpu: np.ndarray       # NaN where the run's CPU time is no measurement (its wall time still counts)
    excluded: dict  # condition -> {status, or "walltime: NaN" ...: count} of runs kept out
    cpu_left_out: dict = field(default_factory=dict)   # condition -> {reason: count} of CPU times left out

    def of(self, condition, rerun=None):
        mask = self.condition == condition
        if rerun is not None:
            mask &= self.rerun == rerun
        return mask


def step_of(table, conditions):
    """(condition, rerun) from the sweep manifest, else from the benchexec --name `COND-rerunM`."""
    step = conditions.get(table.path.name)
    if step is not None:
        return step.condition, step.rerun
    match = _NAME.search(table.benchmark)
    return (match.group(1), int(match.group(2))) if match else ("unpinned", 1)


def collect(tables, conditions=None):
    """The runs of the given RunTables with a valid wall time (the measurement the analysis is
    about) as Runs; runs kept out are counted per condition, by status where they did not finish
    normally, else by the reason their wall time is no measurement (analysis.core.validity). A CPU
    time that is no measurement is left out of the CPU-time summary only, and counted too."""
    conditions = conditions or {}
    parts, excluded, cpu_left_out = [], {}, {}
    for table in tables:
        condition, rerun = step_of(table, conditions)
        finished = table.valid()
        wall_check = validity.of_column(table, "walltime", finished)
        cpu_check = validity.of_column(table, "cputime", finished)
        counts = excluded.setdefault(condition, {})
        for status in table.status[~finished].tolist():
            counts[status or "(no status)"] = counts.get(status or "(no status)", 0) + 1
        for reason, n in wall_check.reasons.items():
            counts[f"walltime: {reason}"] = counts.get(f"walltime: {reason}", 0) + n
        if not counts:
            del excluded[condition]
        keep = wall_check.usable
        cpu_reasons = cpu_check.reasons_in(keep)
        if cpu_reasons:
            cpu_left_out[condition] = validity.merge(cpu_left_out.get(condition, {}), cpu_reasons)
        wall = table.columns.get("walltime", np.full(len(table), np.nan))
        cpu = np.where(cpu_check.usable, table.columns.get("cputime", np.nan), np.nan)
        n = int(keep.sum())
        parts.append((np.full(n, condition, dtype=object), np.full(n, rerun), wall[keep], cpu[keep]))
    if not parts:
        return None
    return Runs(*(np.concatenate([p[i] for p in parts]) for i in range(4)), excluded=excluded, cpu_left_out=cpu_left_out)


def present_conditions(runs):
    """The conditions that ran, in the talk's order, then any others by name."""
    found = set(runs.condition.tolist())
    return [c for c in CONDITIONS if c in found] + sorted(found - set(CONDITIONS))
