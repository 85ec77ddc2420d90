"""Every error of `timekit bisect` that suggests an option or a command: provoked on a real repository,
the suggestion then run as it says, and the bisect gets further. Each error is one line, exit 2, no
traceback, and every `--option` that bisect prints (its own lines, ab's lines of a step, ab's
errors) is an option of `timekit bisect`."""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.bisect_repo import BASE, git, make_repo
from tests.helpers import REPO

BUILD = "make -s prog"
GIT_COMMAND = re.compile(r"\bgit(?: [^\s;()]+)+")   # git's own options are not bisect's
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


KNOWN = {"--help", "--build", "--repo", "--threshold", "--alpha", "--budget", "--ignore-failure", "--no-container",
         "--design", "--verbose", "--output", "--resume"}   # `timekit bisect --help` lists these (checked below)


def timekit(*argv, cwd=REPO, check=True):
    """(exit code, stdout, stderr) of timekit ARGV; every option its output names must be bisect's."""
    # what a step decides is not what these tests check: other tests' work must not leave it undecided
    env = {"TIMEKIT_OUTSIDE_LEVEL": "inf", **os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "analysis.cli", *map(str, argv)], cwd=cwd, capture_output=True,
                          text=True, env=env)
    if check:
        named = set(OPTION.findall(GIT_COMMAND.sub("", done.stdout + done.stderr)))
        assert named <= KNOWN, f"options bisect does not have: {named - KNOWN}\n{done.stderr}"
    return done.returncode, done.stdout, done.stderr


def error_line(code, stderr):
    """The one line of a bisect that stopped on bad input."""
    assert code == 2, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("timekit")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.fixture
