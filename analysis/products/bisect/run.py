"""
What `timekit bisect` does, from its options to its answer: GOOD built in a worktree of its own,
the binary search whose every step builds a commit and compares RUN there with RUN in GOOD's
worktree through `timekit ab`'s machinery (analysis.ab.api: the design checked, until decided,
outside work set aside) at the search's share of alpha, and the answer and its report. The
worktrees go when their step is done, and when the bisect ends however it ends. The command line
(the parser, BisectOptions from argv) is analysis.products.bisect.cli.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from analysis.core import paths
from analysis.core.errors import UserError
from analysis.sweep.model import Interrupted
from analysis.tools.commands.cli import stamp
from analysis.products.bisect import repo as repo_mod
from analysis.products.bisect.manifest import NAME, Manifest

STEP_BUDGET = 120.0  # seconds of A/B invocations a step may take by default
# what bisect.json records, so that `--resume --output DIR` alone continues the bisect: the question
# (a resume must ask the same) and how a step measures (a resume may change it for the steps to come,
# e.g. add --ignore-failure where a RUN failed: each step's verdict is against GOOD in that step)
QUESTION = ("good", "bad", "run", "build", "repo", "threshold", "alpha")
HOW = ("budget", "ignore_failure", "container", "design")
RECORDED = QUESTION + HOW
DEFAULTS = {"repo": ".", "threshold": 0.02, "alpha": 0.05, "budget": STEP_BUDGET, "ignore_failure": False,
            "container": True, "design": "auto"}
REQUIRED = (("good", "GOOD"), ("bad", "BAD"), ("run", "RUN"), ("build", "--build CMD"))


class BisectError(UserError):
    """A bisect cannot start (one line for the user)."""


@dataclass(frozen=True)
class BisectOptions:
    """`timekit bisect`: the revisions, the commands, the error budget, how a step runs and where the
    results go; `given`: the options typed (a resume takes the others from bisect.json)."""

    good: Optional[str] = None
    bad: Optional[str] = None
    run: Optional[str] = None    # the command timed in each commit's worktree
    build: Optional[str] = None  # the build command (sh -c) run there first
    repo: str = "."
    threshold: float = 0.02
    alpha: float = 0.05          # the chance that the named commit is wrong, over all steps
    budget: float = STEP_BUDGET  # seconds of one step's A/B invocations
    ignore_failure: bool = False  # a step measures RUNs that exit non-zero (ab's --ignore-failure)
    container: bool = True       # a step runs RUN in BenchExec's container (ab's --no-container)
    design: str = "auto"         # a step's A/B design (ab's --design)
    verbose: bool = False
    output: Optional[Path] = None
    resume: bool = False
    given: frozenset = frozenset()


def bisect(options: BisectOptions, out=sys.stderr) -> int:
    """The command: returns its exit code (0 a culprit, range or spread; 3 BAD not slower). An
    interrupt removes the worktrees and leaves, naming the command that continues (exit 130 in main)."""
    from analysis.sweep import steps_loop

    outdir = _output(options)
    options = _settled(options, outdir)
    repo = repo_mod.open_repo(options.repo)
    good, bad = repo_mod.resolve(repo, options.good), repo_mod.resolve(repo, options.bad)
    commits = repo_mod.commits_between(repo, good, bad)
    params = {**{k: getattr(options, k) for k in QUESTION}, "good": good, "bad": bad, "repo": str(repo)}
    _results_dir(outdir, options.resume)
    with steps_loop.signals_interrupt(), steps_loop.locked(outdir):
        trees = repo_mod.Worktrees(repo, outdir)
        try:
            try:
                return _bisect(repo, commits, params, options, trees, outdir, out)
            finally:
                trees.close()   # success, error or interrupt: the repository as it was
        except (Interrupted, KeyboardInterrupt) as e:   # the outermost command names how to continue
            recorded = (outdir / NAME).exists()
            e.resume = f"timekit bisect --resume --output {shlex.quote(str(outdir))}" if recorded else None
            raise


def _bisect(repo, commits, params, options, trees, outdir, out) -> int:
    """The search from GOOD's build to the answer and its report."""
    from analysis.products.bisect import answer as answer_mod  # scipy and matplotlib: after parsing
    from analysis.products.bisect import report as report_mod
    from analysis.products.bisect.search import planned_steps, search, step_alpha

    good = params["good"]
    record = Manifest.open(outdir, params, resume=options.resume)
    record.params.update({k: getattr(options, k) for k in HOW})
    record.save()
    built_good = repo_mod.build_good(trees, good, options.build)
    per_step = step_alpha(options.alpha, len(commits))
    n = len(commits)
    print(f"bisect: {n} commit{'s' if n != 1 else ''} after {good[:12]} up to {commits[-1].short}, at most "
          f"{planned_steps(n)} steps at alpha {per_step:.3g} each; results in {outdir}", file=out, flush=True)
    compare = ABStep(trees, outdir, built_good, options, per_step, record, out)
    outcome = search([c.sha for c in commits], compare, per_step, manifest=record,
                     progress=lambda taken, left, steps: print(
                         answer_mod.progress_line(taken, commits[taken.index], left, steps), file=out, flush=True))
    found = answer_mod.make(repo_mod.describe(repo, good), commits, outcome, options.threshold, compare.builds)
    record.extra["answer"] = found.to_dict()
    record.save()
    written = report_mod.write(found, outdir / "report", environment={"build": options.build, "run": options.run})
    print(f"report: {written['html']}", file=out)
    print("\n".join(answer_mod.lines(found)))
    return found.exit_code


