"""`timekit bisect` end to end: bad input in one line, and on real git repositories of a C program
the real A/B steps (benchexec, cmdrun, --until-decided) name the commit that adds 5 % work, and a
history where every commit adds a little is reported as spread."""

import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.bisect_repo import BASE, git, issue_work, make_repo
from tests.helpers import REPO

BUILD = "make -s prog"


def timekit(*argv, cwd=REPO):
    done = subprocess.run([sys.executable, "-m", "analysis.cli", *map(str, argv)], cwd=cwd, capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def repo(scratch):
    path = scratch / "repo"
    shas = make_repo(path, issue_work(culprit=20, small=(7, 26)), broken={16})
    git(path, "tag", "v1", shas[0])
    return path, shas


@pytest.mark.unit
def test_bad_input_is_one_line_and_exit_2_before_anything_is_written(repo, scratch):
    path, shas = repo
    outside = Path(tempfile.mkdtemp(prefix="not-a-repo-", dir="/tmp"))  # the checkout's own folders are in its git
    cases = [
        (("v1", "main", "./prog", "--build", BUILD, "--repo", outside), "not a git repository"),
        (("v0", "main", "./prog", "--build", BUILD, "--repo", path), "v0: unknown revision"),
        (("main", "v1", "./prog", "--build", BUILD, "--repo", path), "not an ancestor"),
        (("v1", "main", "./prog", "--build", "false", "--repo", path), "fails on GOOD"),
        (("v1", "main", "./prog", "--repo", path), "--build"),
        (("v1", "main", "./prog", "--build", BUILD, "--repo", path, "--threshold", "2"), "between 0 and 1"),
        (("v1", "main", "./prog", "--build", BUILD, "--repo", path, "--resume"), "--resume"),
        (("v1", "main", "--build", BUILD, "--repo", path), "give RUN (or --resume --output DIR"),
        ((), "give GOOD, BAD, RUN, --build CMD"),
        (("v1", "main", "./prog", "--build", BUILD, "--repo", path, "--design", "separate"), "invalid choice"),
    ]
    for k, (argv, words) in enumerate(cases):
        out = scratch / f"out{k}"
        started = time.monotonic()
        code, stdout, stderr = timekit("bisect", *argv, *(("--output", out) if "--resume" not in argv else ()))
        assert code == 2, (argv, stdout, stderr)
        lines = [line for line in stderr.splitlines() if line.strip()]
        assert len(lines) == 1, (argv, stderr)
        assert words in stderr, (argv, stderr)
        assert time.monotonic() - started < 10
        assert git(path, "status", "--porcelain") == ""  # the user's checkout untouched
    code, _, stderr = timekit("bisect", "--resume", "--output", scratch / "nothing")
    assert code == 2 and "no bisect recorded here, nothing to resume" in stderr and len(stderr.splitlines()) == 1
    outside.rmdir()


@pytest.mark.unit
def test_results_inside_the_checkout_are_ignored_by_git(repo):
    """The default results/bisect/DATE in the repository itself: a .gitignore of `*` in it, so that
    git status lists nothing, however the bisect ends (here: GOOD does not build)."""
    path, shas = repo
    before = git(path, "status", "--porcelain"), git(path, "worktree", "list")
    code, _, stderr = timekit("bisect", "v1", "main", "./prog", "--build", "echo cannot; exit 3", cwd=path)
    assert code == 2 and "the build command fails on GOOD" in stderr and "cannot; see " in stderr, stderr
    [outdir] = (path / "results" / "bisect").iterdir()
    assert (outdir / ".gitignore").read_text() == "*\n" and (outdir / "builds" / f"{shas[0][:12]}.log").exists()
    assert (git(path, "status", "--porcelain"), git(path, "worktree", "list")) == before
    assert not (path / ".git" / "timekit").exists()


@pytest.mark.timing
def test_bisect_names_the_commit_that_adds_five_percent(repo, scratch):
    """33 commits after GOOD: commit 20 adds 5 % work, commits 7 and 26 add 0.3 % each, commit 16
    does not build. Every step a real `timekit ab --until-decided` of the two builds."""
    path, shas = repo
    out = scratch / "bisect"
    code, stdout, stderr = timekit("bisect", "v1", "main", "./prog", "--build", BUILD, "--repo", path,
                                   "--output", out, "--budget", "60s")
    assert code == 0, stdout + stderr
    last = stdout.strip().splitlines()[-1]
    assert last.startswith(f"culprit: {shas[20][:12]} add {BASE // 20} iterations (+"), stdout + stderr
    assert "step 1: " in stderr and "commits left" in stderr
    data = json.loads((out / "report" / "report.json").read_text())["data"]["bisect"]
    assert data["kind"] == "culprit"
    assert list(data["builds"])[0] == shas[0] and data["builds"][shas[16]]["ok"] is False   # GOOD's build too
    with open(out / "report" / "samples.csv") as handle:
        samples = list(csv.DictReader(handle))
    steps = {s["order"] for s in data["steps"] if s["verdict"] != "skipped"}
    assert {int(r["step"]) for r in samples} == steps and {r["side"] for r in samples} == {"GOOD", "commit"}
    assert git(path, "status", "--porcelain") == "" and git(path, "worktree", "list").count("\n") == 0
    # BAD's step chooses the design once; every later step runs it as chosen there, unpiloted
    runs = [json.loads((Path(s["detail"]["directory"]) / "paired.json").read_text()) for s in data["steps"]
            if s["verdict"] != "skipped"]
    assert runs[0]["design_why"].startswith("auto: ")
    first = data["steps"][0]["commit"][:12]
    assert all(not r["pilot"] and r["design_why"].startswith(f"as bisect's first step ({first})") for r in runs[1:])
    assert all(r["design"] == runs[0]["design"] or r["switched"] for r in runs[1:])


@pytest.mark.timing
def test_a_slowdown_added_by_every_commit_is_reported_as_spread(scratch):
    """Ten commits, each adding 2.5 % of GOOD's loop (about 1 % of its CPU time, which starting the
    program dilutes): BAD is about 10 % slower, and no commit carries most of it."""
    path = scratch / "repo"
    shas = make_repo(path, [BASE // 40] * 10)
    out = scratch / "bisect"
    code, stdout, stderr = timekit("bisect", shas[0], "main", "./prog", "--build", BUILD, "--repo", path,
                                   "--output", out, "--budget", "30s")
    assert code == 0, stdout + stderr
    data = json.loads((out / "report" / "report.json").read_text())["data"]["bisect"]
    assert data["kind"] in ("spread", "range"), stdout
    assert stdout.strip().splitlines()[-1].startswith("spread: " if data["kind"] == "spread" else "culprit: one of ")
