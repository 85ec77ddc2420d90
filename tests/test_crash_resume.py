"""Crash safety: SIGKILL anywhere, resume, nothing lost and nothing measured twice; one timekit per
results directory; a full disk is one line. The short version of benchmarks/crash_resume.py."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from analysis.core.paths import REPO
from analysis.sweep import steps_loop

sys.path.insert(0, str(REPO / "benchmarks"))
import crash_resume  # noqa: E402

pytestmark = pytest.mark.benchexec


def _rows(text):
    """(column, n_base, n_new, reruns_base, reruns_new) of every row the verdicts rest on."""
    data = json.loads(text[text.index("{\n"):])
    return sorted((r["column"], r["n_base"], r["n_new"], r["reruns_base"], r["reruns_new"]) for r in data["comparison"])


def test_sigkill_anywhere_then_resume_measures_every_invocation_once(programs, scratch):
    output, log_path = scratch / "ab", scratch / "ab.log"
    rng = crash_resume.random.Random(3)
    with open(log_path, "ab") as log:
        # 1. during an invocation; meanwhile a second timekit on the directory is refused in one line
        first = crash_resume.start(crash_resume.AB, output, log)
        # inside an invocation: its step saved as running and benchexec started (its log open), so the
        # kill leaves files of a cut-short invocation to set aside
        assert crash_resume.wait_until(first, lambda: any(s["status"] == "running" and (folder / f"benchexec.{s['name']}.log").exists()
                                                          for folder, s in crash_resume.steps(output)), 120)
        second = subprocess.run(crash_resume.TIMEKIT + ["ab", "--resume", "--output", str(output)], cwd=REPO,
                                capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
        assert "another timekit" in second.stderr and f"pid {first.pid}" in second.stderr
        assert first.poll() is None
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
        gone = crash_resume.gone_within(output)
        assert gone is not None, f"5 s after SIGKILL still running: {crash_resume.strays(output)}"
        running = [s for _, s in crash_resume.steps(output) if s["status"] == "running"]
        assert len(running) == 1  # the manifest parses and names the invocation cut short
        # 2. halfway through a manifest write, 3. right after an invocation finished
        for mode in ("in a manifest write", "after an invocation"):
            killed, gone, code = crash_resume.one_kill(crash_resume.AB, output, mode, rng, log)
            assert killed and gone is not None, (mode, code, crash_resume.strays(output))
            for path in crash_resume.manifests(output):
                json.loads(path.read_text())
            if mode == "in a manifest write":
                assert list(output.glob("*.json.*.tmp"))  # it died with half a manifest written beside the whole one
    final = subprocess.run(crash_resume.TIMEKIT + crash_resume.command(crash_resume.AB, output) + ["--output", str(output)],
                           cwd=REPO, capture_output=True, text=True, timeout=300)
    assert final.returncode in crash_resume.FINISHED, final.stderr[-2000:]   # any verdict, open (3) too
    assert not crash_resume.strays(output) and not list(output.glob("*.tmp"))
    # every invocation done once: 3 invocations of both sides (the blocks design), one result file each, 3 runs in each
    steps = [s for _, s in crash_resume.steps(output)]
    assert sorted(s["name"] for s in steps) == [f"rerun{r}" for r in (1, 2, 3)]
    on_disk = sorted(p.name for p in output.glob("*.results.*.xml.bz2"))
    assert on_disk == sorted(f for s in steps for f in s["result_files"]) and len(on_disk) == 3, (
        [(s["name"], s["status"], s["result_files"]) for s in steps], final.stderr[-3000:])
    expected = {("exec-cputime", 45, 45, 3, 3), ("exec-walltime", 45, 45, 3, 3)}  # 3 invocations of 3 runs of 5 pairs
    assert set(_rows(final.stdout)) == expected
    redone = sum(s["redone"] for s in steps)
    assert redone >= 1 and list(output.glob("incomplete/*"))
    assert f"{redone} invocation(s) run again" in json.loads(final.stdout[final.stdout.index("{\n"):])["ab"][0]["summary"]


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_disk_stops_with_one_line_and_resumes_once_space_is_freed(programs, scratch):
    """crash_resume.disk_full asserts: exit 2, one 'timekit: error' line naming the full disk, no
    traceback; after the filler is removed --resume runs every invocation to done."""
    figures = crash_resume.disk_full(crash_resume.AB, "ab", scratch, open(os.devnull, "w"))
    assert figures["resumed"] and "the disk is full" in figures["line"]


def test_a_kill_halfway_through_a_manifest_write_leaves_the_old_manifest(scratch):
    path = scratch / "m.json"
    path.write_text('{"old": true}')
    code = subprocess.run([sys.executable, "-c", "from analysis.sweep.model import write_atomically as w; "
                           f"w({str(path)!r}, '{{\"new\": true}}' * 1000)"], cwd=REPO,
                          env={**os.environ, "TIMEKIT_KILL_IN_WRITE": "1"}).returncode
    assert code == -signal.SIGKILL
    assert json.loads(path.read_text()) == {"old": True}
    # without the kill the new text replaces it whole
    subprocess.run([sys.executable, "-c", "from analysis.sweep.model import write_atomically as w; "
                    f"w({str(path)!r}, '{{\"new\": true}}')"], cwd=REPO, check=True)
    assert json.loads(path.read_text()) == {"new": True}


def test_the_guard_kills_the_whole_tree_when_the_kit_is_killed(scratch):
    """A stand-in kit starts `sh` under the guard; sh starts sleepers in process groups and
    sessions of their own (as benchexec's runs are); SIGKILL to the kit ends them all."""
    marker = f"sleep {900 + os.getpid() % 97}"
    kit = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, time; from analysis.machine import guard; "
                            f"subprocess.Popen(guard.wrap(['sh', '-c', 'setsid {marker} & {marker} & wait']), "
                            "preexec_fn=__import__('os').setpgrp); time.sleep(60)"], cwd=REPO)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(_pids(marker)) < 2:
        time.sleep(0.05)
    assert len(_pids(marker)) == 2
    kit.kill()
    kit.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _pids(marker):
        time.sleep(0.05)
    assert not _pids(marker)


