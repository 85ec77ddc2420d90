"""
`timekit ab --until-decided`: the look after every pair of invocations, what each verdict cost,
and, for a row left undecided, the plan that would decide it.

A look reads the A/B directory as compare would (the same columns, one Holm family) and runs the
group-sequential rule (analysis.tools.plan.sequential) over each row's rerun means in the order
they were measured; a row is decided at its first decided look and stays so. ab stops when every
row is decided, at --max-reruns (the boundaries' M_max), or when the next pair would exceed the
budget (its alpha then stays unspent: the error rate only gets lower).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.tools.calibrate import family
from analysis.tools.plan import design, sequential


@dataclass
class RowLook:
    row: str
    decision: sequential.Decision
    runs: int                  # runs of this row up to the look that decided it (or all), both sides


def look(outdir, columns, alpha, threshold, max_reruns, per_task=False):
    """[RowLook] of every row both sides have, the family at alpha / rows; rows of task sets when
    compare forms them (a one-run-per-task definition, not `per_task`)."""
    series = None if per_task else _task_set_series(outdir, columns)
    if series is None:
        series = _input_series(outdir, columns)
    if not series:
        return []
    level = alpha / len(series)
    out = []
    for label, ma, mb, runs_a, runs_b in series:
        if min(ma.size, mb.size) < 2:
            continue
        decision = sequential.run_sequence(ma, mb, level, threshold, max_reruns)
        m = decision.reruns
        out.append(RowLook(label, decision, int(sum(runs_a[:m]) + sum(runs_b[:m]))))
    return out


def _input_series(outdir, columns):
    """[(label, base rerun means, new rerun means, runs per base rerun, per new rerun)] per input."""
    base = family.load_groups([Path(outdir) / "base"], columns)
    new = family.load_groups([Path(outdir) / "new"], columns)
    keys = [k for k in sorted(base) if k in new]
    out = []
    for column in columns:
        for k in keys:
            a, b = base[k].columns[column], new[k].columns[column]
            out.append((base[k].label(column), np.array([x.mean() for x in a]), np.array([x.mean() for x in b]),
                        [x.size for x in a], [x.size for x in b]))
    return out


def _task_set_series(outdir, columns):
    """The same per task set (analysis.tools.compare.task_sets: an invocation's geometric mean over the
    set's tasks is its rerun mean), or None when compare does not form task-set rows here."""
    from analysis.sweep.load import load_tables
    from analysis.tools.compare import task_sets

    wanted = {"status", "category", *columns}
    base, new = load_tables(Path(outdir) / "base", wanted)[:2], load_tables(Path(outdir) / "new", wanted)[:2]
    if not task_sets.applies(base[0], new[0]):
        return None
    return [(f"{rundefinition} / {task_set} ({column})", a, b, [tasks] * a.size, [tasks] * b.size)
            for (rundefinition, task_set, column), a, b, tasks in task_sets.invocation_means(base, new, columns)]


def apply(rows, looks):
    """Put the sequential verdicts into compare's rows ('undecided' where the rule has not decided)."""
    by_label = {r.row: r.decision for r in looks}
    for row in rows:
        d = by_label.get(f"{row.rundefinition} / {row.input} ({row.column})")
        if d is not None:
            row.verdict = d.verdict if d.decided else "undecided"


def decided(looks):
    return bool(looks) and all(r.decision.decided for r in looks)


def seconds_spent(run, reruns=None):
    """Seconds of the finished invocations (of the first `reruns` reruns only, if given)."""
    return float(sum(s.seconds for s in run.steps if s.status == "done" and (reruns is None or s.rerun <= reruns)))


def budget_left_for_a_pair(run, invocations=2):
    """Whether one more pair of invocations (a paired design: one invocation) fits the budget, at
    the mean time of an invocation so far."""
    if run.budget is None:
        return True
    done = [s for s in run.steps if s.status == "done"]
    pair = invocations * seconds_spent(run) / max(1, len(done))
    return seconds_spent(run) + pair <= run.budget


def advice(outdir, row_look, columns, alpha, threshold, power=0.9):
    """What would decide an undecided row, from the plan on this A/B directory's own variance."""
    from analysis.tools.plan import pilot

    try:
        rows, costs = pilot.load([outdir], columns)
    except pilot.PilotError:
        return ""
    row = next((r for r in rows if r.label == row_look.row), None)
    if row is None or row.cv_between + row.cv_within <= 0:
        return ""
    k = len([r for r in rows if r.cv_between + r.cv_within > 0])
    change = abs(row_look.decision.ratio - 1)
    run_seconds = costs.run_seconds()
    if change > threshold:
        d = design.design_at(row, row.runs, change, alpha / k, power, threshold, costs.invocation, run_seconds)
        what = f"to call the measured {100 * change:.1f} % a change with {100 * power:.0f} % power"
    else:  # equivalence: the interval must fit between the change and the threshold
        d = None
        cv = design.cv_of_means(row.cv_between, row.cv_within, row.runs)
        margin = threshold - change
        for m in range(sequential.START, design.MAX_RERUNS + 1):
            if design.half_width(cv, m, 1 - alpha / k) < margin:
                d = design.Design(m, row.runs, float("nan"), float("nan"), design.half_width(cv, m, 1 - alpha / k),
                                  2 * m * (costs.invocation + row.runs * run_seconds))
                break
        what = f"to show that the change ({100 * change:.1f} %) stays within ±{100 * threshold:g} %"
    if d is None:
        return f"{what}: more than {design.MAX_RERUNS} invocations a side (timekit plan {outdir})"
    return (f"{what}: about M = {d.reruns} invocations a side of {d.runs} runs, {d.minutes:.0f} min here "
            f"(timekit plan {outdir}; continue with timekit ab --resume --until-decided --max-reruns {d.reruns})")


def report(run, outdir, looks, columns, alpha, threshold):
    """The sequential verdicts with what each cost, and advice for the undecided ones."""
    lines = [f"Decide, then stop (--until-decided): a look after every pair from M = {sequential.START}, O'Brien-Fleming-type "
             f"alpha spending up to M_max = {run.max_reruns}, alpha {alpha:g} / {len(looks)} rows; {run.stopped}; "
             f"{seconds_spent(run) / 60:.1f} min in all."]
    for r in looks:
        d = r.decision
        verdict = d.verdict if d.decided else "inconclusive"
        interval = (f"repeated {100 * (1 - d.level):.3g} % CI {100 * (d.rci_low - 1):+.2f} … {100 * (d.rci_high - 1):+.2f} %"
                    if d.level > 0 else "no alpha spent at this look yet")
        lines.append(f"  {r.row}: {verdict} at M = {d.reruns} a side (change {100 * (d.ratio - 1):+.2f} %, Welch p {d.p:.2g} "
                     f"against {d.level:.2g} at this look, {interval}); cost: {d.reruns} invocations and {r.runs // 2} runs "
                     f"a side, {seconds_spent(run, d.reruns) / 60:.1f} min")
        if not d.decided:
            text = advice(outdir, r, columns, alpha, threshold)
            if text:
                lines.append(f"    would decide it: {text}")
    return "\n".join(lines)
