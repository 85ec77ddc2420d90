"""
`timekit ab`: its command line. argv becomes one AbOptions (`options`, the only place that reads
argparse's namespace); every wrong invocation is one line and exit 2 before anything is written
(`check`); then shell commands go to analysis.ab.api (the function other tools call too),
two benchmark definitions to analysis.ab.definitions (the blocks design, or the separate
one where they cannot share an invocation or --design separate asks for it).
"""

import argparse
import sys
from pathlib import Path

from analysis.core import paths
from analysis.core.argtypes import percent, positive_int, probability
from analysis.sweep import lint
from analysis.ab import designs, merged, separate
from analysis.ab.separate import ABError
from analysis.tools.commands import cli as commands_cli
from analysis.tools.commands import spec
from analysis.tools.options import DEFAULT_BUDGET, AbOptions
from analysis.tools.plan.args import duration

COMMANDS_MANIFEST = "commands.json"   # command_pairs.MANIFEST (imported with the commands' path only)
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
    parser.add_argument("--reruns", type=positive_int,
                        help="a fixed count of reruns (invocations) per side, 2 at least; without it ab runs until every "
                        "row is decided (3 first, then one more at a time, within --budget); with --until-decided: "
                        "the count to start from")
    parser.add_argument("--until", type=percent, metavar="PCT", help="then add reruns until every row's 95 %% CI half-width is below PCT percent")
    parser.add_argument("--max-reruns", type=positive_int,
                        help="upper bound on reruns per side with --until or --until-decided (default 20; under a paired "
                        "design with --budget: as many invocations as the budget holds)")
    parser.add_argument("--until-decided", action="store_true",
                        help="add reruns until every row is decided (group-sequential alpha spending up to --max-reruns "
                        "or --budget): what ab does unless --reruns or --until is given")
    parser.add_argument("--budget", type=duration,
                        help=f"time for all invocations while deciding, e.g. 5m (default {DEFAULT_BUDGET / 60:g}m); an "
                        "answer still open then is 'undecided', exit 3")
    parser.add_argument("--design", choices=("auto", *designs.names()), default="auto",
                        help="auto (default): blocks, on as many cores as a command uses alone; blocks: every "
                        "invocation runs both, pair by pair back to back in a seeded order, compared inside it; "
                        "interleaved: both at once on one core, handed to each in turn every 1-2 ms (CPU time only), "
                        "after a pilot and watched by a sentinel; duet: both at once on two cores; separate: an "
                        "invocation per side. Two benchmark definitions: blocks (auto) or separate. docs/designs.md says "
                        "which to choose")
    parser.add_argument("--duet", dest="design", action="store_const", const="duet", help="the same as --design duet")
    parser.add_argument("--seed", type=seed, default=0, help="seed of the order within each rerun (default 0)")
    parser.add_argument("--load", type=int, default=0, help="background busy processes during every invocation (default 0)")
    parser.add_argument("--output", type=Path, help="directory (default: " + paths.DEFAULT_HELP.format("ab/DATE").replace("%", "%%") + ")")
    parser.add_argument("--resume", action="store_true", help="continue the A/B run in --output (default: the latest)")
    parser.add_argument("--no-container", action="store_true", help="run without BenchExec's container")
    parser.add_argument("--column", action="append", dest="columns",
                        help="column to compare, repeatable (default: CPU time where both commands keep one core busy, "
                        "wall time where one mostly waits, else both)")
    parser.add_argument("--alpha", type=probability, default=0.05, help="significance level (default 0.05, or 5%%)")
    parser.add_argument("--threshold", type=probability, default=0.02,
                        help="smallest relative change that counts (default 0.02, or 2%%)")
    parser.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    parser.add_argument("--per-task", action="store_true",
                        help="definitions with one run per task: a row per task, not per task set")
    parser.add_argument("--verbose", action="store_true",
                        help="also how the rows were computed (the method) and why the design's verdict holds "
                             "(--format json has both always)")


