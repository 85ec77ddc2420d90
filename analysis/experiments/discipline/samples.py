"""
The runs of the measurement-discipline experiment (seed 001): every benchexec invocation is one
(condition, rerun), named in the sweep manifest or by benchexec --name `COND-rerunM`.
"""

import re
from dataclasses import dataclass

import numpy as np

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
    cpu: np.ndarray
    excluded: dict  # condition -> {status: count} of runs kept out

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
    """Valid runs of the given RunTables as Runs; runs kept out are counted per condition and status."""
    conditions = conditions or {}
    parts, excluded = [], {}
    for table in tables:
        condition, rerun = step_of(table, conditions)
        wall = table.columns.get("walltime", np.full(len(table), np.nan))
        cpu = table.columns.get("cputime", np.full(len(table), np.nan))
        valid = table.valid() & np.isfinite(wall) & np.isfinite(cpu)
        for status in table.status[~valid].tolist():
            counts = excluded.setdefault(condition, {})
            counts[status or "(no status)"] = counts.get(status or "(no status)", 0) + 1
        n = int(valid.sum())
        parts.append((np.full(n, condition, dtype=object), np.full(n, rerun), wall[valid], cpu[valid]))
    if not parts:
        return None
    return Runs(*(np.concatenate([p[i] for p in parts]) for i in range(4)), excluded=excluded)


def present_conditions(runs):
    """The conditions that ran, in the talk's order, then any others by name."""
    found = set(runs.condition.tolist())
    return [c for c in CONDITIONS if c in found] + sorted(found - set(CONDITIONS))
