"""
`timekit bench 'CMD' ...`, and the options for shell commands that `timekit ab` shares.
"""

import argparse
import datetime
import os
import shlex
import sys
from pathlib import Path

from analysis.core.argtypes import positive_int
from analysis.core import paths
from analysis.tools.commands import spec



def non_negative_int(text):
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of runs (0 or more)")
    return int(text)


def add_command_options(parser):
    """hyperfine's options, for shell commands; None where not given (ab refuses them with definitions)."""
    group = parser.add_argument_group("shell commands (hyperfine's options)")
    group.add_argument("--runs", type=positive_int, metavar="N", help="measured runs per command in each invocation (default 10)")
    group.add_argument("--warmup", type=non_negative_int, metavar="N",
                       help="runs before them in each invocation, discarded (default 0)")
    group.add_argument("--prepare", metavar="CMD", help="run before each execution, not timed (sh -c; {name} parameters work)")
    group.add_argument("-L", "--parameter-list", nargs=2, action="append", metavar=("NAME", "VALUES"),
                       help="run each command once per value, {NAME} replaced, e.g. -L size 10,100 (repeatable: all combinations)")
    group.add_argument("--shell", metavar="SHELL", help="shell that runs the commands as SHELL -c CMD (default sh); "
                       "'none': split into words and execute without a shell")
    group.add_argument("--repeat", type=positive_int, metavar="K",
                       help="K executions per BenchExec run, reported per execution (for commands shorter than "
                            "BenchExec's cost per run; docs/commands.md says the trade-off)")
    group.add_argument("--export-json", type=Path, metavar="FILE", help="hyperfine's JSON plus the kit's fields on the invocations")
    group.add_argument("--export-markdown", type=Path, metavar="FILE", help="hyperfine's Markdown table")
    group.add_argument("--export-csv", type=Path, metavar="FILE", help="hyperfine's CSV columns plus the kit's")


COMMAND_ONLY = ("runs", "warmup", "prepare", "parameter_list", "shell", "repeat", "export_json", "export_markdown", "export_csv")


def given_command_options(args):
    return [f"--{name.replace('_', '-')}" for name in COMMAND_ONLY if getattr(args, name, None) is not None]


def options_from(args, container=True):
    """spec.Options from the arguments; the commands run in the current directory."""
    cwd = os.getcwd()
    hidden = paths.hidden_in_container(cwd)
    if container and hidden:
        raise spec.CommandError(f"{cwd}: BenchExec's container hides {hidden}; run the commands "
                                "from another directory (or with --no-container)")
    return spec.Options(runs=args.runs or 10, warmup=args.warmup or 0, prepare=args.prepare or "",
                        shell=args.shell or "sh", repeat=args.repeat or 1, cwd=cwd,
                        parameters=spec.parse_parameters(args.parameter_list))


def command_line():
    return "timekit " + shlex.join(sys.argv[1:])


def stamp():
    return datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")


def latest(kind, manifest):
    root = paths.user_results().root / kind
    found = sorted(p.parent for p in root.glob("*/" + manifest))
    if not found:
        raise spec.CommandError(f"nothing to resume under {root}; give --output")
    return found[-1]


def add_parser(commands):
    parser = commands.add_parser(
        "bench", help="measure shell commands under BenchExec, hyperfine-style, M invocations each",
        description="Writes a benchmark definition for the commands (tool_info.command, one run definition per "
        "command), runs it --reruns times under BenchExec's cgroups and container (every invocation runs every "
        "command, in an order rotated per invocation) and prints per command hyperfine's figures with the kit's "
        "on the invocations, and how the commands relate (the fastest against each other, Welch's t on the "
        "invocation means). The definition stays beside the results: benchexec DIR/bench.xml reruns it.",
        epilog="examples:\n  timekit bench './my-program'\n  timekit bench './build-a/prog' './build-b/prog' --reruns 5 --runs 20\n"
        "  timekit bench -L size 10,100,1000 './prog --size {size}' --export-json out.json\n"
        "  timekit bench --repeat 50 'echo x'      # a command shorter than BenchExec's cost per run",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("commands", nargs="*", metavar="CMD", help="shell command (quote it); omit with --resume")
    parser.add_argument("--reruns", type=positive_int, default=5, help="benchexec invocations (default 5; 2 at least "
                        "to see how far the mean moves between invocations)")
    parser.add_argument("--output", type=Path, help="directory (default: " + paths.DEFAULT_HELP.format("bench/DATE") + ")")
    parser.add_argument("--resume", action="store_true", help="continue the bench run in --output (default: the latest)")
    parser.add_argument("--no-container", action="store_true", help="run without BenchExec's container")
    add_command_options(parser)


def run(args):
    from analysis.sweep import steps_loop
    from analysis.sweep.model import Interrupted
    from analysis.tools.commands import bench, report

    if args.resume:
        outdir = (args.output or latest("bench", bench.MANIFEST)).resolve()
        steps_loop.hold(outdir)
        record = bench.BenchRun.load(outdir)
    else:
        options = options_from(args, container=not args.no_container)
        commands = spec.expand(args.commands, options)
        where = paths.user_results()
        outdir = (args.output or where.root / "bench" / stamp()).resolve()   # benchexec runs in the kit's checkout
        record = bench.start(commands, options, outdir, args.reruns, not args.no_container, command_line())
    steps_loop.hold(outdir)  # one timekit per directory, from here to the figures
    options = spec.Options(**record.options)
    note = "" if args.resume or args.output else where.note()
    print(f"bench: {len(record.commands)} command(s), {record.reruns} invocations of {options.runs} runs each"
          + (f" after {options.warmup} warmup run(s)" if options.warmup else "") + f"; results in {outdir}{note}",
          file=sys.stderr, flush=True)
    try:
        bench.run_pending(record, outdir)
    except Interrupted:
        print(f"timekit: interrupted; finished invocations are kept, continue with: timekit bench --resume --output {outdir}",
              file=sys.stderr)
        return 130
    commands = [spec.Command(**c) for c in record.commands]
    text, figures, extra = report.bench_text(outdir, commands, options)
    redone = steps_loop.redone(record)
    print(text + (f"\n{redone} invocation(s) ran again after being cut short; their files are under incomplete/, "
                  "not counted" if redone else ""))
    report.export(args, figures, extra)
    return 0