def options(args):
    """The AbOptions of `timekit ab`'s parsed arguments: the one place argparse's namespace is read.
    ab decides (adds invocations until decided, within --budget) unless --reruns asks a fixed count
    or --until a CI width; a resume goes on as the run began unless --until-decided is given."""
    deciding = args.until_decided or (args.reruns is None and args.until is None and not args.resume)
    return AbOptions(
        base=args.base, new=args.new, more=tuple(args.more or ()), **commands_cli.command_options(args),
        reruns=args.reruns, until=args.until, max_reruns=args.max_reruns, until_decided=deciding,
        budget=args.budget if args.budget is not None else DEFAULT_BUDGET if deciding and not args.resume else None,
        design=args.design, seed=args.seed, load=args.load, output=args.output,
        resume=args.resume, container=not args.no_container, columns=tuple(args.columns or ()), alpha=args.alpha,
        threshold=args.threshold, format=args.format, per_task=args.per_task, verbose=args.verbose,
        command_line=commands_cli.command_line())


def check(options):
    """Whatever makes the invocation wrong, as one ABError or CommandError line, before anything
    is written; the shell commands given (None: two benchmark definitions, or --resume)."""
    from analysis.ab import command_pairs

    given = options.arguments
    if options.resume:
        if given:
            raise ABError(f"--resume continues the A/B run in --output (or the latest) with its own commands or "
                          f"definitions; give none with it (got {given[0]!r})")
        separate.check_sequential(options)
        return None
    if not given:
        raise ABError(f"give the two commands to compare, the base and the new one, e.g. {EXAMPLE} "
                      "(or two benchmark definitions, or --resume)")
    if len(given) == 1:
        what = "benchmark definition" if spec.is_definition(given[0]) else "command"
        raise ABError(f"one {what} given ({given[0]}); ab compares two, the base and the new one, e.g. {EXAMPLE}")
    if not all(a.strip() for a in given):
        raise ABError(f"an empty command; give each command as one quoted argument, e.g. {EXAMPLE}")
    commands = command_pairs.commands_given(options)
    if commands is not None:
        from analysis.ab import api

        api.check(commands, options)   # what compare_commands checks of its own callers
        return commands
    separate.reruns_to_start(options)
    separate.check_sequential(options)
    if designs.before_choice(options.design).co_located:
        raise ABError(f"--design {options.design} runs two shell commands at once; two benchmark definitions run under "
                      "--design blocks (what auto, the default, runs for them) or separate")
    lint.require_valid([options.base, options.new])
    return None


def _latest():
    root = paths.user_results().root / "ab"
    found = sorted({p.parent for name in (separate.MANIFEST, merged.MANIFEST, COMMANDS_MANIFEST) for p in root.glob("*/" + name)})
    if not found:
        raise ABError(f"no A/B run to resume under {root}; give --output")
    return found[-1]


def run(args):
    return execute(options(args))


def execute(options):
    """`timekit ab` with its AbOptions: check, run, print; the exit code."""
    from analysis.ab import definitions

    commands = check(options)
    if options.resume:
        outdir = Path(options.output or _latest()).resolve()   # benchexec runs in the kit's checkout
        if (outdir / COMMANDS_MANIFEST).exists():
            return _commands(None, None, options, outdir)
        return definitions.resume(options, outdir)
    if commands is not None:   # base, new and the further commands: options.base, .new, .more
        return _commands(options.base, options.new, options, options.output)
    return definitions.start(options)


def _commands(base, new, options, outdir):
    """Shell commands through analysis.ab.api: its text on stdout, the exports written."""
    from analysis.ab import api
    from analysis.tools.commands import report

    outcome = api.compare_commands(base, new, options, outdir, out=sys.stderr)
    print(outcome.text)
    report.export(options, outcome.figures, outcome.export)
    return outcome.exit_code
