"""
The experiment runner: conditions BenchExec cannot express, around plain benchexec invocations.

A sweep is a list of steps, one benchexec invocation each (a background-load level and a rerun).
For each step the runner starts K busy processes outside BenchExec's cgroups, runs benchexec
with a distinct `--name`, and stops the load again. The steps run in analysis.sweep.steps_loop
(lock, atomic manifest `sweep.json`, resume after a crash, signals); every process the runner
starts ends when it ends, however it ends (analysis.machine.guard).
"""

import contextlib
import datetime
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from lxml import etree

from analysis.machine import environment
from analysis.machine import facts as machine_facts
from analysis.machine import scheduling
from analysis.machine import guard
from analysis.sweep import lint, memory, steps_loop
from analysis.core.paths import PROGRAMS, REPO
from analysis.core.tasks import write_repetitions
from analysis.sweep.model import MANIFEST, Interrupted, Step, Sweep, SweepError, now, write_atomically  # noqa: F401 (Step, MANIFEST, Interrupted: the runner's API)
from tool_info import sizing

BUSY_PROGRAM = PROGRAMS / "bin" / "busy"
# a finished run in benchexec's console output: "HH:MM:SS   task   status   cpu   wall"
RUN_LINE = re.compile(r"^\d\d:\d\d:\d\d\s+\S")