def _output(options) -> Path:
    if options.output:
        return options.output.resolve()
    if options.resume:
        raise BisectError("--resume: give the bisect's directory with --output")
    return (paths.user_results().root / "bisect" / stamp()).resolve()   # where ab's and bench's go


def _settled(options: BisectOptions, outdir: Path) -> BisectOptions:
    """The options to run with: as typed for a new bisect (GOOD, BAD, RUN and --build required);
    on --resume, bisect.json's for those not typed (Manifest.open refuses a typed QUESTION that differs)."""
    if not options.resume:
        missing = [name for key, name in REQUIRED if key not in options.given]
        if missing:
            raise BisectError(f"bisect: give {', '.join(missing)} (or --resume --output DIR to continue a bisect)")
        return options
    recorded = Manifest.params_in(outdir)
    return replace(options, **{k: recorded[k] for k in RECORDED if k not in options.given and k in recorded})


def _results_dir(outdir: Path, resume: bool) -> None:
    """OUTDIR, created; where it is new inside a git working tree, with a .gitignore of `*`, so that
    `git status` lists nothing of it (git lists no directory of ignored files only) and no tracked
    file changes."""
    if resume or outdir.exists():
        return
    ignored = repo_mod.in_work_tree(outdir)
    outdir.mkdir(parents=True)
    if ignored:
        (outdir / ".gitignore").write_text("*\n")


class ABStep:
    """compare(sha) for the search: build the commit, then RUN in its worktree against RUN in
    GOOD's, as `timekit ab --until-decided` does, at the step's alpha; a commit that does not
    build is skipped. The commit's worktree goes when its step is done."""

    def __init__(self, trees, outdir, good, options, alpha, record, out):
        self.trees, self.outdir, self.good_tree, self.options = trees, outdir, good.worktree, options
        self.alpha, self.record, self.out = alpha, record, out
        recorded = {sha: b for sha, b in record.extra.get("builds", {}).items() if sha != good.sha}
        self.builds = {good.sha: good.to_dict(), **recorded}   # GOOD's first: the report's builds table
        self._save_builds()

    def __call__(self, sha):
        from analysis.products.bisect.search import Step

        try:
            done = repo_mod.build(self.trees, sha, self.options.build)
            self.builds[sha] = done.to_dict()
            self._save_builds()
            if not done.ok:
                return Step("skipped", detail={"build_log": str(done.log), "returncode": done.returncode,
                                               "why": done.error})
            return self._measure(sha, done.worktree)
        finally:
            self.trees.remove(sha)

    def _save_builds(self):
        self.record.extra["builds"] = self.builds
        self.record.save()

    def _measure(self, sha, tree):
        from analysis.ab import api, command_pairs
        from analysis.products.bisect.search import Step
        from analysis.tools.options import AbOptions

        directory = self.outdir / "steps" / sha[:12]
        resume = (directory / command_pairs.MANIFEST).exists()   # a step cut short: its ab run continues
        step_options = AbOptions(
            base=None if resume else _in(self.good_tree, self.options.run),
            new=None if resume else _in(tree, self.options.run),
            until_decided=True, budget=self.options.budget, alpha=self.alpha, threshold=self.options.threshold,
            columns=("cputime",), output=directory, resume=resume, container=self.options.container,
            ignore_failure=self.options.ignore_failure or None, **self._design(),
            verbose=self.options.verbose, command_line=f"timekit bisect step {sha[:12]}")
        with _working_in(tree):
            found = api.compare_commands(step_options.base, step_options.new, step_options, directory,
                                         out=_Indented(self.out))
        return Step(found.verdict, found.ratio, found.ci_low, found.ci_high, 0.95,
                    detail={"directory": str(directory), "invocations": found.invocations,
                            "seconds": round(found.seconds, 1), "design": found.design, "reason": found.reason,
                            "busy_from_outside": bool(found.busy_from_outside)})

    def _design(self):
        """The design of the next step. Under auto, the first step measured (BAD's) pilots it for
        the whole bisect: every step runs the same program, a few commits apart, and a pilot costs
        about 4 s a step. A co-located design taken over is judged by the sentinel in each step
        instead: its pairs count only once the sentinel shows it harmless (analysis.ab.sentinel)."""
        from analysis.ab import designs

        first = next((s for s in self.record.steps if (s.get("detail") or {}).get("design")), None)
        if self.options.design != designs.AUTO or first is None:
            return {"design": self.options.design}
        return {"design": first["detail"]["design"],
                "design_why": f"as bisect's first step ({first['commit'][:12]}) chose for this program: not piloted again"}


@contextlib.contextmanager
def _working_in(tree):
    """A step runs in the commit's worktree: ab keeps auto's choice of design per pair of commands
    in results/ of the current directory, and a step's pair (two temporary worktrees) is never
    asked again, so its record goes with the worktree instead of into the user's checkout."""
    before = os.getcwd()
    os.chdir(tree)
    try:
        yield
    finally:
        os.chdir(before)


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
