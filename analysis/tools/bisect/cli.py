"""
`timekit bisect GOOD BAD --build CMD RUN`: which commit made RUN slower. Each step builds a commit in
a worktree of its own and compares RUN there with RUN in GOOD's worktree through `timekit ab`'s
machinery (analysis.ab.api: the design checked, --until-decided, outside work set aside), at
the search's share of alpha; the answer's last line names the culprit.
"""

from __future__ import annotations

import datetime
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from analysis.core import argtypes
from analysis.core.errors import UserError
from analysis.tools.bisect import repo as repo_mod
from analysis.tools.bisect.manifest import Manifest

STEP_BUDGET = 120.0  # seconds of A/B invocations a step may take by default


class BisectError(UserError):
    """A bisect cannot start (one line for the user)."""


@dataclass(frozen=True)
class BisectOptions:
    """`timekit bisect`: the revisions, the commands, the error budget and where the results go."""

    good: str
    bad: str
    run: str                    # the command timed in each commit's worktree
    build: str                  # the build command (sh -c) run there first
    repo: str = "."
    threshold: float = 0.02
    alpha: float = 0.05         # the chance that the named commit is wrong, over all steps
    budget: float = STEP_BUDGET  # seconds of one step's A/B invocations
    output: Optional[Path] = None
    resume: bool = False


def options(args) -> BisectOptions:
    """The one place `timekit bisect`'s argparse namespace is read."""
    return BisectOptions(args.good, args.bad, args.run, args.build, args.repo, args.threshold, args.alpha, args.budget,
                         args.output, args.resume)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "bisect", help="find the commit that made a command slower, every step a decided A/B verdict",
        description="Bisect GOOD..BAD (BAD's first-parent line) for the first commit whose RUN is slower than "
                    "GOOD's beyond --threshold. Each commit is built in a git worktree under the results "
                    "directory (your checkout is never touched; a build that fails skips the commit, as git "
                    "bisect skip) and compared with GOOD as `timekit ab --until-decided` compares two commands. "
                    "The chance that the named commit is wrong is at most --alpha over all steps (each step "
                    "decided at alpha / planned steps). Exit 0 with a culprit, a range or a spread slowdown; 3 "
                    "when BAD is not shown slower; 2 on bad input.",
        epilog="example: timekit bisect v1.4 main --build 'make -j2' './prog data.txt'")
    parser.add_argument("good", metavar="GOOD", help="a revision whose RUN is as fast as it should be")
    parser.add_argument("bad", metavar="BAD", help="a later revision whose RUN is slower")
    parser.add_argument("run", metavar="RUN", help="the command to time, run in each commit's worktree")
    parser.add_argument("--build", required=True, metavar="CMD", help="the build command, run in each worktree (sh -c)")
    parser.add_argument("--repo", default=".", help="the git repository (default: the current directory)")
    parser.add_argument("--threshold", type=argtypes.probability, default=0.02,
                        help="the smallest slowdown that counts, as a fraction (default 0.02: 2 %%)")
    parser.add_argument("--alpha", type=argtypes.probability, default=0.05,
                        help="the chance that the named commit is wrong, over all steps (default 0.05)")
    parser.add_argument("--budget", type=argtypes.duration, default=STEP_BUDGET,
                        help="wall time of one step's A/B invocations before it stays undecided (default 2m)")
    parser.add_argument("--output", type=Path, help="results directory (default: results/bisect/DATE here)")
    parser.add_argument("--resume", action="store_true", help="continue the bisect in --output after an interruption")
    return parser


def run(args, out=sys.stderr):
    return bisect(options(args), out)