def one_step(scratch):
    """GOOD and BAD, BAD doing 20 % more work: a bisect of one step."""
    path = scratch / "repo"
    shas = make_repo(path, [BASE // 5])
    git(path, "tag", "v1", shas[0])
    return path, shas


def state(path):
    return git(path, "status", "--porcelain"), git(path, "worktree", "list")


@pytest.mark.unit
def test_the_help_names_the_options_checked_here():
    code, text, _ = timekit("bisect", "--help", check=False)
    assert code == 0 and set(re.findall(r"^  (--[a-z-]+)", text, re.MULTILINE)) | {"--help"} == KNOWN


@pytest.mark.benchexec
def test_a_failing_run_suggests_ignore_failure_which_a_resume_takes(one_step, scratch):
    path, shas = one_step
    before, out = state(path), scratch / "out"
    argv = ["bisect", "v1", "main", "./prog && false", "--build", BUILD, "--repo", path, "--output", out]
    line = error_line(*timekit(*argv)[::2])
    assert line.endswith("--ignore-failure measures runs that exit non-zero"), line
    assert state(path) == before
    line = error_line(*timekit(*argv, "--ignore-failure")[::2])      # as typed, plus the option: the directory is taken
    assert "a bisect is recorded here already; continue it with --resume or give another --output" in line
    code, stdout, stderr = timekit(*argv, "--ignore-failure", "--resume")
    assert code in (0, 3) and "step 1: " in stderr and "invocation 1" in stderr, stderr
    assert state(path) == before


@pytest.mark.benchexec
def test_a_run_reading_tmp_suggests_no_container_which_then_measures(one_step, scratch):
    path, shas = one_step
    before = state(path)
    with tempfile.TemporaryDirectory(prefix="timekit-bisect-") as tmp:
        data = Path(tmp) / "data.txt"
        data.write_text("input\n")
        argv = ["bisect", "v1", "main", f"cat {data} > /dev/null && ./prog", "--build", BUILD, "--repo", path]
        line = error_line(*timekit(*argv, "--output", scratch / "one")[::2])
        assert f"{data} lies under /tmp, which BenchExec's container hides (put it elsewhere, or use --no-container)" in line
        code, stdout, stderr = timekit(*argv, "--output", scratch / "two", "--no-container", "--verbose")
    assert code in (0, 3) and "step 1: " in stderr, stderr
    assert "design blocks (auto: " in stderr or "design interleaved (auto: " in stderr, stderr   # --verbose says why
    assert state(path) == before


@pytest.mark.benchexec
def test_a_dirty_worktree_left_by_a_killed_bisect_names_the_command_that_removes_it(one_step, scratch):
    """SIGKILL (no cleanup runs) in the step's measurement leaves the worktrees; one edited since its
    build is refused in one line naming its path once; the command it names removes it, and the
    resume finishes, the repository as before. A second bisect on the directory meanwhile is Busy."""
    path, shas = one_step
    before, out, log_path = state(path), scratch / "out", scratch / "bisect.log"
    argv = ["bisect", "v1", "main", "./prog", "--build", BUILD, "--repo", path, "--output", out, "--budget", "20s"]
    with open(log_path, "w") as log:
        process = subprocess.Popen([sys.executable, "-m", "analysis.cli", *map(str, argv)], cwd=REPO, stdout=log,
                                   stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(REPO)})
        end = time.monotonic() + 60
        while not list(out.glob("steps/*/commands.json")) and time.monotonic() < end and process.poll() is None:
            time.sleep(0.05)
        line = error_line(*timekit("bisect", "--resume", "--output", out)[::2])
        assert f"{out}: another timekit (pid {process.pid}) is running on this directory; wait for it to end or " \
               "give another --output" in line, line
        process.send_signal(signal.SIGKILL)
        process.wait()
    good_tree = next(p for p in (path / ".git" / "timekit").glob(f"*/{shas[0][:12]}"))
    (good_tree / "prog.c").write_text("/* edited by hand */\n")
    line = error_line(*timekit("bisect", "--resume", "--output", out)[::2])
    assert line.count(str(good_tree)) == 1 and len(line) - len(str(good_tree)) < 160, line
    assert "is dirty (M prog.c changed since its build)" in line, line
    suggested = line.split("remove it and resume: ", 1)[1]
    subprocess.run(suggested.split(), cwd=path, check=True)
    code, stdout, stderr = timekit("bisect", "--resume", "--output", out)
    assert code in (0, 3) and "step 1: " in stderr, stderr
    assert state(path) == before and not (path / ".git" / "timekit").exists()


@pytest.mark.benchexec
def test_resume_errors_name_the_options_that_continue(one_step, scratch):
    """--resume without --output, with another question, and a finished bisect resumed as suggested."""
    path, shas = one_step
    out = scratch / "out"
    code, _, stderr = timekit("bisect", "v1", "main", "./prog", "--build", BUILD, "--repo", path, "--output", out,
                              "--budget", "20s")
    assert code in (0, 3), stderr
    line = error_line(*timekit("bisect", "--resume")[::2])
    assert line.endswith("--resume: give the bisect's directory with --output"), line
    line = error_line(*timekit("bisect", "--resume", "--output", out, "--threshold", "0.1")[::2])
    assert "recorded with other threshold; resume with the same arguments (or none but --resume --output) or give " \
           "another --output" in line, line
    code, stdout, stderr = timekit("bisect", "--resume", "--output", out)
    assert code in (0, 3) and "step 1 (recorded): " in stderr and stdout.strip(), stderr


@pytest.mark.unit
def test_input_errors_name_the_options_and_commands_that_get_further(one_step, scratch):
    """Each suggestion run as said gets past its error: here to GOOD's build, which fails on purpose."""
    path, shas = one_step
    fails = ["--build", "echo no compiler here; exit 3"]

    def further(*argv, cwd=REPO):
        line = error_line(*timekit("bisect", *argv, *fails, "--output", scratch / f"out{time.monotonic_ns()}",
                                   cwd=cwd)[::2])
        assert "the build command fails on GOOD" in line and "no compiler here; see " in line, line

    outside = Path(tempfile.mkdtemp(prefix="not-a-repo-", dir="/tmp"))
    try:
        line = error_line(*timekit("bisect", "v1", "main", "./prog", *fails, cwd=outside)[::2])
        assert line.endswith("run bisect inside one or give --repo DIR"), line
        further("v1", "main", "./prog", "--repo", path, cwd=outside)
    finally:
        outside.rmdir()
    line = error_line(*timekit("bisect", "v0", "main", "./prog", *fails, "--repo", path)[::2])
    assert "try git log --oneline" in line, line
    first = git(path, "log", "--oneline").splitlines()[-1].split()[0]
    further(first, "main", "./prog", "--repo", path)
    line = error_line(*timekit("bisect", "main", "v1", "./prog", *fails, "--repo", path)[::2])
    assert "(swapped? see git merge-base GOOD BAD)" in line, line
    further(git(path, "merge-base", "main", "v1"), "main", "./prog", "--repo", path)
    line = error_line(*timekit("bisect", "v1", "main", "--repo", path, "--output", scratch / "none")[::2])
    assert line.endswith("give RUN, --build CMD (or --resume --output DIR to continue a bisect)"), line
    further("v1", "main", "./prog", "--repo", path)


@pytest.mark.unit
def test_good_off_the_first_parent_line_names_the_log_that_lists_one(scratch):
    path = scratch / "merged"
    shas = make_repo(path, [0, 0])
    git(path, "checkout", "-q", "-b", "side", shas[1])
    (path / "side.txt").write_text("side\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "side")
    side = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", "main")
    git(path, "merge", "-q", "--no-edit", "side")
    line = error_line(*timekit("bisect", side, "main", "./prog", "--build", "exit 3", "--repo", path)[::2])
    assert "give a GOOD that git log --first-parent BAD lists" in line, line
    listed = git(path, "log", "--first-parent", "--format=%H", "main").splitlines()
    line = error_line(*timekit("bisect", listed[-1], "main", "./prog", "--build", "exit 3", "--repo", path,
                               "--output", scratch / "out")[::2])
    assert "the build command fails on GOOD" in line, line
