"""Task sets across invocations: compare, ab's looks and plan on M = 3 invocations a side of a
one-run-per-task definition (competition-style files of benchmarks/make_competition_result.py,
300 tasks in 2 directories, 3 % noise per task and run)."""

import bz2
import datetime
import json
import subprocess
import sys

import numpy as np
import pytest
from lxml import etree

from analysis.sweep.load import load_tables
from analysis.tools.compare import repeated, task_sets
from tests.helpers import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import make_competition_result  # noqa: E402

TASKS, SETS, M = 300, 2, 3


def with_start_times(path, start):
    """BenchExec's per-run `starttime` column (0.5 s apart) and the result's start and end, which
    the generator leaves out and plan's costs read."""
    root = etree.fromstring(bz2.decompress(path.read_bytes()))
    runs = root.findall("run")
    root.set("starttime", start.isoformat())
    root.set("endtime", (start + datetime.timedelta(seconds=0.5 * len(runs) + 2)).isoformat())
    for i, run in enumerate(runs):
        etree.SubElement(run, "column", hidden="true", title="starttime",
                         value=(start + datetime.timedelta(seconds=1 + 0.5 * i)).isoformat())
    path.write_bytes(bz2.compress(etree.tostring(root, xml_declaration=True, encoding="utf-8")))


def side(directory, seed_base, slowdown, minute):
    """M result files, one invocation each (a day apart), of the same 300 tasks."""
    directory.mkdir(parents=True, exist_ok=True)
    for k in range(1, M + 1):
        start = datetime.datetime(2025, 1, 10 + k, 12, minute, tzinfo=datetime.timezone.utc)
        path = directory / f"svcomp.{k}.results.xml.bz2"
        make_competition_result.write(str(path), TASKS, 0, seed_base + k, slowdown, 0.0,
                                      start.strftime("%Y-%m-%d %H:%M:%S"), directories=SETS)
        with_start_times(path, start)
    return directory


@pytest.fixture(scope="module")
def ab_dirs(tmp_path_factory):
    """An A/B-shaped directory with a 10 % slowdown, and an A/A one."""
    root = tmp_path_factory.mktemp("task-sets")
    out = {}
    for name, slowdown in (("slower", 0.10), ("aa", 0.0)):
        side(root / name / "base", 100, 0.0, 0)
        side(root / name / "new", 200, slowdown, 30)
        (root / name / "ab.json").write_text(json.dumps({"steps": []}))
        out[name] = root / name
    return out


def compare(directory, per_task=False):
    wanted = {"status", "category", "cputime", "walltime"}
    base, new = (load_tables(directory / s, wanted)[:2] for s in ("base", "new"))
    return repeated.compare(base, new, repeated.DEFAULT_COLUMNS, per_task=per_task)


def finished_in_all(directory, which):
    """Tasks with status not error/timeout in every file of one side, counted straight from the XML."""
    sets = []
    for path in sorted((directory / which).glob("*.xml.bz2")):
        root = etree.fromstring(bz2.decompress(path.read_bytes()))
        sets.append({r.get("name") for r in root.findall("run")
                     if r.find("column[@title='category']").get("value") != "error"})
    return set.intersection(*sets)


@pytest.mark.unit
def test_a_ten_percent_slowdown_is_one_slower_row_per_column_and_task_set(ab_dirs):
    result = compare(ab_dirs["slower"])
    rows = result.rows
    assert [(r.input, r.column) for r in rows] == [("set00", "cputime"), ("set01", "cputime"),
                                                  ("set00", "walltime"), ("set01", "walltime")]
    assert {r.unit for r in rows} == {task_sets.UNIT}
    assert all(r.reruns_base == r.reruns_new == M for r in rows)
    for r in rows[:2]:
        assert r.verdict == "slower"
        assert r.ci_low < 1.10 < r.ci_high or abs(r.ratio - 1.10) < 0.02
        assert len(r.pair_ratios) == M and all(1.05 < x < 1.15 for x in r.pair_ratios)
        # the geometric mean over pairs of the pair ratios is the row's change
        assert np.exp(np.mean(np.log(r.pair_ratios))) == pytest.approx(r.ratio, rel=1e-9)
    assert repeated.exit_code(result) == 1


