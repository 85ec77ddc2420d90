"""
`timekit ab`: its command line. Every wrong invocation is one line and exit 2 before anything is
written (`check`); then shell commands go to analysis.tools.commands.ab_input, two benchmark
definitions to the blocks design (analysis.tools.ab_blocks) or, where they cannot share an
invocation or --design separate asks for it, to the separate one (analysis.tools.ab). Both of
those import nothing of this module, and ab_input imports ab, not the other way round.
"""

import argparse
import datetime
import json
import sys
from pathlib import Path

from analysis.core import paths
from analysis.core.argtypes import positive_int, probability
from analysis.sweep import lint, runner, steps_loop
from analysis.tools import ab, ab_blocks, ab_chunks
from analysis.tools.ab import ABError, percent
from analysis.tools.commands import cli as commands_cli
from analysis.tools.commands import spec
from analysis.tools.plan.args import duration

COMMANDS_MANIFEST = "commands.json"   # ab_input.MANIFEST (imported with the commands' path only)
EXAMPLE = "timekit ab './build-a/prog' './build-b/prog'"


MAX_SEED = 10**15   # the paired designs draw each invocation's orders from seed * 1000 + invocation (64 bits)


def seed(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < MAX_SEED:
        raise argparse.ArgumentTypeError(f"'{text}' is not a seed: a whole number from 0 to {MAX_SEED:.0e}")
    return value


def add_parser(commands):
    parser = commands.add_parser(
        "ab", help="run two benchmark definitions (or shell commands) in alternation, M reruns each, then compare them by rerun",
        description="Runs BASE and NEW (benchmark definitions whose run definitions and tasks have the same names) "
        "in M benchexec invocations, by default each holding both (the blocks design; two tools or limits: an "
        "invocation a side, alternating chunk by chunk), in seeded orders opposite in every other one, with --load background "
        "processes as in `run`; then compares them with the rerun as the unit and exits as compare does (1 on a "
        "significant slowdown beyond --threshold, 3 when nothing was compared, 2 on bad input, 0 otherwise). Interrupted runs keep every finished "
        "invocation; --resume continues. An argument that is not a benchmark definition (one word ending in .xml) is "
        f"a shell command: the kit writes the definitions itself ({EXAMPLE}), executes each command once "
        "(a command that fails stops it there, see --ignore-failure), and "
        "by default compares commands that keep their core busy by CPU time, both on one core turn by turn "
        "(--design interleaved), others by wall and CPU time back to back (--design blocks). It prints a block per "
        "command, the table and the verdict; --verbose adds how the rows were computed and why the design holds.",
        intermixed=True)
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
    parser.add_argument("--seed", type=seed, default=0, help="seed of the order within each rerun (default 0)")
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
    parser.add_argument("--verbose", action="store_true",
                        help="also how the rows were computed (the method) and why the design's verdict holds "
                             "(--format json has both always)")


def check(args):
    """Whatever makes the invocation wrong, as one ABError or CommandError line, before anything
    is written; the shell commands given (None: two benchmark definitions, or --resume)."""
    from analysis.tools.commands import ab_input

    given = [a for a in (args.base, args.new, *(args.more or [])) if a is not None]
    if args.resume:
        if given:
            raise ABError(f"--resume continues the A/B run in --output (or the latest) with its own commands or "
                          f"definitions; give none with it (got {given[0]!r})")
        _check_sequential(args)
        return None
    if not given:
        raise ABError(f"give the two commands to compare, the base and the new one, e.g. {EXAMPLE} "
                      "(or two benchmark definitions, or --resume)")
    if len(given) == 1:
        what = "benchmark definition" if spec.is_definition(given[0]) else "command"
        raise ABError(f"one {what} given ({given[0]}); ab compares two, the base and the new one, e.g. {EXAMPLE}")
    if not all(a.strip() for a in given):
        raise ABError(f"an empty command; give each command as one quoted argument, e.g. {EXAMPLE}")
    commands = ab_input.commands_given(args)
    ab.reruns_to_start(args)
    _check_sequential(args)
    if commands is None:
        if args.design in ("duet", "interleaved"):
            raise ABError(f"--design {args.design} runs two shell commands at once; two benchmark definitions run under "
                          "--design blocks (what auto, the default, runs for them) or separate")
        lint.require_valid([args.base, args.new])
    elif args.per_task:
        raise ABError("--per-task: for benchmark definitions with one run per task; shell commands have a row per "
                      "command and column already")
    return commands


def _check_sequential(args):
    if args.until is not None and args.until_decided:
        raise ABError("--until PCT and --until-decided are two rules to stop by: give one of them")
    if args.budget is not None and not args.until_decided:
        raise ABError("--budget bounds --until-decided: give both (e.g. --until-decided --budget 15m), or neither")
    if args.max_reruns is not None and args.until is None and not args.until_decided and not args.resume:
        raise ABError(f"--max-reruns bounds --until or --until-decided; without them ab runs --reruns "
                      f"({args.reruns or 5}) invocations")


def _latest():
    root = paths.user_results().root / "ab"
    found = sorted({p.parent for name in (ab.MANIFEST, ab_blocks.MANIFEST, COMMANDS_MANIFEST) for p in root.glob("*/" + name)})
    if not found:
        raise ABError(f"no A/B run to resume under {root}; give --output")
    return found[-1]


def run(args):
    commands = check(args)
    args.budget_sets_max, args.max_reruns = args.max_reruns is None, args.max_reruns or ab.MAX_RERUNS
    if args.resume:
        outdir = Path(args.output or _latest()).resolve()   # benchexec runs in the kit's checkout
        if (outdir / COMMANDS_MANIFEST).exists():
            from analysis.tools.commands import ab_input

            return ab_input.run(args, outdir=outdir)
        if (outdir / ab_blocks.MANIFEST).exists():
            steps_loop.hold(outdir)
            return _run_blocks(ab_blocks.BlocksRun.load(outdir), outdir, args, "")
        if not (outdir / ab.MANIFEST).exists():
            ab.ABRun.load(outdir)   # its one line, before the lock would create the directory
        steps_loop.hold(outdir)
        return _run_separate(ab.ABRun.load(outdir), outdir, args, "")
    if commands is not None:
        from analysis.tools.commands import ab_input

        return ab_input.run(args, commands)
    reruns = ab.reruns_to_start(args)
    where = paths.user_results()
    note = "" if args.output else where.note()
    outdir = Path(args.output or where.root / "ab" / datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")).resolve()
    for manifest in (ab.MANIFEST, ab_blocks.MANIFEST):
        commands_cli.check_new(outdir, manifest, "an A/B")
    with commands_cli.new_directory(outdir):
        blocks_run = _start_blocks(args, outdir, reruns)
        if blocks_run is None:
            separate = ab.start(args.base, args.new, outdir, reruns, args.seed, args.until, args.max_reruns, args.load,
                                not args.no_container, chunks=_chunks(args))
    if blocks_run is not None:
        return _run_blocks(blocks_run, outdir, args, note)
    return _run_separate(separate, outdir, args, note)


def _start_blocks(args, outdir, reruns):
    """The blocks design's run of two definitions (None: they cannot share an invocation, which is
    said on stderr, or --design separate)."""
    if args.design not in ("auto", "blocks"):
        return None
    reason = ab_blocks.why_not_mergeable(args.base, args.new)
    if reason:
        print(f"design: separate: {reason}", file=sys.stderr, flush=True)
        return None
    names = [n for n in ab.rundefinitions(args.base) if n in ab.rundefinitions(args.new)]
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


def _interrupted(outdir):
    print(f"timekit: interrupted; finished invocations are kept, continue with: timekit ab --resume --output {outdir}",
          file=sys.stderr)
    return 130


def _run_separate(run, outdir, args, note):
    """Measure two definitions under the separate design (an invocation a side) and print the verdict."""
    steps_loop.hold(outdir)  # one timekit per directory, from here to the verdicts
    ab.make_sequential(run, outdir, args)
    print(f"A/B: {run.base} against {run.new}, {run.reruns} reruns per side; results in {outdir}{note}", file=sys.stderr, flush=True)
    from analysis.tools.compare import repeated as compare_mod  # scipy: once the input is known to be good

    columns = tuple(args.columns or compare_mod.DEFAULT_COLUMNS)
    try:
        result = ab.measure(run, outdir, columns, args.alpha, args.threshold, per_task=args.per_task)
    except runner.Interrupted:
        return _interrupted(outdir)
    sequential = ab.sequential_verdicts(run, outdir, result.rows, columns, args.alpha, args.threshold, args.per_task)
    if args.format == "json":
        data = compare_mod.as_data(result, args.alpha, args.threshold)
        data["ab"] = {"reruns": run.reruns, "checks": run.checks, "stopped": run.stopped, "summary": ab.summary(run),
                      "directory": str(outdir), "sequential": sequential.to_dict()}
        print(json.dumps(data, indent=2, default=str))
        return compare_mod.exit_code(result)
    text = _table(compare_mod, result, args) + ab.summary(run, verbose=args.verbose)
    text += "\n\n" + sequential.text if sequential.text else ""
    if not args.per_task:  # the per-task comparison ends with its own verdict line
        text += "\n" + compare_mod.verdict_line(result)
    print("\n".join(filter(None, [ab.machines_warning(outdir), text])))
    return compare_mod.exit_code(result)


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
        return _interrupted(outdir)
    sequential = paired_ab.sequential_report(run, result, looks, args.alpha, args.threshold, outdir)
    if args.format == "json":
        data = compare_mod.as_data(result, args.alpha, args.threshold)
        data["ab"] = {"design": "blocks", "reruns": run.reruns, "checks": run.checks, "stopped": run.stopped,
                      "summary": ab_blocks.summary(run), "directory": str(outdir), "sequential": sequential.to_dict()}
        print(json.dumps(data, indent=2, default=str))
        return compare_mod.exit_code(result)
    text = _table(compare_mod, result, args) + ab_blocks.summary(run, verbose=args.verbose)
    text += "\n\n" + sequential.text if sequential.text else ""
    print(text + "\n" + compare_mod.verdict_line(result))
    return compare_mod.exit_code(result)


def _table(compare_mod, result, args):
    """compare's table (with --verbose its method paragraph), up to the design's line."""
    return compare_mod.render(result, args.format, args.alpha, args.threshold, method=args.verbose) + (
        "\n" if args.verbose else "\n\n")
