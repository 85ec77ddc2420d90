"""
Task sets across invocations: one row per run definition, task set and column when each side is
M benchexec invocations of a one-run-per-task definition (a competition's tasks, rerun M times).

An invocation moves all of its tasks at once, so it stays the unit: per invocation the geometric
mean over the tasks valid in every invocation, Welch's t on their logs, M a side, and the crossed
design's variance components (docs/calibration.md, "Task sets across invocations").
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np
from analysis.core.deferred import scipy_stats

from analysis.core import validity
from analysis.tools.compare import pairing

UNIT = "task set"
ALL_TASKS = "(all tasks)"     # the task set's name when the run definition has one
ZERO = "zero (no ratio)"
ELSEWHERE = "task not valid in every invocation of both sides"


def applies(base_tables, new_tables) -> bool:
    """Both sides hold 2+ invocations and every run set holds each task once (no kit repetitions)."""
    sides = (base_tables, new_tables)
    return all(len({(t.benchmark, t.date) for t in side}) >= 2 for side in sides) and pairing.one_run_per_task(
        [t for side in sides for t in side])


@dataclass
class SideRuns:
    """One side's runs of one run definition: per column a matrix invocations x tasks of usable
    values (NaN elsewhere) and the reasons of each left-out value."""

    invocations: list                       # (benchmark, date), in date order
    tasks: list                             # task names below the side's common directory (task_keys)
    blocks: dict                            # task name -> its BenchExec block, where files name one
    values: dict = field(default_factory=dict)    # column -> float matrix
    reasons: dict = field(default_factory=dict)   # column -> object matrix of reason strings ('' where usable)


def rundefinition_name(table, conditions):
    """The run definition as compare names it (a sweep step's condition or load level appended)."""
    step = conditions.get(table.path.name)
    where = step and (step.condition or f"load {step.load}")
    return f"{table.rundefinition} @ {where}" if step else table.rundefinition


def task_keys(names):
    """{task name: its path below the directory all of this side's tasks share}: base and new may
    live in two copies of a task collection (ab's definitions in two directories), and a task is the
    same task when its place in the collection is."""
    parents = {n.rpartition("/")[0] for n in names}
    try:
        common = os.path.commonpath(sorted(parents)) if all(parents) else ""
    except ValueError:   # absolute and relative names mixed
        common = ""
    cut = len(common) + 1 if common else 0
    return {n: n[cut:] for n in names}


def side_runs(tables, conditions, columns) -> dict:
    """{run definition: SideRuns} of one side's tables."""
    by_def = {}
    for table in tables:
        by_def.setdefault(rundefinition_name(table, conditions), []).append(table)
    out = {}
    for name, group in by_def.items():
        invocations = sorted({(t.benchmark, t.date) for t in group}, key=lambda i: (i[1], i[0]))
        names = list(dict.fromkeys(n for t in group for n in t.tasks.tolist()))
        key = task_keys(names)
        tasks = [key[n] for n in names]
        where = {n: j for j, n in enumerate(names)}
        row_of = {inv: i for i, inv in enumerate(invocations)}
        per_block_files = len(group) > len(invocations) and all("block" in t.attributes for t in group)
        side = SideRuns(invocations, tasks, {})
        for column in columns:
            side.values[column] = np.full((len(invocations), len(tasks)), np.nan)
            side.reasons[column] = np.full((len(invocations), len(tasks)), ELSEWHERE, dtype=object)
        for table in group:
            i, cols = row_of[(table.benchmark, table.date)], [where[n] for n in table.tasks.tolist()]
            if per_block_files:
                side.blocks.update((key[n], table.attributes["block"]) for n in table.tasks.tolist())
            finished = table.valid()
            for column in columns:
                check = validity.of_runs(table, column, finished)
                values = table.columns.get(column, np.full(len(table), np.nan))
                zero = check.usable & (values == 0)
                why = np.array(("",) + tuple(check.names), dtype=object)[check.codes]
                why[zero] = ZERO
                side.values[column][i, cols] = np.where(check.usable & ~zero, values, np.nan)
                side.reasons[column][i, cols] = why
        out[name] = side
    return out


def task_sets_of(base: SideRuns, new: SideRuns) -> dict:
    """{task set: [task names]} of the tasks both sides ran: BenchExec's blocks where both sides'
    files name them, else the task directories (pairing.task_directories); ALL_TASKS for one set."""
    on_new = set(new.tasks)
    shared = [n for n in base.tasks if n in on_new]
    if shared and all(n in base.blocks and n in new.blocks for n in shared):
        names = [base.blocks[n] for n in shared]
    else:
        names = pairing.task_directories(shared).tolist()
    sets = {}
    for task, name in zip(shared, names):
        sets.setdefault(name, []).append(task)
    if len(sets) == 1:
        return {ALL_TASKS: shared}
    return dict(sorted(sets.items()))


@dataclass
class TaskSetComparison:
    tasks: int             # tasks in every invocation of both sides
    n_base: int            # values used: invocations x tasks
    n_new: int
    mean_base: float       # geometric mean of the values used
    mean_new: float
    ratio: float
    ci_low: float
    ci_high: float
    p: float               # Welch t on the per-invocation log geometric means
    reruns_base: int
    reruns_new: int
    pair_ratios: list      # per invocation pair k (date order): geometric mean of the per-task ratios
    between_share: float
    cv_between: float      # sd of the invocation level of the log values (~ CV)
    cv_within: float       # sd of the task-by-invocation noise of the log values (~ CV)
    between_p: float       # F test that the invocations differ
    left_out_base: dict
    left_out_new: dict


def _crossed_sums(logs):
    """(SS invocations, df, SS residual, df) of an invocations x tasks matrix without replication."""
    m, t = logs.shape
    grand = logs.mean()
    inv, task = logs.mean(axis=1, keepdims=True), logs.mean(axis=0, keepdims=True)
    return float(t * np.sum((inv - grand) ** 2)), m - 1, float(np.sum((logs - inv - task + grand) ** 2)), (m - 1) * (t - 1)


def crossed_components(*sides):
    """(between share, sd invocations, sd residual, F p) of log matrices, pooled over the sides."""
    sums = [_crossed_sums(s) for s in sides]
    ss_inv, df_inv, ss_res, df_res = (sum(s[i] for s in sums) for i in range(4))
    tasks = sides[0].shape[1]
    ms_inv = ss_inv / df_inv if df_inv else math.nan
    ms_res = ss_res / df_res if df_res else 0.0
    between = max(0.0, (ms_inv - ms_res) / tasks) if df_res else ms_inv
    total = between + ms_res
    f_p = float(scipy_stats.f.sf(ms_inv / ms_res, df_inv, df_res)) if df_res and ms_res > 0 else math.nan
    return (between / total if total > 0 else math.nan), math.sqrt(between), math.sqrt(ms_res), f_p


def _left_out(reasons, kept_columns):
    """Counts by reason of one side's runs of the set, with the kept tasks' runs not counted."""
    mask = np.ones(reasons.shape, dtype=bool)
    mask[:, kept_columns] = False
    found = reasons[mask]
    found = found[found != ""]
    labels, counts = np.unique(found.astype(str), return_counts=True) if found.size else ([], [])
    return {str(label): int(n) for label, n in zip(labels, counts)}


def _matrices(base: SideRuns, new: SideRuns, tasks, column):
    """(base values, new values, tasks valid in every invocation of both sides, (base, new) task
    indices) of a task set: matrices invocations x tasks."""
    bi, ni = _indices(base.tasks, tasks), _indices(new.tasks, tasks)
    b, n = base.values[column][:, bi], new.values[column][:, ni]
    return b, n, np.isfinite(b).all(axis=0) & np.isfinite(n).all(axis=0), (bi, ni)


def compare_set(base: SideRuns, new: SideRuns, tasks, column, confidence=0.95):
    """The TaskSetComparison of one task set and column, or (None, left out) when no task is valid
    in every invocation of both sides."""
    b, n, kept, (bi, ni) = _matrices(base, new, tasks, column)
    out_b = _left_out(base.reasons[column][:, bi], np.flatnonzero(kept))
    out_n = _left_out(new.reasons[column][:, ni], np.flatnonzero(kept))
    if not kept.any():
        return None, (out_b, out_n)
    lb, ln = np.log(b[:, kept]), np.log(n[:, kept])
    gb, gn = lb.mean(axis=1), ln.mean(axis=1)
    with np.errstate(all="ignore"):
        test = scipy_stats.ttest_ind(gn, gb, equal_var=False)
    diff = float(gn.mean() - gb.mean())
    se = math.sqrt(gb.var(ddof=1) / gb.size + gn.var(ddof=1) / gn.size)
    half = float(scipy_stats.t.ppf(0.5 + confidence / 2, test.df)) * se if se > 0 and math.isfinite(test.df) else 0.0
    share, sd_between, sd_within, f_p = crossed_components(lb, ln)
    pairs = min(gb.size, gn.size)
    return TaskSetComparison(
        int(kept.sum()), int(lb.size), int(ln.size), float(np.exp(lb.mean())), float(np.exp(ln.mean())),
        math.exp(diff), math.exp(diff - half), math.exp(diff + half), float(test.pvalue) if se > 0 else math.nan,
        gb.size, gn.size, [float(x) for x in np.exp(gn[:pairs] - gb[:pairs])], share, sd_between, sd_within, f_p,
        out_b, out_n), (out_b, out_n)


def compare(base_tables, new_tables, columns):
    """[((run definition, task set, column), TaskSetComparison or None, (left out base, new))] for
    every run definition both sides have, its task sets and the columns; base and new are
    (RunTables, conditions by file name)."""
    base, new = side_runs(*base_tables, columns), side_runs(*new_tables, columns)
    out = []
    for column in columns:
        for name in sorted(base.keys() & new.keys()):
            for task_set, tasks in task_sets_of(base[name], new[name]).items():
                found, left_out = compare_set(base[name], new[name], tasks, column)
                out.append(((name, task_set, column), found, left_out))
    return out


def invocation_means(base_tables, new_tables, columns):
    """[((run definition, task set, column), base means, new means, tasks)]: per invocation, in date
    order, the geometric mean over the tasks valid in every invocation of both sides; what ab's
    sequential looks take as rerun means. Sets with no such task are left out (compare says why)."""
    base, new = side_runs(*base_tables, columns), side_runs(*new_tables, columns)
    out = []
    for column in columns:
        for name in sorted(base.keys() & new.keys()):
            for task_set, tasks in task_sets_of(base[name], new[name]).items():
                b, n, kept, _ = _matrices(base[name], new[name], tasks, column)
                if kept.any():
                    out.append(((name, task_set, column), np.exp(np.log(b[:, kept]).mean(axis=1)),
                                np.exp(np.log(n[:, kept]).mean(axis=1)), int(kept.sum())))
    return out


def invocation_log_means(side: SideRuns, column):
    """{task set: per-invocation mean log value over the tasks valid in every
    invocation of this one side}: the rerun means a pilot of one condition gives (timekit plan)."""
    out = {}
    for task_set, tasks in task_sets_of(side, side).items():
        values = side.values[column][:, _indices(side.tasks, tasks)]
        kept = np.isfinite(values).all(axis=0)
        if kept.any():
            out[task_set] = np.log(values[:, kept]).mean(axis=1)
    return out


def _indices(names, wanted):
    where = {t: j for j, t in enumerate(names)}
    return [where[t] for t in wanted]
