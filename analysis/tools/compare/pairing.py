"""Run sets of one run per task, and which run of one side is which run of the other.

A task is the unit, so runs are paired by BenchExec's run identity (task name and properties),
then by the longest unique tail of their path; the rest is listed as on one side only. Each run
gets an outcome class from BenchExec's result categories, and a score (the file's, else SV-COMP's
scheme). docs/calibration.md, "One run per task, one invocation a side".
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re

import numpy as np

from analysis.core import validity
from analysis.core.argtypes import benchexec_seconds

CORRECT, WRONG, TIMEOUT, OUT_OF_MEMORY, ERROR, FINISHED = range(6)
OUTCOMES = ("correct", "wrong", "timeout", "out of memory", "error/unknown", "finished")
MEMORY_COLUMNS = ("memory", "memUsage")   # BenchExec >= 2.0 and before
# the paired compare's defaults, here (no scipy) so that `timekit compare --help` shows them cheaply
DEFAULT_COLUMNS = ("cputime", "walltime", "memory")
MIN_CPUTIME = 0.5          # s: tasks faster than this (geometric mean of both sides) are left out
_REPETITION = re.compile(r"\.r\d+\.yml$")  # the kit's repetition tasks (analysis.core.tasks)
MAX_LISTED = 20   # task names listed per kind (only-in-base, newly wrong ...)


def column_in(table, column):
    """The column's title in this table: `memory` is also found as the older `memUsage`."""
    if column in table.columns or column not in MEMORY_COLUMNS:
        return column
    return next((c for c in MEMORY_COLUMNS if c in table.columns), column)


def _outcome(bx_result, status, category, finished):
    if status.startswith("TIMEOUT"):
        return TIMEOUT
    if status.startswith("OUT OF") and "MEMORY" in status:
        return OUT_OF_MEMORY
    if category in (bx_result.CATEGORY_CORRECT, bx_result.CATEGORY_CORRECT_UNCONFIRMED):
        return CORRECT
    if category == bx_result.CATEGORY_WRONG:
        return WRONG
    if finished and category in (bx_result.CATEGORY_MISSING, ""):
        return FINISHED
    return ERROR


def outcomes(table, finished=None) -> np.ndarray:
    """One OUTCOMES code (int8) per run, decided once per distinct (status, category);
    `finished`: table.valid(), if already at hand."""
    from benchexec import result as bx_result

    finished = table.valid() if finished is None else finished
    keys = list(zip(table.status.tolist(), table.category.tolist(), finished.tolist()))
    codes = {key: _outcome(bx_result, *key) for key in set(keys)}
    return np.fromiter(map(codes.__getitem__, keys), np.int8, len(keys))


def scores(table, codes):
    """(score per run, how it was obtained), or (None, why not). Without any property (no SV-COMP
    task) there is no score to state: a column of zeros would read as one."""
    if not any(table.properties.tolist()):
        return None, "no task has a property, so there is no SV-COMP score"
    if "score" in table.columns:
        return table.columns["score"], "the file's score column"
    if not np.isin(codes, (CORRECT, WRONG)).any():
        return None, "no run has an expected verdict (category correct or wrong)"
    from benchexec import result as bx_result

    scheme = bx_result.Property(None, True, "sv-comp")
    def score(status, category):
        if category not in (bx_result.CATEGORY_CORRECT, bx_result.CATEGORY_CORRECT_UNCONFIRMED,
                            bx_result.CATEGORY_WRONG):
            return 0.0
        if bx_result.get_result_classification(status) not in (bx_result.RESULT_CLASS_TRUE, bx_result.RESULT_CLASS_FALSE):
            return 0.0
        return float(scheme.compute_score(category, status))

    keys = list(zip(table.status.tolist(), table.category.tolist()))
    points = {key: score(*key) for key in set(keys)}
    scores = np.fromiter(map(points.__getitem__, keys), float, len(keys))
    return scores, "BenchExec's SV-COMP scheme (benchexec.result: correct true +2, false +1; wrong true -32, false -16)"


def time_limit(table):
    """The run set's CPU time limit in seconds (BenchExec's timelimit attribute), NaN if none."""
    seconds = benchexec_seconds(table.attributes.get("timelimit"))
    return float("nan") if seconds is None else seconds


def one_run_per_task(tables) -> bool:
    """Whether these tables hold each task once: no task named as a kit repetition, and no task
    name twice in one run set (BenchExec itself never runs a task twice in one run set)."""
    for table in tables:
        names = table.tasks.tolist()
        if len(set(names)) != len(names) or any(_REPETITION.search(n) for n in names if n.endswith(".yml")):
            return False
    return True


