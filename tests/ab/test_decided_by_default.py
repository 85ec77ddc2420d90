"""`timekit ab` with no count given decides: it adds invocations until every row is decided within
its 2-minute budget, so a 10 % regression never passes the gate with exit 0 for want of
invocations (an answer still open there is exit 3, not a pass)."""

import json
import subprocess
import sys

import pytest

from tests.helpers import REPO

WORKLOAD = REPO / "programs" / "bin" / "workload"


@pytest.mark.timing
@pytest.mark.parametrize("kind", ["compute", "stream"])
def test_a_ten_percent_regression_never_passes_the_default_run(programs, scratch, kind):
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "ab", f"{WORKLOAD} {kind} 1000",
                           f"{WORKLOAD} {kind} 1100", "--output", str(scratch / "ab")],
                          cwd=scratch, capture_output=True, text=True, timeout=600)
    last = done.stdout.strip().splitlines()[-1]
    assert done.returncode != 0, done.stdout + done.stderr
    # slower; or, where another job took the run's own CPU, no verdict that says why (never a pass)
    assert (done.returncode == 1 and last.startswith("verdict: slower")) or (
        done.returncode == 3 and "busy from outside" in last), done.stdout + done.stderr


@pytest.mark.timing
def test_commands_that_wait_are_decided_on_their_wall_time_alone(scratch):
    """`ab 'sleep 0.2' 'sleep 0.2'` ran its whole 2-minute budget and ended undecided (exit 3): the
    CPU-time row of commands that barely use a CPU stayed open, although wall time had said ~ at
    the fourth invocation. A command that waits compares its wall time only unless --column asks
    for more, and the first line says so."""
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "ab", "sleep 0.05", "sleep 0.05", "--output",
                           str(scratch / "ab")], cwd=scratch, capture_output=True, text=True, timeout=600)
    text = done.stdout + done.stderr
    assert done.returncode == 0 and "wall time only: a command waits (CPU time " in done.stderr, text
    rows = [line for line in done.stdout.splitlines() if line.startswith("A → B")]
    assert len(rows) == 1 and "exec-walltime" in rows[0] and rows[0].rstrip().endswith("~"), text


@pytest.mark.timing
def test_commands_that_keep_one_core_busy_are_decided_on_their_cpu_time_alone(scratch):
    """lz4 against itself at another level ran until the wall-time row was decided, at M = 34,
    where CPU time had been at M = 5: for commands that keep one core busy, wall time is that CPU
    time plus what the machine adds. Where the pilot reads both at 90 % or more of their wall time,
    CPU time is compared alone unless --column asks for more, and the first line says so."""
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "ab", f"{WORKLOAD} compute 300",
                           f"{WORKLOAD} compute 300", "--output", str(scratch / "ab")],
                          cwd=scratch, capture_output=True, text=True, timeout=600)
    text = done.stdout + done.stderr
    share = json.loads((scratch / "ab" / "paired.json").read_text())["cpu_share"]
    rows = [line.split()[3] for line in done.stdout.splitlines() if line.startswith("A → B")]
    assert share > 0.5, text   # a compute loop: well above a waiting command's share, whatever the host
    if share >= 0.9:
        assert "CPU time only: both commands keep one core busy (CPU time at least" in done.stderr, text
        assert rows == ["exec-cputime"], text
    else:   # a host that steals a tenth of the loop's time: both rows, and no claim of CPU time only
        assert "CPU time only" not in text and rows == ["exec-cputime", "exec-walltime"], text
    assert done.returncode in (0, 3), text   # A/A: ~, or open within the budget on a busy host; never slower
