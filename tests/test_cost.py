"""What each verdict cost (analysis.core.cost), on the recorded demo's result files and sweep.json."""

import json
from pathlib import Path

import pytest

from analysis.core import cost, verdicts
from analysis.core.verdicts import Estimate
from analysis.sweep.load import load_tables

pytestmark = pytest.mark.unit

RECORDED = Path(__file__).parent / "data" / "recorded-demo"


def test_the_sizes_an_inconclusive_verdict_names_are_read_back_from_its_evidence():
    by_reruns = verdicts.no_effect(Estimate(1.01, 0.99, 1.03, unit="reruns", n=10, m=3), 0.02)
    by_runs = verdicts.no_effect(Estimate(1.01, 0.99, 1.03, unit="runs", n=30), 0.02)
    assert by_reruns.verdict == by_runs.verdict == "inconclusive"
    m = verdicts.needed_sizes(by_reruns.evidence)["reruns"]
    sizes = verdicts.needed_sizes(by_runs.evidence)
    assert m == 3 * 4 and sizes["runs"] == 30 * 4 and sizes["runs_factor"] == pytest.approx(4.0)
    # a claim of parts needs its largest part; a verdict with no size names none
    assert verdicts.needed_sizes(by_reruns.evidence + " " + by_reruns.evidence.replace("M = 12", "M = 40")) == {"reruns": 40}
    on_bound = verdicts.at_least(Estimate(1.1, 1.0, 1.2, unit="reruns", n=10, m=3), 1.1)
    assert verdicts.needed_sizes(on_bound.evidence) == {}


def test_cost_counts_invocations_runs_and_minutes_from_benchexec_and_the_manifest():
    directory = RECORDED / "discipline"
    tables, conditions, sweep = load_tables(directory)
    seconds = {name: step.seconds for name, step in conditions.items()}
    spent = cost.of(tables, seconds, sweep.reruns)
    manifest = json.loads((directory / "sweep.json").read_text())
    assert spent.invocations == len(manifest["steps"]) == 25
    assert spent.runs == sum(len(t.tasks) for t in tables) == 250
    assert spent.process_seconds == pytest.approx(sum(s["seconds"] for s in manifest["steps"]))
    # BenchExec's own span lies inside the whole process's time
    assert 0 < spent.benchexec_seconds < spent.process_seconds
    assert "25 benchexec invocations, 250 runs" in spent.text()
    without_manifest = cost.of(tables)
    assert without_manifest.seconds == pytest.approx(spent.benchexec_seconds)


def test_an_inconclusive_finding_is_priced_at_the_sweeps_own_seconds_per_invocation():
    spent = cost.Cost(invocations=25, runs=250, benchexec_seconds=90.0, process_seconds=100.0, reruns=5)
    evidence = verdicts.no_effect(Estimate(1.01, 0.99, 1.03, unit="reruns", n=10, m=5), 0.02).evidence
    plan = cost.decision_plan(evidence, spent, "discipline")
    # M = 20 a condition: 15 more rounds of the 5 conditions, 4 s each
    assert "M = 20 reruns" in plan and "75 more benchexec invocations" in plan and "5.0 min" in plan
    assert "timekit run discipline --reruns 20" in plan
    assert cost.decision_plan("claim: ...: the estimate sits on the margin", spent) == ""
