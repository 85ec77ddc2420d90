"""Argument types (analysis.core.argtypes): fractions as 0.05 or 5%, the kit's --budget syntax,
and BenchExec's own limits read by BenchExec's parser."""

import argparse

import pytest

from analysis.core.argtypes import benchexec_seconds, duration, probability


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


@pytest.mark.unit
def test_a_fraction_is_a_number_below_1_or_a_percentage():
    assert [probability(t) for t in ("0.05", "5%", "5 %", " 2.5% ", "0.5%", "99%")] == pytest.approx(
        [0.05, 0.05, 0.05, 0.025, 0.005, 0.99])
    for bad, hint in (("5", "write 0.05 or 5%"), ("2", "write 0.02 or 2%"), ("1", "write 0.01 or 1%")):
        with pytest.raises(argparse.ArgumentTypeError, match=f"^'{bad}' is not a fraction between 0 and 1: {hint}$"):
            probability(bad)
    for bad in ("0", "0%", "100%", "150", "-5%", "x", "%", "", "nan", "inf"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"is not a number between 0 and 1 \(or a percentage, e\.g\. 5%\)$"):
            probability(bad)


@pytest.mark.unit
def test_every_threshold_and_alpha_option_takes_a_percentage():
    from analysis import cli

    found = {}
    commands = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in commands.choices.items():
        for action in parser._actions:
            if any(word in option for option in action.option_strings for word in ("threshold", "alpha")):
                found[f"{name} {action.option_strings[-1]}"] = action.type
    assert {"ab --threshold", "ab --alpha", "compare --threshold", "bisect --alpha"} <= set(found)
    assert {option for option, kind in found.items() if kind is not probability} == set()
    assert cli.build_parser().parse_args(["ab", "./a", "./b", "--threshold", "5%", "--alpha", "1%"]).threshold == 0.05