def _pids(text):
    found = subprocess.run(["pgrep", "-f", f"^{text}$"], capture_output=True, text=True).stdout.split()
    return [int(p) for p in found]


def test_the_lock_is_one_line_and_reentrant(scratch):
    holder = subprocess.Popen([sys.executable, "-c", "from analysis.sweep import steps_loop; import time; "
                               f"steps_loop.hold({str(scratch)!r}); print('held', flush=True); time.sleep(30)"],
                              cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(steps_loop.Busy, match=rf"another timekit \(pid {holder.pid}\)"):
            steps_loop.hold(scratch)
    finally:
        holder.kill()
        holder.wait()
    with steps_loop.locked(scratch), steps_loop.locked(scratch):  # the same process may nest
        pass
    steps_loop.hold(scratch)  # free again once released
    steps_loop.release(scratch)
    # a new run's directory that fails before its first invocation: its locks go, others stay
    (outer, inner, other) = (scratch / "ab", scratch / "ab" / "pair-1", scratch / "other")
    for directory in (outer, inner, inner, other):
        steps_loop.hold(directory)
    steps_loop.release_all(under=outer)
    assert outer.resolve() not in steps_loop._held and inner.resolve() not in steps_loop._held
    assert other.resolve() in steps_loop._held
    steps_loop.release(other)


def test_a_sweep_killed_inside_an_invocation_resumes_and_its_report_says_so(programs, scratch):
    output = scratch / "sweep"
    sweep = ["run", "memory-bandwidth", "--reps", "1", "--reruns", "2"]
    with open(scratch / "run.log", "ab") as log:
        kit = crash_resume.start(sweep, output, log)
        assert crash_resume.wait_until(kit, lambda: any(s["status"] == "running" and s["rerun"] == 2
                                                        for _, s in crash_resume.steps(output)), 240)
        time.sleep(0.5)
        kit.kill()
        kit.wait()
        assert crash_resume.gone_within(output) is not None, crash_resume.strays(output)
        resumed = crash_resume.start(crash_resume.command(sweep, output), output, log).wait()
    assert resumed == 0, (scratch / "run.log").read_text()[-2000:]
    steps = [s for _, s in crash_resume.steps(output)]
    assert [(s["name"], s["status"], s["redone"]) for s in steps] == [("load0-rerun1", "done", 0), ("load0-rerun2", "done", 1)]
    assert sorted(p.name for p in output.glob("*.results.*.xml.bz2")) == sorted(f for s in steps for f in s["result_files"])
    assert list(output.glob("incomplete/load0-rerun2.*/benchexec.load0-rerun2.log"))
    report = json.loads((output / "report" / "report.json").read_text())
    assert report["data"]["sweeps"][0]["redone"] == 1
    assert "1 invocation(s) ran again after being cut short" in (output / "report" / "report.html").read_text()
