"""
The git side of bisect: GOOD and BAD as SHAs, the commits between them on BAD's first-parent line
(where "slower than GOOD" can switch only once, so a binary search is sound), and one worktree and
build per commit under the results directory, never in the user's checkout. `<sha12>.build.json`
beside each records its build, so that a resume neither rebuilds nor trusts a changed worktree.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from analysis.core.errors import UserError
from analysis.sweep.model import write_atomically

WORKTREES = "worktrees"
BUILD_LOG = "build.log"


class GitError(UserError):
    """A git command failed where it should not (one line: the command and git's first line)."""


class NotARepository(GitError):
    """The directory is not inside a git repository."""


class UnknownRevision(GitError):
    """GOOD or BAD names no commit."""


class NotAncestor(GitError):
    """GOOD is not an ancestor of BAD (or is BAD itself)."""


class OffFirstParent(NotAncestor):
    """GOOD came into BAD's history through a merge, off BAD's first-parent line."""


class WorktreeInTheWay(GitError):
    """A worktree path exists but is not this repository's worktree at the commit, or is dirty."""


class BuildFailsOnGood(GitError):
    """The build command fails on GOOD: nothing can be compared with it."""


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str

    @property
    def short(self) -> str:
        return self.sha[:12]


@dataclass(frozen=True)
class Build:
    """One commit's build: where (worktree, log), whether it built, and whether it was reused."""

    sha: str
    worktree: Path
    log: Path
    ok: bool
    returncode: int
    seconds: float
    command: str
    reused: bool = False

    def to_dict(self) -> dict:
        return {"sha": self.sha, "worktree": str(self.worktree), "log": str(self.log), "ok": self.ok,
                "returncode": self.returncode, "seconds": self.seconds, "command": self.command,
                "reused": self.reused}


def _one_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else "no message"


def _git(repo, *args, error=GitError, check=True) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitError("git: not found on PATH; install git (Debian package git)") from None
    if check and done.returncode != 0:
        raise error(f"{repo}: git {args[0]} failed: {_one_line(done.stderr)}")
    return done


def open_repo(path=".") -> Path:
    """The top directory of the git repository at `path` (the current directory by default)."""
    path = Path(path)
    if not path.is_dir():
        raise NotARepository(f"{path}: no such directory, so no git repository (give --repo DIR)")
    done = _git(path, "rev-parse", "--show-toplevel", check=False)
    if done.returncode != 0:
        raise NotARepository(f"{path.resolve()}: not a git repository with a work tree "
                             f"({_one_line(done.stderr)}); run bisect inside one or give --repo DIR")
    return Path(done.stdout.strip())


def resolve(repo, rev: str) -> str:
    """The full SHA of the commit `rev` names (a tag, a branch, HEAD~3, a short SHA)."""
    done = None if rev.startswith("-") else _git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}",
                                                  check=False)
    if done is None or done.returncode != 0:
        raise UnknownRevision(f"{rev}: unknown revision in {repo} (no commit of that name; "
                              "try git log --oneline)")
    return done.stdout.strip()


def describe(repo, sha: str) -> Commit:
    return Commit(sha, _git(repo, "log", "-1", "--format=%s", sha).stdout.strip())


def commits_between(repo, good: str, bad: str) -> list[Commit]:
    """BAD's first-parent line after GOOD, oldest first, BAD last; GOOD must be an ancestor on it."""
    if good == bad:
        raise NotAncestor(f"GOOD and BAD are the same commit {good[:12]}: there is nothing between them to bisect")
    ancestor = _git(repo, "merge-base", "--is-ancestor", good, bad, check=False)
    if ancestor.returncode == 1:
        raise NotAncestor(f"GOOD {good[:12]} is not an ancestor of BAD {bad[:12]} in {repo}: GOOD must be older, "
                          "in BAD's history (swapped? see git merge-base GOOD BAD)")
    if ancestor.returncode != 0:
        raise GitError(f"{repo}: git merge-base failed: {_one_line(ancestor.stderr)}")
    out = _git(repo, "log", "--first-parent", "--ancestry-path", "--reverse", "--format=%H%x00%P%x00%s",
               f"{good}..{bad}").stdout
    commits, parent = [], good
    for line in out.splitlines():
        sha, parents, subject = line.split("\0", 2)
        if parents.split()[:1] != [parent]:
            break
        commits.append(Commit(sha, subject))
        parent = sha
    if not commits or commits[-1].sha != bad:
        raise OffFirstParent(f"GOOD {good[:12]} is not on BAD {bad[:12]}'s first-parent line (a merge brought it "
                             "in): give a GOOD that git log --first-parent BAD lists")
    return commits