@pytest.mark.unit
def test_an_a_a_comparison_is_not_a_change(ab_dirs):
    result = compare(ab_dirs["aa"])
    assert len(result.rows) == 2 * SETS
    assert {r.verdict for r in result.rows} == {"~"}
    assert all(r.ci_low < 1 < r.ci_high for r in result.rows if r.column == "cputime")
    assert repeated.exit_code(result) == 0


@pytest.mark.unit
def test_tasks_not_finished_in_every_invocation_are_left_out_and_counted(ab_dirs):
    directory = ab_dirs["slower"]
    kept = finished_in_all(directory, "base") & finished_in_all(directory, "new")
    rows = [r for r in compare(directory).rows if r.column == "cputime"]
    assert sum(r.tasks for r in rows) == len(kept)
    for r in rows:
        assert r.n_base == r.n_new == M * r.tasks
        # every run of the set not used is counted once, by reason
        assert r.excluded_base == M * TASKS // SETS - r.n_base
        assert sum(r.left_out_base.values()) == r.excluded_base
        assert r.left_out_base.get("not finished normally", 0) > 0


@pytest.mark.unit
def test_per_task_gives_a_row_per_task(ab_dirs):
    rows = compare(ab_dirs["slower"], per_task=True).rows
    cputime = [r for r in rows if r.column == "cputime"]
    assert len(cputime) > 100 and {r.unit for r in cputime} == {"rerun"}
    assert len({r.input for r in cputime}) == len(cputime)


