"""bisect's git side on a real repository of a C program (tests/bisect_repo.py): the commits between
GOOD and BAD, worktrees under the repository's git directory (gone after their step, the checkout's
status and worktree list as before), build logs in the results directory, skipped builds, the line
that says why a build failed (real make, gcc, ld, sh and git failures), and each bad input as one
line. Builds with gcc, times nothing."""

import re
import shutil
import subprocess
import sys

import pytest

from analysis.products.bisect import repo as repo_mod
from analysis.products.bisect.repo import (BuildFailsOnGood, NotAncestor, NotARepository, OffFirstParent,
                                        UnknownRevision, WorktreeInTheWay)
from tests.bisect_repo import git, issue_work, make_repo, work_of
from tests.helpers import REPO

pytestmark = pytest.mark.unit

BUILD = "make -s prog"


@pytest.fixture
def issue_repo(scratch):
    """The issue's repository (33 commits after GOOD), commit 10 broken, 11 repairing it."""
    shas = make_repo(scratch / "repo", issue_work(), broken={10})
    return scratch / "repo", shas, scratch / "results"


def one_line(error, *paths):
    """The error's text: one line, short but for the paths it names (a checkout may lie deep)."""
    text = str(error.value)
    assert "\n" not in text and text.strip() == text
    assert len(text) - sum(len(str(p)) * text.count(str(p)) for p in paths) < 300, text
    return text


def test_the_commits_between_good_and_bad_in_order(issue_repo):
    path, shas, _ = issue_repo
    top = repo_mod.open_repo(path)
    assert top == path.resolve()
    git(path, "tag", "v1.0", shas[0])
    good, bad = repo_mod.resolve(top, "v1.0"), repo_mod.resolve(top, "main")
    assert (good, bad) == (shas[0], shas[-1]) and repo_mod.resolve(top, "HEAD~3") == shas[-4]
    commits = repo_mod.commits_between(top, good, bad)
    assert [c.sha for c in commits] == shas[1:] and len(commits) == 33
    assert commits[19].subject == "add 100000 iterations" and commits[0].subject == "tidy 1"
    assert repo_mod.describe(top, good).subject == "initial"


def test_each_bad_input_is_one_line(issue_repo, scratch, monkeypatch):
    path, shas, _ = issue_repo
    (scratch / "plain").mkdir()
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(scratch))  # the scratch folder lies inside the kit's checkout
    with pytest.raises(NotARepository) as e:
        repo_mod.open_repo(scratch / "plain")
    assert "not a git repository" in one_line(e)
    with pytest.raises(NotARepository) as e:
        repo_mod.open_repo(scratch / "nowhere")
    assert "no such directory" in one_line(e)
    for rev in ("v9.9", "-h", "0123456789abcdef"):
        with pytest.raises(UnknownRevision) as e:
            repo_mod.resolve(path, rev)
        assert one_line(e).startswith(f"{rev}: unknown revision")
    with pytest.raises(NotAncestor) as e:
        repo_mod.commits_between(path, shas[-1], shas[0])
    assert "is not an ancestor of BAD" in one_line(e)
    with pytest.raises(NotAncestor) as e:
        repo_mod.commits_between(path, shas[3], shas[3])
    assert "same commit" in one_line(e)


