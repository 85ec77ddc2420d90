"""Runs disturbed from outside (analysis.machine.disturbance, analysis.sweep.disturbed): every
invocation records the work the machine did beside the kit; a few disturbed invocations are set
aside and counted, too many leave no verdict."""

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from analysis import pipeline
from analysis.machine import disturbance
from analysis.machine.disturbance import Reading, Record
from analysis.sweep import disturbed
from analysis.sweep.load import load
from analysis.sweep.model import Step, Sweep
from tests.helpers import figures_not_drawn

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "recorded-disturbed" / "time-apis"


def _reading(at, busy, own, steal=0.0, processes=None):
    return Reading(at, busy, steal, own, processes or {})


@pytest.mark.unit
def test_outside_work_is_the_machines_busy_time_less_the_kits_own(monkeypatch):
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    before = _reading(10.0, 100.0, 5.0, processes={7: ("make", 1, 1.0), 8: ("idle", 2, 0.0)})
    after = _reading(14.0, 109.0, 11.0, steal=0.4, processes={7: ("make", 1, 3.5), 9: ("cc1", 5, 0.3)})
    record = disturbance.between(before, after, load=1.5)
    assert record.seconds == 4.0 and record.outside == pytest.approx(3.0) and record.steal == pytest.approx(0.4)
    assert record.outside_cpus == pytest.approx(0.75)   # steal apart
    assert record.disturbed
    assert record.busiest == "make (pid 7): 2.5 s"  # a process started later counts whole, a pid reused too
    assert "0.75 CPUs of outside work" in record.describe() and "0.10 CPUs stolen by the hypervisor" in record.describe()
    quiet = disturbance.between(before, _reading(14.0, 106.5, 11.0), load=0.1)
    assert quiet.outside == pytest.approx(0.5) and not quiet.disturbed and quiet.busiest == ""


@pytest.mark.unit
def test_the_level_in_force_is_kept_with_the_record(monkeypatch):
    """Where work beside the kit is meant (tests on every CPU at once), nothing is judged; a
    recording is judged by the level it was made with, wherever it is read."""
    before, after = _reading(0.0, 0.0, 0.0), _reading(10.0, 5.0, 0.0)
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    assert disturbance.between(before, after, load=1).disturbed
    monkeypatch.setenv(disturbance.LEVEL_VARIABLE, "inf")
    meant = disturbance.between(before, after, load=1)
    assert meant.level is None and not meant.judged and not meant.disturbed
    monkeypatch.setenv(disturbance.LEVEL_VARIABLE, "0.6")
    assert not disturbance.between(before, after, load=1).disturbed
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE)
    assert not meant.disturbed and Record.from_dict(meant.to_dict()) == meant


@pytest.mark.unit
def test_a_step_keeps_its_record_through_the_manifest(tmp_path):
    step = Step(load=0, rerun=1, name="load0-rerun1", status="done",
                disturbance=Record(seconds=3, outside=2, steal=0, load=1.1, busiest="yes (pid 5): 2.0 s"))
    sweep = Sweep(experiment="time-apis", preset="quick", reps=1, loads=[0], reruns=1, tasksets=[],
                  container=True, created="", steps=[step])
    sweep.save(tmp_path)
    again = Sweep.load(tmp_path).steps[0]
    assert again.disturbance == step.disturbance and again.disturbed
    assert not Step(load=0, rerun=1, name="old").disturbed  # manifests before the record had none


def _steps(pattern):
    """Steps load L rerun R from 'L.R' pairs; a trailing '!' marks one disturbed."""
    steps = []
    for item in pattern.split():
        hit = item.endswith("!")
        load, rerun = map(int, item.rstrip("!").split("."))
        steps.append(Step(load=load, rerun=rerun, name=f"load{load}-rerun{rerun}", status="done",
                          disturbance=Record(seconds=10, outside=8 if hit else 0.1, steal=0, load=1)))
    return Sweep(experiment="time-apis", preset="quick", reps=1, loads=[0, 1], reruns=3, tasksets=[],
                 container=True, created="", steps=steps)


@pytest.mark.unit
def test_a_few_disturbed_invocations_are_set_aside_and_too_many_leave_no_verdict(monkeypatch):
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    few = disturbed.of(_steps("0.1 1.1 1.2! 0.2! 0.3 1.3"))
    assert few and not few.too_many and few.names == {"load1-rerun2", "load0-rerun2"}
    assert few.reruns() == "rerun 2"
    assert few.set_aside_line().startswith("2 of 6 benchexec invocations disturbed from outside")
    lost = disturbed.of(_steps("0.1 1.1! 1.2! 0.2 0.3 1.3!"))  # load 1 has no quiet rerun left
    assert lost.too_many and lost.busy() == "the machine was busy from outside during reruns 1-3"
    most = disturbed.of(_steps("0.1! 1.1! 1.2! 0.2! 0.3 1.3"))
    assert most.too_many and most.reruns() == "reruns 1-2"
    assert not disturbed.of(_steps("0.1 1.1 1.2 0.2"))


