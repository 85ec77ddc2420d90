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
    # from the t quantile (level not recorded: 90 %): M = 6 of 3 (not 3 x 4), n = 115 of 30 (t(114) against t(29))
    assert m == 6 and sizes["runs"] == 115 and sizes["runs_factor"] == pytest.approx(115 / 30)
    # a claim of parts needs its largest part; a verdict with no size names none
    assert verdicts.needed_sizes(by_reruns.evidence + " " + by_reruns.evidence.replace("M = 6", "M = 40")) == {"reruns": 40}
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
    # M = 14 a condition (90 %: t(13) / sqrt(14) <= 0.01 / s, s from t(4) over 5): 9 more rounds of 5, 4 s each
    assert "M = 14 reruns" in plan and "45 more benchexec invocations" in plan and "3.0 min" in plan
    assert "timekit run discipline --reruns 14" in plan
    assert cost.decision_plan("claim: ...: the CI contains the bound.", spent) == ""


def test_no_m_is_promised_where_a_part_is_decided_by_no_number_of_reruns():
    """One part on its bound, another that 14 reruns would decide: the finding is decided only when
    both are, so the cost line says that no number decides it and names no --reruns M."""
    spent = cost.Cost(invocations=25, runs=250, benchexec_seconds=90.0, process_seconds=100.0, reruns=5)
    on_bound = verdicts.at_least(Estimate(1.10, 1.0, 1.2, unit="reruns", n=10, m=5), 1.10).evidence
    decidable = verdicts.no_effect(Estimate(1.01, 0.99, 1.03, unit="reruns", n=10, m=5), 0.02).evidence
    plan = cost.decision_plan(f"{decidable} {on_bound}", spent, "discipline")
    assert plan.startswith("no number of reruns decides it: the estimate sits on the bound")
    assert "--reruns" not in plan and "more benchexec invocations" not in plan
    assert "about M = 14 reruns would decide its other undecided parts" in plan
    assert cost.decision_plan(on_bound, spent) == "no number of reruns decides it: the estimate sits on the bound"
