"""
`timekit run EXPERIMENT --until-decided --budget T`: after the preset's invocations, one more rerun
of the steps while a claim that can still be decided waits and the budget fits another round; the
report's claims looked at after every round.

Claims on a t interval over reruns get repeated intervals (analysis.tools.plan.share_spending), a
decision stands, and sweep.json records every look; other claims are judged once, on the final
data (docs/calibration.md, "Decide, then stop: `timekit run --until-decided`").
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
import warnings

from analysis.core import replication
from analysis.sweep.model import Preset, Sweep, rotated
from analysis.tools.plan import look_budget, pursuit, run_summary, share_spending

MARK = share_spending.MARK
MAX_RERUNS = look_budget.MAX_RERUNS
RULE = "O'Brien-Fleming-type alpha spending by budget share"
KEPT = "Decided at look M = {m} and kept"


def look_function(looks):
    """(confidence, M) -> (this look's nominal confidence, the note the evidence carries), for the
    last of `looks` ((M, share of the budget), ...). An interval over fewer values than the look's
    M (a condition with failed invocations) is placed among the looks by its own M."""
    looks = tuple(looks)
    share = looks[-1][1]

    def look(confidence, m):
        if m > share_spending.CAP:
            return confidence, f"; fixed level: no {MARK} beyond M = {share_spending.CAP}"
        own = tuple((k, s) for k, s in looks[:-1] if k < m) + ((m, share),)
        nominal = share_spending.look_confidence(confidence, own)
        final = " (the final look)" if share >= 1 else ""
        return nominal, (f"; {MARK} at look M = {m}{final}, {100 * share:.0f} % of the budget spent, "
                         f"nominal {100 * nominal:.4g} %, {RULE}")
    return look


def history(record, reruns):
    """The looks up to M = `reruns` as ((M, share), ...), from sweep.json's record; a look at
    `reruns` that was not recorded (an interrupted loop) is taken as the final one. Records of the
    first version carry no share: their information fraction M / M_max stands in for it."""
    top = record.get("max_reruns") or reruns
    looks = [(look["reruns"], look.get("share", min(1.0, look["reruns"] / top)))
             for look in record.get("looks", []) if look["reruns"] <= reruns]
    if not looks or looks[-1][0] < reruns:
        looks.append((reruns, 1.0))
    return tuple(looks)


@contextlib.contextmanager
def applied(sweep):
    """The sweep's sequential levels in effect while its claims are judged (none for a fixed sweep)."""
    record = getattr(sweep, "sequential", None) or {}
    token = None
    if record.get("budget_seconds"):
        token = replication.SEQUENTIAL_LOOK.set(look_function(history(record, sweep.reruns)))
    try:
        yield
    finally:
        if token is not None:
            replication.SEQUENTIAL_LOOK.reset(token)


def sequential(finding):
    """Whether the finding was judged on a repeated interval (some part of it)."""
    return any(part.repeated for part in finding.parts)


def record_decisions(record, findings, m):
    """Record in `decided` the claims this look at M = `m` decides on a repeated interval for the
    first time (verdict, M, evidence); returns their claims."""
    decided = record.setdefault("decided", {})
    new = [f for f in findings
           if f.verdict in run_summary.DECIDED and sequential(f) and not run_summary.recorded(decided, f)]
    for f in new:
        decided[run_summary.key(f)] = {"verdict": f.verdict, "reruns": m, "evidence": f.evidence, "claim": f.claim}
    return [f.claim for f in new]


def settled(findings, record):
    """The findings with the recorded decisions applied: a claim decided at a look keeps that
    verdict and evidence, however later looks read it; one given up keeps its verdict with the
    reason. For a report from a sweep (pipeline.build_report) as for the loop's own looks."""
    decided, given_up = (record or {}).get("decided", {}), (record or {}).get("given_up", {})
    out = []
    for f in findings:
        d = run_summary.recorded(decided, f)
        if d and d["evidence"] != f.evidence:  # judged again after its look (at that look it is the decision itself)
            now = "" if f.verdict == d["verdict"] else f" (Judged again on all the data it would read {f.verdict}.)"
            f = dataclasses.replace(f, verdict=d["verdict"], evidence=(
                f"{KEPT.format(m=d['reruns'])}: a group-sequential decision stands while later rounds run for "
                f"other claims. {d['evidence']}{now}"))
        elif run_summary.recorded(given_up, f) and f.verdict == "inconclusive":
            f = dataclasses.replace(f, evidence=f"{f.evidence} {run_summary.recorded(given_up, f)['why']}")
        out.append(f)
    return out


def decided_at(finding, record):
    """The look M at which a kept decision on the finding was taken (0 when it is not one)."""
    d = run_summary.recorded((record or {}).get("decided", {}), finding)
    return d["reruns"] if d and d["verdict"] == finding.verdict else 0


def waiting(findings, record=None):
    """The inconclusive findings judged on a repeated interval and not decided at an earlier
    look: what one more round may decide."""
    decided = (record or {}).get("decided", {})
    return [f for f in findings if f.verdict == "inconclusive" and sequential(f) and not run_summary.recorded(decided, f)]


def add_rerun(experiment, sweep):
    """Append the steps of rerun M + 1 (the experiment's planner, the order rotated as in Sweep.plan)."""
    m = sweep.reruns + 1
    preset = Preset(reps=sweep.reps, loads=tuple(sweep.loads), reruns=m, tasksets=tuple(sweep.tasksets))
    steps = [s for s in experiment.plan(preset) if s.rerun == m]
    if len(sweep.rundefinitions) > 1:
        for step in steps:
            step.order = rotated(sweep.rundefinitions, m - 1)
    sweep.steps += steps
    sweep.reruns = m


def _clock(seconds):
    return f"{seconds / 60:.1f} min"


def _record(sweep, budget):
    """The loop's record in sweep.json: a new one (budget, rule, and for information the M a
    forecast of the round time allows: the spending follows the budget's share, not it), or the
    one an interrupted loop left, completed with what the first version did not record."""
    record = sweep.sequential if sweep.sequential.get("budget_seconds") else {"budget_seconds": budget, "rule": RULE}
    for key, empty in (("judge_seconds", 0.0), ("overhead_seconds", 0.0), ("rounds", 0), ("looks", []),
                       ("decided", {}), ("given_up", {})):
        record.setdefault(key, empty)
    record.setdefault("max_reruns", look_budget.allowed_reruns(sweep, record))
    return record


def _preset_verdicts(outdir, sweep, record, judge, clock):
    """The verdicts of the preset's design alone, before the first look: its reruns judged at the
    claims' fixed levels (sweep.json holds no sequential record yet), so that the report can say
    what the budget decided beyond them, on the same machine in the same hour. Its time counts."""
    started = clock()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        findings = judge(outdir)
    seconds = round(clock() - started, 3)
    record["judge_seconds"] += seconds
    return {"reruns": sweep.reruns, "judge_seconds": seconds, "verdicts": {run_summary.key(f): f.verdict for f in findings},
            "claims": {run_summary.key(f): f.claim for f in findings}}


def _look(outdir, sweep, record, judge, clock):
    """One look: its share of the budget (1 when no round fits after it), the claims judged at
    its levels, its time counted, decisions and give-ups recorded. Returns (the look's record,
    the findings still waiting, given up or not)."""
    final = not look_budget.fits(sweep, record)
    look = {"reruns": sweep.reruns, "share": 1.0 if final else look_budget.share(sweep, record), "final": final}
    record["looks"].append(look)
    sweep.save(outdir)
    started = clock()
    with applied(sweep), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy on GNU time's identical steps, as the report
        findings = judge(outdir)
    look["judge_seconds"] = round(clock() - started, 3)
    record["judge_seconds"] += look["judge_seconds"]
    look["decided"] = record_decisions(record, findings, sweep.reruns)
    undecided = waiting(findings, record)
    allowed = look_budget.allowed_reruns(sweep, record)
    look["given_up"] = pursuit.give_up(record, undecided, sweep.reruns, allowed)
    look.update(undecided=len(undecided), findings=len(findings), allowed=allowed,
                seconds=round(look_budget.spent(sweep, record), 1))
    return look, undecided, findings


def _say(experiment, sweep, record, look, undecided, out):
    given_up = record["given_up"]
    print(f"{experiment.name}: look at M = {sweep.reruns} ({100 * look['share']:.0f} % of the budget"
          f"{', the final look' if look['final'] else ''}): {len(undecided)} claim(s) still undecided, "
          f"{_clock(max(look_budget.left(sweep, record), 0))} of the budget left, the budget allows M = {look['allowed']}"
          + "".join(f"\n  decided: {c}" for c in look["decided"])
          + "".join(f"\n  undecided: {f.claim}" + (f" (not pursued: {run_summary.recorded(given_up, f)['why']})"
                                                   if run_summary.recorded(given_up, f) else "")
                    for f in undecided), file=out, flush=True)


def _stop_reason(sweep, record, look, undecided):
    pursued = [f for f in undecided if not run_summary.recorded(record["given_up"], f)]
    if not undecided:
        return "every claim judged on a repeated interval is decided"
    if not pursued:
        return "no undecided claim can be decided within the budget"
    if sweep.reruns >= MAX_RERUNS:
        return f"M = {MAX_RERUNS} reached"
    if look["final"] or not look_budget.fits(sweep, record):
        return f"the budget does not fit another round ({_clock(look_budget.round_seconds(sweep, record))} each)"
    return ""


def until_decided(experiment, outdir, budget, run_pending, judge, out=sys.stderr, clock=time.monotonic):
    """Look, add a rerun, run it (run_pending(outdir)), look again, until no claim that can still
    be decided waits or the budget (wall time, `clock`'s seconds for the looks and the runner's
    work) fits no further round; judge(outdir) -> the experiment's findings. Returns the stop
    reason (also recorded in sweep.json)."""
    sweep = Sweep.load(outdir)
    fresh = not sweep.sequential.get("looks")
    record = sweep.sequential = _record(sweep, budget)
    if fresh:
        record["preset"] = _preset_verdicts(outdir, sweep, record, judge, clock)
    while True:
        look, undecided, findings = _look(outdir, sweep, record, judge, clock)
        _say(experiment, sweep, record, look, undecided, out)
        stop = _stop_reason(sweep, record, look, undecided)
        if stop:
            break
        add_rerun(experiment, sweep)
        sweep.save(outdir)
        before, started = look_budget.invocation_seconds(sweep), clock()
        run_pending(outdir)
        sweep = Sweep.load(outdir)
        sweep.sequential = record
        record["rounds"] += 1
        record["overhead_seconds"] += max(0.0, clock() - started - (look_budget.invocation_seconds(sweep) - before))
    record["stopped"] = stop
    sweep.save(outdir)
    print(f"{experiment.name}: stopped at M = {sweep.reruns}: {stop}; {_clock(look_budget.spent(sweep, record))} spent "
          f"({record['judge_seconds']:.1f} s of it judging the looks); {run_summary.tally(record, settled(findings, record))}",
          file=out, flush=True)
    return stop
