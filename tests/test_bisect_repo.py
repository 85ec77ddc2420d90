"""bisect's git side on a real repository of a C program (tests/bisect_repo.py): the commits between
GOOD and BAD, worktrees and builds under the results directory, skipped builds, reuse on resume, and
each bad input as one line. Builds with gcc, times nothing."""

import shutil

import pytest

from analysis.tools.bisect import repo as repo_mod
from analysis.tools.bisect.repo import (BuildFailsOnGood, NotAncestor, NotARepository, OffFirstParent,
                                        UnknownRevision, WorktreeInTheWay)
from tests.bisect_repo import git, issue_work, make_repo, work_of

pytestmark = pytest.mark.unit

BUILD = "make -s prog"


@pytest.fixture
def issue_repo(scratch):
    """The issue's repository (33 commits after GOOD), commit 10 broken, 11 repairing it."""
    shas = make_repo(scratch / "repo", issue_work(), broken={10})
    return scratch / "repo", shas, scratch / "results"


def one_line(error):
    text = str(error.value)
    assert "\n" not in text and text.strip() == text and len(text) < 300
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


def test_builds_in_worktrees_never_touch_the_checkout(issue_repo):
    path, shas, results = issue_repo
    head, status = git(path, "rev-parse", "HEAD"), git(path, "status", "--porcelain")
    good = repo_mod.build_good(path, shas[0], results, BUILD)
    assert good.ok and not good.reused and good.worktree == results.resolve() / "worktrees" / shas[0][:12]
    assert good.log == good.worktree / "build.log" and good.log.exists()
    assert work_of(good.worktree) == 2_000_000
    culprit = repo_mod.build(path, shas[20], results, BUILD)
    assert culprit.ok and work_of(culprit.worktree) == 2_000_000 + 100_000 + 6_000
    broken = repo_mod.build(path, shas[10], results, BUILD)
    assert not broken.ok and broken.returncode != 0 and "broken on purpose" in broken.log.read_text()
    assert not (broken.worktree / "prog").exists()
    assert git(path, "rev-parse", "HEAD") == head and git(path, "status", "--porcelain") == status
    assert not (path / "prog").exists()
    again = repo_mod.build(path, shas[10], results, BUILD)         # on resume: the record, no new build
    assert again.reused and not again.ok and again.returncode == broken.returncode
    assert repo_mod.build(path, shas[20], results, "make -s -B prog").reused is False   # another command
    removed = repo_mod.remove_worktrees(path, results)
    assert len(removed) == 3 and not (results / "worktrees" / shas[0][:12]).exists()


def test_build_failing_on_good_is_one_line(issue_repo):
    path, shas, results = issue_repo
    with pytest.raises(BuildFailsOnGood) as e:
        repo_mod.build_good(path, shas[10], results, BUILD)
    text = one_line(e)
    assert text.startswith(f"the build command fails on GOOD {shas[10][:12]} (exit 2)") and "build.log" in text
    with pytest.raises(BuildFailsOnGood):
        repo_mod.build_good(path, shas[0], results / "other", "exit 3")


def test_a_worktree_path_not_ours_or_dirty_is_one_line(issue_repo):
    path, shas, results = issue_repo
    stranger = results / "worktrees" / shas[5][:12]
    stranger.mkdir(parents=True)
    with pytest.raises(WorktreeInTheWay) as e:
        repo_mod.build(path, shas[5], results, BUILD)
    assert "is not a worktree of" in one_line(e)
    git(path, "worktree", "add", "--detach", "-q", str(results / "worktrees" / shas[7][:12]), shas[6])
    with pytest.raises(WorktreeInTheWay) as e:        # a worktree of the repository, at another commit
        repo_mod.build(path, shas[7], results, BUILD)
    assert "is not a worktree of" in one_line(e)
    built = repo_mod.build(path, shas[8], results, BUILD)
    (built.worktree / "prog.c").write_text("/* changed by hand */\n")
    with pytest.raises(WorktreeInTheWay) as e:
        repo_mod.build(path, shas[8], results, BUILD)
    assert "is dirty" in one_line(e) and "prog.c" in one_line(e)


def test_a_worktree_deleted_by_hand_is_added_again(issue_repo):
    path, shas, results = issue_repo
    built = repo_mod.build(path, shas[2], results, BUILD)
    shutil.rmtree(built.worktree)
    (results / "worktrees" / f"{shas[2][:12]}.build.json").unlink()
    again = repo_mod.build(path, shas[2], results, BUILD)
    assert again.ok and not again.reused and work_of(again.worktree) == 2_000_000
