"""Time spans through one helper (analysis.core.argtypes): the kit's --budget syntax, and
BenchExec's own limits read by BenchExec's parser."""

import argparse

import pytest

from analysis.core.argtypes import benchexec_seconds, duration


@pytest.mark.unit
def test_a_budget_is_minutes_or_spans_of_h_min_m_s():
    assert [duration(t) for t in ("1h30m", "90s", "30", "1.5h", "2 min", "1h 30m")] == [5400, 90, 1800, 5400, 120, 5400]
    for bad in ("soon", "-5m", "5 parsecs", "0", "-5", "", "30m later"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"is not a duration like 30m, 1h30m or 90s$"):
            duration(bad)


@pytest.mark.unit
def test_benchexecs_limits_are_read_as_benchexec_reads_them():
    # a definition's timelimit="900 s", a result file's timelimit="900s" (BenchExec writes no space)
    assert [benchexec_seconds(v) for v in ("900 s", "900s", "900", "15min", "2h", "1d")] == [900, 900, 900, 900, 7200, 86400]
    # no limit (absent, BenchExec's -1) and what BenchExec itself would reject: None, never a number
    assert [benchexec_seconds(v) for v in (None, "", "-1", "1.5 s", "10 parsecs", "s")] == [None] * 6
