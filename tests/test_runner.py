"""The experiment runner under real benchexec: a sweep, an interrupted sweep and its resume."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis.core import results
from tests.helpers import run_isolated

REPO = Path(__file__).resolve().parent.parent
APIS = ("runexec", "bash", "fish", "gnu")


def timekit(*args, **kwargs):
    """`timekit ARGS` in a session of its own: its session id is its pid, and whatever it starts
    (benchexec, the runs, the background load) stays in that session unless it leaves it."""
    return subprocess.Popen([sys.executable, "-m", "analysis.cli", *map(str, args)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, **kwargs)


def busy_processes(process):
    """The background load's processes left in the session of `process` (started by timekit()):
    only those this test started, never another test's running at the same time."""
    found = subprocess.run(["pgrep", "-s", str(process.pid), "-f", str(REPO / "programs" / "bin" / "busy")],
                           stdout=subprocess.PIPE, text=True)
    return found.stdout.split()


def processes_in(directory):
    found = subprocess.run(["pgrep", "-f", str(directory)], stdout=subprocess.PIPE, text=True)
    return [pid for pid in found.stdout.split() if int(pid) != os.getpid()]


def manifest(directory):
    return json.loads((directory / "sweep.json").read_text())


def runs_per_file(directory, step):
    """{result file: run names} of a finished step."""
    return {name: results.load_result(directory / name).tasks.tolist() for name in step["result_files"]}


def files_outside(directory):
    """(path, mtime) of every file in the checkout but `directory` and what builds, tests and
    Python write anyway (the programs' binaries, native and aarch64, which tests running at the
    same time may build; hidden folders such as pytest's scratch and tox; bytecode)."""
    found = set()
    for path in REPO.rglob("*"):
        parts = path.relative_to(REPO).parts
        hidden = any(part.startswith(".") for part in parts[:-1])  # .git, .tox, caches, pytest's scratch
        if path.is_file() and not hidden and not {"__pycache__", "bin", "bin-aarch64"} & set(parts) and directory not in path.parents:
            found.add((path, path.stat().st_mtime_ns))
    return found


@pytest.mark.benchexec
def test_sweep_end_to_end(programs, scratch):
    out = scratch / "sweep"
    before = files_outside(out)
    process = timekit("run", "time-apis", "--reps", 2, "--loads", "0,1", "--reruns", 1, "--output", out)
    log, _ = process.communicate(timeout=600)
    assert files_outside(out) == before, "the sweep wrote outside its result folder"
    assert process.returncode == 0, log
    assert "ETA" in log and f"report: {out / 'report' / 'report.html'}" in log
    sweep = manifest(out)
    assert [(s["load"], s["status"]) for s in sweep["steps"]] == [(0, "done"), (1, "done")]
    assert sweep["environment"]["probes"] and "cflags" in sweep["build"]
    for step in sweep["steps"]:
        files = runs_per_file(out, step)
        assert len(files) == len(APIS)
        assert all(len(names) == 2 for names in files.values())  # 2 reps of the thesis input
        assert (out / "tables" / f"{step['name']}.table.html").exists()
    data = json.loads((out / "report" / "report.json").read_text())["data"]["time-apis"]
    summary = data["inputs"]["43434343"]["cpu_summary"]
    assert {(row["api"], row["load"]) for row in summary} == {(a, load) for a in APIS for load in (0, 1)}
    assert all(row["n"] == 2 for row in summary)
    # every API saw ~0.09 s of CPU for this input
    assert all(0.03 < row["mean"] < 0.5 for row in summary)
    assert not busy_processes(process)