def _report(directory):
    with figures_not_drawn():
        return pipeline.build_report([directory])


def _section(report):
    return next(s for s in report.sections if s.id == "time-apis" or "time" in s.id)


@pytest.mark.unit
def test_recorded_sweep_with_outside_work_in_rerun_2_sets_it_aside(monkeypatch):
    """Recorded on this project's 2-vCPU VM: time-apis, loads 0 and 1, three reruns, a busy loop
    in a session of its own during rerun 2 (docs/verdicts.md, benchmarks/README.md)."""
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    sweep = Sweep.load(RECORDED)
    found = disturbed.of(sweep)
    assert sorted(found.names) == ["load0-rerun2", "load1-rerun2"] and not found.too_many
    assert all(step.disturbance.outside_cpus < 0.1 for step in sweep.steps if step.rerun != 2)
    report = _report(RECORDED)
    section = _section(report)
    assert any(w.startswith("2 of 6 benchexec invocations disturbed from outside") for w in section.warnings)
    aside = report.samples["set_aside"] == "disturbed from outside"  # samples.csv keeps every run, marked
    assert set(report.samples["rerun"][aside]) == {2} and set(report.samples["rerun"][~aside]) == {1, 3}
    assert section.runs.startswith(f"{int((~aside).sum())} of {int((~aside).sum())} ")  # no statistic rests on rerun 2
    assert report.data["sweeps"][0]["disturbed"] == ["load0-rerun2", "load1-rerun2"]
    assert all("busy from outside" not in (f.why or "") for f in section.findings)


@pytest.mark.unit
def test_recorded_sweep_busy_in_most_reruns_gives_no_verdict_and_says_rerun_quietly(monkeypatch, tmp_path):
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    copy = tmp_path / "time-apis"
    shutil.copytree(RECORDED, copy)
    manifest = json.loads((copy / "sweep.json").read_text())
    for step in manifest["steps"]:
        if step["rerun"] == 1:
            step["disturbance"] = dict(manifest["steps"][0]["disturbance"], outside=step["disturbance"]["seconds"])
    (copy / "sweep.json").write_text(json.dumps(manifest))
    section = _section(_report(copy))
    assert section.findings and all(f.verdict == "inconclusive" for f in section.findings)
    assert all(f.decide == {"quiet": "the machine was busy from outside during reruns 1-2"} for f in section.findings)
    assert any(w.startswith("No verdict: the machine was busy from outside during reruns 1-2") for w in section.warnings)
    assert "rerun on a quiet machine" in section.findings[0].cost


def _wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def _running(manifest, name):
    try:
        steps = json.loads(manifest.read_text())["steps"]
    except (OSError, ValueError, KeyError):
        return False
    return any(s["name"] == name and s["status"] == "running" for s in steps)


def _busy_loop_during(process, manifest, name, every_cpu=False):
    """Another job, a shell loop in a session of its own, while step `name` of `manifest` runs;
    then `process`'s output. Returns (the loops' pids, the output). `every_cpu`: one loop pinned to
    each CPU, so that one shares the run's CPU wherever BenchExec put it (an unpinned loop goes to
    an idle CPU, which a paired design is shown to tolerate)."""
    try:
        assert _wait_for(lambda: _running(manifest, name), 120)
        cpus = sorted(os.sched_getaffinity(0)) if every_cpu else [None]
        loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True,
                                  preexec_fn=None if cpu is None else (lambda cpu=cpu: os.sched_setaffinity(0, {cpu})))
                 for cpu in cpus]
        try:
            _wait_for(lambda: not _running(manifest, name), 120)
        finally:
            for loop in loops:
                loop.kill()
                loop.wait()
        return [loop.pid for loop in loops], process.communicate(timeout=300)[0]
    finally:
        process.kill()