def test_good_off_the_first_parent_line_is_one_line(scratch):
    shas = make_repo(scratch / "merged", [0, 0, 0])
    path = scratch / "merged"
    git(path, "checkout", "-q", "-b", "side", shas[1])
    (path / "side.txt").write_text("side\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "side")
    side = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", "main")
    git(path, "merge", "-q", "--no-edit", "side")
    merge = git(path, "rev-parse", "HEAD")
    assert [c.sha for c in repo_mod.commits_between(path, shas[1], merge)] == [shas[2], shas[3], merge]
    with pytest.raises(OffFirstParent) as e:
        repo_mod.commits_between(path, side, merge)
    assert "first-parent line" in one_line(e)


def state(path):
    return git(path, "status", "--porcelain"), git(path, "worktree", "list")


def test_builds_in_worktrees_under_the_git_directory_leave_the_checkout_as_it_was(issue_repo):
    path, shas, results = issue_repo
    head, before = git(path, "rev-parse", "HEAD"), state(path)
    trees = repo_mod.Worktrees(path, results)
    assert trees.root.parent == (path / ".git" / "timekit").resolve()
    good = repo_mod.build_good(trees, shas[0], BUILD)
    assert good.ok and not good.reused and good.worktree == trees.root / shas[0][:12]
    assert good.log == results.resolve() / "builds" / f"{shas[0][:12]}.log" and good.log.exists()
    assert work_of(good.worktree) == 2_000_000
    assert git(path, "status", "--porcelain") == before[0]       # a worktree in .git: nothing new to list
    culprit = repo_mod.build(trees, shas[20], BUILD)
    assert culprit.ok and work_of(culprit.worktree) == 2_000_000 + 100_000 + 6_000
    broken = repo_mod.build(trees, shas[10], BUILD)
    assert not broken.ok and broken.returncode != 0 and "broken on purpose" in broken.log.read_text()
    assert broken.error == "prog.c:2:2: error: #error broken on purpose"
    assert not (broken.worktree / "prog").exists()
    trees.remove(shas[10])                                          # its step done: the worktree goes, the log stays
    assert not broken.worktree.exists() and broken.log.exists()
    assert git(path, "rev-parse", "HEAD") == head and not (path / "prog").exists()
    again = repo_mod.build(trees, shas[20], BUILD)                  # left by a killed bisect: reused
    assert again.reused and again.ok
    rebuilt = repo_mod.build(trees, shas[10], BUILD)                # its worktree gone: built again
    assert not rebuilt.reused and not rebuilt.ok
    trees.close()
    assert state(path) == before and not (path / ".git" / "timekit").exists()
    assert sorted(p.name for p in (results / "builds").glob("*.log")) == sorted(f"{shas[k][:12]}.log" for k in (0, 10, 20))


def test_two_bisects_of_one_repository_keep_their_own_worktrees(issue_repo):
    path, shas, results = issue_repo
    one, two = repo_mod.Worktrees(path, results / "one"), repo_mod.Worktrees(path, results / "two")
    assert one.root != two.root and one.root.parent == two.root.parent
    assert repo_mod.build(one, shas[3], BUILD).ok and repo_mod.build(two, shas[3], BUILD).ok
    one.close()
    assert two.path(shas[3]).exists() and (path / ".git" / "timekit").exists()
    two.close()
    assert not (path / ".git" / "timekit").exists()


def test_build_failing_on_good_is_one_line(issue_repo):
    path, shas, results = issue_repo
    trees = repo_mod.Worktrees(path, results)
    with pytest.raises(BuildFailsOnGood) as e:
        repo_mod.build_good(trees, shas[10], BUILD)
    text = one_line(e, results.resolve())
    assert text.startswith(f"the build command fails on GOOD {shas[10][:12]} (exit 2): prog.c:2:2: error: #error "
                           "broken on purpose; see ") and text.endswith(f"builds/{shas[10][:12]}.log")
    with pytest.raises(BuildFailsOnGood):
        repo_mod.build_good(repo_mod.Worktrees(path, results / "other"), shas[0], "exit 3")
    trees.close()


def test_a_worktree_path_not_ours_or_dirty_is_one_line(issue_repo):
    path, shas, results = issue_repo
    trees = repo_mod.Worktrees(path, results)
    stranger = trees.path(shas[5])
    stranger.mkdir(parents=True)
    with pytest.raises(WorktreeInTheWay) as e:
        repo_mod.build(trees, shas[5], BUILD)
    assert "is not a worktree of" in one_line(e, stranger, path)
    git(path, "worktree", "add", "--detach", "-q", str(trees.path(shas[7])), shas[6])
    with pytest.raises(WorktreeInTheWay) as e:        # a worktree of the repository, at another commit
        repo_mod.build(trees, shas[7], BUILD)
    assert "is not a worktree of" in one_line(e, trees.path(shas[7]), path)
    built = repo_mod.build(trees, shas[8], BUILD)     # then a killed bisect leaves it, and someone edits it
    (built.worktree / "prog.c").write_text("/* changed by hand */\n")
    with pytest.raises(WorktreeInTheWay) as e:
        repo_mod.build(trees, shas[8], BUILD)
    text = one_line(e, built.worktree)
    assert text.count(str(built.worktree)) == 1 and len(text) - len(str(built.worktree)) < 150, text
    assert "is dirty" in text and "prog.c" in text
    suggested = text.split("resume: ", 1)[1]                     # the command it names, run as it says
    assert suggested == f"git worktree remove --force {built.worktree}"
    subprocess.run(suggested.split(), cwd=path, check=True)
    assert repo_mod.build(trees, shas[8], BUILD).ok
    trees.close()                                     # what an error named is left for the user to look at
    assert stranger.exists() and trees.path(shas[7]).exists() and not trees.path(shas[8]).exists()
    shutil.rmtree(stranger)
    git(path, "worktree", "remove", "--force", str(trees.path(shas[7])))
    trees.close()
    assert not (path / ".git" / "timekit").exists() and git(path, "worktree", "list").count("\n") == 0


def test_a_worktree_deleted_by_hand_is_added_again(issue_repo):
    path, shas, results = issue_repo
    trees = repo_mod.Worktrees(path, results)
    built = repo_mod.build(trees, shas[2], BUILD)
    shutil.rmtree(built.worktree)
    again = repo_mod.build(trees, shas[2], BUILD)
    assert again.ok and not again.reused and work_of(again.worktree) == 2_000_000
    trees.close()


def test_a_worktree_add_cut_short_is_removed_all_the_same(issue_repo):
    """`git worktree add` killed half way leaves a locked, half checked-out worktree: close removes it."""
    path, shas, results = issue_repo
    before = state(path)
    trees = repo_mod.Worktrees(path, results)
    trees.add(shas[4])
    git(path, "worktree", "lock", str(trees.path(shas[4])))
    (trees.path(shas[4]) / "prog.c").unlink()
    trees.close()
    assert state(path) == before and not (path / ".git" / "timekit").exists()


GOOD_C = "int main(void) { return 0; }\n"
MAKEFILE = "prog: prog.c\n\t$(CC) -O1 -o prog prog.c\n"
# (files of the commit, build command, what the line that says why begins or ends with): each failure
# as make, gcc, ld, the shell, coreutils, git and Python really write it
FAILURES = {
    "no rule": ({"Makefile": "prog: prog.c missing.h\n\t$(CC) -o prog prog.c\n"}, "make",
                "make: *** No rule to make target 'missing.h', needed by 'prog'.  Stop."),
    "compiler": ({"prog.c": "int main(void) { return 0 }\n"}, "make",
                 re.compile(r"^prog\.c:1:\d+: error: expected .;. before .}. token$")),   # the locale's quotes
    "linker": ({"prog.c": "int missing(void);\nint main(void) { return missing(); }\n"}, "make",
               "undefined reference to `missing'"),
    "no command": ({}, "nosuchtool --version && make -s prog", "sh: 1: nosuchtool: not found"),
    "no file": ({}, "cp data.in data.out && make -s prog", "cp: cannot stat 'data.in': No such file or directory"),
    "git": ({}, "git describe --tags && make -s prog", "fatal: No names found, cannot describe anything."),
    "python": ({}, "python3 -c 'import nosuchmodule'", "ModuleNotFoundError: No module named 'nosuchmodule'"),
    "sub-make": ({"sub/Makefile": "all:\n\t@echo building; exit 3\n"}, "make -C sub", "make: *** [Makefile:2: all] Error 3"),
    "plain": ({}, "echo step one; echo giving up; exit 1", "giving up"),
}


def commit(path, files, message):
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "--allow-empty", "-m", message)
    return git(path, "rev-parse", "HEAD")


