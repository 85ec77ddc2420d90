"""
`timekit ab BASE NEW`: two benchmark definitions measured in alternation, M reruns each, then the
rerun-aware compare.

Comparing yesterday's invocation with today's mixes the change with whatever the machine did in
between. Here every rerun runs both sides, one benchexec invocation each, back to back in seeded
orders that are opposite in every other rerun (analysis.core.orders, recorded), so a slow stretch
of the machine hits base and new alike, and the rerun-level test sees how much the mean moves between invocations.

BASE and NEW are benchmark definitions whose run definitions and tasks have the same names (e.g.
the same definition with another tool version, option or input file under the same task name):
compare lines runs up by them. Each side gets its own directory (DIR/base, DIR/new) with a copy
of its definition (relative paths made absolute), BenchExec's result files and logs. The
manifest DIR/ab.json is kept by analysis.sweep.steps_loop (lock, atomic writes, a step cut short
by any kill runs again on `--resume`); every finished invocation stays. With `--until PCT`, pairs
of invocations are added after the first M reruns until the 95 % CI of every row's ratio has a
half-width below PCT percent or --max-reruns is reached. Two definitions that the blocks design
cannot merge (two tool-info modules, other limits) alternate chunk by chunk of their task set
within every rerun (analysis.tools.ab_chunks).
"""

import argparse
import datetime
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from analysis.core.errors import UserError
from analysis.core import orders, paths
from analysis.sweep import lint, runner, steps_loop
from analysis.tools import ab_blocks, ab_chunks
from analysis.sweep.load import load_tables
from analysis.sweep.model import Experiment, Step, StepsRecord, now
from analysis.tools.plan.args import FIRST_LOOK, duration
from analysis.tools.commands import cli as commands_cli

MANIFEST = "ab.json"
SIDES = ("base", "new")
MAX_RERUNS = 20   # --max-reruns by default


class ABError(UserError):
    """An A/B run cannot start or continue (one line for the user)."""


@dataclass
class ABRun(StepsRecord):
    """What ab.json records: the two definitions, the plan, every invocation and how it ended."""

    file, error, kind = MANIFEST, ABError, "A/B"

    base: str                  # the original definitions (their copies are in DIR/base, DIR/new)
    new: str
    rundefinitions: list       # shared by both
    seed: int
    reruns: int                # planned so far (grows with --until)
    until: float = None        # CI half-width target in percent, or None
    max_reruns: int = 20
    background: int = 0        # busy processes around every invocation (--load)
    container: bool = True
    created: str = ""
    steps: list = field(default_factory=list)
    checks: list = field(default_factory=list)   # --until: [{"reruns": M, "half_width": percent}]
    stopped: str = ""
    tasksets: list = field(default_factory=list)  # what runner.benchexec_command reads: all task sets
    skipped: dict = field(default_factory=dict)
    until_decided: bool = False  # --until-decided: add pairs until every row is decided (analysis.tools.plan.ab_looks)
    budget: float = None         # seconds for all invocations, or None
    chunks: int = 1              # >1: base and new alternate over chunks of the task set (analysis.tools.ab_chunks)

    def plan(self, rerun):
        """The two invocations of one rerun, in seeded orders that alternate over couples of reruns
        (analysis.core.orders); in chunks, both sides' chunk 1, then chunk 2, ..., the chunks'
        orders alternating within the rerun (base first in half of them)."""
        if self.chunks <= 1:
            order = orders.couple_order(len(SIDES), self.seed, rerun)
            self.steps += [Step(load=self.background, rerun=rerun, name=f"{SIDES[i]}-rerun{rerun}", condition=SIDES[i])
                           for i in order]
            return
        for chunk in range(1, self.chunks + 1):
            order = orders.couple_order(len(SIDES), self.seed, chunk, rerun)
            self.steps += [Step(load=self.background, rerun=rerun, name=f"{SIDES[i]}-rerun{rerun}-chunk{chunk}",
                                condition=SIDES[i], chunk=chunk, benchexec_args=["--results-per-taskset"])
                           for i in order]   # a file per task set in every chunk: they merge one to one


