"""Reliability of the analysis side: a sweep made without BenchExec's container is flagged in the
report, and an analysis that crashes or is killed at any moment leaves every result file as it was."""

import dataclasses
import hashlib
import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis import experiments
from analysis import pipeline
from analysis.sweep import runner

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "cores"


@pytest.fixture
def sweep_dir(scratch):
    """A sweep directory made of recorded core-heterogeneity results, as the runner writes it."""
    out = scratch / "sweep"
    out.mkdir()
    steps = []
    for path in sorted(RECORDED.glob("*.results.pinned.xml.bz2")):
        shutil.copy(path, out)
        name = path.name.split(".")[1]  # coreK-roundR
        steps.append(runner.Step(load=0, rerun=int(name.split("round")[1]), name=name, condition=name.split("-")[0],
                                 status="done", result_files=[path.name]))
    sweep = runner.Sweep(experiment="core-heterogeneity", preset="quick", reps=12, loads=[], reruns=3, tasksets=[],
                         container=False, created="2026-11-23T04:31:00+00:00", steps=steps, rundefinitions=["pinned"])
    sweep.save(out)
    return out


def digests(directory):
    return {p.relative_to(directory): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in directory.rglob("*") if p.is_file() and "report" not in p.relative_to(directory).parts[:1]
            and "tables" not in p.relative_to(directory).parts[:1]}


@pytest.mark.benchexec
def test_no_container_sweep_is_flagged_in_the_report(sweep_dir):
    report = pipeline.build_report([sweep_dir])
    [section] = report.sections
    assert any("--no-container" in w for w in section.warnings)
    data = json.loads((sweep_dir / "sweep.json").read_text())
    data["container"] = True
    (sweep_dir / "sweep.json").write_text(json.dumps(data))
    [section] = pipeline.build_report([sweep_dir]).sections
    assert not any("--no-container" in w for w in section.warnings)


@pytest.mark.benchexec
def test_killing_the_analysis_at_any_moment_leaves_the_results_alone(sweep_dir):
    before = digests(sweep_dir)
    rng = random.Random(7)
    for delay in (rng.uniform(0.3, 1.0), rng.uniform(1.0, 3.0)):
        process = subprocess.Popen([sys.executable, "-m", "analysis.cli", "report", str(sweep_dir)], cwd=REPO,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert digests(sweep_dir) == before
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "report", str(sweep_dir)], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert digests(sweep_dir) == before and (sweep_dir / "report" / "report.html").exists()


def test_a_failing_analysis_is_one_line_and_leaves_the_results_alone(sweep_dir, monkeypatch):
    before = digests(sweep_dir)

    def broken(*args, **kwargs):
        raise pipeline.PipelineError("analysis broke on purpose")

    experiment = pipeline.EXPERIMENTS["core-heterogeneity"]
    monkeypatch.setitem(pipeline.EXPERIMENTS, "core-heterogeneity", dataclasses.replace(experiment, section=broken))
    with pytest.raises(pipeline.PipelineError, match="on purpose"):
        pipeline.tables_and_report([sweep_dir], sweep_dir / "report")
    assert digests(sweep_dir) == before


def test_experiments_are_registered_once_with_their_files():
    """Every experiment has its benchmark, table config and task folder, and a report section."""
    for name, experiment in experiments.EXPERIMENTS.items():
        assert experiment.benchmark.is_file() and experiment.table.is_file(), name
        assert experiment.task_dir.is_dir() and all(Path(i).is_file() for i in experiment.inputs), name
        assert callable(experiment.section) and experiment.columns, name
        assert "quick" in experiment.presets, name
    assert dataclasses.is_dataclass(runner.Step)
