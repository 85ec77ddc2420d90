"""
A pilot for `timekit plan`: per row (run definition, input, column) the variance between and
within benchexec invocations, and what an invocation and a run cost on this machine.

Variance components are pooled over the pilot's conditions (an A/B directory is two), so a pilot
of base and new measures the noise, not the change; costs come from BenchExec's timestamps and
the kit's manifest (docs/calibration.md, "Planning: `timekit plan`").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.core.cost import when as _when
from analysis.core.errors import UserError
from analysis.core.tasks import input_of
from analysis.tools.calibrate import family
from analysis.tools.compare import reruns

AB_MANIFEST = "ab.json"
AB_SIDES = ("base", "new")


class PilotError(UserError):
    """The pilot cannot be planned from (one line for the user)."""


@dataclass
class Row:
    rundefinition: str
    input: str
    column: str
    mean: float
    cv_between: float      # sd of the invocation level / mean (one-way random-effects ANOVA, pooled)
    cv_within: float       # sd of runs around their invocation's mean / mean
    invocations: int       # in all conditions together
    runs: int              # median runs per invocation
    conditions: int        # conditions with 2+ invocations of this row
    unit: str = "input"    # or "task set": a rerun mean is an invocation's geometric mean over the set's tasks

    @property
    def label(self):
        return f"{self.rundefinition} / {self.input} ({self.column})"

    @property
    def group(self):
        return self.rundefinition, self.input


@dataclass
class Costs:
    invocation: float      # seconds per invocation besides its runs (median over the pilot's invocations)
    per_run: dict          # (run definition, input) -> seconds per run (median over invocations)
    invocations: int       # invocations with timestamps
    outside: bool          # whether the manifest's whole-process time was added

    def run_seconds(self, groups=None):
        """Seconds for one run of each of these groups (default: all), i.e. one more repetition."""
        return float(sum(v for k, v in self.per_run.items() if groups is None or k in groups))


def conditions(paths):
    """[(label, path)] of the PILOT paths: an A/B directory gives its two sides."""
    out = []
    for path in map(Path, paths):
        if not path.exists():
            raise PilotError(f"{path}: no such file or directory")
        if (path / AB_MANIFEST).exists():
            out += [(f"{path.name}/{side}", path / side) for side in AB_SIDES]
        else:
            out.append((str(path), path))
    return out


def _process_seconds(path):
    """{result file name: seconds the whole benchexec process took} from the A/B manifest beside an
    A/B side (read as JSON: its steps' result files and seconds, the same in every manifest version)."""
    manifest = path.parent / AB_MANIFEST
    if not manifest.exists():
        return {}
    try:
        steps = json.loads(manifest.read_text())["steps"]
        return {name: float(step["seconds"]) for step in steps for name in step.get("result_files", []) if step.get("seconds")}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise PilotError(f"{manifest}: not a readable A/B manifest ({e})") from None


def _group_name(table, conditions_by_file):
    """The run definition as compare names it (a sweep step's condition or load level appended)."""
    step = conditions_by_file.get(table.path.name)
    where = step and (step.condition or f"load {step.load}")
    return f"{table.rundefinition} @ {where}" if step else table.rundefinition


def invocation_costs(tables, conditions_by_file, process_seconds):
    """(fixed seconds, {group: [seconds per run]}, whether the process time was known) of one
    invocation's tables, or None without timestamps."""
    starts, ends, runs = [], [], []
    for table in tables:
        starts.append(_when(table.attributes.get("starttime", "")))
        ends.append(_when(table.attributes.get("endtime", "")))
        stamps = table.text_columns.get("starttime")
        if stamps is None:
            return None
        group = _group_name(table, conditions_by_file)
        runs += [(_when(s), (group, input_of(task))) for s, task in zip(stamps, table.tasks)]
    runs = sorted((t, g) for t, g in runs if np.isfinite(t))
    span = max(ends) - min(starts) if tables else float("nan")
    if len(runs) < 2 or not np.isfinite(span):
        return None
    times = np.array([t for t, _ in runs])
    gaps = np.diff(times)
    gaps = np.append(gaps, np.median(gaps))  # the last run: as long as a typical one
    per_group = {}
    for gap, (_, group) in zip(gaps, runs):
        per_group.setdefault(group, []).append(float(gap))
    fixed = span - float(gaps.sum())
    outside = [process_seconds[t.path.name] for t in tables if t.path.name in process_seconds]
    if outside:
        fixed += max(0.0, max(outside) - span)
    return max(0.0, fixed), per_group, bool(outside)


def input_rows(loaded, columns):
    """Rows per run definition, input and column: runs nested in invocations, pooled over conditions."""
    by_row = {}
    for by_invocation, conditions_by_file in loaded:
        for key, group in family.groups_of(by_invocation, conditions_by_file, columns).items():
            for column, arrays in group.columns.items():
                by_row.setdefault((*key, column), []).append(arrays)
    rows = []
    for (rundefinition, name, column), per_side in sorted(by_row.items(), key=lambda kv: (columns.index(kv[0][2]), kv[0][:2])):
        usable = [arrays for arrays in per_side if len(arrays) >= 2]
        if not usable:
            continue
        c = reruns.variance_components(*usable)
        mean = float(np.mean([np.mean([a.mean() for a in arrays]) for arrays in usable]))
        rows.append(Row(rundefinition, name, column, mean, c.cv_between, c.cv_within,
                        sum(len(a) for a in usable), int(np.median([a.size for arrays in usable for a in arrays])), len(usable)))
    return rows


def task_set_rows(loaded, columns):
    """Rows of compare's task sets (analysis.tools.compare.task_sets) when every condition is 2+
    invocations of a one-run-per-task definition, else None. A row's rerun mean is an invocation's
    geometric mean over the set's tasks (those valid in every invocation of the condition), so
    cv_between is the spread of those means (invocation level and task noise / tasks together),
    cv_within is 0 and a "run" is one pass over the definition's tasks."""
    from analysis.tools.compare import pairing, task_sets

    tables = [[t for group in by_invocation.values() for t in group] for by_invocation, _ in loaded]
    if not tables or not all(len(by_invocation) >= 2 for by_invocation, _ in loaded) or \
            not pairing.one_run_per_task([t for side in tables for t in side]):
        return None
    by_row = {}
    for side, (_, conditions_by_file) in zip(tables, loaded):
        for name, runs in task_sets.side_runs(side, conditions_by_file, columns).items():
            for column in columns:
                for task_set, logs in task_sets.invocation_log_means(runs, column).items():
                    by_row.setdefault((name, task_set, column), []).append(logs)
    rows = []
    for (name, task_set, column), sides in sorted(by_row.items(), key=lambda kv: (columns.index(kv[0][2]), kv[0][:2])):
        df = sum(s.size - 1 for s in sides)
        if not df:
            continue
        sd = float(np.sqrt(sum(np.sum((s - s.mean()) ** 2) for s in sides) / df))
        mean = float(np.exp(np.mean([s.mean() for s in sides])))
        rows.append(Row(name, task_set, column, mean, float(np.sqrt(np.expm1(sd * sd))), 0.0,
                        sum(s.size for s in sides), 1, len(sides), task_sets.UNIT))
    return rows


def load(paths, columns):
    """(rows, costs) of the pilot paths for compare's `columns`; rows of task sets where compare forms them."""
    sides, per_invocation, loaded = conditions(paths), [], []
    for _, path in sides:
        by_invocation, conditions_by_file = family.load_invocations([path], (*columns, "starttime"), PilotError)
        loaded.append((by_invocation, conditions_by_file))
        process = _process_seconds(path) if path.is_dir() else {}
        for tables in by_invocation.values():
            cost = invocation_costs(tables, conditions_by_file, process)
            if cost:
                per_invocation.append(cost)
    rows = task_set_rows(loaded, columns)
    if rows is None:
        rows = input_rows(loaded, columns)
    if not rows:
        raise PilotError(f"{', '.join(map(str, paths))}: no run definition and input with 2+ benchexec invocations of "
                         f"finished {', '.join(columns)} runs in one condition; a pilot needs reruns (e.g. timekit ab "
                         "--reruns 3, or a sweep's --reruns)")
    if not per_invocation:
        raise PilotError(f"{', '.join(map(str, paths))}: the result files have no run start times (BenchExec's 'starttime' "
                         "column); costs cannot be measured")
    per_run = {}
    for _, groups, _ in per_invocation:
        for group, gaps in groups.items():
            per_run.setdefault(group, []).append(float(np.mean(gaps)))
    costs = Costs(float(np.median([f for f, _, _ in per_invocation])), {g: float(np.median(v)) for g, v in per_run.items()},
                  len(per_invocation), any(o for _, _, o in per_invocation))
    return rows, costs