@pytest.mark.benchexec
def test_interrupted_sweep_leaves_nothing_running_and_resumes_without_loss(programs, scratch):
    out = scratch / "sweep"
    rng = random.Random(os.getpid())
    process = timekit("run", "time-apis", "--reps", 3, "--loads", "0-2", "--reruns", 1, "--output", out)
    # interrupt somewhere in the middle of the sweep: after the first step, inside a later one
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not (
        (out / "sweep.json").exists() and any(s["status"] == "done" for s in manifest(out)["steps"])
    ):
        time.sleep(0.2)
    time.sleep(rng.uniform(0.5, 4.0))
    process.send_signal(rng.choice([signal.SIGINT, signal.SIGTERM]))
    log, _ = process.communicate(timeout=120)
    assert process.returncode == 130, log
    assert "--resume" in log
    assert not busy_processes(process), "background load survived the interrupt"
    assert not processes_in(out), "benchexec or a run survived the interrupt"
    interrupted = manifest(out)
    done_before = [s["name"] for s in interrupted["steps"] if s["status"] == "done"]
    assert done_before and len(done_before) < 3
    kept = {s["name"]: runs_per_file(out, s) for s in interrupted["steps"] if s["status"] == "done"}

    process = timekit("run", "time-apis", "--resume", "--output", out)
    log, _ = process.communicate(timeout=600)
    assert process.returncode == 0, log
    resumed = manifest(out)
    assert [s["status"] for s in resumed["steps"]] == ["done"] * 3
    for step in resumed["steps"]:
        files = runs_per_file(out, step)
        if step["name"] in kept:  # finished steps were not redone
            assert files == kept[step["name"]]
        assert len(files) == len(APIS)
        for names in files.values():  # the same structure as an uninterrupted sweep
            assert sorted(names) == sorted(set(names)) and len(names) == 3
    assert not busy_processes(process)


def test_failed_and_timed_out_runs_stay_out_of_the_statistics(programs, scratch):
    (scratch / "ok.txt").write_text("4343\n")
    (scratch / "bad.txt").write_text("not a number\n")
    (scratch / "huge.txt").write_text("123456789012345\n")
    definition = scratch / "faults.xml"
    definition.write_text("""<?xml version="1.0"?>
<benchmark tool="tool_info.timed_divisors" timelimit="1 s" memlimit="100 MB">
  <rundefinition name="runexec"><option name="--timer">runexec</option></rundefinition>
  <rundefinition name="bash"><option name="--timer">bash</option></rundefinition>
  <tasks name="all"><include>ok.txt</include><include>bad.txt</include><include>huge.txt</include></tasks>
  <columns><column title="timer-user">timer-user</column><column title="timer-sys">timer-sys</column>
    <column title="timer-real">timer-real</column></columns>
</benchmark>""")
    code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(definition), "-o", str(scratch) + "/"])
    assert code == 0, output
    from analysis import pipeline

    report = pipeline.build_report([scratch])
    data = report.data["time-apis"]
    assert data["excluded"] == 4  # bad and huge, under both timers
    [warning] = report.sections[0].warnings
    assert "TIMEOUT" in warning and "ERROR" in warning and "4 of 6" in warning
    rows = {(r["api"], r["load"]): r for r in data["inputs"]["bad"]["cpu_summary"]}
    assert rows[("runexec", 0)]["n"] == 0 and rows[("runexec", 0)]["excluded"] == 1
    ok = data["inputs"]["ok"]["cpu_summary"]
    assert all(r["n"] == 1 and r["excluded"] == 0 for r in ok)


@pytest.mark.parametrize("args,message", [
    (["run", "time-apis", "--loads", "3-1"], "is not a list of load levels"),
    (["run", "time-apis", "--reps", "0"], "is not a positive integer"),
    (["run", "time-apis", "--preset", "huge"], "unknown preset 'huge'"),
    (["run", "discipline", "--loads", "1"], "--loads does not apply to discipline"),
    (["run", "nosuch"], "invalid choice"),
    (["report", "no/such/dir"], "no/such/dir"),
])
@pytest.mark.benchexec
def test_bad_arguments_get_one_line_and_exit_2(args, message, scratch):
    process = timekit(*args, "--output", scratch / "x") if args[0] == "run" else timekit(*args)
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 2, out
    assert message in out and "Traceback" not in out
    assert len([line for line in out.splitlines() if "error" in line]) == 1, out