def rundefinitions(path):
    """Names of the run definitions of a benchmark definition (each must have one)."""
    tree = etree.parse(str(path), etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False))
    names = [r.get("name") for r in tree.getroot().iter("rundefinition")]
    if not names or not all(names):
        raise ABError(f"{path}: every run definition needs a name (compare lines base and new up by it)")
    return names


def side(run, which, outdir):
    """The sweep runner's view of one side: an Experiment whose definition is the side's copy."""
    original = Path(getattr(run, which))
    return Experiment(name=original.stem, inputs=(), rundefinitions=tuple(run.rundefinitions), benchmark=original,
                      task_dir=Path(outdir) / which / "tasks")


def start(base, new, outdir, reruns, seed, until, max_reruns, load, container, chunks=1):
    """A new A/B directory with its plan (in `chunks` chunks of the task set); returns the ABRun."""
    lint.require_valid([base, new])
    if (Path(outdir) / MANIFEST).exists():
        raise ABError(f"{outdir}: already holds an A/B run; use --resume or another --output")
    names = [n for n in rundefinitions(base) if n in rundefinitions(new)]
    if not names:
        raise ABError(f"{base} and {new} share no run definition name; compare lines base and new up by it")
    run = ABRun(str(Path(base).resolve()), str(Path(new).resolve()), names, seed, reruns, until,
                max(max_reruns, reruns), load, container, now(), chunks=chunks)
    for which in SIDES:
        directory = Path(outdir) / which
        directory.mkdir(parents=True, exist_ok=True)
        copy = runner.write_sweep_benchmark(side(run, which, outdir), 1, directory)  # copy, paths made absolute
        (directory / "tasks").rmdir()  # the copy's repetition tasks: none, the definition brings its own
        if chunks > 1:
            ab_chunks.write(copy, chunks, Path(outdir) / "chunks" / which)
    for rerun in range(1, reruns + 1):
        run.plan(rerun)
    run.save(outdir)
    return run


class _Count:
    """Counts the runs benchexec reports (runner.run_step's progress interface)."""

    runs = 0

    def run_finished(self, label=""):
        self.runs += 1


def run_pending(run, outdir, out=sys.stderr):
    """Run every unfinished invocation in order (analysis.sweep.steps_loop), a line after each;
    in chunks, merge each finished rerun's chunks into one result file per side."""
    def where(step):
        if step.chunk:
            return Path(outdir) / "chunks" / step.condition, f"{Path(getattr(run, step.condition)).stem}.chunk{step.chunk}"
        return Path(outdir) / step.condition, Path(getattr(run, step.condition)).stem

    def invoke(step):
        count = step_counts[step.name] = _Count()
        directory, stem = where(step)
        experiment = side(run, step.condition, outdir)
        if step.chunk:
            experiment = Experiment(name=stem, inputs=(), rundefinitions=experiment.rundefinitions,
                                    benchmark=directory / f"{stem}.xml", task_dir=directory / "tasks")
        return runner.execute(experiment, run, step, directory, count)

    def after(step):
        done = sum(s.status == "done" for s in run.steps)
        chunk = f" chunk {step.chunk}/{run.chunks}" if step.chunk else ""
        print(f"  {step.condition} rerun {step.rerun}{chunk}: {step_counts[step.name].runs} runs in {step.seconds:.1f} s "
              f"({done}/{len(run.steps)} invocations)", file=out, flush=True)
        if step.chunk:
            merge_chunks(run, outdir, (step.condition, step.rerun))

    step_counts = {}
    steps_loop.run_pending(run, outdir, where, invoke, ABError, after, out)
    if run.chunks > 1:
        merge_chunks(run, outdir)


def merge_chunks(run, outdir, only=None):
    """Each side's chunk result files of every finished rerun (or of `only`, a (side, rerun)),
    merged into the files one invocation would have written in DIR/SIDE; at the end of every
    run_pending again, so that a kill between a rerun's last chunk and its merge loses nothing."""
    groups = {}
    for step in run.steps:
        if step.chunk and (only is None or (step.condition, step.rerun) == tuple(only)):
            groups.setdefault((step.condition, step.rerun), []).append(step)
    for (which, rerun), steps in groups.items():
        if all(s.status == "done" for s in steps):
            files = [Path(outdir) / "chunks" / which / name for s in steps for name in s.result_files]
            ab_chunks.merge(files, Path(getattr(run, which)).stem, f"{which}-rerun{rerun}", Path(outdir) / which)