@pytest.mark.timing
def test_a_busy_loop_started_during_a_sweep_is_caught_and_its_invocation_set_aside(programs, scratch, monkeypatch):
    """A sweep of three reruns; another job (a shell loop in a session of its own) runs during the
    second only."""
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    out = scratch / "sweep"
    sweep = subprocess.Popen([sys.executable, "-m", "analysis.cli", "run", "time-apis", "--reps", "2", "--loads", "0",
                              "--reruns", "3", "--output", str(out)], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env={k: v for k, v in os.environ.items()
                                                                       if k != disturbance.LEVEL_VARIABLE})
    [loop], output = _busy_loop_during(sweep, out / "sweep.json", "load0-rerun2")
    assert sweep.returncode == 0, output
    steps = {s.name: s for s in Sweep.load(out).steps}
    assert steps["load0-rerun2"].disturbed, steps["load0-rerun2"].disturbance
    assert f"(pid {loop})" in steps["load0-rerun2"].disturbance.busiest
    assert steps["load0-rerun2"].disturbance.outside_cpus > 0.5
    assert not steps["load0-rerun1"].disturbed and not steps["load0-rerun3"].disturbed
    assert "1 of 3 benchexec invocations disturbed from outside" in output and "load0-rerun2" in output
    report = json.loads((out / "report" / "report.json").read_text())
    assert report["data"]["sweeps"][0]["disturbed"] == ["load0-rerun2"]


@pytest.mark.unit
def test_the_recorded_demo_names_the_rerun_that_ran_at_twice_its_wall_time_and_sets_it_aside():
    """tests/data/recorded-demo (2026-11-23, before the record existed): discipline's separate
    cores ran at 1.05 wall / CPU in reruns 1-4 and 2.08 in rerun 5, the machine busy beside it."""
    loaded = load(REPO / "tests" / "data" / "recorded-demo" / "discipline", {"status"})
    assert loaded.disturbed.names == {"separate-cores-rerun5"} and not loaded.disturbed.too_many
    [mark] = loaded.disturbed.marks
    assert not mark.outside and mark.wall_cpu == pytest.approx(2.08, abs=0.01) and mark.usual == pytest.approx(1.05, abs=0.01)
    assert {t.path.name for t in loaded.set_aside} == set(mark.step.result_files)
    assert not {t.path.name for t in loaded.tables} & set(mark.step.result_files)
    for experiment in ("time-apis", "core-heterogeneity", "os-microbench", "scheduling-noise", "memory-bandwidth"):
        assert not load(REPO / "tests" / "data" / "recorded-demo" / experiment, {"status"}).disturbed


@pytest.mark.timing
def test_ab_sets_an_invocation_that_met_a_busy_loop_aside_and_says_so(programs, scratch, monkeypatch):
    """`timekit ab` on a command against itself, five invocations as blocks; another job runs
    during the second only. Its line says so, the verdict rests on the other four."""
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    spin = REPO / "programs" / "bin" / "spin"
    out = scratch / "ab"
    env = {k: v for k, v in os.environ.items() if k != disturbance.LEVEL_VARIABLE}
    ab = subprocess.Popen([sys.executable, "-m", "analysis.cli", "ab", f"{spin} 20000", f"{spin} 20000", "--design", "blocks",
                           "--reruns", "5", "--output", str(out), "--export-json", str(scratch / "ab.json")],
                          cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    loops, output = _busy_loop_during(ab, out / "paired.json", "rerun2", every_cpu=True)
    assert ab.returncode in (0, 3), output   # an A/A of four fixed invocations may stay open: exit 3
    line = next(line for line in output.splitlines() if line.lstrip().startswith("invocation 2:"))
    assert "disturbed from outside" in line and "set aside (2/5 invocations)" in line, line
    assert any(f"(pid {loop})" in line for loop in loops), line
    assert "1 of 5 benchexec invocations disturbed from outside, set aside" in output
    data = json.loads((scratch / "ab.json").read_text())
    assert data["ab"][0]["disturbed"] == ["rerun2"] and data["busy_from_outside"] == []
    cpu = next(r for r in data["comparison"] if r["column"] == "exec-cputime")
    assert cpu["reruns_base"] == cpu["reruns_new"] == 4, cpu  # the four quiet invocations only


RECORDED_AB = REPO / "tests" / "data" / "recorded-disturbed" / "ab"


def _ab_report(directory):
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "ab", "--resume", "--output", str(directory),
                           "--export-json", str(directory / "out.json")], cwd=REPO, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr, json.loads((directory / "out.json").read_text())


