"""`timekit calibrate --claims`: the verdict policy's wrong-verdict rate per claim, simulated with
drift between invocations; and the reason for the policy: runs of one invocation mislead."""

import json

import pytest

from analysis.core.verdicts import ClaimSpec
from analysis.experiments import EXPERIMENTS
from analysis.tools.calibrate import claims as cc

pytestmark = pytest.mark.unit


def test_every_declared_claim_holds_the_target_at_its_presets():
    specs = [spec for e in EXPERIMENTS.values() for spec in e.claim_specs()]
    assert specs, "no experiment declares its claims for calibration"
    for o in cc.calibrate_claims(specs, tries=400):
        limit = 0.10 if o.preset == "quick" else 0.05
        assert o.wrong / o.tries <= limit, (o.claim, o.preset, o.truth, o.wrong)
        assert o.confirmed + o.refuted + o.inconclusive == o.tries


def test_one_invocation_treated_as_independent_runs_is_often_wrong_under_drift():
    """30 runs of one invocation each side, 3 % drift between invocations: the runs-level
    interval is far too narrow, and a true 10 % gap is refuted or a false one confirmed often."""
    spec = ClaimSpec("gap", "at_least", 1.10, {"one invocation": (30, 1)})
    outcomes = cc.calibrate_claim(spec, "one invocation", drift=0.03, tries=400)
    worst = max(o.wrong / o.tries for o in outcomes if o.truth != "boundary")
    assert worst > 0.10


def test_json_lists_claim_truth_and_counts():
    spec = ClaimSpec("gap", "at_least", 1.10, {"quick": (10, 3)})
    rows = json.loads(cc.render(cc.calibrate_claims([spec], tries=50), "json"))
    assert [r["truth"] for r in rows] == ["true", "false", "boundary"]
    assert all({"claim", "truth", "tries", "confirmed", "refuted", "inconclusive"} <= set(r) for r in rows)


def test_the_command_prints_json_for_every_declared_claim():
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-m", "analysis.cli", "calibrate", "--claims", "--format", "json"],
                          cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    declared = {spec.claim for e in EXPERIMENTS.values() for spec in e.claim_specs()}
    assert {r["claim"] for r in rows} == declared
    assert all(r["confirmed"] + r["refuted"] + r["inconclusive"] == r["tries"] for r in rows)
