"""Say what did not happen: per experiment, how many runs finished and why the others did not,
printed after the sweeps and heading the report's sections; on the recorded Intel demo (every
STREAM run OUT OF MEMORY, the latency curve capped below its 480 MiB LLC) and on real sweeps."""

import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import pipeline
from analysis.core import results
from analysis.core.report import render_html
from analysis.core.results import outcome
from analysis.experiments import EXPERIMENTS
from analysis.sweep import runner
from analysis.sweep.model import Preset
from tests.helpers import figures_not_drawn

REPO = Path(__file__).resolve().parent.parent
INTEL = REPO / "tests" / "data" / "machines" / "intel-vm-2026-11-25"


def test_benchexec_statuses_become_plain_reasons():
    assert outcome.reason("OUT OF MEMORY (ERROR (signal 9))") == outcome.reason("OUT OF MEMORY") == "out of memory"
    assert outcome.reason("TIMEOUT (ERROR (signal 9))") == "timeout"
    assert outcome.reason("ERROR (exit code 2)") == "error (exit code 2)"
    assert outcome.reason("") == "no status (did not run)"


def test_the_intel_demo_says_no_stream_run_finished_and_why():
    tables = results.load_results(INTEL / "memory-bandwidth")
    assert outcome.runs_line(tables) == ("0 of 3 stream runs finished: out of memory", 3)
    assert outcome.runs_line(tables, {"cpu1-mem1": "'numactl' is not installed"})[0].endswith(
        "; not run: cpu1-mem1 ('numactl' is not installed)")


def test_the_intel_demo_report_heads_each_section_with_its_runs_and_says_where_memory_was_not_reached():
    notes = []
    with figures_not_drawn():   # the assertions read the runs lines, warnings and the page's text
        report = pipeline.build_report(sorted(p for p in INTEL.iterdir() if p.is_dir()), notes=notes)
    sections = {s.id: s for s in report.sections}
    assert "memory-bandwidth: 0 of 3 stream runs finished: out of memory (1 result file(s))" in notes
    assert not [n for n in notes if n.startswith("analysed")]  # no section passes for analysed when nothing ran
    assert all(s.runs for s in report.sections) and len(notes) == len(report.sections) == 6
    assert [s.id for s in report.sections if s.runs_missing] == ["memory-bandwidth"]
    assert sections["os-microbench"].runs == "11 of 11 osbench runs finished"
    latency = [w for w in sections["os-microbench"].warnings if w.startswith("mem-latency: memory level not reached")]
    assert latency == ["mem-latency: memory level not reached: LLC reported 480 MiB, budget not recorded "
                       "(largest working set 256 MiB = 0.53 × LLC; memory counts from 2 ×)"]
    page = render_html(report)
    assert '<p class="runs short">Runs: 0 of 3 stream runs finished: out of memory</p>' in page
    assert '<span class="count warn">3 runs not finished</span>' in page
    assert '<p class="runs">Runs: 11 of 11 osbench runs finished</p>' in page


def test_a_real_sweep_whose_runs_fail_prints_and_heads_its_section_with_why(programs, scratch):
    """memory-bandwidth with a parameter file STREAM refuses: every run ends with exit code 2."""
    (scratch / "stream.txt").write_text("trials=1\n")
    broken = dataclasses.replace(EXPERIMENTS["memory-bandwidth"], inputs=(scratch / "stream.txt",))
    sweep = runner.run_sweep(broken, "quick", Preset(reps=2, loads=(0,), reruns=1), scratch / "sweep", out=io.StringIO())
    assert [s.status for s in sweep.steps] == ["done"]  # benchexec itself succeeded
    printed = io.StringIO()
    paths = pipeline.tables_and_report([scratch / "sweep"], scratch / "report", out=printed)
    assert "memory-bandwidth: 0 of 2 STREAM runs finished: error (exit code 2) (1 result file(s))" in printed.getvalue()
    data = json.loads(paths["json"].read_text())
    assert data["sections"][0]["runs"] == "0 of 2 STREAM runs finished: error (exit code 2)"
    assert data["sections"][0]["runs_missing"] == 2


@pytest.mark.benchexec
def test_timekit_run_prints_the_runs_of_a_real_sweep_and_records_its_sizes(programs, scratch):
    out = scratch / "sweep"
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "run", "memory-bandwidth", "--reps", "1", "--reruns", "2",
                           "--output", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    sweep = json.loads((out / "sweep.json").read_text())
    runs = sweep["reps"] * sweep["reruns"] * len(sweep["rundefinitions"])  # 1 x 2 a node pair
    assert f"memory-bandwidth: {runs} of {runs} STREAM runs finished (" in done.stdout
    sizes = sweep["sizes"]
    assert sizes["tool"] == "tool_info.stream" and sizes["llc_bytes"] == int(max(sweep["machine"]["caches"].items(),
                                                                                  key=lambda kv: int(kv[0]))[1])
    assert sizes["memlimit_bytes"] >= sizes["memlimit_committed_bytes"] and sizes["budget_bytes"] > 0
    [table] = results.load_results(sorted(out.glob("*.results.*.xml.bz2"))[:1])
    if sizes["memory_level_reached"]:  # 4 x the LLC fitted when the sweep planned, and when it ran
        assert set(table.columns["array-bytes"]) == {sizes["planned_bytes"]} == {4 * sizes["llc_bytes"]}
    report = json.loads((out / "report" / "report.json").read_text())
    assert report["sections"][0]["runs"] == f"{runs} of {runs} STREAM runs finished"