@pytest.mark.unit
def test_recorded_ab_sets_its_disturbed_invocation_aside_and_too_many_leave_it_undecided(scratch, monkeypatch):
    """Recorded: `timekit ab` of spin against itself as blocks, five invocations, a busy loop in
    another session during invocation 2 (1.01 CPUs of outside work). Reported again (--resume of
    the finished run), the row rests on the other four; with invocations 1 and 3 marked busy too,
    three of five are disturbed: no verdict, exit 3, and the line says to rerun on a quiet machine."""
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    copy = scratch / "ab"
    shutil.copytree(RECORDED_AB, copy)
    code, text, data = _ab_report(copy)
    # an A/A pair of 5 fixed invocations whose CI reaches +3.6 %: open, so no pass (exit 3), not busy
    assert code == 3 and "not excluded either" in text and "busy from outside" not in text.splitlines()[-1], text
    assert data["ab"][0]["disturbed"] == ["rerun2"] and data["busy_from_outside"] == []
    assert "1 of 5 benchexec invocations disturbed from outside, set aside" in text
    assert {r["reruns_base"] for r in data["comparison"]} == {4}
    manifest = json.loads((copy / "paired.json").read_text())
    for step in manifest["steps"]:
        if step["name"] in ("rerun1", "rerun3"):
            step["disturbance"]["outside"] = step["disturbance"]["seconds"]
    (copy / "paired.json").write_text(json.dumps(manifest))
    code, text, data = _ab_report(copy)
    assert code == 3, text
    verdict = [line for line in text.splitlines() if line.startswith("verdict:")]
    assert len(verdict) == 1 and verdict[0].startswith("verdict: undecided:")
    assert "the machine was busy from outside during invocations 1-3" in verdict[0] and "rerun on a quiet machine" in verdict[0]
    assert len(data["busy_from_outside"]) == 1