@pytest.mark.unit
def test_the_cli_prints_task_set_rows_with_compares_row_shape_and_per_task_on_request(ab_dirs):
    def timekit(*argv):
        return subprocess.run([sys.executable, "-m", "analysis.cli", *argv], capture_output=True, text=True, cwd=REPO)

    d = ab_dirs["slower"]
    done = timekit("compare", str(d / "base"), str(d / "new"), "--format", "json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert len(data["rows"]) == 2 * SETS and data["regression"]
    assert {"rundefinition", "input", "column", "ratio", "ci_low", "ci_high", "welch_p", "p_holm", "verdict",
            "reruns_base", "unit", "tasks", "pair_ratios"} <= set(data["rows"][0])
    assert "Welch t on the per-invocation log geometric means" in data["method"]
    per_task = json.loads(timekit("compare", str(d / "base"), str(d / "new"), "--format", "json", "--per-task").stdout)
    assert len(per_task["rows"]) > 100


@pytest.mark.unit
def test_ab_looks_are_task_set_rows_and_decide_the_slowdown(ab_dirs):
    from analysis.tools.plan import ab_looks

    # the last look (M = --max-reruns = 3) spends all of alpha
    looks = ab_looks.look(ab_dirs["slower"], repeated.DEFAULT_COLUMNS, 0.05, 0.02, M)
    assert [r.row for r in looks] == [f"SV-COMP25_unreach-call / set0{i} ({c})" for c in ("cputime", "walltime")
                                      for i in range(SETS)]
    cputime = [r for r in looks if "cputime" in r.row]
    assert all(r.decision.decided and r.decision.verdict == "slower" for r in cputime)
    rows = compare(ab_dirs["slower"]).rows
    ab_looks.apply(rows, looks)
    assert [r.verdict for r in rows[:2]] == ["slower", "slower"]
    assert all(r.runs == 2 * M * r_tasks for r, r_tasks in zip(cputime, [x.tasks for x in rows[:2]]))
    aa = ab_looks.look(ab_dirs["aa"], repeated.DEFAULT_COLUMNS, 0.05, 0.02, M)
    assert not any(r.decision.verdict in ("slower", "faster") for r in aa)
    # up to 10 reruns, the first look at 3 spends no alpha yet: ab --until-decided adds a pair
    early = ab_looks.look(ab_dirs["slower"], repeated.DEFAULT_COLUMNS, 0.05, 0.02, 10)
    assert not any(r.decision.decided for r in early)


@pytest.mark.unit
def test_plan_plans_on_task_sets_and_says_so(ab_dirs):
    from analysis.products.plan import cli as plan_cli

    result = plan_cli.plan([ab_dirs["aa"]], repeated.DEFAULT_COLUMNS, 0.05, 0.9, 0.05, 0.02)
    assert result["unit"] == task_sets.UNIT and "task sets" in result["unit_text"]
    assert [e["row"] for e in result["rows"]][:SETS] == [f"SV-COMP25_unreach-call / set0{i} (cputime)" for i in range(SETS)]
    cputime = result["rows"][0]
    assert cputime["pilot_invocations"] == 2 * M and cputime["cv_within"] == 0
    # about 3 % noise per task over ~100 tasks: a 5 % slowdown needs few invocations
    assert 2 <= cputime["reruns"] <= 5 and cputime["runs"] == 1
    assert "task sets" in plan_cli.render(result)


SETS_DEFINITION = """<?xml version="1.0"?>
<benchmark tool="tool_info.divisors" timelimit="20 s" memlimit="100 MB">
  <rundefinition name="runexec"/>
  <tasks name="all"><include>{side}/tasks/*/*.yml</include></tasks>
</benchmark>
"""


@pytest.mark.timing
def test_ab_under_benchexec_gives_one_row_per_task_set(programs, scratch):
    """Four tasks in two directories, one run each per invocation, 3 invocations a side; new counts
    the divisors of twice the numbers (twice the trial divisions)."""
    numbers = {"small": ("30000001", "32000003"), "large": ("40000003", "42000001")}   # 0.2-0.3 s each
    for side, factor in (("base", 1), ("new", 2)):
        for task_set, values in numbers.items():
            directory = scratch / side / "tasks" / task_set
            directory.mkdir(parents=True)
            for i, value in enumerate(values):   # per-task rows name a task by its file's stem: unique ones
                (directory / f"{task_set}{i}.txt").write_text(f"{int(value) * factor}\n")
                (directory / f"{task_set}{i}.yml").write_text(f"format_version: '2.0'\ninput_files: '{task_set}{i}.txt'\n")
        (scratch / f"{side}.xml").write_text(SETS_DEFINITION.format(side=side))
    out = scratch / "ab"
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "ab", scratch / "base.xml", scratch / "new.xml",
                           "--reruns", "4", "--design", "separate", "--output", out, "--format", "json"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    data = json.loads(done.stdout)
    rows = data["comparison"]
    assert [(r["input"], r["column"]) for r in rows] == [("large", "cputime"), ("small", "cputime"),
                                                        ("large", "walltime"), ("small", "walltime")], done.stderr
    # 4 invocations a side: with 3, one slow invocation of the small set left a doubling at Holm p 0.051
    # on the loaded VM (the separate design's drift, which --design blocks cancels)
    # an invocation that met outside work is set aside (a loaded CI host): the rows rest on the rest
    aside = {side: len({p.name.split(".")[1] for p in (out / side / "outside-load").glob("*/*.results.*.xml.bz2")})
             for side in ("base", "new")}
    assert all(r["unit"] == task_sets.UNIT and r["tasks"] == 2 and r["reruns_base"] == 4 - aside["base"]
               and r["reruns_new"] == 4 - aside["new"] for r in rows), (aside, rows)
    cputime = [r for r in rows if r["column"] == "cputime"]
    assert all(1.6 < r["ratio"] < 2.4 and r["verdict"] == "slower" for r in cputime), [
        (r["ratio"], r["ci_low"], r["ci_high"], r["p_holm"], r["verdict"], r["mean_base"]) for r in rows]
    assert done.returncode == 1 and data["verdict"]["verdict"] == "slower"
    # the last line names each slower row by its run definition and task set
    assert all(f"/ {task_set}: cputime +" in data["verdict"]["line"] for task_set in ("large", "small")), data["verdict"]
    per_task = subprocess.run([sys.executable, "-m", "analysis.cli", "compare", out / "base", out / "new", "--per-task",
                               "--format", "json", "--column", "cputime"], cwd=REPO, capture_output=True, text=True)
    assert len(json.loads(per_task.stdout)["rows"]) == 4
