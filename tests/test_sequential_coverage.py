"""The intervals ab prints after its sequential rule stopped keep their 95 %: the rule's own
repeated interval, simulated with the rule itself (benchmarks/sequential_coverage.py runs 10,000
sequences a case; here 600, enough to tell 98 % from the fixed-sample interval's 91-94 %)."""

import importlib.util

import pytest

from analysis.core.paths import REPO
from analysis.tools.plan import ab_looks
from analysis.tools.compare.repeated import Row

_spec = importlib.util.spec_from_file_location("sequential_coverage", REPO / "benchmarks" / "sequential_coverage.py")
coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(coverage)
SEQUENCES = 600


@pytest.mark.unit
@pytest.mark.parametrize("design, change, sd", [("paired", 0.0, 0.02), ("paired", 0.01, 0.01), ("separate", 0.05, 0.02)])
def test_the_repeated_interval_holds_the_truth_at_its_level_where_the_stopping_looks_interval_does_not(design, change, sd):
    found = coverage.coverage(design, change, sd, SEQUENCES)
    # binomial sd of a share near 0.95 over 600 sequences: 0.9 points; the repeated one measured 98-99 %
    assert found["repeated"] >= 0.95, found
    assert found["fixed"] < found["repeated"], found


@pytest.mark.unit
def test_rows_decided_sequentially_show_the_rules_interval_beside_its_verdict():
    row = Row("command", "run", "cputime", 30, 30, 0, 0, 1.0, 1.05, 1.05, 1.04, 1.06, 0.001, 0.01)
    decision = coverage.sequential.decide_paired([0.05, 0.06, 0.04, 0.05], 0.01, 0.02)

    class Look:
        pass

    look = Look()
    look.row, look.decision = "command / run (cputime)", decision
    ab_looks.apply([row], [look])
    assert row.verdict == "slower" and row.interval == "repeated"
    assert (row.ci_low, row.ci_high) == decision.two_sided and row.ci_low > 1   # wider than the fixed one, excluding 1
    assert row.ci_high - row.ci_low > 1.06 - 1.04


@pytest.mark.unit
def test_a_row_decided_within_the_threshold_says_slightly_where_its_interval_excludes_no_change():
    """Equivalence (two one-sided tests) within ±5 % of a change that is clearly there: the row reads
    'slightly slower', never '~' beside an interval above no change."""
    row = Row("command", "run", "cputime", 30, 30, 0, 0, 1.0, 1.01, 1.01, 1.008, 1.012, 0.001, 0.01)
    decision = coverage.sequential.decide_paired([0.010, 0.011, 0.009, 0.010, 0.010], 0.01, 0.05)

    class Look:
        pass

    look = Look()
    look.row, look.decision = "command / run (cputime)", decision
    assert decision.verdict == "~"
    ab_looks.apply([row], [look])
    assert row.ci_low > 1 and row.verdict == "slightly slower", (row.ci_low, row.ci_high, row.verdict)
