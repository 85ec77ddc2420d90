"""Helpers for tests that start BenchExec, and for tests that build reports without looking at their figures."""

import contextlib
import io
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRATCH = REPO / ".pytest-tmp" / "scratch"


CONTAINER_OPTIONS = ("--no-container", "--read-only-dir", "--hidden-dir", "--overlay-dir", "--full-access-dir")


def with_container_dirs(command):
    """A benchexec (or test_tool_info) command line with the container the kit's runner asks for (runner.container_dirs):
    the checkout overlaid wherever it lies. BenchExec's default hides /tmp, and with it a checkout
    cloned there: its programs, definitions and scratch folders ("Failed to configure container")."""
    from analysis.sweep.runner import container_dirs

    command = [str(c) for c in command]
    starts_benchexec = {"benchexec.benchexec", "benchexec.test_tool_info"} & set(command)   # both take these options
    if not starts_benchexec or any(c in CONTAINER_OPTIONS for c in command):
        return command
    return command + container_dirs()


def run_isolated(command, cwd=REPO, timeout=600):
    """Run a command that starts BenchExec and return (exit code, output).

    BenchExec's tool-info container worker can outlive benchexec and keep an output pipe open,
    so the output goes to a file, only the main process is waited for, and its whole process
    group is killed afterwards. A benchexec command gets the runner's container layout.
    """
    command = with_container_dirs(command)
    log = SCRATCH / f"{uuid.uuid4().hex[:12]}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as out:
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            process.wait(timeout=timeout)
        finally:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()
    text = log.read_text()
    log.unlink()
    return process.returncode, text


def blank_png(figure, dpi=110):
    """In place of analysis.core.plots.to_png: the figure closed, not drawn; a 1 x 1 PNG."""
    import matplotlib.image
    import matplotlib.pyplot as plt
    import numpy as np

    plt.close(figure)
    buffer = io.BytesIO()
    matplotlib.image.imsave(buffer, np.zeros((1, 1, 3)), format="png")
    return buffer.getvalue()


@contextlib.contextmanager
def figures_not_drawn():
    """Sections and reports built inside keep their figures (made, titled, counted) but do not draw
    them: for tests whose assertions read findings, tables, warnings or report.json, where drawing
    is most of the time. The tests of the figures themselves draw them."""
    from analysis.core import plots
    from analysis.experiments.core_heterogeneity import plots as cores_plots

    saved = plots.to_png, cores_plots.to_png
    plots.to_png = cores_plots.to_png = blank_png   # core-heterogeneity's plots re-export it
    try:
        yield
    finally:
        plots.to_png, cores_plots.to_png = saved


def no_lock_held(directory):
    """Whether every .timekit.lock in or under `directory` is free (no timekit holds it)."""
    import fcntl

    for lock in Path(directory).rglob(".timekit.lock"):
        with open(lock) as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
    return True


def left_running(needle, seconds=3.0):
    """Command lines holding `needle` still running `seconds` after the kit ended, with their state,
    parent and group (a cgroup that BenchExec kills, or an orphaned stopped group the kernel hangs
    up, takes a moment on a loaded machine)."""
    deadline = time.monotonic() + seconds
    while (found := _running(needle)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _running(needle):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            line = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if needle in line and int(pid) != os.getpid():
            found.append(f"{line} (pid {pid}, state {stat[0]}, parent {stat[1]}, group {stat[2]})")
    return found