class BackgroundLoad:
    """K busy processes, each in a process group of its own but in the runner's session (which
    benchexec and its runs share: where autogroups are on, a session of their own would make them
    a scheduling group of their own, which nice cannot act across), optionally pinned to `cpus`
    and niced, killed (with their groups) on exit."""

    def __init__(self, count, cpus=None, nice=0):
        self.count, self.cpus, self.nice = count, cpus, nice
        self.processes = []

    def __enter__(self):
        if self.count and not BUSY_PROGRAM.exists():
            raise SweepError(f"{BUSY_PROGRAM} is missing; build the programs first (make -C programs)")
        for _ in range(self.count):
            self.processes.append(
                guard.popen([str(BUSY_PROGRAM)], self._place,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            )
        return self

    def _place(self):
        """In the child before exec: its own process group, pinned and niced, so it never runs
        anywhere else; killed when the kit dies."""
        guard.in_own_group_dying_with_kit()
        if self.cpus is not None:
            os.sched_setaffinity(0, self.cpus)
        if self.nice:
            os.nice(self.nice)

    def __exit__(self, *exc):
        for process in self.processes:
            _kill_group(process)
        self.processes = []
        return False


def _kill_group(process, grace=0.0, hangup=None):
    """Kill a process started in a process group of its own (os.setpgrp) and everything in its group.

    With a grace period, only the group's leader gets SIGTERM first: benchexec (through its guard)
    then stops its runs and writes its results itself. Signalling the whole group would also kill
    the process that holds its tool-info module, and benchexec would then wait for it forever
    before exiting. Still there after it, the leader gets SIGHUP: a guard then kills what is below
    it in other groups too (benchexec's runs), a busy process just ends; `hangup` sets how long
    that may take (5 s after a grace period, else none)."""
    hangup = (5 if grace else 0) if hangup is None else hangup
    for signum, seconds in ((signal.SIGTERM, grace), (signal.SIGHUP, hangup)):
        if process.poll() is None and seconds:
            try:
                process.send_signal(signum)
                process.wait(timeout=seconds)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


class Progress:
    """Runs done so far, and an ETA from the mean time per run of this sweep."""

    def __init__(self, total_runs, out=sys.stderr):
        self.total, self.done, self.start, self.out = total_runs, 0, time.monotonic(), out

    def run_finished(self, label):
        self.done += 1
        if self.done % 10 == 0 or self.done == self.total:
            elapsed = time.monotonic() - self.start
            eta = elapsed / self.done * (self.total - self.done)
            print(f"  {label}: {self.done}/{self.total} runs, elapsed {_clock(elapsed)}, "
                  f"ETA {_clock(eta)}", file=self.out, flush=True)


def _clock(seconds):
    return str(datetime.timedelta(seconds=int(seconds)))


def container_dirs(repo=REPO):
    """BenchExec's container with the same view as its default (writes anywhere vanish with the
    run), without an overlay over '/': where '/' cannot be overlaid by the kernel (as on this
    project's VMs) BenchExec puts fuse-overlayfs there, a FUSE daemon between the measured program
    and every file it opens, started for each run (about 50 ms a run here, a seventh of the
    demo). The kit's workloads write only in their working directory (the checkout: result files,
    os-microbench's page-fault file), /tmp and the home directory: those stay overlaid or empty,
    which the kernel does, and the rest is read-only."""
    return ["--read-only-dir", "/", "--hidden-dir", "/home", "--overlay-dir", str(repo)]


def benchexec_command(experiment, sweep, step, outdir):
    command = [
        sys.executable, "-m", "benchexec.benchexec", str(Path(outdir) / experiment.benchmark.name),
        "--name", step.name,
        "--outputpath", str(outdir) + os.sep,
        "--numOfThreads", "1",
    ]
    for taskset in sweep.tasksets:
        command += ["--tasks", taskset]
    if sweep.skipped:
        for rundefinition in sweep.rundefinitions:
            command += ["--rundefinition", rundefinition]
    command += container_dirs() if sweep.container else ["--no-container"]
    return command + list(step.benchexec_args)


def run_step(experiment, sweep, step, outdir, progress):
    """One benchexec invocation under `step.load` busy processes; returns its exit code.

    benchexec writes straight into the step's log file, which is followed for progress: a pipe
    would keep the runner waiting on whatever process still holds it open (BenchExec's tool-info
    container worker can outlive benchexec), a file does not. Once benchexec exits, its process
    group, stragglers included, is killed; benchexec runs under analysis.machine.guard, which kills
    its whole tree should the kit die.
    """
    log_path = Path(outdir) / f"benchexec.{step.name}.log"
    command = benchexec_command(experiment, sweep, step, outdir)
    label = step.condition or f"load {step.load}"
    label += f", rerun {step.rerun}"
    with BackgroundLoad(step.load, step.load_cpus, step.load_nice) as load, open(log_path, "w") as log:
        if step.load_nice:  # nice acts only within one scheduling group: record whether it could
            step.scheduling = scheduling.record([p.pid for p in load.processes], outdir,
                                                container_dirs() if sweep.container else False)
        log.write(f"# {' '.join(command)}\n")
        log.flush()
        # in the runner's session, as the competitor (see BackgroundLoad), in a process group of its own
        process = guard.popen(guard.wrap(command), os.setpgrp, cwd=REPO, stdin=subprocess.DEVNULL,
                              stdout=log, stderr=subprocess.STDOUT)
        try:
            _follow(process, log_path, lambda: progress.run_finished(label))
            return process.returncode
        except BaseException:
            # interrupted: the invocation runs again on resume, so its results are not waited for (the
            # user asked to stop now); SIGHUP has the guard kill benchexec's runs at once
            _kill_group(process, hangup=1)
            raise
        finally:
            # benchexec turns SIGTERM into killing its runs and writing what finished
            _kill_group(process, grace=30)


def _follow(process, log_path, run_finished, interval=0.2):
    """Call run_finished for every finished-run line benchexec writes, until it exits.

    Between reads it waits on the process itself (a pidfd), not a fixed sleep: the next
    invocation starts as soon as benchexec is gone, not up to `interval` later."""
    with open(log_path) as log, _exit_waiter(process) as wait_for_exit:
        pending = ""
        while True:
            exited = process.poll() is not None
            pending += log.read()
            *lines, pending = pending.split("\n")
            for line in lines:
                if RUN_LINE.match(line):
                    run_finished()
            if exited:
                return
            wait_for_exit(interval)


@contextlib.contextmanager
def _exit_waiter(process):
    """wait(seconds): returns after `seconds` or as soon as the process exits (pidfd where the
    kernel has it, Linux >= 5.3; else a plain sleep)."""
    try:
        pidfd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        yield time.sleep
        return
    try:
        yield lambda seconds: select.select([pidfd], [], [], seconds)
    finally:
        os.close(pidfd)


def result_files_of(outdir, experiment, sweep, step):
    """Per run definition, its combined result file; benchexec writes only the per-task-set file
    when a single task set runs, so fall back to those."""
    prefix = f"{experiment.benchmark.stem}.{step.name}.????-??-??_??-??-??.results"
    files = {}
    for rundef in sweep.rundefinitions:
        found = sorted(Path(outdir).glob(f"{prefix}.{rundef}.xml.bz2"))
        if not found:  # only one task set ran (selected, or the only one there is)
            found = sorted(Path(outdir).glob(f"{prefix}.{rundef}.*.xml.bz2"))
        if found:
            files[rundef] = [f.name for f in found]
    return files


def build_programs(directory=PROGRAMS):
    """Build programs/ (a no-op when up to date); returns the recorded compiler and flags."""
    if not shutil.which("make"):
        raise SweepError("'make' is not installed; install the Debian packages the kit needs: python3 -m analysis.machine.packages")
    build = subprocess.run(["make", "-s", "-C", str(directory)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    if build.returncode != 0:
        lines = build.stdout.strip().splitlines() or ["make failed"]
        cause = next((line for line in lines if "not found" in line or "No such file" in line), lines[-1])
        raise SweepError(f"building programs/ failed: {cause}; run 'make -C programs' to see why")
    return (Path(directory) / "bin" / "BUILD").read_text().strip()


def write_sweep_benchmark(experiment, reps, outdir):
    """The sweep's own copy of the benchmark definition, running `reps` repetitions.

    The copy's task includes point at the sweep's `tasks/` (N task files per input); every other
    relative path is made absolute. The repository's tasks stay as committed, and the sweep
    directory records exactly what ran.
    """
    tasks = Path(outdir) / "tasks"
    write_repetitions(experiment.inputs, reps, tasks)
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    tree = etree.parse(str(experiment.benchmark), parser)
    base = experiment.benchmark.parent
    for element in tree.iter("include", "includesfile", "exclude", "excludesfile", "requiredfiles", "propertyfile"):
        original = (base / element.text.strip()).resolve()
        if original.parent == experiment.task_dir.resolve():
            element.text = f"tasks/{original.name}"
        else:
            element.text = str(original)
    copy = Path(outdir) / experiment.benchmark.name
    text = etree.tostring(tree, xml_declaration=True, encoding="UTF-8", doctype=tree.docinfo.doctype).decode()
    if experiment.adapt:  # e.g. one run definition per NUMA node pair of this machine
        text = experiment.adapt()[1](text)
    copy.write_text(text)
    return copy


def execute(experiment, sweep, step, outdir, progress):
    """Run one step and record in it when it started, how long it took, its result files and
    whether it is done (benchexec exit 0 and a result file per run definition); returns the exit code."""
    step.started, begin = now(), time.monotonic()
    code = run_step(experiment, sweep, step, outdir, progress)
    step.seconds = round(time.monotonic() - begin, 3)
    found = result_files_of(outdir, experiment, sweep, step)
    step.result_files = [name for names in found.values() for name in names]
    step.status = "done" if code == 0 and len(found) == len(sweep.rundefinitions) else "failed"
    return code


def order_rundefinitions(definition, order):
    """Put the run definitions of the sweep's benchmark copy in `order` (BenchExec runs them in
    file order), leaving everything else as it is."""
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    tree = etree.parse(str(definition), parser)
    root = tree.getroot()
    found = {r.get("name"): r for r in root.findall("rundefinition")}
    if set(order) - set(found):
        raise SweepError(f"{definition}: no run definition {', '.join(sorted(set(order) - set(found)))}")
    anchor = root.index(root.find("rundefinition"))
    for element in found.values():
        root.remove(element)
    for k, name in enumerate([n for n in order] + [n for n in found if n not in order]):
        root.insert(anchor + k, found[name])
    text = etree.tostring(tree, xml_declaration=True, encoding="UTF-8", doctype=tree.docinfo.doctype).decode()
    write_atomically(Path(definition), text)   # a kill mid-write must not leave the definition empty for --resume


def run_sweep(experiment, preset_name, preset, outdir, *, resume=False, container=True, out=sys.stderr):
    """Run (or resume) a sweep into `outdir`; returns the Sweep with every step's result files."""
    outdir = Path(outdir)
    lint.require_valid([experiment.benchmark, experiment.table])  # before anything is written
    with steps_loop.locked(outdir):  # before anything is read: another timekit may be writing it
        return _run_sweep(experiment, preset_name, preset, outdir, resume, container, out)


def _run_sweep(experiment, preset_name, preset, outdir, resume, container, out):
    if resume:
        sweep = Sweep.load(outdir)
        if sweep.experiment != experiment.name:
            raise SweepError(f"{outdir}: holds a sweep of '{sweep.experiment}', not '{experiment.name}'")
    else:
        if (outdir / MANIFEST).exists():
            raise SweepError(f"{outdir}: already holds a sweep; use --resume or another --output")
        outdir.mkdir(parents=True, exist_ok=True)
        sweep = Sweep.plan(experiment, preset_name, preset, container)
    sweep.build = build_programs()
    definition = write_sweep_benchmark(experiment, sweep.reps, outdir)
    sweep.environment = environment.snapshot()
    sweep.machine = machine_facts.record().to_dict()  # what the report states about this machine
    caches = sweep.machine.get("caches") or {}
    sweep.sizes = memory.plan(definition, caches[max(caches, key=int)] if caches else None, sizing.read_mem_available())
    sweep.save(outdir)

    pending = [s for s in sweep.steps if s.status != "done"]
    runs_per_step = experiment.runs_per_invocation(sweep.reps, sweep.tasksets, sweep.rundefinitions)
    progress = Progress(runs_per_step * len(pending), out)
    for rundefinition, why in sweep.skipped.items():
        print(f"warning: skipping run definition {rundefinition}: {why}", file=out)
    print(f"{experiment.name} ({sweep.preset}): {len(pending)} of {len(sweep.steps)} benchexec "
          f"invocations to run, {runs_per_step} runs each; results in {outdir}", file=out, flush=True)
    for line in memory.describe(sweep.sizes):
        print(f"{experiment.name}: {line}", file=out, flush=True)

    def where(step):
        return outdir, experiment.benchmark.stem

    def invoke(step):
        if step.order:
            order_rundefinitions(outdir / experiment.benchmark.name, step.order)
        return execute(experiment, sweep, step, outdir, progress)

    steps_loop.run_pending(sweep, outdir, where, invoke, SweepError, out=out)
    return sweep
