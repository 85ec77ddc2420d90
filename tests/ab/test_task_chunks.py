"""`timekit ab` of two definitions that cannot share an invocation (two tool-info modules): base
and new alternate over chunks of the task set, and each rerun's chunks merge into one result file
a side, which compare reads as any rerun."""

import bz2
import json
import subprocess
import sys

import pytest
from lxml import etree

from analysis.core.results import load_results
from analysis.core.tasks import write_repetitions
from analysis.sweep import lint
from analysis.ab import task_chunks
from tests.helpers import REPO

DEFINITION = """<?xml version="1.0"?>
<!DOCTYPE benchmark PUBLIC "+//IDN sosy-lab.org//DTD BenchExec benchmark 3.0//EN" "https://www.sosy-lab.org/benchexec/benchmark-3.0.dtd">
<benchmark tool="{tool}" timelimit="20 s" memlimit="100 MB">
  <rundefinition name="runexec"/>
  <tasks name="x"><include>{side}/tasks/x.*.yml</include><exclude>{side}/tasks/x.r002.yml</exclude></tasks>
  <tasks name="y"><include>{side}/tasks/y.*.yml</include></tasks>
</benchmark>
"""


def definitions(scratch, runs=3):
    """base.xml (tool_info.divisors) and new.xml (tool_info.timed_divisors): task sets x (runs
    repetitions, one excluded) and y (runs repetitions) of one small input each."""
    for side, tool in (("base", "tool_info.divisors"), ("new", "tool_info.timed_divisors")):
        (scratch / side / "in").mkdir(parents=True)
        for name in "xy":
            (scratch / side / "in" / f"{name}.txt").write_text("4343434\n")
        write_repetitions([scratch / side / "in" / "x.txt", scratch / side / "in" / "y.txt"], runs, scratch / side / "tasks")
        (scratch / f"{side}.xml").write_text(DEFINITION.format(tool=tool, side=side))
    return scratch / "base.xml", scratch / "new.xml"


@pytest.mark.unit
def test_a_task_set_is_cut_into_chunks_of_consecutive_tasks_that_benchexec_accepts(scratch):
    base, _ = definitions(scratch)
    found = task_chunks.task_files(base)
    assert [[p.rsplit("/", 1)[1] for p in files] for _, files in found] == [["x.r001.yml", "x.r003.yml"],
                                                                           ["y.r001.yml", "y.r002.yml", "y.r003.yml"]]
    assert task_chunks.count(base) == 4 and task_chunks.count(base, wanted=9) == 5
    parts = task_chunks.slices(found, 2)
    assert [sum(len(v) for v in part.values()) for part in parts] == [2, 3] and set(parts[0]) == {0}
    paths = task_chunks.write(base, 2, scratch / "chunks")
    assert [p.name for p in paths] == ["base.chunk1.xml", "base.chunk2.xml"]
    assert lint.check(paths) == []
    first = etree.parse(str(paths[0])).getroot()
    assert [t.get("name") for t in first.iter("tasks")] == ["x"]        # y has no task in chunk 1
    assert [i.text.rsplit("/", 1)[1] for i in first.iter("include")] == ["x.r001.yml", "x.r003.yml"]
    assert first.find("tasks/exclude") is None
    # a pattern with a variable is BenchExec's to expand: not chunked
    (scratch / "var.xml").write_text(DEFINITION.format(tool="t", side="${benchmark_path}/base"))
    assert task_chunks.task_files(scratch / "var.xml") is None and task_chunks.count(scratch / "var.xml") == 1
    # task sets of a run definition's own: a chunk could leave it without a task, so not chunked
    own = '<rundefinition name="runexec"><tasks name="z"><include>base/tasks/y.*.yml</include></tasks></rundefinition>'
    (scratch / "own.xml").write_text(base.read_text().replace('<rundefinition name="runexec"/>', own))
    assert task_chunks.count(scratch / "own.xml") == 1


@pytest.mark.unit
def test_chunk_result_files_merge_into_the_file_one_invocation_writes(scratch):
    def result(name, date, tasks, endtime):
        root = etree.Element("result", benchmarkname="base", date=date, starttime=date, endtime=endtime)
        etree.SubElement(root, "columns")
        for task in tasks:
            etree.SubElement(root, "run", name=task)
        path = scratch / "chunks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bz2.compress(etree.tostring(root)))
        return path

    files = [(2, result("base.chunk2.base-rerun1-chunk2.2026-11-27_06-01-14.results.runexec.x.xml.bz2", "B", ["c"], "t2")),
             (1, result("base.chunk1.base-rerun1-chunk1.2026-11-27_06-01-12.results.runexec.x.xml.bz2", "A", ["a", "b"], "t1"))]
    (scratch / "base").mkdir()
    written = task_chunks.merge(files, "base", "base-rerun1", scratch / "base")
    assert [p.name for p in written] == ["base.base-rerun1.2026-11-27_06-01-12.results.runexec.x.xml.bz2"]
    merged = etree.fromstring(bz2.decompress(written[0].read_bytes()))
    assert [r.get("name") for r in merged.iter("run")] == ["a", "b", "c"]      # chunk order (the steps'), not file order
    assert (merged.get("date"), merged.get("endtime")) == ("A", "t2")
    assert not list((scratch / "base").glob("*.tmp"))


@pytest.mark.benchexec
def test_two_tools_alternate_chunk_by_chunk_and_compare_reads_each_rerun_whole(programs, scratch):
    base, new = definitions(scratch, runs=2)       # 1 + 2 tasks a side: 3 chunks
    out = scratch / "ab"
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "ab", str(base), str(new), "--reruns", "2", "--output",
                           str(out), "--format", "json"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1, 3) and "timekit: error" not in done.stderr, done.stderr   # 3: still open
    assert "design: separate in 3 chunks of the task set" in done.stderr
    manifest = json.loads((out / "ab.json").read_text())
    assert manifest["chunks"] == 3
    steps = [(s["rerun"], s["chunk"], s["condition"]) for s in manifest["steps"]]
    assert [(r, c) for r, c, _ in steps] == [(r, c) for r in (1, 2) for c in (1, 2, 3) for _ in "ab"]
    assert all({steps[k][2], steps[k + 1][2]} == {"base", "new"} for k in range(0, len(steps), 2))   # both sides a chunk
    for side in ("base", "new"):
        tables = load_results(out / side)
        assert len(tables) == 4                                             # per rerun: task sets x and y
        assert sorted(len(t.tasks) for t in tables) == [1, 1, 2, 2]        # x: 1 task (one excluded), y: 2, per rerun
    data = json.loads(done.stdout)
    assert {(r["input"], r["column"], r["n_base"], r["n_new"], r["reruns_base"]) for r in data["comparison"]} == {
        ("x", "cputime", 2, 2, 2), ("x", "walltime", 2, 2, 2), ("y", "cputime", 4, 4, 2), ("y", "walltime", 4, 4, 2)}
    assert "in 3 chunks of the task set" in data["ab"][0]["summary"]