@pytest.fixture
def failures_repo(scratch):
    """GOOD, then one commit per failure, each on GOOD's files."""
    path = scratch / "failing"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    good = commit(path, {"Makefile": MAKEFILE, "prog.c": GOOD_C, ".gitignore": "prog\n"}, "good")
    shas = {}
    for name, (files, _, _) in FAILURES.items():
        git(path, "checkout", "-q", "--detach", good)
        shas[name] = commit(path, files, name)
    git(path, "checkout", "-q", "main")
    return path, shas


@pytest.mark.parametrize("name", FAILURES)
def test_a_failed_build_quotes_the_line_that_says_why(failures_repo, scratch, name):
    """The first line that names an error (make's '***' lines have no word 'error'), not make's last
    line ('Leaving directory') nor the tail of the log; the real tools write the logs."""
    path, shas = failures_repo
    _, command, said = FAILURES[name]
    trees = repo_mod.Worktrees(path, scratch / "results")
    built = repo_mod.build(trees, shas[name], command)
    trees.close()
    log = built.log.read_text()
    assert not built.ok and built.log.exists(), log
    assert re.search(said if isinstance(said, re.Pattern) else f"^{re.escape(said)}|{re.escape(said)}$", built.error), \
        (built.error, log)
    if name == "sub-make":
        assert log.strip().splitlines()[-1].startswith("make: Leaving directory")
    if name == "compiler":
        assert log.splitlines()[0].startswith("cc ") and "In function" in log   # what comes before it
    with pytest.raises(BuildFailsOnGood) as e:
        repo_mod.build_good(repo_mod.Worktrees(path, scratch / "again"), shas[name], command)
    assert f": {built.error}; see " in str(e.value)


SIGNAL_IN_A_REMOVAL = """
import os, signal, sys, time
from analysis.sweep import steps_loop
from analysis.sweep.model import Interrupted
from analysis.products.bisect import repo as repo_mod

trees = repo_mod.Worktrees(sys.argv[1], sys.argv[2])
trees.add(sys.argv[3])
removing = repo_mod._remove

def remove(repo, path):
    os.kill(os.getpid(), signal.SIGTERM)   # as a CI job's cancel would, half way
    time.sleep(0.2)
    removing(repo, path)
    print("removed", flush=True)

repo_mod._remove = remove
with steps_loop.signals_interrupt():
    try:
        trees.remove(sys.argv[3])
    except Interrupted as e:
        print("then interrupted:", e.signal_name)
"""


def test_a_signal_during_a_removal_is_handled_after_it(issue_repo):
    """In a process of its own: the kit's handler raises once per process."""
    path, shas, results = issue_repo
    before = state(path)
    done = subprocess.run([sys.executable, "-c", SIGNAL_IN_A_REMOVAL, str(path), str(results), shas[3]],
                          capture_output=True, text=True, cwd=REPO)
    assert done.stdout.split("\n") == ["removed", "then interrupted: SIGTERM", ""], done.stdout + done.stderr
    assert state(path) == before
