"""A real small git repository of a C program for the bisect tests (and the bisect benchmark).

Commit 0 (GOOD) loops BASE times; commit k changes the loop count by work[k - 1] iterations (0: only
a comment changes) and may break the build (`#error`), which the next commit repairs. The program
prints `work=N`, so a test can read what a commit costs without timing it.
"""

import os
import subprocess
from pathlib import Path

BASE = 2_000_000
PROGRAM = """#include <stdio.h>
{broken}/* commit {k}: {subject} */
#define WORK {work}L
int main(void) {{
    volatile unsigned long x = 0;
    for (long i = 0; i < WORK; i++) x += (unsigned long)i ^ (x >> 3);
    printf("work=%ld\\n", WORK);
    return 0;
}}
"""
MAKEFILE = "prog: prog.c\n\t$(CC) -O1 -o prog prog.c\n"
ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo, *args):
    env = {**os.environ, **ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def make_repo(path, work, broken=(), base=BASE):
    """A repository at PATH: GOOD and len(work) commits after it (work[k - 1]: iterations commit k
    adds); commits in `broken` (1-based) do not compile. Returns the SHAs, GOOD first."""
    path = Path(path)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "Makefile").write_text(MAKEFILE)
    (path / ".gitignore").write_text("prog\n")
    shas, count = [], base
    for k in range(len(work) + 1):
        count += work[k - 1] if k else 0
        subject = "initial" if k == 0 else (f"add {work[k - 1]} iterations" if work[k - 1] else f"tidy {k}")
        (path / "prog.c").write_text(PROGRAM.format(k=k, subject=subject, work=count,
                                                    broken="#error broken on purpose\n" if k in broken else ""))
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", subject, "--date", f"2024-01-01T00:{k // 60:02d}:{k % 60:02d}")
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas


def issue_work(commits=33, culprit=20, small=(7, 26)):
    """The issue's repository: `culprit` adds 5 % work, the two `small` 0.3 % each, the rest nothing."""
    work = [0] * commits
    work[culprit - 1] = BASE // 20
    for k in small:
        work[k - 1] = BASE * 3 // 1000
    return work


def work_of(worktree):
    """What the program built in WORKTREE says it does (its loop count)."""
    out = subprocess.run(["./prog"], cwd=worktree, check=True, capture_output=True, text=True).stdout
    return int(out.split("work=")[1].split()[0])
