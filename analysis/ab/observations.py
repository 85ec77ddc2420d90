"""
How a paired design's invocation becomes one observation: a pair's ln(new / base) cancels what the
machine did to both, and the invocation's median of them (balanced over the pairs' orders) is its
log ratio. The invocation stays the unit: the change is exp of the mean over the M invocations,
its CI and p-value the one-sample t test over them (df M - 1), judged as compare judges its rows.
docs/designs.md has the method and the within/between spreads.
"""

import math

import numpy as np

from analysis.core import stats
from analysis.tools.commands import executions
from analysis.tools.compare.repeated import MERGED_INPUTS, Result, Row, _judged

UNIT = "pair"
SIDES = ("base", "new")


def chosen_pairs(invocation, alone):
    """Which pairs of an invocation its observation rests on (executions.pair_log_ratios' `together`):
    under a co-located design its pairs timed together, not the sentinel's back-to-back ones;
    with `alone`, only pairs timed back to back (every pair of a blocks invocation)."""
    if alone:
        return False
    return True if executions.co_located(invocation) else None


def invocation_log_ratios(invocations, column, alone=False):
    """Per invocation, its observation (`observation`) and its pairs' ln(new / base) (invocations
    without a pair are skipped); `alone`: of the pairs timed back to back only (chosen_pairs)."""
    logs, pairs = [], []
    for invocation in invocations:
        together = chosen_pairs(invocation, alone)
        ratios = executions.pair_log_ratios(invocation, column, together)
        if ratios.size:
            duet = together is True and any(e.core >= 0 for e in invocation.executions)
            logs.append(observation(ratios, executions.pair_strata(invocation, column, together), duet))
            pairs.append(ratios)
    return np.array(logs), pairs


def observation(ratios, strata, duet):
    """An invocation's log ratio. Back to back: the median of all its pairs, both start orders
    weighing the same (`balanced_median`). Duet: the mean over a's two cores of the median of the
    pairs on each; the cores of a VM can differ in speed by far more than the change sought (1.8x
    on the development VM), which splits the pairs into two groups far apart, and a median of
    both lands anywhere in the gap between them."""
    if duet:
        strata = np.asarray(strata)
        return float(np.mean([np.median(ratios[strata == s]) for s in sorted(set(strata.tolist()))]))
    return balanced_median(ratios, strata)


