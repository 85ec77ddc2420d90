"""bisect end to end on a real repository of a C program, every step but the timing real: worktrees,
builds (one broken commit skipped), the search with its manifest, the answer's lines, report.json,
report.html and the plot. A step reads the work the built program says it does and adds simulated
noise (tests/bisect_model.py's rule); the lead's A/B comparator takes its place in `timekit bisect`."""

import json
import re

import numpy as np
import pytest

from analysis.products.bisect import answer as answer_mod
from analysis.products.bisect import repo as repo_mod
from analysis.products.bisect import report as report_mod
from analysis.products.bisect.manifest import Manifest
from analysis.products.bisect.search import Step, search, step_alpha
from tests.bisect_model import Model
from tests.bisect_repo import BASE, git, issue_work, make_repo, work_of

pytestmark = pytest.mark.unit

ALPHA, THRESHOLD, BUILD = 0.05, 0.02, "make -s prog"


class WorkCompare:
    """Build the commit (skipped where it fails), read its work, decide against GOOD's with noise."""

    def __init__(self, trees, good, sigma=0.004, seed=0, alpha=0.01):
        self.trees, self.builds = trees, {}
        self.good_work = work_of(self._build(good).worktree)
        self.truth = {}
        self.model = Model(self.truth, sigma, THRESHOLD, alpha, np.random.default_rng(seed))

    def _build(self, sha):
        done = repo_mod.build(self.trees, sha, BUILD)
        self.builds[sha] = done.to_dict()
        return done

    def __call__(self, sha):
        done = self._build(sha)
        if not done.ok:
            return Step("skipped", detail={"build_log": str(done.log), "why": done.error})
        self.truth[sha] = work_of(done.worktree) / self.good_work
        self.trees.remove(sha)    # as `timekit bisect` does once a step is done
        return self.model(sha)


def bisect(path, results, resume=False, **kw):
    top = repo_mod.open_repo(path)
    good, bad = repo_mod.resolve(top, "v1"), repo_mod.resolve(top, "main")
    commits = repo_mod.commits_between(top, good, bad)
    trees = repo_mod.Worktrees(top, results)
    repo_mod.build_good(trees, good, BUILD)
    per_step = step_alpha(ALPHA, len(commits))
    record = Manifest.open(results, {"good": good, "bad": bad, "alpha": ALPHA, "threshold": THRESHOLD,
                                     "build": BUILD}, resume=resume)
    compare = WorkCompare(trees, good, alpha=per_step, **kw)
    progress = []
    try:
        outcome = search([c.sha for c in commits], compare, per_step, manifest=record,
                         progress=lambda t, left, steps: progress.append(
                             answer_mod.progress_line(t, commits[t.index], left, steps)))
    finally:
        trees.close()
    assert not (top / ".git" / "timekit").exists() and git(top, "status", "--porcelain") == ""
    found = answer_mod.make(repo_mod.describe(top, good), commits, outcome, THRESHOLD, compare.builds)
    return found, progress, compare


def test_the_issue_repository_names_the_commit_that_adds_five_percent(scratch):
    shas = make_repo(scratch / "repo", issue_work(culprit=20, small=(7, 26)), broken={16})
    git(scratch / "repo", "tag", "v1", shas[0])
    results = scratch / "results"
    found, progress, compare = bisect(scratch / "repo", results)
    assert found.kind == "culprit" and found.culprit.sha == shas[20] and found.exit_code == 0
    lines = answer_mod.lines(found)
    assert re.fullmatch(rf"culprit: {shas[20][:12]} add 100000 iterations \(\+\d\.\d % of \+5\.\d %, "
                        r"CI \+\d\.\d % to \+\d\.\d %\)", lines[-1])
    assert found.shape.carried.low < 0.05 < found.shape.carried.high
    assert any(line.startswith("sudden: ") for line in lines)
    assert any(line.startswith("error control: each step decided at alpha 0.00625 = 0.05 / 8") for line in lines)
    assert progress[0].startswith(f"step 1: {shas[-1][:12]} tidy 33: slower, +5.")
    assert progress[0].endswith("33 commits left, about 6 steps")
    assert any("did not build (prog.c:2:2: error: #error broken on purpose): skipped" in p
               for p in progress)                                       # commit 16 is the first middle
    paths = report_mod.write(found, results / "report", environment={"build": BUILD})
    data = json.loads(paths["json"].read_text())["data"]["bisect"]
    assert data["answer"] == lines[-1] and data["kind"] == "culprit" and data["exit_code"] == 0
    rows = data["commits"]
    assert [r["sha"] for r in rows] == shas and rows[0]["ratio"] == 1.0
    tested = [r for r in rows if r["tested"] and r["position"] > 0]
    assert [r["position"] for r in tested] == sorted(r["position"] for r in tested)
    assert all(r["low"] <= r["ratio"] <= r["high"] for r in tested if r["verdict"] != "skipped")
    assert [s["order"] for s in data["steps"]] == list(range(1, len(data["steps"]) + 1))
    assert data["builds"][shas[16]]["ok"] is False and data["builds"][shas[0]]["ok"] is True
    page = paths["html"].read_text()
    assert "Which commit made it slower" in page and "Steps in the order taken" in page and "Builds" in page
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    again, _, compare = bisect(scratch / "repo", results, resume=True)         # resume: every step recorded
    assert answer_mod.lines(again)[-1] == lines[-1] and all(t.reused for t in again.outcome.steps)
    assert compare.truth == {} and list(compare.builds) == [shas[0]]         # GOOD built again, nothing else


def test_a_repository_where_every_commit_adds_one_percent_is_spread(scratch):
    shas = make_repo(scratch / "repo", [BASE // 100] * 32)
    git(scratch / "repo", "tag", "v1", shas[0])
    found, _, _ = bisect(scratch / "repo", scratch / "results")
    assert found.kind == "spread" and found.exit_code == 0 and found.shape.share < 0.5
    lines = answer_mod.lines(found)
    assert lines[-1].startswith("spread: +3") and "no commit carries half of it" in lines[-1]
    assert sum(line.startswith("  +") for line in lines) == len(found.shape.parts) >= 4
    report_mod.write(found, scratch / "results" / "report")
