"""
The git side of bisect: GOOD and BAD as SHAs, the commits between them on BAD's first-parent line
(where "slower than GOOD" can switch only once, so a binary search is sound), and one worktree and
build per commit. The worktrees live under the repository's git directory
(`<git-common-dir>/timekit/<run key>/<sha12>`), never in its working tree, and each goes as soon
as its step is done: the user's `git status` and `git worktree list` stay as they were. Build logs
and records (`OUTDIR/builds/<sha12>.log`, `.build.json`) stay in the results directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from analysis.core.deferred import signals_deferred
from analysis.core.errors import UserError
from analysis.machine import guard
from analysis.sweep.model import write_atomically

BUILDS = "builds"


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
    error: str = ""     # the log's line that says why it failed ("" where it built)

    def to_dict(self) -> dict:
        return {"sha": self.sha, "worktree": str(self.worktree), "log": str(self.log), "ok": self.ok,
                "returncode": self.returncode, "seconds": self.seconds, "command": self.command,
                "reused": self.reused, "error": self.error}


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


def in_work_tree(path) -> bool:
    """Whether `path` (or, where it does not exist yet, its nearest existing parent) lies in a git
    working tree, where git would list new files under it as untracked."""
    path = Path(path).resolve()
    existing = next(p for p in [path, *path.parents] if p.exists())
    done = _git(existing, "rev-parse", "--is-inside-work-tree", check=False)
    return done.returncode == 0 and done.stdout.strip() == "true"


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


def common_dir(repo) -> Path:
    """The repository's git directory shared by all its worktrees (`.git` of the main one)."""
    return (Path(repo) / _git(repo, "rev-parse", "--git-common-dir").stdout.strip()).resolve()


def run_key(outdir) -> str:
    """A short name for one bisect's worktrees, from its results directory: two bisects of the same
    repository at once do not share worktrees, and a resumed one finds its own paths again."""
    return hashlib.sha256(str(Path(outdir).resolve()).encode()).hexdigest()[:12]


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
    """Changes to tracked files (untracked build products are no change)."""
    return _git(worktree, "status", "--porcelain", "--untracked-files=no").stdout


class Worktrees:
    """One bisect's worktrees, `<git-common-dir>/timekit/<run key>/<sha12>`: outside the working
    tree, so git lists nothing new there; each removed when its step is done (`remove`), all when
    the bisect ends however it ends (`close`). Logs and build records go to OUTDIR/builds/."""

    def __init__(self, repo, outdir):
        self.repo, self.outdir = Path(repo), Path(outdir).resolve()
        self.root = common_dir(repo) / "timekit" / run_key(self.outdir)
        self.kept = set()   # paths an error names for the user to look at: close leaves them

    def keep(self, path: Path, error: Exception) -> Exception:
        """`error`, about `path`, which close then leaves as it is (it may hold someone's edits)."""
        self.kept.add(path)
        return error

    def path(self, sha: str) -> Path:
        return self.root / sha[:12]

    def log(self, sha: str) -> Path:
        return self.outdir / BUILDS / f"{sha[:12]}.log"

    def record(self, sha: str) -> Path:
        return self.outdir / BUILDS / f"{sha[:12]}.build.json"

    def add(self, sha: str) -> tuple[Path, bool]:
        """(the worktree of `sha`, whether it was there already: left by a bisect that was killed)."""
        path = self.path(sha)
        if path.exists():
            if _registered(self.repo).get(path) != sha:
                raise self.keep(path, WorktreeInTheWay(f"{path}: exists but is not a worktree of {self.repo} at "
                                                       f"{sha[:12]}; remove it or give another --output"))
            return path, True
        self.root.mkdir(parents=True, exist_ok=True)
        _git(self.repo, "worktree", "prune")   # a worktree deleted by hand is still registered until pruned
        _git(self.repo, "worktree", "add", "--detach", "--quiet", str(path), sha)
        self.kept.discard(path)   # the one an error named is gone: this one is ours to remove
        return path, False

    def remove(self, sha: str) -> None:
        with signals_deferred():
            _remove(self.repo, self.path(sha))

    def close(self) -> None:
        """Every worktree of this bisect removed and unregistered, its folders under the git directory
        gone, but those an error named (`kept`)."""
        with signals_deferred():
            for path in [p for p in _registered(self.repo) if p.parent == self.root and p not in self.kept]:
                _remove(self.repo, path)
            for path in [p for p in self.root.glob("*") if p not in self.kept]:
                shutil.rmtree(path, ignore_errors=True)
            _git(self.repo, "worktree", "prune", check=False)
            for folder in (self.root, self.root.parent):   # <git-common-dir>/timekit, where no other bisect uses it
                with contextlib.suppress(OSError):
                    folder.rmdir()