def task_directories(names):
    """Each task's directory, below the directories all tasks share ('.' for tasks there)."""
    one_copy = {}  # a million tasks share a few hundred directories: keep one string of each
    parents = [one_copy.setdefault(parent, parent) for parent in (n.rpartition("/")[0] for n in names)]
    distinct = sorted(one_copy)
    if len(distinct) <= 1:
        return np.array(["." for _ in parents], dtype=object)
    common = os.path.commonpath(distinct) if all(distinct) else ""
    cut = len(common) + 1 if common else 0
    short = {p: (p[cut:] or ".") for p in distinct}
    out = np.empty(len(parents), dtype=object)
    out[:] = [short[p] for p in parents]
    return out


# --------------------------------------------------------------------------------------------
# run sets


@dataclasses.dataclass(eq=False)
class RunSet:
    """The runs of one run definition of one benchexec invocation (one file, or its per-task-set
    files joined), with what the paired comparison needs of each run."""

    name: str              # run definition (BenchExec's name without the task set)
    label: str             # file name(s), for the user
    date: str
    version: str
    names: np.ndarray      # task names
    statuses: np.ndarray   # BenchExec's status per run
    properties: np.ndarray # BenchExec's properties per run ('' where the file has none)
    outcome: np.ndarray    # OUTCOMES codes
    finished: np.ndarray   # bool: finished normally (RunTable.valid)
    values: dict           # column -> float array (NaN where the column is absent)
    units: dict            # column -> unit
    usable: dict           # column -> bool: finished normally and a valid value
    invalid: dict          # column -> {reason: count} over the runs that finished normally
    blocks: np.ndarray     # task set per run: BenchExec's block, else the task's directory
    block_source: str
    time_limit: float
    score: np.ndarray | None
    score_method: str

    def __len__(self):
        return len(self.names)

    @property
    def duplicates(self):
        """Run identities that occur more than once (told apart by their order); pair() counts
        them on the way, this is for a run set on its own."""
        return _unique(_identity_keys(self.names, self.properties, common_property(self.properties)))[1]


def common_property(properties):
    """The properties most runs have ('' for none): identities() leaves them out."""
    found = collections.Counter(properties.tolist()).most_common(1)
    return found[0][0] if found else ""


def identities(run_set, common):
    """Run identity per run as one string, unique within the run set: the task name, plus NUL and
    its properties where they are not `common` (shared by the run sets compared, so a million
    tasks checked for one property need no million new strings); and how many repeated."""
    return _unique(_identity_keys(run_set.names, run_set.properties, common))


def _identity_keys(names, properties, common):
    return [n if p == common else f"{n}\x00{p}" for n, p in zip(names.tolist(), properties.tolist())]


def _unique(keys):
    """Keys made unique by their occurrence number where one repeats; and how many repeated."""
    if len(set(keys)) == len(keys):
        return keys, 0
    seen, out = {}, []
    for key in keys:
        k = seen.get(key, 0)
        seen[key] = k + 1
        out.append(f"{key}\x00#{k}" if k else key)
    return out, sum(1 for n in seen.values() if n > 1)


def run_set(tables, columns) -> RunSet:
    """One RunSet of one or more tables of the same run definition and invocation (per-task-set
    files: their `block` attribute names the task set of their runs)."""
    first = tables[0]
    parts = {key: [] for key in ("names", "statuses", "properties", "outcome", "finished", "blocks", "score")}
    values = {c: [] for c in columns}
    reasons = {c: [] for c in columns}
    units, score_method = {}, ""
    by_block = all("block" in t.attributes for t in tables) and len(tables) > 1
    for table in tables:
        finished = table.valid()
        codes = outcomes(table, finished)
        parts["names"].append(table.tasks)
        parts["statuses"].append(table.status)
        parts["properties"].append(table.properties)
        parts["outcome"].append(codes)
        parts["finished"].append(finished)
        if by_block:
            parts["blocks"].append(np.full(len(table), table.attributes["block"], dtype=object))
        score, score_method = scores(table, codes)
        parts["score"].append(score)
        for column in columns:
            title = column_in(table, column)
            check = validity.of_column(table, title, finished)
            values[column].append(np.where(check.usable, table.columns.get(title, np.nan), np.nan)
                                  if title in table.columns else np.full(len(table), np.nan))
            reasons[column].append(check.reasons)
            units.setdefault(column, table.units.get(title, ""))
    names, properties = np.concatenate(parts["names"]), np.concatenate(parts["properties"])
    # without per-task-set files: the task directories of all files at once
    blocks = np.concatenate(parts["blocks"]) if by_block else task_directories(names.tolist())
    joined = {c: np.concatenate(v) for c, v in values.items()}
    return RunSet(
        name=first.rundefinition or first.name,
        label=", ".join(t.path.name for t in tables),
        date=first.date, version=first.version,
        names=names, statuses=np.concatenate(parts["statuses"]), properties=properties,
        outcome=np.concatenate(parts["outcome"]), finished=np.concatenate(parts["finished"]),
        values=joined, units=units,
        usable={c: np.isfinite(v) for c, v in joined.items()},
        invalid={c: validity.merge(*r) for c, r in reasons.items()},
        blocks=blocks, block_source="BenchExec's task sets (block)" if by_block else "task directory",
        time_limit=time_limit(first),
        score=None if any(s is None for s in parts["score"]) else np.concatenate(parts["score"]),
        score_method=score_method,
    )


