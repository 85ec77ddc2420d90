"""The one verdict of `timekit ab` (analysis.ab.verdict): its last line, which says when no
slowdown was shown but one beyond the threshold is not excluded either."""

from types import SimpleNamespace

import pytest

from analysis.ab import verdict
from analysis.tools.compare.repeated import NOTHING, NOTHING_COMPARED


@pytest.mark.unit
def test_the_last_line_says_when_no_slowdown_was_shown_but_none_beyond_the_threshold_excluded():
    """A 10 % slower build on a noisy VM: '~' with a CI up to +19.2 % passes the gate (exit 0), and
    the line says that a slowdown that large is not excluded and what would tell; a narrow CI
    within the threshold keeps the plain line; a slowdown is the gate's answer."""
    wide = {"command": "./a → ./b", "column": "cputime", "verdict": "~", "ci_high": 1.1918}
    line = verdict.verdict_line([{**wide, "column": "walltime", "ci_high": 1.05}, wide], False, 0.02)
    assert line.startswith("verdict: no significant slowdown beyond the threshold (exit 0); not excluded either")
    assert "for ./a → ./b, cputime's CI reaches +19.2 %, walltime's CI reaches +5.0 %, beyond the 2 % threshold" in line
    assert "--until-decided" in line
    narrow = verdict.verdict_line([{**wide, "ci_high": 1.015}], False, 0.02)
    assert narrow == "verdict: no significant slowdown beyond the threshold (exit 0)"
    assert verdict.verdict_line([{**wide, "verdict": "slower"}], True, 0.02) == "verdict: slower: ./a → ./b (exit 1)"
    # --until-decided left the row undecided: the gate passes, and the line says so
    undecided = verdict.verdict_line([{**wide, "verdict": "undecided", "ci_high": 1.018}], False, 0.01)
    assert "not excluded either: for ./a → ./b, cputime's CI reaches +1.8 %, beyond the 1 % threshold" in undecided
    assert undecided.endswith("(undecided: the lines above say what would decide it)")


@pytest.mark.unit
def test_one_gate_decides_both_paths_in_order_busy_slower_design_nothing():
    """Outside work leaves no verdict even over a slowdown; a slowdown shown is one even where a
    co-located design changed what it measures; no rows is nothing compared."""
    same, slower = SimpleNamespace(verdict="~"), SimpleNamespace(verdict="slower")
    busy, changed = ["a → b: the machine was busy from outside during invocations 1-3"], ["a → b: flagged"]
    assert verdict.gate([same]) == (0, "")
    assert verdict.gate([same, slower]) == (1, "")
    assert verdict.gate([slower], busy=busy) == (NOTHING_COMPARED, busy[0])
    assert verdict.gate([slower], design_changed=changed) == (1, "")
    assert verdict.gate([same], design_changed=changed) == (NOTHING_COMPARED, "the design changes what it measures (a → b: flagged)")
    assert verdict.gate([]) == (NOTHING_COMPARED, NOTHING)