def _remove(repo, path: Path) -> None:
    """`git worktree remove --force` and prune; a worktree whose `git worktree add` was cut short
    (locked, half checked out) goes too."""
    if path in _registered(repo):
        _git(repo, "worktree", "remove", "--force", "--force", str(path), check=False)
    shutil.rmtree(path, ignore_errors=True)
    _git(repo, "worktree", "prune", check=False)
    if path in _registered(repo):   # still locked: prune keeps locked worktrees
        _git(repo, "worktree", "unlock", str(path), check=False)
        _git(repo, "worktree", "prune", check=False)


def _run(command: str, cwd: Path, log: Path) -> int:
    """`sh -c COMMAND` in cwd, output to log, in a process group of its own that dies with the kit;
    the whole group is killed at once if we are interrupted (the kit then ends within a second)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        process = guard.popen(["sh", "-c", command], guard.in_own_group_dying_with_kit, cwd=cwd,
                              stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        try:
            return process.wait()
        except BaseException:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise


def build(trees: Worktrees, sha: str, command: str) -> Build:
    """Build `sha` in its worktree with `sh -c COMMAND`, the log in OUTDIR/builds/. A worktree a
    killed bisect left behind is reused where its build finished and it is as the build left it;
    a failed build is a result (ok False: the commit is skipped), not an error."""
    path, existed = trees.add(sha)
    record = _read(trees.record(sha)) if existed else None
    if existed and (record is None or record.get("command") != command):   # its build was cut short
        trees.remove(sha)
        path, existed = trees.add(sha)
    if existed:
        changed = _status(path)
        if changed != record.get("status", ""):
            raise trees.keep(path, WorktreeInTheWay(f"the worktree of {sha[:12]} is dirty ({_one_line(changed)} "
                                                    f"changed since its build); remove it and resume: "
                                                    f"git worktree remove --force {path}"))
        return _built(sha, path, trees.log(sha), record, command, reused=True)
    start = time.monotonic()
    returncode = _run(command, path, trees.log(sha))
    record = {"sha": sha, "command": command, "ok": returncode == 0, "returncode": returncode,
              "seconds": round(time.monotonic() - start, 3), "status": _status(path)}
    write_atomically(trees.record(sha), json.dumps(record, indent=1) + "\n")
    return _built(sha, path, trees.log(sha), record, command)


def _read(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _built(sha, path, log, record, command, reused=False) -> Build:
    return Build(sha, path, log, record["ok"], record["returncode"], record["seconds"], command, reused,
                 "" if record["ok"] else build_error(log))


# The lines that say why a build failed, as compilers, linkers, make, shells and git write them.
ERROR_LINE = re.compile("|".join([
    r"\*\*\*",                        # make: *** No rule to make target 'x', needed by 'y'.  Stop.
    r"\berror\b(\[\w+\])?:",          # gcc/clang 'prog.c:3:1: error:', ld's 'collect2: error:', rustc 'error[E0425]:'
    r"\w+Error:",                     # Python's 'ModuleNotFoundError: ...'
    r"\bCMake Error\b",
    r"undefined reference to",
    r"command not found|: not found$",  # bash; dash: 'sh: 1: foo: not found'
    r"No such file or directory",
    r"^fatal:",                       # git
    r"Permission denied",
]), re.IGNORECASE)
NOISE = re.compile(r"^make(\[\d+\])?: (Entering|Leaving) directory")


def build_error(log: Path) -> str:
    """The line of a build log that says why it failed: the first that names an error (as compilers,
    make and shells write them), else the last that is not make's directory bookkeeping."""
    try:
        text = [line.strip() for line in Path(log).read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    said = [line for line in text if ERROR_LINE.search(line)]
    plain = [line for line in text if not NOISE.match(line)]
    return said[0] if said else (plain or ["no output"])[-1]


def build_good(trees: Worktrees, sha: str, command: str) -> Build:
    """GOOD's build; one that fails is an error, as nothing could be compared with GOOD."""
    done = build(trees, sha, command)
    if not done.ok:
        raise BuildFailsOnGood(f"the build command fails on GOOD {sha[:12]} (exit {done.returncode}): "
                               f"{done.error}; see {done.log}")
    return done
