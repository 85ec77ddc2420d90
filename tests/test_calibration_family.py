"""calibrate applies the rule of the command it calibrates: compare's columns and Holm family.

On the 24 + 24 real invocations in docs/calibration-between/ (a +5.1 % slowdown in cputime), the
power calibrate reports for the default command must be what compare itself does on real splits.
"""

import io
import json

import numpy as np
import pytest

from analysis.core import stats
from analysis.sweep.load import load_tables
from analysis.tools.calibrate import between_report, family
from analysis.tools.calibrate import within as calibration
from analysis.tools.compare import repeated as compare_mod
from tests.helpers import REPO

RECORDED = REPO / "docs" / "calibration-between"


def calibrated(columns):
    out = io.StringIO()
    between_report.command(RECORDED / "base", RECORDED / "new", out, "json", columns=columns, simulations=500)
    return json.loads(out.getvalue())


def power_at(result, label, m):
    row = next(r for r in result["rows"] if r["label"] == label)
    return {p["m"]: p["new"]["slower"]["rate"] for p in row["power"]}[m]


def real_splits(columns, splits=30, m=5, seed=0):
    """Share of seeded random m-vs-m splits of the real invocations in which compare itself says
    'slower' on cputime."""
    wanted = {"status", "category", *columns}
    base = sorted(load_tables(RECORDED / "base", wanted)[0], key=lambda t: t.date)
    new = sorted(load_tables(RECORDED / "new", wanted)[0], key=lambda t: t.date)
    rng = np.random.default_rng(seed)
    slower = 0
    for _ in range(splits):
        a, b = rng.permutation(len(base))[:m], rng.permutation(len(new))[:m]
        rows = compare_mod.compare(([base[i] for i in a], {}), ([new[i] for i in b], {}), columns).rows
        slower += next(r for r in rows if r.column == "cputime").verdict == "slower"
    return slower / splits


@pytest.mark.unit
def test_calibrate_reports_the_power_of_the_default_compare_on_real_invocations():
    default = calibrated(family.DEFAULT_COLUMNS)
    assert default["family"]["size"] == 2 and default["family"]["columns"] == ["cputime", "walltime"]
    assert "Holm family: 2 rows" in default["family"]["text"]
    calibrated_power = power_at(default, "runexec / x (cputime)", 5)
    measured = real_splits(compare_mod.DEFAULT_COLUMNS)
    assert abs(calibrated_power - measured) <= 0.10, (calibrated_power, measured)
    # the family of one has more power, and calibrate says so for it too
    alone = calibrated(("cputime",))
    assert alone["family"]["size"] == 1
    assert power_at(alone, "runexec / x (cputime)", 5) > calibrated_power + 0.1
    assert abs(power_at(alone, "runexec / x (cputime)", 5) - real_splits(("cputime",))) <= 0.10
    # A/A over the family stays at alpha or below
    assert all(r["new"]["rate"] <= 0.05 + calibration.TOLERANCE for r in default["aa_any_row"])


@pytest.mark.unit
def test_holm_reject_is_stats_holm_row_by_row():
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 0.2, (500, 4)) ** 2
    p[rng.uniform(size=p.shape) < 0.1] = np.nan
    expected = np.array([stats.holm(row) < 0.05 for row in p])
    assert np.array_equal(family.holm_reject(p, 0.05), expected)


@pytest.mark.unit
def test_within_one_invocation_a_row_is_tested_at_alpha_over_the_family():
    one = calibration.calibrate(0.015, splits=400, draws=400, simulations=400, sizes=(10,), family_size=1)
    two = calibration.calibrate(0.015, splits=400, draws=400, simulations=400, sizes=(10,), family_size=2)
    assert two["row_alpha"] == 0.025 and one["row_alpha"] == 0.05
    assert two["aa"][1]["significant"]["rate"] < one["aa"][1]["significant"]["rate"]
    power = {(r["effect"], r["n"]): r["analytic_significant"] for r in two["power"]}
    assert power[(0.01, 10)] == pytest.approx(calibration.analytic_power(0.015, 10, 0.01, 0.025))