def run_sets(tables, columns) -> list[RunSet]:
    """The RunSets of some tables: one per (benchmark, date, run definition), in date order."""
    groups = {}
    for table in tables:
        groups.setdefault((table.date, table.benchmark, table.rundefinition or table.name), []).append(table)
    return [run_set(group, columns) for _, group in sorted(groups.items(), key=lambda item: item[0])]


# --------------------------------------------------------------------------------------------
# pairing tasks


@dataclasses.dataclass
class Pairs:
    """Indices of paired runs (base[i] is new[i]) and of runs on one side only."""

    base: np.ndarray
    new: np.ndarray
    only_base: np.ndarray
    only_new: np.ndarray
    by_tail: int   # pairs found by a path tail, not by the whole name
    repeated: dict  # side -> run identities repeated on that side (paired in file order), where any


def _tail(key, depth):
    """The key with its task name cut to the last `depth` path components."""
    name, sep, rest = key.partition("\x00")
    return "/".join(name.split("/")[-depth:]) + sep + rest


def _depth(key):
    return key.partition("\x00")[0].count("/") + 1


def pair(base: RunSet, new: RunSet) -> Pairs:
    """Pair runs by run identity, then what is left by the longest unique path tail."""
    common = common_property(base.properties)
    (base_keys, base_repeated), (new_keys, new_repeated) = identities(base, common), identities(new, common)
    index = {key: i for i, key in enumerate(new_keys)}
    base_index, new_index, rest_base = [], [], []
    for i, key in enumerate(base_keys):
        j = index.pop(key, None)
        if j is None:
            rest_base.append(i)
        else:
            base_index.append(i)
            new_index.append(j)
    rest_new = sorted(index.values())
    by_tail = 0
    if rest_base and rest_new:
        depth = max(max(_depth(base_keys[i]) for i in rest_base), max(_depth(new_keys[j]) for j in rest_new))
        for d in range(depth, 0, -1):
            tails_base, tails_new = {}, {}
            for i in rest_base:
                tails_base.setdefault(_tail(base_keys[i], d), []).append(i)
            for j in rest_new:
                tails_new.setdefault(_tail(new_keys[j], d), []).append(j)
            matched_base, matched_new = set(), set()
            for tail, found in tails_base.items():
                other = tails_new.get(tail)
                if len(found) == 1 and other is not None and len(other) == 1:
                    base_index.append(found[0])
                    new_index.append(other[0])
                    matched_base.add(found[0])
                    matched_new.add(other[0])
            by_tail += len(matched_base)
            rest_base = [i for i in rest_base if i not in matched_base]
            rest_new = [j for j in rest_new if j not in matched_new]
            if not rest_base or not rest_new:
                break
    as_array = lambda x: np.array(x, dtype=np.intp)  # noqa: E731
    repeated = {side: n for side, n in (("base", base_repeated), ("new", new_repeated)) if n}
    return Pairs(as_array(base_index), as_array(new_index), as_array(rest_base), as_array(rest_new), by_tail, repeated)


def transitions(base: RunSet, new: RunSet, pairs: Pairs) -> np.ndarray:
    """Counts of paired tasks by (base outcome, new outcome): rows base, columns new."""
    k = len(OUTCOMES)
    flat = base.outcome[pairs.base].astype(np.intp) * k + new.outcome[pairs.new]
    return np.bincount(flat, minlength=k * k).reshape(k, k)
