"""
`timekit ab --until-decided`: the look after every pair of invocations, what each verdict cost,
and, for a row left undecided, the plan that would decide it.

A look reads the A/B directory as compare would and runs the group-sequential rule
(analysis.tools.plan.sequential) over each row's rerun means; a row decided at a look stays so
(docs/calibration.md, "Decide, then stop: `ab --until-decided`").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.tools.calibrate import family
from analysis.tools.compare import repeated
from analysis.tools.plan import design, sequential
from analysis.tools.plan.verdict_record import RowVerdict, WouldDecide


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
    """Put the sequential verdicts into compare's rows ('undecided' where the rule has not decided),
    with the rule's repeated interval as their CI: the one the verdict was taken on, and one that
    keeps its level at whatever look the rule stopped."""
    by_label = {r.row: r.decision for r in looks}
    for row in rows:
        d = by_label.get(f"{row.rundefinition} / {row.input} ({row.column})")
        if d is not None:
            row.verdict = d.verdict if d.decided else "undecided"
            if all(map(math.isfinite, d.two_sided)):
                row.ci_low, row.ci_high = d.two_sided
                row.interval = "repeated"
            repeated.within_threshold(row)


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
    """WouldDecide for an undecided row, from the plan on this A/B directory's own variance (None
    where the directory gives no plan)."""
    from analysis.tools.plan import pilot

    try:
        rows, costs = pilot.load([outdir], columns)
    except pilot.PilotError:
        return None
    row = next((r for r in rows if r.label == row_look.row), None)
    if row is None or row.cv_between + row.cv_within <= 0:
        return None
    k = len([r for r in rows if r.cv_between + r.cv_within > 0])
    change = row_look.decision.ratio - 1
    run_seconds = costs.run_seconds()
    if abs(change) > threshold:
        goal = "change"
        d = design.design_at(row, row.runs, abs(change), alpha / k, power, threshold, costs.invocation, run_seconds)
    else:  # equivalence: the interval of the two one-sided tests must fit between the change and the threshold
        goal, d = "within", None
        cv = design.cv_of_means(row.cv_between, row.cv_within, row.runs)
        margin, confidence = threshold - abs(change), 1 - 2 * alpha / k
        for m in range(sequential.START, design.MAX_RERUNS + 1):
            if design.half_width(cv, m, confidence) < margin:
                d = design.RerunPlan(m, row.runs, float("nan"), float("nan"), design.half_width(cv, m, confidence),
                                  2 * m * (costs.invocation + row.runs * run_seconds))
                break
    if d is None:
        return WouldDecide(goal, change, None, float("nan"), power, runs=row.runs)
    return WouldDecide(goal, change, d.reruns, d.minutes, power, runs=d.runs)


def render_advice(a, threshold, outdir):
    what = (f"to call the measured {100 * abs(a.change):.1f} % a change with {100 * a.power:.0f} % power" if a.goal == "change"
            else f"to show that the change ({100 * abs(a.change):.1f} %) stays within ±{100 * threshold:g} %")
    if a.invocations is None:
        return f"{what}: more than {design.MAX_RERUNS} invocations a side (timekit plan {outdir})"
    return (f"{what}: about M = {a.invocations} invocations a side of {a.runs} runs, {a.minutes:.0f} min here "
            f"(timekit plan {outdir}; continue with timekit ab --resume --until-decided --max-reruns {a.invocations})")


def _same(paired, alpha, rows):
    """How a paired run's "~" spends alpha: all of it a row, since it takes every row (analysis.ab.stopping.decide)."""
    return f" for slower or faster, {alpha:g} a row for ~ (which takes every row)" if paired and len(rows) > 1 else ""


def verdicts(run, outdir, looks, columns, alpha, threshold):
    """[RowVerdict] of the looks, with what would decide the undecided ones."""
    out = []
    for r in looks:
        d = r.decision
        out.append(RowVerdict(r.row, d.verdict if d.decided else "inconclusive", d.reruns, "Welch", d.p, d.level, d.ratio,
                              d.rci_low, d.rci_high, seconds_spent(run, d.reruns) / 60, runs=r.runs // 2,
                              would_decide=None if d.decided else advice(outdir, r, columns, alpha, threshold),
                              confidence=d.confidence))
    return out


def report(run, outdir, rows, alpha, threshold, paired=False):
    """The text of the sequential verdicts (`verdicts`, or analysis.ab.stopping's): a paired run
    looks after every invocation (one log ratio each, Pocock-type spending), a separate one after
    every pair of invocations (Welch on their means, O'Brien-Fleming-type)."""
    from analysis.tools.plan import paired_power

    look, spending = ("invocation", "Pocock-type") if paired else ("pair", "O'Brien-Fleming-type")
    lines = [f"Decide, then stop (--until-decided): a look after every {look} from M = {sequential.START}, {spending} "
             f"alpha spending up to M_max = {run.max_reruns}, alpha {alpha:g} / {len(rows)} rows{_same(paired, alpha, rows)}; "
             f"{run.stopped}; "
             f"{seconds_spent(run) / 60:.1f} min in all."]
    for v in rows:
        at, cost = ((f"{v.invocations} invocations", f"{v.pairs} pairs, " if v.pairs else "") if paired else
                    (f"{v.invocations} a side", f"{v.invocations} invocations and {v.runs} runs a side, "))
        lines.append(f"  {v.row}: {v.verdict} at M = {at} (change {100 * (v.ratio - 1):+.2f} %, {v.test} p {v.p:.3g} "
                     f"against {v.level:.3g} at this look, {v.interval}); cost: {cost}{v.minutes:.1f} min")
        if v.would_decide:
            advise = paired_power.render_advice if paired else render_advice
            lines.append(f"    would decide it: {advise(v.would_decide, threshold, outdir)}")
    return "\n".join(lines)