def balanced_median(values, strata):
    """The median of `values` with every stratum weighing the same in all (the plain median where
    the strata are of one size). The side that starts first, or runs on the faster core, gains:
    that splits the ratios into shifted groups, and a plain median lands in the larger one; with
    equal weights it lands between them, and swapping base and new only flips its sign. One median
    over all pairs, not a mean of per-stratum medians: those rest on half the pairs each, and one
    small stratum's outlying median moved an invocation by several percent."""
    values, strata = np.asarray(values, dtype=float), np.asarray(strata)
    sizes = {s: int((strata == s).sum()) for s in set(strata.tolist())}
    common = math.lcm(*sizes.values())
    weights = np.array([common // sizes[s] for s in strata.tolist()])
    order = np.argsort(values, kind="stable")
    values, weights = values[order], weights[order]
    below = np.cumsum(weights)
    half = below[-1]                      # twice the weight of half of all: integer comparisons
    i = int(np.searchsorted(2 * below, half))
    if 2 * below[i] == half and i + 1 < values.size:
        return float((values[i] + values[i + 1]) / 2)
    return float(values[i])


def row(rundefinition, column, invocations, alone=False):
    """The Row of one run definition and column (None with fewer than 2 invocations holding a pair);
    `alone`: from the pairs timed back to back only."""
    logs, pairs = invocation_log_ratios(invocations, column, alone)
    a = np.concatenate([executions.side_values(i, "a", column, chosen_pairs(i, alone)) for i in invocations] or [[]])
    b = np.concatenate([executions.side_values(i, "b", column, chosen_pairs(i, alone)) for i in invocations] or [[]])
    spread = [x.var(ddof=1) for x in pairs if x.size > 1]
    return row_of(rundefinition, "run", column, logs, a, b, float(np.sqrt(np.mean(spread))) if spread else math.nan)


def row_of(rundefinition, input, column, logs, a, b, within=math.nan):
    """A Row from the invocations' log ratios (None with fewer than 2), the sides' values beside them."""
    if logs.size < 2:
        return None
    m = logs.size
    mean, half, p = stats.log_ratio_t(logs)
    sd = float(logs.std(ddof=1))
    return Row(rundefinition, input, column, int(a.size), int(b.size), 0, 0, float(a.mean()), float(b.mean()),
               math.exp(mean), math.exp(mean - half), math.exp(mean + half), p, math.nan, m, m, UNIT,
               cv_within=within, cv_between=sd, pair_ratios=[float(math.exp(x)) for x in logs])


def merged_names(name, chunks=None):
    """{run definition of the merged definition: side} for run definition `name` of both sides:
    analysis.ab.merged names them SIDE.NAME, or SIDE.NAME.chunkC (C = 1..chunks) where it cuts the task
    sets; chunks None: either (a record's BlocksRun.chunks says which)."""
    from analysis.ab.task_chunks import CHUNKS

    out = {}
    if chunks is None or chunks <= 1:
        out.update({f"{side}.{name}": side for side in SIDES})
    if chunks is None or chunks > 1:
        out.update({f"{side}.{name}.chunk{c}": side for side in SIDES for c in range(1, (chunks or CHUNKS) + 1)})
    return out


def definition_rows(tables, names, columns, alpha, threshold, chunks=None):
    """compare's Result for two definitions merged into one (analysis.ab.merged): per run
    definition and column, each invocation's log ratio is the mean over the inputs both sides
    measured validly in it of ln(mean new / mean base) (a task set: the log geometric mean of the
    per-task ratios; repetitions of one input: the log ratio of their means). `chunks`: the
    record's (merged_names)."""
    invocations = {}
    for table in tables:
        invocations.setdefault((table.date, table.benchmark), []).append(table)

    def row_or_reason(name, column):
        logs, a, b = [], [], []
        for key in sorted(invocations):
            sides = _side_values(invocations[key], merged_names(name, chunks), column)
            common = sorted(sides["base"].keys() & sides["new"].keys())
            if common:
                logs.append(float(np.mean([math.log(np.mean(sides["new"][i]) / np.mean(sides["base"][i])) for i in common])))
                a += [v for i in common for v in sides["base"][i]]
                b += [v for i in common for v in sides["new"][i]]
        return (row_of(name, MERGED_INPUTS, column, np.array(logs), np.array(a), np.array(b)),
                f"{len(logs)} invocation(s) with valid runs on both sides, 2+ needed")

    return _result(columns, names, row_or_reason, alpha, threshold)


def _result(columns, names, row_or_reason, alpha, threshold):
    """compare's Result over every column and run definition; row_or_reason(name, column) -> (Row
    or None, why it is not compared)."""
    rows, not_compared = [], []
    for column in columns:
        for name in names:
            r, why = row_or_reason(name, column)
            if r is None:
                not_compared.append(f"{name} / {column}: not compared: {why}")
            else:
                rows.append(r)
    return _judged(Result(rows, not_compared), alpha, threshold)


def _side_values(tables, merged, column):
    """{"base"|"new": {input: [valid positive values]}} of one run definition in one invocation;
    merged: its run definitions' sides (merged_names)."""
    from analysis.core import validity
    from analysis.core.tasks import input_of

    found = {side: {} for side in SIDES}
    for table in tables:
        side = merged.get(table.rundefinition)
        if side is None or column not in table.columns:
            continue
        usable = validity.of_column(table, column, table.valid()).usable
        for task, value, ok in zip(table.tasks.tolist(), table.columns[column].tolist(), usable.tolist()):
            if ok and value > 0:
                found[side].setdefault(input_of(task), []).append(value)
    return found


def definition_log_series(tables, names, columns, chunks=None):
    """[(label, per-invocation log ratios, runs per invocation)] as definition_rows forms them."""
    result = definition_rows(tables, names, columns, 0.05, 0.0, chunks)
    return [(f"{r.rundefinition} / {r.input} ({r.column})", np.log(np.array(r.pair_ratios)), [0] * len(r.pair_ratios))
            for r in result.rows]


def compare(tables, rundefinitions, columns, alpha, threshold, alone=False):
    """compare's Result over the paired runs of `rundefinitions` in `tables` (one benchexec
    invocation per rerun, each run a batch of pairs); `alone`: from the pairs timed back to back
    only (a co-located design the sentinel flagged)."""
    def row_or_reason(name, column):
        invocations = executions.of_tables(tables, name)
        return row(name, column, invocations, alone), f"{len(invocations)} invocation(s) with a timed pair, 2+ needed"

    return _result(columns, rundefinitions, row_or_reason, alpha, threshold)


def log_series(tables, rundefinitions, columns, alone=False):
    """[(label, per-invocation log ratios, pairs per invocation)] per row, as compare forms them."""
    out = []
    for column in columns:
        for name in rundefinitions:
            logs, pairs = invocation_log_ratios(executions.of_tables(tables, name), column, alone)
            out.append((f"{name} / run ({column})", logs, [p.size for p in pairs]))
    return out
