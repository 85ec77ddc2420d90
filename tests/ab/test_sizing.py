"""Longer invocations where the first look finds a decision far off (analysis.ab.sizing): when they
grow, what the record says, and that the rows and the looks count the longer invocations only."""

import io
import json

import numpy as np
import pytest

from analysis.ab import api, observations, paired, paired_summary, sizing, stopping
from analysis.tools.commands import executions
from analysis.tools.options import AbOptions
from analysis.tools.plan import sequential
from tests.helpers import REPO

SPIN = REPO / "programs" / "bin" / "spin"


def blocks_run(pair_seconds=0.04, pairs=25, nearest=30, **fields):
    """A blocks run after its first look: invocations of `pairs` pairs of `pair_seconds`, the look's
    forecast `nearest` invocations."""
    batch = paired.Batch(pair_seconds, pairs, 1, "sized by the kit")
    run = paired.PairedRun(fields.pop("design", "blocks"), [{"name": "command"}], {"runs": 1, "repeat": pairs}, batch,
                           seed=0, reruns=3, until_decided=True, max_reruns=60, **fields)
    run.plan_reruns(1, 3)
    run.checks.append({"reruns": 3, "undecided": ["command"], "nearest_decision": nearest, "why": "undecided"})
    return run


@pytest.mark.unit
def test_only_a_far_first_look_of_a_short_back_to_back_invocation_grows_it():
    assert sizing.grown_runs(blocks_run()) == 3              # 25 pairs of 40 ms: 1 s, to 75 pairs (3 s)
    assert sizing.grown_runs(blocks_run(nearest=None)) == 3  # beyond any budget: grown too
    assert sizing.grown_runs(blocks_run(nearest=sizing.FAR)) is None   # a decision near: as it is
    assert sizing.grown_runs(blocks_run(pair_seconds=0.12)) is None    # already 3 s of pairs
    assert sizing.grown_runs(blocks_run(design="interleaved")) is None  # co-located: its pairs share the spells
    fixed = blocks_run()
    fixed.batch.fixed = True                                  # --runs or --repeat: as the user gave it
    assert sizing.grown_runs(fixed) is None
    later = blocks_run()
    later.checks.append(dict(later.checks[0], reruns=4))      # only at the first look
    assert sizing.grown_runs(later) is None
    assert paired.choose_batch(0.04, paired.Options(), 0, 0).fixed is False
    assert paired.choose_batch(0.04, paired.Options(), 2, 0).fixed and paired.choose_batch(0.04, paired.Options(), 0, 9).fixed


@pytest.mark.unit
def test_growing_plans_three_longer_invocations_counted_from_the_next_and_keeps_alpha():
    run = blocks_run()
    decision = sequential.decide_paired([0.01, 0.03, -0.02], 0.0023, 0.01)
    line = sizing.grow(run, [stopping.Look("command", decision, 75)], 3, io.StringIO())
    assert (run.counted_from, run.reruns, run.batch.runs, run.options.runs, run.batch.pairs) == (4, 6, 3, 3, 75)
    assert [s.rerun for s in run.steps] == [1, 2, 3, 4, 5, 6] and run.spent == 0.0023
    assert "invocations 1-3 (1 run(s) of 25 pairs)" in line and "from invocation 4 on" in line
    assert "1-3 shorter, not counted" in paired_summary.summary(run, verbose=False)
    # the looks count the longer invocations from their third, at alpha less what the first look could spend
    run.max_reruns = 20
    logs = np.array([0.02, 0.021, 0.019])
    [look] = stopping.decide([("command", logs, [75] * 3)], run, 0.05, 0.01)
    fresh = sequential.boundaries(0.05 - 0.0023, 20 - 3, paired=True)[3]
    assert look.decision.reruns == 3 and look.decision.level == pytest.approx(fresh)
    assert look.decision.level < sequential.boundaries(0.05, 20, paired=True)[3] * 1.5


@pytest.mark.benchexec
def test_a_grown_run_counts_only_its_longer_invocations(programs, scratch, monkeypatch):
    """A/A at a threshold no first look can decide (0.1 %), every first look taken as far: the
    record, the rows' pairs and the text count the three longer invocations only."""
    monkeypatch.setattr(sizing, "FAR", -1)
    monkeypatch.setattr(paired, "INVOCATION_SECONDS", 0.3)   # short invocations, grown threefold
    monkeypatch.setattr(sizing, "GROWN_SECONDS", 0.9)
    monkeypatch.chdir(scratch)
    out = io.StringIO()
    options = AbOptions(design="blocks", threshold=0.001, max_reruns=6, budget=None)
    outcome = api.compare_commands(f"{SPIN} 2000", f"{SPIN} 2000", options, scratch / "ab", out=out)
    record = json.loads((scratch / "ab" / "paired.json").read_text())
    assert record["counted_from"] == 4 and record["reruns"] == 6, out.getvalue()
    pairs = record["batch"]["pairs_per_run"] * record["batch"]["runs"]
    assert record["batch"]["runs"] > 1 and "from invocation 4" in record["batch"]["why"]
    assert outcome.verdict == "undecided" and outcome.invocations == 6, (outcome, out.getvalue())
    run = paired.PairedRun.load(scratch / "ab")
    counted = executions.of_tables(paired.tables(scratch / "ab", run), run.rundefinitions[0])
    assert len(counted) == 3 and all(len(i.executions) == 2 * pairs for i in counted), [len(i.executions) for i in counted]
    logs, _ = observations.invocation_log_ratios(counted, "exec-cputime")
    assert logs.size == 3
    text = out.getvalue() + outcome.text
    assert "from invocation 4 on" in text and "1-3 shorter, not counted" in text, text
    assert "M counts invocations 4 to 6" in text, text
