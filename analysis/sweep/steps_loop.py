"""
The one loop that runs a record's pending benchexec invocations (sweeps, `ab`, `bench`).

A results directory has one writer (an exclusive flock on DIR/.timekit.lock); a step is saved as
"running" before it starts and the manifest is written atomically, so a kill at any moment leaves
a manifest that says which invocation was cut short, and a resume runs it again. SIGINT, SIGTERM
and SIGHUP raise Interrupted once here, so every cleanup runs on the way out (docs/step-loop.md).
"""

import contextlib
import fcntl
import os
import re
import shutil
import signal
import sys
import time
from pathlib import Path

from analysis.core.errors import UserError
from analysis.machine import disturbance
from analysis.machine.reader import each_process
from analysis.sweep.model import Interrupted, now

LOCK = ".timekit.lock"
INCOMPLETE = "incomplete"
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_held = {}  # resolved directory -> [open lock file, depth]
_caught = []  # the name of the signal that interrupted this process (raised once)


class Busy(UserError):
    """Another timekit works on the same results directory."""


def hold(directory):
    """Take DIR's lock for as long as this process needs it (re-entrant); Busy when another holds it."""
    directory = Path(directory).resolve()
    if directory in _held:
        _held[directory][1] += 1
        return
    directory.mkdir(parents=True, exist_ok=True)
    handle = open(directory / LOCK, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise Busy(f"{directory}: another timekit (pid {holder}) is running on this directory; "
                   "wait for it to end or give another --output") from None
    handle.seek(0)
    handle.truncate()
    with contextlib.suppress(OSError):  # a full disk must not stop the lock itself
        handle.write(f"{os.getpid()}\n")
        handle.flush()
    _held[directory] = [handle, 1]


def release(directory):
    directory = Path(directory).resolve()
    entry = _held.get(directory)
    if entry:
        entry[1] -= 1
        if entry[1] == 0:
            entry[0].close()
            del _held[directory]


def release_all(under=None):
    """Let go of every lock this process holds (`under`: only of that directory and the ones in it),
    however often each was taken: before its directory is deleted, or the process ends."""
    root = None if under is None else Path(under).resolve()
    for directory in list(_held):
        if root is None or directory == root or root in directory.parents:
            _held[directory][0].close()
            del _held[directory]


@contextlib.contextmanager
def locked(directory):
    hold(directory)
    try:
        yield
    finally:
        release(directory)


def _interrupt(signum, frame):
    """Raise Interrupted for the first signal only: a second SIGINT or SIGTERM while the cleanup
    runs (a CI runner sends several) must not cut the cleanup short."""
    if _caught:
        return
    _caught.append(signal.Signals(signum).name)
    raise Interrupted(_caught[0])


def raise_if_lost():
    """Raise Interrupted again if a signal came but its exception never left (Python prints
    "Exception ignored" for one raised inside a finalizer or an at-fork hook and goes on): called
    where the kit starts new work, which an interrupted kit never reaches otherwise."""
    if _caught:
        raise Interrupted(_caught[0])


@contextlib.contextmanager
def signals_interrupt():
    """SIGINT, SIGTERM and SIGHUP raise Interrupted while inside, even where the kit was started with
    SIGINT ignored (a background job of a script): a CI job's cancel stops it as Ctrl-C would."""
    previous = {s: signal.signal(s, _interrupt) for s in SIGNALS}
    if previous[signal.SIGTERM] is not _interrupt:   # the outermost: a new command, not yet interrupted
        _caught.clear()
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def run_pending(record, directory, where, invoke, error, after=None, out=sys.stderr):
    """Run every step of `record` (a manifest with .steps and .save(directory)) that is not done.

    where(step) -> (the directory its files land in, its benchmark's stem); invoke(step) runs the
    benchexec invocation and sets step.status to done or failed, returning benchexec's exit code;
    after(step) is told of each finished step; `error` is the caller's one-line error class.
    """
    directory = Path(directory)
    with locked(directory), signals_interrupt():
        wait_for_strays(directory, error)
        for stale in [*directory.glob("*.json.*.tmp"), *directory.glob("*.xml.*.tmp")]:  # half a file of a killed kit
            stale.unlink(missing_ok=True)
        before = redone(record)
        reopen(record, where)
        _save(record, directory, error)
        if redone(record) > before:
            print(f"resuming: {redone(record) - before} invocation(s) cut short run again; their files are "
                  f"kept under {INCOMPLETE}/ and not counted", file=out, flush=True)
        for step in [s for s in record.steps if s.status != "done"]:
            raise_if_lost()
            step.status, step.started = "running", now()
            _save(record, directory, error)
            try:
                before = disturbance.read()
                code = invoke(step)
                step.disturbance = disturbance.between(before, disturbance.read())
            except OSError as e:
                raise error(_no_room(directory, f"{e.strerror or e} while running {step.name}")) from None
            _save(record, directory, error)
            if after:
                after(step)
            if step.status == "failed":
                log = where(step)[0] / f"benchexec.{step.name}.log"
                raise error(_no_room(directory, f"benchexec failed in {step.name} (exit code {code}); see {log}"))


def redone(record):
    """Invocations run again because an earlier one was cut short."""
    return sum(getattr(s, "redone", 0) for s in record.steps)


def reopen(record, where):
    """Steps a crash or an error cut short (running, failed) become pending again and count as
    redone; their files go to incomplete/ (those of pending steps too: written by an older kit)."""
    for step in record.steps:
        if step.status == "done":
            continue
        folder, stem = where(step)
        set_aside(folder, stem, step.name)
        if step.status in ("running", "failed"):  # by status: a kill may already have moved its files
            step.redone += 1
        step.status, step.result_files = "pending", []


def set_aside(folder, stem, name, into=INCOMPLETE):
    """Move a step's files (results, logs, our benchexec log) out of its folder, where every reader
    looks, to `into`: an unfinished step's to incomplete/, one that met outside work to
    outside-load/ (analysis.ab.separate); returns whether there were any."""
    folder = Path(folder)
    partial = sorted(folder.glob(f"{stem}.{name}.*")) + sorted(folder.glob(f"benchexec.{name}.log"))
    if partial:
        target = folder / into / f"{name}.{now().replace(':', '-')}"
        target.mkdir(parents=True, exist_ok=True)
        for path in partial:
            shutil.move(str(path), target / path.name)
    return bool(partial)


def wait_for_strays(directory, error, seconds=10):
    """No benchexec of this directory may still run when we start (its guard kills it within
    moments of the kit's death); wait a little, then say so instead of measuring beside it."""
    deadline = time.monotonic() + seconds
    while (pids := strays(directory)) and time.monotonic() < deadline:
        time.sleep(0.2)
    if pids:
        raise error(f"{directory}: a benchexec of this directory still runs (pid {pids[0]}) though no timekit "
                    "holds it; end it (kill -9 PID) and resume")


def strays(directory):
    """Pids of processes whose command line names benchexec and this directory (or below it)."""
    needle = re.compile(re.escape(str(Path(directory).resolve()).encode()) + rb"(/|\x00|$)")
    found = []
    for pid, line in each_process("cmdline"):
        if pid == os.getpid():
            continue
        if b"benchexec" in line and needle.search(line):
            found.append(pid)
    return found


def _save(record, directory, error):
    try:
        record.save(directory)
    except OSError as e:
        raise error(_no_room(directory, f"cannot write its manifest ({e.strerror or e})")) from None


def _no_room(directory, what):
    """The message, and when the disk is full what to do about it."""
    try:
        full = shutil.disk_usage(directory).free < 1 << 20
    except OSError:
        full = False
    if full:
        return f"{directory}: {what}; the disk is full: free space, then resume with --resume"
    return f"{directory}: {what}"
