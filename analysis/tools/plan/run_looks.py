"""
`timekit run EXPERIMENT --until-decided --budget T`: after the preset's invocations, one more rerun
of the steps (the run definitions' order rotated as before) while a claim is undecided and the
budget fits another round; the report's claims looked at after every round.

Looking after every round at fixed-level intervals would confirm or refute too often. The claims
judged on a t interval over reruns (analysis.core.replication.over_reruns, most of the kit's
claims) get the group-sequential rule of `ab --until-decided` instead: O'Brien-Fleming-type alpha
spending up to M_max reruns, fixed before the first look from the budget and recorded in
sweep.json, each look's interval at the nominal level of the one-sample boundaries
(analysis.tools.plan.sequential). A report made later from the sweep applies the same levels.
Claims judged otherwise (an F interval over reruns, a bootstrap or order statistics over runs, a
share) cannot be made sequential this way: the loop does not wait for them, they are judged once
on the final data, and their evidence shows no repeated interval (docs/calibration.md).
"""

from __future__ import annotations

import contextlib
import math
import sys
import warnings

from analysis.core import replication
from analysis.sweep.model import Preset, Sweep, rotated
from analysis.tools.plan import sequential

MAX_RERUNS = 30          # M_max never beyond this, whatever the budget
MARK = "repeated interval"


def look_function(max_reruns):
    """(confidence, M) -> (this look's nominal confidence, the note the evidence carries)."""
    def look(confidence, m):
        nominal = sequential.look_confidence(confidence, m, max_reruns)
        return nominal, (f"; {MARK} at look M = {m} of M_max = {max_reruns}, nominal {100 * nominal:.3g} %, "
                         "O'Brien-Fleming alpha spending")
    return look


@contextlib.contextmanager
def applied(sweep):
    """The sweep's sequential levels in effect while its claims are judged (none for a fixed sweep)."""
    record = getattr(sweep, "sequential", None) or {}
    token = replication.SEQUENTIAL_LOOK.set(look_function(record["max_reruns"])) if record.get("max_reruns") else None
    try:
        yield
    finally:
        if token is not None:
            replication.SEQUENTIAL_LOOK.reset(token)


def waiting(findings):
    """The inconclusive findings judged on a repeated interval: what one more round may decide."""
    return [f for f in findings if f.verdict == "inconclusive" and MARK in f.evidence]


def spent_seconds(sweep):
    return float(sum(s.seconds for s in sweep.steps if s.status == "done"))


def round_seconds(sweep):
    """One more rerun of every step, at the mean time of the invocations done so far."""
    done = [s for s in sweep.steps if s.status == "done"]
    per_round = len(sweep.steps) / max(sweep.reruns, 1)
    return per_round * spent_seconds(sweep) / max(len(done), 1)


def max_reruns_for(sweep, budget):
    """M_max: the preset's M plus the rounds the rest of the budget fits, fixed before the first look."""
    more = math.floor(max(0.0, budget - spent_seconds(sweep)) / max(round_seconds(sweep), 1e-9))
    return int(min(MAX_RERUNS, sweep.reruns + more))


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


def until_decided(experiment, outdir, budget, run_pending, judge, out=sys.stderr):
    """Look, add a rerun, run it (run_pending(outdir)), look again, until no claim waits, M_max is
    reached or the budget does not fit another round; judge(outdir) -> the experiment's findings.
    Returns the stop reason (also recorded in sweep.json)."""
    sweep = Sweep.load(outdir)
    if not sweep.sequential.get("max_reruns"):
        sweep.sequential = {"budget_seconds": budget, "max_reruns": max_reruns_for(sweep, budget), "looks": []}
        sweep.save(outdir)
    record = sweep.sequential
    while True:
        with applied(sweep), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # scipy on GNU time's identical steps, as the report
            findings = judge(outdir)
        left = record["budget_seconds"] - spent_seconds(sweep)
        undecided = waiting(findings)
        record["looks"].append({"reruns": sweep.reruns, "undecided": len(undecided), "findings": len(findings),
                                "seconds": round(spent_seconds(sweep), 1)})
        print(f"{experiment.name}: look at M = {sweep.reruns} of M_max = {record['max_reruns']}: "
              f"{len(undecided)} claim(s) still undecided, {_clock(max(left, 0))} of the budget left"
              + "".join(f"\n  undecided: {f.claim}" for f in undecided), file=out, flush=True)
        if not undecided:
            stop = "every claim judged on a repeated interval is decided"
        elif sweep.reruns >= record["max_reruns"]:
            stop = f"M_max = {record['max_reruns']} reached"
        elif round_seconds(sweep) > left:
            stop = f"the budget does not fit another round ({_clock(round_seconds(sweep))} each)"
        else:
            add_rerun(experiment, sweep)
            sweep.save(outdir)
            run_pending(outdir)
            sweep = Sweep.load(outdir)
            sweep.sequential = record
            continue
        record["stopped"] = stop
        sweep.save(outdir)
        print(f"{experiment.name}: stopped at M = {sweep.reruns}: {stop}; {_clock(spent_seconds(sweep))} spent",
              file=out, flush=True)
        return stop