def half_width(rows):
    """The widest row's 95 % CI half-width of the ratio, in percent (infinite without rows)."""
    return max((100 * (r.ci_high - r.ci_low) / 2 for r in rows), default=float("inf"))


def compare_sides(outdir, columns, alpha, threshold, per_task=False):
    from analysis.tools.compare import repeated as compare_mod  # scipy: imported when comparing, not for --help

    wanted = {"status", "category", *columns}
    result = compare_mod.compare(load_tables(Path(outdir) / "base", wanted)[:2], load_tables(Path(outdir) / "new", wanted)[:2],
                                 columns, alpha=alpha, threshold=threshold, per_task=per_task)
    if result.nothing and not result.not_compared:
        raise ABError(f"{outdir}: base and new share no run definition, input and column")
    return result


def machines_warning(outdir):
    """compare's line where base and new ran on different machines or limits (a resumed run can), else ''."""
    from analysis.core.results import machines

    return machines.warning(*(machines.of_tables(load_tables(Path(outdir) / side, {"status", "host"})[0])
                              for side in ("base", "new")))


def measure(run, outdir, columns, alpha, threshold, out=sys.stderr, per_task=False):
    """Run the plan; with --until add pairs until the CI is narrow enough, with --until-decided until
    every row is decided. Returns compare's Result."""
    while True:
        run_pending(run, outdir, out)
        result = compare_sides(outdir, columns, alpha, threshold, per_task)
        if run.until_decided and not result.nothing:
            if _decided_or_spent(run, outdir, columns, alpha, threshold, out, per_task):
                return result
            continue
        if run.until is None or result.nothing:
            return result
        rows = result.rows
        width = half_width(rows)
        run.checks.append({"reruns": run.reruns, "half_width": width})
        if width < run.until or run.reruns >= run.max_reruns:
            run.stopped = (f"CI half-width {width:.2f} % < {run.until:g} % after {run.reruns} reruns per side"
                           if width < run.until else
                           f"--max-reruns {run.max_reruns} reached; CI half-width still {width:.2f} % (target {run.until:g} %)")
            run.save(outdir)
            return result
        run.reruns += 1
        run.plan(run.reruns)
        run.save(outdir)
        print(f"  CI half-width {width:.2f} % >= {run.until:g} %: adding rerun {run.reruns}", file=out, flush=True)


def _decided_or_spent(run, outdir, columns, alpha, threshold, out, per_task=False):
    """--until-decided: look; stop (True) when every row is decided or the budget or --max-reruns is reached,
    else plan one more rerun."""
    from analysis.tools.plan import ab_looks

    looks = ab_looks.look(outdir, columns, alpha, threshold, run.max_reruns, per_task)
    undecided = [r.row for r in looks if not r.decision.decided]
    run.checks.append({"reruns": run.reruns, "undecided": undecided})
    stop = ("every row decided after {} reruns per side".format(run.reruns) if not undecided else
            f"--max-reruns {run.max_reruns} reached" if run.reruns >= run.max_reruns else
            f"the budget ({run.budget / 60:.3g} min) does not fit another pair" if not ab_looks.budget_left_for_a_pair(run) else "")
    if stop:
        run.stopped = stop
        run.save(outdir)
        return True
    run.reruns += 1
    run.plan(run.reruns)
    run.save(outdir)
    print(f"  undecided after {run.reruns - 1} reruns: {', '.join(undecided)}; adding rerun {run.reruns}", file=out, flush=True)
    return False


def summary(run):
    drawn = {}
    for step in run.steps:
        drawn.setdefault(step.rerun, []).append(step.condition[0].upper())
    chunked = (f", in {run.chunks} chunks of the task set: both sides' chunk 1, then chunk 2 in the opposite order, "
               "..., so a task of base and the same task of new run seconds apart" if run.chunks > 1 else "")
    text = (f"A/B: {run.reruns} reruns per side, base and new alternating in seeded orders, opposite in every other "
            f"rerun{chunked} (seed {run.seed}: {' '.join(''.join(o) for _, o in sorted(drawn.items()))})")
    redone = steps_loop.redone(run)
    text += f"; {redone} invocation(s) run again after being cut short" if redone else ""
    return text + (f"; {run.stopped}" if run.stopped else "")


