"""Helpers for tests that start BenchExec."""

import os
import signal
import subprocess
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCRATCH = REPO / ".pytest-tmp" / "scratch"


def run_isolated(command, cwd=REPO, timeout=600):
    """Run a command that starts BenchExec and return (exit code, output).

    BenchExec's tool-info container worker can outlive benchexec and keep an output pipe open,
    so the output goes to a file, only the main process is waited for, and its whole process
    group is killed afterwards.
    """
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