def bisect(options: BisectOptions, out=sys.stderr) -> int:
    """The command: returns its exit code (0 a culprit, range or spread; 3 BAD not slower)."""
    from analysis.tools.bisect import answer as answer_mod  # scipy and matplotlib: after parsing
    from analysis.tools.bisect import report as report_mod
    from analysis.tools.bisect.search import planned_steps, search, step_alpha

    repo = repo_mod.open_repo(options.repo)
    good, bad = repo_mod.resolve(repo, options.good), repo_mod.resolve(repo, options.bad)
    commits = repo_mod.commits_between(repo, good, bad)
    outdir = _output(options)
    params = {"good": good, "bad": bad, "build": options.build, "run": options.run, "threshold": options.threshold,
              "alpha": options.alpha}
    record = Manifest.open(outdir, params, resume=options.resume)
    built_good = repo_mod.build_good(repo, good, outdir, options.build)
    per_step = step_alpha(options.alpha, len(commits))
    print(f"bisect: {len(commits)} commits after {good[:12]} up to {bad[:12]}, at most {planned_steps(len(commits))} "
          f"steps at alpha {per_step:.3g} each; results in {outdir}", file=out, flush=True)
    compare = ABStep(repo, outdir, built_good.worktree, options, per_step, record, out)
    outcome = search([c.sha for c in commits], compare, per_step, manifest=record,
                     progress=lambda taken, left, steps: print(
                         answer_mod.progress_line(taken, commits[taken.index], left, steps), file=out, flush=True))
    found = answer_mod.make(repo_mod.describe(repo, good), commits, outcome, options.threshold, compare.builds)
    record.extra["answer"] = found.to_dict()
    record.save()
    paths = report_mod.write(found, outdir / "report", environment={"build": options.build, "run": options.run})
    print(f"report: {paths['html']}", file=out)
    print("\n".join(answer_mod.lines(found)))
    return found.exit_code


def _output(options):
    if options.output:
        return options.output.resolve()
    if options.resume:
        raise BisectError("--resume: give the bisect's directory with --output")
    return (Path.cwd() / "results" / "bisect" / datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")).resolve()


class ABStep:
    """compare(sha) for the search: build the commit, then RUN in its worktree against RUN in
    GOOD's, as `timekit ab --until-decided` does, at the step's alpha; a commit that does not
    build is skipped."""

    def __init__(self, repo, outdir, good_tree, options, alpha, record, out):
        self.repo, self.outdir, self.good_tree, self.options = repo, outdir, good_tree, options
        self.alpha, self.record, self.out = alpha, record, out
        self.builds = dict(record.extra.get("builds", {}))

    def __call__(self, sha):
        from analysis.ab import api
        from analysis.tools.bisect.search import Step
        from analysis.tools.options import AbOptions

        done = repo_mod.build(self.repo, sha, self.outdir, self.options.build)
        self.builds[sha] = done.to_dict()
        self.record.extra["builds"] = self.builds
        self.record.save()
        if not done.ok:
            return Step("skipped", detail={"build_log": str(done.log), "returncode": done.returncode})
        directory = self.outdir / "steps" / sha[:12]
        resume = (directory / "paired.json").exists()
        step_options = AbOptions(
            base=None if resume else _in(self.good_tree, self.options.run),
            new=None if resume else _in(done.worktree, self.options.run),
            until_decided=True, budget=self.options.budget, alpha=self.alpha, threshold=self.options.threshold,
            columns=("cputime",), output=directory, resume=resume, command_line=f"timekit bisect step {sha[:12]}")
        found = api.compare_commands(step_options.base, step_options.new, step_options, directory,
                                     out=_Indented(self.out))
        return Step(found.verdict, found.ratio, found.ci_low, found.ci_high, 0.95,
                    detail={"directory": str(directory), "invocations": found.invocations,
                            "seconds": round(found.seconds, 1), "design": found.design, "reason": found.reason,
                            "busy_from_outside": bool(found.busy_from_outside)})


def _in(tree, command):
    """COMMAND run in the worktree `tree`: both sides pay the same cd."""
    return f"cd {shlex.quote(str(tree))} && {command}"


class _Indented:
    """ab's progress lines, indented under the bisect step they belong to."""

    def __init__(self, out):
        self.out = out

    def write(self, text):
        self.out.write(text.replace("\n", "\n    ") if text.strip() else text)

    def flush(self):
        self.out.flush()
