"""The one verdict of `timekit ab` (analysis.ab.verdict): its exit code and last line, which say
"undecided" (exit 3) where no slowdown was shown but one beyond the threshold is not excluded."""

from types import SimpleNamespace

import pytest

from analysis.ab import verdict
from analysis.tools.compare.repeated import NOTHING, NOTHING_COMPARED


@pytest.mark.unit
def test_an_open_answer_is_undecided_exit_3_never_a_pass():
    """A 10 % slower build on a noisy VM read '~' with a CI up to +19.2 % after a fixed count: that
    is no pass (exit 3), and the line says how far each open row reaches and what would decide it;
    a narrow CI within the threshold passes; a slowdown is the gate's answer. Under the sequential
    rule '~' is a decision (equivalence), and only its 'undecided' stays open."""
    wide = {"command": "./a → ./b", "column": "cputime", "verdict": "~", "ci_high": 1.1918}
    line = verdict.verdict_line([{**wide, "column": "walltime", "ci_high": 1.05}, wide], False, 0.02)
    assert line.startswith("verdict: undecided: no significant slowdown, but one beyond the 2 % threshold is not excluded")
    assert "for ./a → ./b, cputime's CI reaches +19.2 %, walltime's CI reaches +5.0 %" in line
    assert "leave out --reruns" in line and line.endswith(f"(exit {NOTHING_COMPARED})")
    narrow = verdict.verdict_line([{**wide, "ci_high": 1.015}], False, 0.02)
    assert narrow == "verdict: no significant slowdown beyond the threshold (exit 0)"
    assert verdict.verdict_line([{**wide, "verdict": "slower"}], True, 0.02) == "verdict: slower: ./a → ./b (exit 1)"
    decided_same = verdict.verdict_line([{**wide, "ci_high": 1.03, "sequential": True}], False, 0.02)
    assert decided_same == "verdict: no significant slowdown beyond the threshold (exit 0)"
    undecided = verdict.verdict_line([{**wide, "verdict": "undecided", "ci_high": 1.018, "sequential": True}], False, 0.01)
    assert "for ./a → ./b, cputime's CI reaches +1.8 %" in undecided and "--budget" in undecided
    assert verdict.is_open("~", 1.0201, 0.02, False) and not verdict.is_open("~", 1.0199, 0.02, False)
    assert verdict.is_open("undecided", 1.0, 0.02, True) and not verdict.is_open("~", 1.5, 0.02, True)
    # a slight change (shown, within the threshold) is open like '~' while its CI reaches beyond it
    assert verdict.is_open("slightly slower", 1.03, 0.02, False) and not verdict.is_open("slightly slower", 1.015, 0.02, False)


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
    assert verdict.gate([same], open_rows=["a → b cputime: its 95 % CI reaches +9.00 %"]) == (
        NOTHING_COMPARED, "no slowdown shown, none beyond the threshold excluded: a → b cputime: its 95 % CI reaches +9.00 %")
    assert verdict.gate([slower], open_rows=["x"]) == (1, "")