# --------------------------------------------------------------------------------------------
# command line


def percent(text):
    try:
        value = float(str(text).rstrip("% "))
    except ValueError:
        value = -1.0
    if not 0 < value < 100:
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage between 0 and 100, e.g. 1.5")
    return value


def add_parser(commands, positive_int, probability):
    parser = commands.add_parser(
        "ab", help="run two benchmark definitions (or shell commands) in alternation, M reruns each, then compare them by rerun",
        description="Runs BASE and NEW (benchmark definitions whose run definitions and tasks have the same names) "
        "in M benchexec invocations, by default each holding both (the blocks design; two tools or limits: an "
        "invocation a side, alternating chunk by chunk), in seeded orders opposite in every other one, with --load background "
        "processes as in `run`; then compares them with the rerun as the unit and exits as compare does (1 on a "
        "significant slowdown beyond --threshold, 3 when nothing was compared, 2 on bad input, 0 otherwise). Interrupted runs keep every finished "
        "invocation; --resume continues. An argument that is not a benchmark definition (one word ending in .xml) is "
        "a shell command: the kit writes the definitions itself (timekit ab './build-a/prog' './build-b/prog'), and "
        "by default compares commands that keep their core busy by CPU time, both on one core turn by turn "
        "(--design interleaved), others by wall and CPU time back to back (--design blocks).")
    parser.add_argument("base", nargs="?", help="benchmark definition of the base, or a shell command (omit with --resume)")
    parser.add_argument("new", nargs="?", help="benchmark definition of the candidate, or a shell command")
    parser.add_argument("more", nargs="*", metavar="CMD", help="further shell commands, each compared with the base")
    commands_cli.add_command_options(parser)
    parser.add_argument("--reruns", type=positive_int, help="reruns (invocations) per side (default 5, with --until-decided 3; 2 at least)")
    parser.add_argument("--until", type=percent, metavar="PCT", help="then add reruns until every row's 95 %% CI half-width is below PCT percent")
    parser.add_argument("--max-reruns", type=positive_int,
                        help="upper bound on reruns per side with --until or --until-decided (default 20; under a paired "
                        "design with --budget: as many invocations as the budget holds)")
    parser.add_argument("--until-decided", action="store_true",
                        help="add reruns until every row is decided (group-sequential alpha spending up to --max-reruns)")
    parser.add_argument("--budget", type=duration, help="with --until-decided: time for all invocations, e.g. 15m")
    parser.add_argument("--design", choices=("auto", "blocks", "interleaved", "duet", "separate"), default="auto",
                        help="auto (default): interleaved for shell commands that keep their core busy (CPU time at least "
                        "80 %% of wall time in a pilot pair) unless --column walltime is asked, else blocks; blocks: every "
                        "invocation runs both, pair by pair back to back in a seeded order, compared inside it (CPU and "
                        "wall time); interleaved: both at once on one core, handed to each in turn every 1-2 ms (CPU "
                        "time only; the steadiest on a shared host); duet: both at once on two cores; separate: an "
                        "invocation per side. Two benchmark definitions: blocks (auto) or separate. docs/designs.md says "
                        "which to choose")
    parser.add_argument("--duet", dest="design", action="store_const", const="duet", help="the same as --design duet")
    parser.add_argument("--seed", type=int, default=0, help="seed of the order within each rerun (default 0)")
    parser.add_argument("--load", type=int, default=0, help="background busy processes during every invocation (default 0)")
    parser.add_argument("--output", type=Path, help="directory (default: " + paths.DEFAULT_HELP.format("ab/DATE").replace("%", "%%") + ")")
    parser.add_argument("--resume", action="store_true", help="continue the A/B run in --output (default: the latest)")
    parser.add_argument("--no-container", action="store_true", help="run without BenchExec's container")
    parser.add_argument("--column", action="append", dest="columns", help="column to compare (default: cputime and walltime)")
    parser.add_argument("--alpha", type=probability, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--threshold", type=probability, default=0.02, help="smallest relative change that counts (default 0.02)")
    parser.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    parser.add_argument("--per-task", action="store_true",
                        help="definitions with one run per task: a row per task, not per task set")


def _latest():
    root = paths.user_results().root / "ab"
    found = sorted({p.parent for name in (MANIFEST, ab_blocks.MANIFEST) for p in root.glob("*/" + name)})
    if not found:
        raise ABError(f"no A/B run to resume under {root}; give --output")
    return found[-1]


def run(args):
    from analysis.tools.commands import ab_input  # shell commands: the definitions are written, then this path

    args.budget_sets_max, args.max_reruns = args.max_reruns is None, args.max_reruns or MAX_RERUNS

    if ab_input.applies(args):
        return ab_input.run(args, sys.modules[__name__])
    if args.resume:
        outdir = Path(args.output or _latest()).resolve()   # benchexec runs in the kit's checkout
        steps_loop.hold(outdir)
        if (Path(outdir) / ab_blocks.MANIFEST).exists():
            return _run_blocks(ab_blocks.BlocksRun.load(outdir), outdir, args, "")
        ab = ABRun.load(outdir)
        note = ""
    else:
        if args.base is None or args.new is None:
            raise ABError("give BASE and NEW benchmark definitions (or --resume)")
        reruns = reruns_to_start(args)
        where = paths.user_results()
        note = "" if args.output else where.note()
        outdir = Path(args.output or where.root / "ab" / datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")).resolve()
        blocks_run = _start_blocks(args, outdir, reruns)
        if blocks_run is not None:
            return _run_blocks(blocks_run, outdir, args, note)
        ab = start(args.base, args.new, outdir, reruns, args.seed, args.until, args.max_reruns, args.load,
                   not args.no_container, chunks=_chunks(args))
    steps_loop.hold(outdir)  # one timekit per directory, from here to the verdicts
    make_sequential(ab, outdir, args)
    print(f"A/B: {ab.base} against {ab.new}, {ab.reruns} reruns per side; results in {outdir}{note}", file=sys.stderr, flush=True)
    from analysis.tools.compare import repeated as compare_mod  # scipy: once the input is known to be good

    columns = tuple(args.columns or compare_mod.DEFAULT_COLUMNS)
    try:
        result = measure(ab, outdir, columns, args.alpha, args.threshold, per_task=args.per_task)
    except runner.Interrupted:
        print(f"timekit: interrupted; finished invocations are kept, continue with: timekit ab --resume --output {outdir}",
              file=sys.stderr)
        return 130
    sequential = sequential_verdicts(ab, outdir, result.rows, columns, args.alpha, args.threshold, args.per_task)
    text = compare_mod.render(result, args.format, args.alpha, args.threshold)
    if args.format == "json":
        data = json.loads(text)
        data["ab"] = {"reruns": ab.reruns, "checks": ab.checks, "stopped": ab.stopped, "summary": summary(ab),
                      "directory": str(outdir), "sequential": sequential.to_dict()}
        text = json.dumps(data, indent=2, default=str)
    else:
        text += "\n" + summary(ab) + ("\n\n" + sequential.text if sequential.text else "")
        if not args.per_task:  # the per-task comparison ends with its own verdict line
            text += "\n" + compare_mod.verdict_line(result)
        text = "\n".join(filter(None, [machines_warning(outdir), text]))
    print(text)
    return compare_mod.exit_code(result)


def _start_blocks(args, outdir, reruns):
    """The blocks design's run of two definitions (None: they cannot share an invocation, which is
    said on stderr, or --design separate)."""
    if args.design in ("duet", "interleaved"):
        raise ABError(f"--design {args.design} runs two shell commands at once; two benchmark definitions run under "
                      "--design blocks (what auto, the default, runs for them) or separate")
    if args.design not in ("auto", "blocks"):
        return None
    lint.require_valid([args.base, args.new])
    reason = ab_blocks.why_not_mergeable(args.base, args.new)
    if reason:
        print(f"design: separate: {reason}", file=sys.stderr, flush=True)
        return None
    names = [n for n in rundefinitions(args.base) if n in rundefinitions(args.new)]
    if not names:
        raise ABError(f"{args.base} and {args.new} share no run definition name; compare lines base and new up by it")
    plan = {"seed": args.seed, "reruns": reruns, "max_reruns": args.max_reruns, "load": args.load,
            "container": not args.no_container, "until": args.until}
    return ab_blocks.start(args.base, args.new, outdir, names, plan)


def _chunks(args):
    """Chunks of the task set for definitions that the default design could not merge (1: none)."""
    if args.design not in ("auto", "blocks") or not ab_blocks.why_not_mergeable(args.base, args.new):
        return 1
    chunks = min(ab_chunks.count(args.base), ab_chunks.count(args.new))
    if chunks > 1:
        print(f"design: separate in {chunks} chunks of the task set: base and new alternate chunk by chunk in every "
              "rerun, so that the drift within a rerun cancels too", file=sys.stderr, flush=True)
    return chunks


def _run_blocks(run, outdir, args, note):
    """Measure two merged definitions under the blocks design and print as the separate path does."""
    from analysis.tools.commands import paired_ab
    from analysis.tools.compare import repeated as compare_mod

    steps_loop.hold(outdir)
    if args.until_decided:
        run.until_decided, run.budget = True, args.budget if args.budget is not None else run.budget
        run.max_reruns = max(run.max_reruns, args.max_reruns)
        run.save(outdir)
    print(f"A/B: {run.base} against {run.new}, design blocks: {run.reruns} invocations holding both; results in "
          f"{outdir}{note}", file=sys.stderr, flush=True)
    columns = tuple(args.columns or compare_mod.DEFAULT_COLUMNS)
    try:
        result, looks = ab_blocks.measure(run, outdir, columns, args.alpha, args.threshold)
    except runner.Interrupted:
        print(f"timekit: interrupted; finished invocations are kept, continue with: timekit ab --resume --output {outdir}",
              file=sys.stderr)
        return 130
    sequential = paired_ab.sequential_report(run, result, looks, args.alpha, args.threshold, outdir)
    text = compare_mod.render(result, args.format, args.alpha, args.threshold)
    if args.format == "json":
        data = json.loads(text)
        data["ab"] = {"design": "blocks", "reruns": run.reruns, "checks": run.checks, "stopped": run.stopped,
                      "summary": ab_blocks.summary(run), "directory": str(outdir), "sequential": sequential.to_dict()}
        text = json.dumps(data, indent=2, default=str)
    else:
        text += "\n" + ab_blocks.summary(run) + ("\n\n" + sequential.text if sequential.text else "")
        text += "\n" + compare_mod.verdict_line(result)
    print(text)
    return compare_mod.exit_code(result)


def reruns_to_start(args):
    """--reruns, else 5 (--until-decided: the sequential rule's first look); checked with --load."""
    reruns = args.reruns or (FIRST_LOOK if args.until_decided else 5)
    if reruns < 2 or args.load < 0:
        raise ABError("--reruns must be 2 or more (one rerun cannot show drift) and --load 0 or more")
    return reruns


def make_sequential(ab, outdir, args):
    """--until-decided (also on --resume): the run adds pairs until every row is decided."""
    if args.until_decided:
        ab.until_decided, ab.budget = True, args.budget if args.budget is not None else ab.budget
        ab.max_reruns = max(ab.max_reruns, args.max_reruns)
        ab.save(outdir)


def sequential_verdicts(ab, outdir, rows, columns, alpha, threshold, per_task=False):
    """With --until-decided the verdicts are the sequential rule's (compare's fixed rule does not hold
    after many looks): rows are rewritten in place; returns the rule's SequentialReport (empty without it)."""
    from analysis.tools.plan import ab_looks
    from analysis.tools.plan.verdict_record import SequentialReport

    if not ab.until_decided:
        return SequentialReport()

    looks = ab_looks.look(outdir, columns, alpha, threshold, ab.max_reruns, per_task)
    ab_looks.apply(rows, looks)
    rows = ab_looks.verdicts(ab, outdir, looks, columns, alpha, threshold)
    return SequentialReport(ab_looks.report(ab, outdir, rows, alpha, threshold), rows)
