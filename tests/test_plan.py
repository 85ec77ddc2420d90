"""`timekit plan`: the design a pilot asks for, its costs from BenchExec's timestamps, and the
planned power checked on real invocations."""

import bz2
import copy
import datetime
import json

import numpy as np
import pytest
from lxml import etree

from analysis.tools.calibrate import between, family
from analysis.products.plan import cli as plan_cli
from analysis.tools.plan import design, pilot
from tests.helpers import REPO
from tests.test_compare import timekit
from tests.test_history import REAL

RECORDED = REPO / "docs" / "calibration-between"
START = datetime.datetime(2026, 3, 1, tzinfo=datetime.timezone.utc)


def exact_invocations(rng, k, n, cv_between, cv_within, level=0.1):
    """k invocations of n runs whose one-way ANOVA estimates are exactly these CVs: invocation
    means with sample variance CV_between^2 + CV_within^2 / n, runs with sample variance CV_within^2."""
    z = rng.standard_normal(k)
    means = 1 + (z - z.mean()) / z.std(ddof=1) * np.sqrt(cv_between ** 2 + cv_within ** 2 / n)
    out = []
    for mean in means:
        e = rng.standard_normal(n)
        e -= e.mean()
        out.append(level * (mean + e / e.std(ddof=1) * cv_within))
    return out


def write_invocation(path, start, values, setup=1.0, per_run=0.5, teardown=0.25):
    """A copy of the real calculatepi result with input 10 run len(values) times: cputime = value,
    walltime = 1.1 x value, each run `per_run` s after the previous one, the first `setup` s after
    the invocation's start, the end `teardown` s after the last run's slot."""
    root = etree.fromstring(bz2.decompress(REAL.read_bytes()))
    template = next(r for r in root.findall("run") if r.get("name") == "10")
    for run in root.findall("run"):
        root.remove(run)
    root.set("date", start.strftime("%Y-%m-%d %H:%M:%S UTC"))
    root.set("starttime", start.isoformat())
    root.set("endtime", (start + datetime.timedelta(seconds=setup + per_run * len(values) + teardown)).isoformat())
    for k, value in enumerate(values):
        run = copy.deepcopy(template)
        run.set("name", f"10.r{k:03d}.yml")
        run.find("column[@title='cputime']").set("value", f"{float(value)!r}s")
        run.find("column[@title='walltime']").set("value", f"{1.1 * float(value)!r}s")
        run.find("column[@title='starttime']").set("value", (start + datetime.timedelta(seconds=setup + per_run * k)).isoformat())
        root.append(run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bz2.compress(etree.tostring(root, xml_declaration=True, encoding="utf-8")))


def exact_pilot(directory, k=6, n=30, cv_between=0.02, cv_within=0.01, seed=0):
    for j, values in enumerate(exact_invocations(np.random.default_rng(seed), k, n, cv_between, cv_within)):
        write_invocation(directory / f"rerun{j}.results.xml.bz2", START + datetime.timedelta(minutes=j), values)
    return directory


@pytest.mark.unit
def test_a_pilot_at_two_and_one_percent_asks_for_about_five_invocations_for_five_percent(tmp_path):
    directory = exact_pilot(tmp_path / "pilot")
    rows, costs = pilot.load([directory], ("cputime",))
    [row] = rows
    assert row.cv_between == pytest.approx(0.02, rel=1e-6) and row.cv_within == pytest.approx(0.01, rel=1e-6)
    assert row.runs == 30 and row.invocations == 6
    # BenchExec's timestamps: 1 s before the first run + 0.25 s after the last slot; 0.5 s a run
    assert costs.run_seconds() == pytest.approx(0.5, rel=1e-6) and costs.invocation == pytest.approx(1.25, rel=1e-3)
    code, text = timekit("plan", directory, "--effect", "5%", "--power", "0.9", "--column", "cputime", "--format", "json")
    assert code == 0
    result = json.loads(text)
    [entry] = result["rows"]
    assert {"row", "reruns", "runs", "power", "minutes"} <= set(entry)
    assert entry["at_pilot_runs"]["runs"] == 30 and entry["at_pilot_runs"]["reruns"] == 5
    assert entry["at_pilot_runs"]["power"] >= 0.89
    # Kalibera & Jones: an invocation costs 2.5 runs and holds a quarter of the run variance: n* = 0.79, so 2 runs
    assert entry["kj_runs"] == pytest.approx(np.sqrt(1.25 * 0.01 ** 2 / (0.5 * 0.02 ** 2)), rel=1e-3)
    assert entry["runs"] == 2 and 5 <= entry["reruns"] <= 6
    assert entry["minutes"] == pytest.approx(2 * entry["reruns"] * (1.25 + 2 * 0.5) / 60, rel=1e-3)
    assert entry["minutes"] < entry["at_pilot_runs"]["minutes"]