@pytest.mark.timing
def test_ab_separate_moves_an_invocation_that_met_a_busy_loop_out_of_its_side(programs, scratch, monkeypatch):
    """`timekit ab --design separate` on a command against itself, three reruns a side; another job
    runs during base's second invocation only: its files leave base/, the row rests on the rest."""
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    spin = REPO / "programs" / "bin" / "spin"
    out = scratch / "ab"
    env = {k: v for k, v in os.environ.items() if k != disturbance.LEVEL_VARIABLE}
    ab = subprocess.Popen([sys.executable, "-m", "analysis.cli", "ab", f"{spin} 20000", f"{spin} 20000", "--design",
                           "separate", "--reruns", "3", "--output", str(out), "--export-json", str(scratch / "ab.json")],
                          cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    [loop], output = _busy_loop_during(ab, out / "ab.json", "base-rerun2")
    assert ab.returncode in (0, 3), output   # an A/A of two and three fixed invocations may stay open
    line = next(line for line in output.splitlines() if line.lstrip().startswith("base rerun 2:"))
    assert "disturbed from outside" in line and f"(pid {loop})" in line and "set aside" in line
    assert "1 of 6 benchexec invocations disturbed from outside, set aside" in output
    assert [p.name.split(".")[1] for p in (out / "base" / "outside-load").glob("*/*.results.*.xml.bz2")] == ["base-rerun2"]
    data = json.loads((scratch / "ab.json").read_text())
    assert data["busy_from_outside"] == []
    assert {(r["reruns_base"], r["reruns_new"]) for r in data["comparison"]} == {(2, 3)}


class _Outside:
    """disturbance.between for the step loop: the invocations numbered in `busy` (from 1, in the
    order they run) met a CPU of outside work, the others none."""

    def __init__(self, busy):
        self.busy, self.calls = set(busy), 0

    def __call__(self, before, after):
        self.calls += 1
        outside = 1.0 if self.calls in self.busy else 0.0
        return Record(seconds=1.0, outside=outside, steal=0.0, load=1.0, busiest="sh (pid 4242): 1.0 s" if outside else "",
                      level=disturbance.LEVEL)


@pytest.mark.benchexec
def test_separate_definitions_set_a_disturbed_invocation_aside_and_too_many_leave_no_verdict(programs, scratch,
                                                                                             monkeypatch, capsys):
    """The record's outside work stands in for a busy machine (the timing test above runs a real
    loop): one of six invocations is moved out of its side; four of six leave no verdict, exit 3."""
    from analysis.ab import definitions as definitions_path
    from analysis.ab import separate
    from analysis.sweep import steps_loop
    from analysis.tools.options import AbOptions
    from tests.ab.test_separate import definitions

    base, new = definitions(scratch, runs=2)
    monkeypatch.setattr(steps_loop.disturbance, "between", _Outside({3}))
    options = AbOptions(base=str(base), new=str(new), design="separate", until_decided=False, budget=None, reruns=3, output=scratch / "one",
                        container=False, format="json")
    assert definitions_path.start(options) in (0, 1, 3)   # 3 rerun-per-side fixed: the answer may stay open
    data = json.loads(capsys.readouterr().out)
    run = separate.ABRun.load(scratch / "one")
    [aside] = [s for s in run.steps if s.disturbed]
    assert aside.rerun == 2 and data["busy_from_outside"] == []
    assert list((scratch / "one" / aside.condition / "outside-load").glob(f"*/*.{aside.name}.*.results.*"))
    assert "1 of 6 benchexec invocations disturbed from outside, set aside" in data["ab"][0]["summary"]
    counts = {(r["reruns_base"], r["reruns_new"]) for r in data["comparison"]}
    assert counts == ({(2, 3)} if aside.condition == "base" else {(3, 2)}), data["comparison"]

    monkeypatch.setattr(steps_loop.disturbance, "between", _Outside({1, 2, 3, 4}))
    assert definitions_path.start(replace(options, output=scratch / "many", format="text")) == 3
    text = capsys.readouterr().out
    verdict = [line for line in text.splitlines() if line.startswith("verdict:")]
    assert len(verdict) == 1 and "the machine was busy from outside during reruns 1-2" in verdict[0]
    assert verdict[0].endswith("rerun on a quiet machine (exit 3)")


@pytest.mark.unit
def test_outside_work_is_placed_on_cpus_and_judged_where_the_run_ran(monkeypatch):
    """Each outside process's work lands on the CPU it ran on (at most that CPU's time), steal per
    CPU, work of processes that came and went is unplaced and counts elsewhere. Once the run's CPUs
    are known, work on them beyond OWN_LEVEL always disturbs; work elsewhere only a design it is
    shown to matter to."""
    monkeypatch.delenv(disturbance.LEVEL_VARIABLE, raising=False)
    before = Reading(0.0, 100.0, 0.0, 5.0, {7: ("xz", 1, 1.0, 1), 8: ("make", 2, 0.0, 0)}, {0: 0.0, 1: 0.0}, 0.0)
    after = Reading(10.0, 112.0, 0.5, 6.0, {7: ("xz", 1, 10.0, 1), 8: ("make", 2, 0.5, 0)}, {0: 0.5, 1: 0.0}, 1.0)
    record = disturbance.between(before, after, load=1.0)
    # busy 12 - own 1 - kernel threads 1 = 10 s outside: 9 of xz on CPU 1, 0.5 of make on CPU 0, 0.5 unplaced;
    # CPU 0's steal apart
    assert record.outside == pytest.approx(10.0)
    assert record.by_cpu == {"0": pytest.approx(0.5), "1": pytest.approx(9.0)} and record.unplaced == pytest.approx(0.5)
    assert record.steal_by_cpu == {"0": pytest.approx(0.5), "1": 0.0}
    assert record.disturbed   # the run's CPUs unknown: judged on the whole machine
    beside = record.on_cpus((0,), others_matter=False)
    assert beside.on_run == pytest.approx(0.05) and beside.elsewhere == pytest.approx(0.95)   # 9 + 0.5 unplaced
    assert not beside.disturbed   # 5 % of the run's own CPU: at the level, not beyond; 5 % steal is a VM's usual
    assert replace(beside, by_cpu={"0": 1.0, "1": 9.0}).disturbed   # 10 % taken
    # 30 % of the run's CPU stolen: shown, and left to the wall / CPU sign (the run's CPU time leaves it out)
    stolen = replace(beside, steal=3.0, steal_by_cpu={"0": 3.0, "1": 0.0})
    assert not stolen.disturbed and "0.30 CPUs stolen by the hypervisor" in stolen.describe()
    assert not replace(record, outside=0.0, steal=8.0).disturbed   # nor on a machine whose CPUs are not known
    quiet_own = replace(beside, by_cpu={"0": 0.2, "1": 9.0})
    assert not quiet_own.disturbed and quiet_own.verdict().startswith("kept: work on other CPUs")
    assert replace(quiet_own, others_matter=True).disturbed
    assert "2 % of its CPU 0 taken by outside work, 95 % of the other CPUs" in quiet_own.describe()
    assert Record.from_dict(quiet_own.to_dict()) == quiet_own
    moved = disturbance.between(before, Reading(10.0, 125.0, 0.0, 6.0, {7: ("xz", 1, 25.0, 1)}, {0: 0, 1: 0}, 0.0),
                                load=1.0)
    # 24 s of xz in 10 s: at most 10 on CPU 1, where it ran last; the other 14 are unplaced
    assert moved.by_cpu == {"0": pytest.approx(0.0), "1": pytest.approx(10.0)} and moved.unplaced == pytest.approx(14.0)