def worktree_path(root, sha: str) -> Path:
    return Path(root).resolve() / WORKTREES / sha[:12]


def _record_path(root, sha: str) -> Path:
    return Path(root).resolve() / WORKTREES / f"{sha[:12]}.build.json"


def _registered(repo) -> dict[Path, str]:
    """This repository's worktrees: path -> the commit checked out there."""
    found, path = {}, None
    for line in _git(repo, "worktree", "list", "--porcelain").stdout.splitlines():
        if line.startswith("worktree "):
            path = Path(line[len("worktree "):]).resolve()
        elif line.startswith("HEAD ") and path is not None:
            found[path] = line[len("HEAD "):]
    return found


def _status(worktree: Path) -> str:
    """Changes to tracked files (untracked build products and build.log are no change)."""
    return _git(worktree, "status", "--porcelain", "--untracked-files=no").stdout


def worktree(repo, sha: str, root) -> Path:
    """The worktree of `sha` under ROOT/worktrees/: added detached, or reused where it is ours."""
    path = worktree_path(root, sha)
    if path.exists():
        if _registered(repo).get(path) != sha:
            raise WorktreeInTheWay(f"{path}: exists but is not a worktree of {repo} at {sha[:12]}; remove it "
                                   "or give another results directory")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    _git(repo, "worktree", "prune")   # a worktree deleted by hand is still registered until pruned
    _git(repo, "worktree", "add", "--detach", "--quiet", str(path), sha)
    return path


def _run(command: str, cwd: Path, log: Path) -> int:
    """`sh -c COMMAND` in cwd, output to log; its whole process group ends if we are interrupted."""
    with open(log, "wb") as out:
        process = subprocess.Popen(["sh", "-c", command], cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return process.wait()
        except BaseException:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
            raise


def build(repo, sha: str, root, command: str) -> Build:
    """Build `sha` in its worktree with `sh -c COMMAND` (log: build.log in it); reuse a build of the
    same command whose worktree is as the build left it. A failed build is a result (ok False: the
    commit is skipped), not an error; a worktree changed since is an error."""
    path = worktree(repo, sha, root)
    record_path = _record_path(root, sha)
    record = json.loads(record_path.read_text()) if record_path.exists() else None
    status = _status(path)
    expected = record["status"] if record else ""
    if status != expected:
        raise WorktreeInTheWay(f"{path}: the worktree of {sha[:12]} is dirty ({_one_line(status)} changed since "
                               f"{'its build' if record else 'checkout'}); remove it (git worktree remove --force "
                               f"{path}) and run again")
    log = path / BUILD_LOG
    if record and record["command"] == command:
        return Build(sha, path, log, record["ok"], record["returncode"], record["seconds"], command, reused=True)
    start = time.monotonic()
    returncode = _run(command, path, log)
    seconds = round(time.monotonic() - start, 3)
    write_atomically(record_path, json.dumps({"sha": sha, "command": command, "ok": returncode == 0,
                                              "returncode": returncode, "seconds": seconds,
                                              "status": _status(path)}, indent=1) + "\n")
    return Build(sha, path, log, returncode == 0, returncode, seconds, command)


def log_tail(log: Path) -> str:
    """The line of a build log that says why: the first naming an error (as compilers do), else the last."""
    try:
        text = [line.strip() for line in Path(log).read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    errors = [line for line in text if re.search(r"\berror\b", line, re.IGNORECASE)]
    return (errors or text or ["no output"])[0 if errors else -1]


def build_good(repo, sha: str, root, command: str) -> Build:
    """GOOD's build; one that fails is an error, as nothing could be compared with GOOD."""
    done = build(repo, sha, root, command)
    if not done.ok:
        raise BuildFailsOnGood(f"the build command fails on GOOD {sha[:12]} (exit {done.returncode}): "
                               f"{log_tail(done.log)}; see {done.log}")
    return done


def remove_worktrees(repo, root) -> list[Path]:
    """Remove the worktrees bisect added under ROOT (after a bisect, when the builds are no longer wanted)."""
    removed = []
    for path, _ in _registered(repo).items():
        if path.parent == Path(root).resolve() / WORKTREES:
            _git(repo, "worktree", "remove", "--force", str(path))
            _record_path(root, path.name).unlink(missing_ok=True)
            removed.append(path)
    return removed