@pytest.mark.unit
def test_the_default_family_is_planned_at_alpha_over_its_rows(tmp_path):
    directory = exact_pilot(tmp_path / "pilot")
    default = plan_cli.plan([directory], family.DEFAULT_COLUMNS, 0.05, 0.9, 0.05, 0.02)
    alone = plan_cli.plan([directory], ("cputime",), 0.05, 0.9, 0.05, 0.02)
    assert default["family"]["size"] == 2 and default["family"]["row_alpha"] == 0.025
    cputime = default["rows"][0]
    assert cputime["row"].endswith("(cputime)")
    assert cputime["at_pilot_runs"]["reruns"] > alone["rows"][0]["at_pilot_runs"]["reruns"]
    assert cputime["family_of_one"]["reruns"] <= cputime["reruns"]
    code, text = timekit("plan", directory, "--effect", "5%")
    assert code == 0 and "Holm family: 2 rows" in text and "To decide every row" in text


@pytest.mark.unit
def test_a_budget_gives_the_smallest_detectable_slowdown(tmp_path):
    directory = exact_pilot(tmp_path / "pilot")
    small = plan_cli.plan([directory], ("cputime",), 0.05, 0.9, 0.05, 0.02, budget=60)
    large = plan_cli.plan([directory], ("cputime",), 0.05, 0.9, 0.05, 0.02, budget=600)
    assert small["rows"][0]["detectable_effect"] > large["rows"][0]["detectable_effect"] > 0.02
    assert large["rows"][0]["minutes"] <= 10 and large["rows"][0]["power"] >= 0.89
    tiny = plan_cli.plan([directory], ("cputime",), 0.05, 0.9, 0.05, 0.02, budget=5)
    assert tiny["rows"][0]["reruns"] is None and "do not buy" in tiny["rows"][0]["note"]


@pytest.mark.unit
def test_the_planned_power_holds_on_real_invocations():
    """Plan from the 24 recorded base invocations alone (A/A pilot), at their n = 10: the share of
    random M-vs-M splits of the real base and +5.1 % invocations that compare's rule calls 'slower'
    at the planned M is within 10 points of the planned power."""
    for columns in (("cputime",), family.DEFAULT_COLUMNS):
        result = plan_cli.plan([RECORDED / "base"], columns, 0.0512, 0.9, 0.05, 0.02)
        planned = result["rows"][0]["at_pilot_runs"]
        assert planned["runs"] == 10
        groups = list(family.load_groups([RECORDED / "base"], columns).values())
        slower = list(family.load_groups([RECORDED / "new"], columns).values())
        rows, slow = between.Rows(groups), between.Rows(slower)
        measured = between.power(rows, slow, planned["reruns"], 2000, 0.05, 0.02, np.random.default_rng(1))
        real = measured["rows"][0]["new"]["slower"]["rate"]
        assert abs(real - planned["power"]) <= 0.10, (columns, planned, real)


@pytest.mark.unit
def test_bad_pilots_and_arguments_are_one_line(tmp_path):
    write_invocation(tmp_path / "one" / "a.results.xml.bz2", START, [0.1] * 5)
    code, _ = timekit("plan", tmp_path / "one")
    assert code == 2
    with pytest.raises(pilot.PilotError, match="2\\+ benchexec invocations"):
        pilot.load([tmp_path / "one"], ("cputime",))
    with pytest.raises(pilot.PilotError, match="no such file"):
        pilot.load([tmp_path / "missing"], ("cputime",))
    assert plan_cli.duration("1h30m") == 5400 and plan_cli.duration("90s") == 90 and plan_cli.duration("30") == 1800
    assert plan_cli.effect_size("2%") == pytest.approx(0.02) and plan_cli.effect_size("0.02") == 0.02
    for bad in ("soon", "-5m", "5 parsecs"):
        with pytest.raises(Exception, match="duration"):
            plan_cli.duration(bad)
    assert design.optimal_runs(0.0, 0.01, 1.0, 0.5, cap=300) == 300
