"""What each verdict cost (analysis.core.cost), on the recorded demo's result files and sweep.json."""

import json
from pathlib import Path

import pytest

from analysis.core import cost, verdicts
from analysis.core.report import Finding
from analysis.core.verdicts import Estimate
from analysis.sweep.load import load

pytestmark = pytest.mark.unit

RECORDED = Path(__file__).parent / "data" / "recorded-demo"


def _finding(*judged):
    """An inconclusive finding made of these verdicts' parts."""
    return Finding("a claim", verdicts.all_of([v.as_part() for v in judged]), "evidence", id="x/claim",
                   parts=[v.as_part(f"part {k}") for k, v in enumerate(judged)])


def test_the_sizes_an_inconclusive_verdict_names_are_its_parts_fields():
    by_reruns = verdicts.no_effect(Estimate(1.01, 0.99, 1.03, unit="reruns", n=10, m=3), 0.02)
    by_runs = verdicts.no_effect(Estimate(1.01, 0.99, 1.03, unit="runs", n=30), 0.02)
    assert by_reruns.verdict == by_runs.verdict == "inconclusive"
    # from the t quantile (level not recorded: 90 %): M = 6 of 3 (not 3 x 4), n = 115 of 30 (t(114) against t(29))
    assert by_reruns.part.decide == {"reruns": 6} and by_runs.part.decide == {"runs": 115}
    assert "about M = 6 reruns would decide it" in by_reruns.evidence  # the text is rendered from the field
    # a claim of parts needs its largest part; a verdict on its bound names no size but why
    wider = verdicts.no_effect(Estimate(1.01, 0.98, 1.04, unit="reruns", n=10, m=3), 0.02)
    assert _finding(by_reruns, wider).decide == {"reruns": wider.part.decide["reruns"]} and wider.part.decide["reruns"] > 6
    on_bound = verdicts.at_least(Estimate(1.1, 1.0, 1.2, unit="reruns", n=10, m=3), 1.1)
    assert on_bound.part.decide == {"never": "the estimate sits on the bound", "cause": "bound"}


def test_cost_counts_invocations_runs_and_minutes_from_benchexec_and_the_manifest():
    directory = RECORDED / "discipline"
    loaded = load(directory)  # an invocation set aside as disturbed cost time all the same
    tables, conditions, sweep = loaded.tables + loaded.set_aside, loaded.conditions, loaded.sweep
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
    finding = _finding(verdicts.no_effect(Estimate(1.01, 0.99, 1.03, unit="reruns", n=10, m=5), 0.02))
    plan = cost.decision_plan(finding, spent, "discipline")
    # M = 14 a condition (90 %: t(13) / sqrt(14) <= 0.01 / s, s from t(4) over 5): 9 more rounds of 5, 4 s each
    assert "M = 14 reruns" in plan and "45 more benchexec invocations" in plan and "3.0 min" in plan
    assert "timekit run discipline --reruns 14" in plan
    assert cost.decision_plan(Finding("a claim", "inconclusive", "no interval"), spent) == ""


def test_no_m_is_promised_where_a_part_is_decided_by_no_number_of_reruns():
    """One part on its bound, another that 14 reruns would decide: the finding is decided only when
    both are, so the cost line says that no number decides it and names no --reruns M."""
    spent = cost.Cost(invocations=25, runs=250, benchexec_seconds=90.0, process_seconds=100.0, reruns=5)
    on_bound = verdicts.at_least(Estimate(1.10, 1.0, 1.2, unit="reruns", n=10, m=5), 1.10)
    decidable = verdicts.no_effect(Estimate(1.01, 0.99, 1.03, unit="reruns", n=10, m=5), 0.02)
    plan = cost.decision_plan(_finding(decidable, on_bound), spent, "discipline")
    assert plan == "no number of reruns decides it: the estimate sits on the bound"
    assert cost.decision_plan(_finding(on_bound), spent) == plan


def test_a_bracket_asks_for_a_finer_grid_and_a_share_for_cases():
    """No number of reruns narrows a bracket between two measured points (a cache level's latency
    rise) or a share of a fixed set of cases: the cost line names what would."""
    spent = cost.Cost(invocations=3, runs=33, benchexec_seconds=90.0, process_seconds=100.0, reruns=3)
    bracket = verdicts.about(Estimate(22.6, 16.0, 32.0, unit="bracket", n=11, m=3, scale="MiB"), 40.0)
    assert bracket.verdict == "inconclusive"
    assert bracket.part.decide == {"grid": "a point measured between 16 MiB and 32 MiB"}
    plan = cost.decision_plan(_finding(bracket), spent, "os-microbench")
    assert "M =" not in plan and "a point measured between 16 MiB and 32 MiB" in plan
    share = verdicts.at_least(Estimate(0.4, 0.15, 0.7, unit="cases", n=12, scale="ratio"), 0.5)
    assert "cases" in share.part.decide and "cases" in cost.decision_plan(_finding(share), spent)
