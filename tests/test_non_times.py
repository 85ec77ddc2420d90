"""Values that are not times (NaN, Inf, negative) never drop a row, and a comparison of nothing is not a pass.

The result files are the real calculatepi file of tests/data with chosen cputime values (its
writer is test_history.write_result) and competition-style files of benchmarks/.
"""

import datetime
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from analysis.tools.compare.repeated import NOTHING_COMPARED
from tests.test_history import write_result
from tests.test_per_task import timekit

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
import make_competition_result  # noqa: E402

TASK = "100"   # an input of the recorded calculatepi file


def times(n, seed, level=1.0):
    return list(level * (1 + 0.01 * np.random.default_rng(seed).standard_normal(n)))


def with_non_times(values, every, value):
    """Every `every`-th value replaced by `value` (NaN, Inf, a negative time)."""
    return [value if k % every == 0 else v for k, v in enumerate(values)]


@pytest.mark.unit
@pytest.mark.parametrize("bad, reason", [(math.nan, "NaN"), (math.inf, "infinite"), (-1.0, "negative")])
def test_compare_keeps_the_cputime_row_and_counts_what_it_left_out(tmp_path, bad, reason):
    base = write_result(tmp_path / "base.results.xml.bz2", datetime.datetime(2026, 1, 1), {TASK: times(10, 1)})
    new = write_result(tmp_path / "new.results.xml.bz2", datetime.datetime(2026, 1, 2),
                       {TASK: with_non_times(times(10, 2), 2, bad)})
    code, out = timekit("compare", base, new, "--format", "json")
    rows = {r["column"]: r for r in json.loads(out)["rows"]}
    assert "cputime" in rows, out
    assert (rows["cputime"]["n_base"], rows["cputime"]["n_new"]) == (10, 5)
    assert rows["cputime"]["left_out_new"] == {reason: 5} and rows["cputime"]["left_out_base"] == {}
    assert np.isfinite(rows["cputime"]["ratio"]) and rows["cputime"]["verdict"] == "~" and code == 0
    assert rows["walltime"]["n_new"] == 10   # a bad cputime does not take the run's walltime with it
    _, text = timekit("compare", base, new)
    assert f"5 {reason}" in next(line for line in text.splitlines() if "cputime" in line and "bc" in line)


@pytest.mark.unit
def test_calibrate_uses_the_valid_runs_and_says_how_many_it_left_out(tmp_path, capsys):
    path = write_result(tmp_path / "nan.results.xml.bz2", datetime.datetime(2026, 1, 1),
                        {TASK: with_non_times(times(20, 3), 4, math.nan)})
    code, out = timekit("calibrate", path, "--column", "cputime", "--format", "json")
    assert code == 0
    [calibration] = json.loads(out)
    assert calibration["group"] == f"bc / {TASK} (cputime), left out: 5 NaN"
    assert calibration["sample"]["n"] == 15   # the 15 valid runs of 20
    capsys.readouterr()
    code, _ = timekit("calibrate", write_result(tmp_path / "few.results.xml.bz2", datetime.datetime(2026, 1, 1),
                                                {TASK: with_non_times(times(10, 4), 2, math.nan)}), "--column", "cputime")
    error = capsys.readouterr().err   # 5 valid runs are too few: one line naming the row, what was left out, the need
    assert code == 2 and "left out: 5 NaN" in error and "5 valid runs" in error and "needs 10+" in error, error


@pytest.mark.unit
def test_a_column_with_no_valid_value_left_says_so_and_nothing_compared_is_exit_3(tmp_path):
    base = write_result(tmp_path / "base.results.xml.bz2", datetime.datetime(2026, 1, 1), {TASK: times(10, 5)})
    new = write_result(tmp_path / "new.results.xml.bz2", datetime.datetime(2026, 1, 2), {TASK: [math.nan] * 10})
    code, out = timekit("compare", base, new, "--column", "cputime")
    assert code == NOTHING_COMPARED == 3
    assert "nothing compared" in out and "10 NaN" in out, out


@pytest.mark.unit
def test_paired_compare_of_tasks_all_under_min_cputime_is_nothing_compared_not_a_pass(tmp_path):
    """Two competition files, the new one 10 % slower: with every finished task under --min-cputime the
    command says what to lower and exits 3 (a CI gate does not pass on it); lowered, it finds the slowdown."""
    base, new = tmp_path / "base.xml.bz2", tmp_path / "new.xml.bz2"
    make_competition_result.write(str(base), 2000, 7, 0, 0.0, 0.0, "2025-01-10 12:00:00")
    make_competition_result.write(str(new), 2000, 7, 1, 0.10, 0.0, "2025-01-17 12:00:00")
    code, out = timekit("compare", base, new, "--min-cputime", "1000")
    assert code == NOTHING_COMPARED, out
    # 668 of the 2000 tasks time out or fail: they are not counted among those under the limit
    assert ("nothing compared: 1332 of 2000 tasks under --min-cputime 1000 s (lower it to compare them), "
            "the other 668: 668 not finished normally on a side") in out
    assert "no regression" not in out
    code, out = timekit("compare", base, new)
    assert code == 1 and "nothing compared" not in out