def test_every_kind_of_failure_keeps_its_status_and_is_counted(programs, scratch):
    """exit code, segfault, abort, SIGKILL, out of memory and timeout under real benchexec: each keeps
    BenchExec's status, is counted per condition in the report and in compare, and never enters a statistic."""
    faults = ["ok", "ok", "ok", "exit", "segv", "abort", "kill", "oom", "hang"]
    for i, fault in enumerate(faults):
        (scratch / f"{i}-{fault}.txt").write_text(fault + "\n")
    # named like the kit's discipline benchmark, so the report files it under that section
    definition = scratch / "discipline.xml"
    definition.write_text("""<?xml version="1.0"?>
<benchmark tool="tool_info.fault" timelimit="2 s" hardtimelimit="3 s" memlimit="64 MB">
  <rundefinition name="runexec"/>
  <tasks name="all"><include>*.txt</include></tasks>
</benchmark>""")
    code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(definition), "-o", str(scratch / "r") + "/"])
    assert code == 0, output
    [table] = results.load_results(scratch / "r")
    status = dict(zip([name.split("-")[1].split(".")[0] for name in table.tasks], table.status))
    assert status["ok"] == "done" and status["exit"] == "ERROR (exit code 3)"
    assert status["segv"] == "ERROR (signal 11)" and status["abort"] == "ERROR (signal 6)" and status["kill"] == "ERROR (signal 9)"
    assert status["oom"].startswith("OUT OF MEMORY") and status["hang"].startswith("TIMEOUT")
    assert table.valid().sum() == 3

    from analysis import pipeline

    report = pipeline.build_report([scratch / "r"])
    data = report.data["discipline"]["conditions"]["unpinned"]
    assert data["wall"]["n"] == 3
    assert sum(data["excluded"].values()) == 6 and data["excluded"][status["hang"]] == 1
    [warning] = [w for w in report.sections[0].warnings if "kept out" in w]
    assert "6 of 9 runs" in warning and "OUT OF MEMORY" in warning and "ERROR (signal 11)" in warning
    head, why = report.sections[0].runs.split(": ", 1)  # the section's head: what finished, and why the rest did not
    assert head == "3 of 9 fault runs finished" and report.sections[0].runs_missing == 6
    assert set(why.split(", ")) == {"1 error (exit code 3)", "1 error (signal 11)", "1 error (signal 6)",
                                    "1 error (signal 9)", "1 out of memory", "1 timeout"}


@pytest.mark.benchexec
def test_missing_compiler_is_one_line(scratch, monkeypatch):
    """A compiler that is not installed: the build error names it, no traceback."""
    import shutil as sh

    from analysis.sweep import runner

    sh.copy(REPO / "programs" / "Makefile", scratch)
    sh.copy(REPO / "programs" / "busy.c", scratch)
    monkeypatch.setenv("CC", "no-such-cc")
    with pytest.raises(runner.SweepError) as error:
        runner.build_programs(scratch)
    assert "no-such-cc" in str(error.value) and "\n" not in str(error.value), error.value


@pytest.mark.benchexec
def test_runs_see_the_machine_through_the_kernel_not_a_fuse_overlay_and_leave_no_writes(scratch):
    """The container the runner asks BenchExec for (runner.container_dirs): '/' is the host's own
    file system, read-only, not fuse-overlayfs (a FUSE daemon between the program and its files);
    the checkout is writable and what a run writes there vanishes with it, as under BenchExec's
    default; the home directory is empty."""
    from analysis.sweep.runner import container_dirs

    host_root = subprocess.run(["stat", "-f", "-c", "%T", "/"], capture_output=True, text=True).stdout.strip()
    probe = scratch / "written-in-the-run"
    script = (f"stat -f -c 'root=%T' /; touch /etc/timekit-probe 2>/dev/null || echo root-read-only; "
              f"echo kept > {probe} && echo checkout-writable; ls -A $HOME | wc -l | sed 's/^/home-entries=/'")
    log = scratch / "run.log"
    subprocess.run([sys.executable, "-m", "benchexec.runexecutor", "--output", str(log), *container_dirs(),
                    "--", "/bin/sh", "-c", script], cwd=scratch, check=True, capture_output=True)
    seen = log.read_text().splitlines()
    assert f"root={host_root}" in seen, seen   # BenchExec's default shows fuse-overlayfs ("fuseblk") or "overlayfs" here
    assert {"root-read-only", "checkout-writable", "home-entries=0"} <= set(seen), seen
    assert not probe.exists()


@pytest.mark.unit
def test_sweep_notes_say_how_many_reruns_of_which_load_levels():
    """Not '(load levels 0, 1, 2, 3, 3 rerun(s))', which reads as a load level 3 rerun."""
    from types import SimpleNamespace

    from analysis.sweep.model import Context

    def sweep(loads, reruns):
        return SimpleNamespace(loads=loads, reruns=reruns, preset="quick", reps=10, steps=[SimpleNamespace(condition="")] * 4,
                               build="cc -O2", skipped={})

    notes = Context.sweep_notes(SimpleNamespace(sweeps=[(Path("a"), sweep([0, 1, 2, 3], 3)), (Path("b"), sweep([0], 1))]))
    assert "(3 reruns of each of the load levels 0, 1, 2, 3)" in notes[0]
    assert "(1 rerun of each of the load levels 0)" in notes[1] and "rerun(s)" not in " ".join(notes)
