"""The one verdict of `timekit ab` (analysis.ab.verdict.judge): its exit code, word and last line,
which say "undecided" (exit 3) where no slowdown was shown but one beyond the threshold is not
excluded, for shell commands and benchmark definitions alike."""

import pytest

from analysis.ab import verdict
from analysis.tools.compare.repeated import NOTHING_COMPARED, NOTHING_WHY


def head(gate):
    """(exit code, verdict, reason)."""
    return gate.exit_code, gate.verdict, gate.reason


def row(verdict_word="~", ci_high=1.1918, column="cputime", sequential=False, name="./a → ./b", ratio=1.0):
    return verdict.Gated(name, column, verdict_word, ratio, 2 - ci_high, ci_high, sequential)


@pytest.mark.unit
def test_an_open_answer_is_undecided_exit_3_never_a_pass():
    """A 10 % slower build on a noisy VM read '~' with a CI up to +19.2 % after a fixed count: that
    is no pass (exit 3), and the line says how far each open row reaches and what would decide it;
    a narrow CI within the threshold passes; a slowdown is the gate's answer. Under the sequential
    rule '~' is a decision (equivalence), and only its 'undecided' stays open."""
    wide = verdict.judge([row(column="walltime", ci_high=1.05), row()], 0.02)
    assert (wide.exit_code, wide.verdict) == (NOTHING_COMPARED, "undecided")
    assert wide.line.startswith("verdict: undecided: no significant slowdown, but one beyond the 2 % threshold is not excluded")
    assert "for ./a → ./b, cputime's CI reaches +19.2 %, walltime's CI reaches +5.0 %" in wide.line
    assert "leave out --reruns" in wide.line and wide.line.endswith(f"(exit {NOTHING_COMPARED})")
    assert "cputime's CI reaches +19.2 %" in wide.reason
    narrow = verdict.judge([row(ci_high=1.015)], 0.02)
    assert (narrow.exit_code, narrow.verdict, narrow.reason) == (0, "same", "")
    assert narrow.line == "verdict: no significant slowdown beyond the threshold (exit 0)"
    slower = verdict.judge([row("slower", ratio=1.05)], 0.02)
    assert (slower.exit_code, slower.verdict, slower.line) == (1, "slower", "verdict: slower: ./a → ./b: cputime +5.0 % (exit 1)")
    assert verdict.judge([row(ci_high=1.03, sequential=True)], 0.02).exit_code == 0
    undecided = verdict.judge([row("undecided", ci_high=1.018, sequential=True)], 0.01)
    assert "for ./a → ./b, cputime's CI reaches +1.8 %" in undecided.line and "--budget" in undecided.line
    assert verdict.is_open(row(ci_high=1.0201), 0.02) and not verdict.is_open(row(ci_high=1.0199), 0.02)
    assert verdict.is_open(row("undecided", 1.03, sequential=True), 0.02) and not verdict.is_open(row(ci_high=1.5, sequential=True), 0.02)
    # the rule's undecided whose repeated interval lies below +threshold (compute -2 % read -2.4 … -1.5 %
    # at a 2 % threshold in the suite): a slowdown beyond it is excluded, so the gate passes
    below = verdict.Gated("./a → ./b", "cputime", "undecided", 0.981, 0.976, 0.985, True)
    assert not verdict.is_open(below, 0.02)
    assert verdict.judge([below], 0.02).exit_code == 0
    # a slight change (shown, within the threshold) is open like '~' while its CI reaches beyond it
    assert verdict.is_open(row("slightly slower", 1.03), 0.02) and not verdict.is_open(row("slightly slower", 1.015), 0.02)
    # a fixed count whose test and interval disagree (compare's undecided) says so
    torn = verdict.judge([row("undecided", ci_high=1.04)], 0.02)
    assert torn.exit_code == NOTHING_COMPARED and "(its test and interval disagree)" in torn.line
    # a slowdown shown but not beyond the threshold (+1.3 … +2.1 % at 2 %) is never "no significant slowdown"
    shown = verdict.judge([verdict.Gated("./a → ./b", "cputime", "undecided", 1.017, 1.013, 1.021, True)], 0.02)
    assert shown.exit_code == NOTHING_COMPARED and "no significant slowdown" not in shown.line, shown.line
    assert shown.line.startswith("verdict: undecided: a slowdown is shown, but not whether it exceeds the 2 % threshold: "
                                 "for ./a → ./b, cputime slower by +1.3 … +2.1 %"), shown.line


@pytest.mark.unit
def test_one_gate_decides_both_paths_in_order_busy_slower_design_nothing():
    """Outside work leaves no verdict even over a slowdown; a slowdown shown is one even where a
    co-located design changed what it measures; no rows is nothing compared; a pass is faster
    where a row is faster."""
    same, slower = row(ci_high=1.01), row("slower", ratio=1.3)
    busy, changed = ["a → b: the machine was busy from outside during invocations 1-3"], ["a → b: flagged"]
    assert head(verdict.judge([same], 0.02)) == (0, "same", "")
    assert head(verdict.judge([same, slower], 0.02)) == (1, "slower", "")
    outside = verdict.judge([slower], 0.02, busy=busy)
    assert head(outside) == (NOTHING_COMPARED, "undecided", busy[0])
    assert outside.line == f"verdict: undecided: {busy[0]}; rerun on a quiet machine (exit 3)"
    assert verdict.judge([slower], 0.02, design_changed=changed).exit_code == 1
    flagged = verdict.judge([same], 0.02, design_changed=changed)
    assert head(flagged) == (NOTHING_COMPARED, "undecided", "the design changes what it measures (a → b: flagged)")
    assert "--design blocks" in flagged.line
    nothing = verdict.judge([], 0.02)
    assert head(nothing) == (NOTHING_COMPARED, "undecided", NOTHING_WHY)
    assert nothing.line == f"verdict: undecided: {NOTHING_WHY} (exit {NOTHING_COMPARED})"
    assert verdict.judge([row("faster", 0.9, ratio=0.85), same], 0.02).verdict == "faster"


@pytest.mark.unit
def test_the_slower_line_names_each_regressing_row_with_its_change():
    """Definitions' rows are named by their run definition; memory's growth says larger."""
    rows = [row("slower", name="rd", ratio=1.05), row("larger", column="memory", name="rd", ratio=1.2),
            row(ci_high=1.01, column="walltime", name="rd")]
    assert verdict.judge(rows, 0.02).line == "verdict: slower: rd: cputime +5.0 %, memory larger +20.0 % (exit 1)"
