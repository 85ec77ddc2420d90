"""
`timekit bench 'CMD' ...`, and the options for shell commands that `timekit ab` shares.
"""

import argparse
import contextlib
import datetime
import os
import shlex
import shutil
import sys
from pathlib import Path

from analysis.core.argtypes import positive_int
from analysis.core import paths
from analysis.tools.commands import spec
from analysis.tools.options import COMMAND_ONLY, EXPORTS, BenchOptions


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
    group.add_argument("--ignore-failure", action="store_true", default=None,
                       help="measure runs whose command exits non-zero too (hyperfine's option); without it such a "
                            "command stops the run at its first execution, before any measurement")
    group.add_argument("--command-output", metavar="WHERE", type=command_output,
                       help="where the commands' standard output goes (hyperfine's --output): null (the default: "
                            "discarded, never read), pipe (through a pipe, then discarded: for programs that skip "
                            "work when writing to /dev/null), inherit (into BenchExec's log of each run), or a FILE "
                            "(needs --no-container). Their standard error is discarded too but for the last lines "
                            "of the first execution that fails, which its error message quotes")
    group.add_argument("-n", "--command-name", action="append", metavar="NAME",
                       help="the name tables and summaries give the command (hyperfine's option; repeatable: one per "
                            "command, in order; {NAME} parameters work); without it short labels (ab: A, B, ...; "
                            "bench: #1, #2, ...) stand for the commands, each named in full once above the table")
    group.add_argument("--export-json", type=Path, metavar="FILE", help="hyperfine's JSON plus the kit's fields on the invocations")
    group.add_argument("--export-markdown", type=Path, metavar="FILE", help="hyperfine's Markdown table")
    group.add_argument("--export-csv", type=Path, metavar="FILE", help="hyperfine's CSV columns plus the kit's")


def command_output(text):
    """--command-output: null, pipe, inherit, or a file (its absolute path: the commands run elsewhere)."""
    if text in spec.OUTPUTS:
        return text
    if not text.strip() or text.endswith("/") or Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"'{text}' is neither null, pipe, inherit nor a file name")
    return str(Path(text).resolve())


def command_options(args):
    """hyperfine's options of a parsed command line, as CommandOptions' fields (None where not given)."""
    return {"runs": args.runs, "warmup": args.warmup, "prepare": args.prepare,
            "parameter_list": tuple(tuple(p) for p in args.parameter_list) if args.parameter_list else None,
            "shell": args.shell, "repeat": args.repeat, "ignore_failure": args.ignore_failure,
            "command_output": args.command_output,
            "command_name": tuple(args.command_name) if args.command_name else None,
            "export_json": args.export_json, "export_markdown": args.export_markdown, "export_csv": args.export_csv}


def given_command_options(options):
    """The hyperfine options given (`--runs`, ...) of an AbOptions or BenchOptions."""
    return [f"--{name.replace('_', '-')}" for name in COMMAND_ONLY if getattr(options, name, None) is not None]


def options_from(options, container=True):
    """spec.Options from hyperfine's options (CommandOptions); the commands run in the current directory."""
    cwd = os.getcwd()
    hidden = paths.hidden_in_container(cwd)
    if container and hidden:
        raise spec.CommandError(f"{cwd}: BenchExec's container hides {hidden}; run the commands "
                                "from another directory (or with --no-container)")
    output = options.command_output or "null"
    if container and output not in spec.OUTPUTS:
        raise spec.CommandError(f"--command-output {output}: BenchExec's container keeps no file a command writes; "
                                "add --no-container, or use null, pipe or inherit")
    return spec.Options(runs=options.runs or 10, warmup=options.warmup or 0, prepare=options.prepare or "",
                        shell=options.shell or "sh", repeat=options.repeat or 1, cwd=cwd,
                        parameters=spec.parse_parameters(options.parameter_list),
                        ignore_failure=bool(options.ignore_failure), output=output)


def check_exports(options):
    """--export-* files that could not be written once the run is over: said now, in one line."""
    for name in EXPORTS:
        path = getattr(options, name, None)
        if path is None:
            continue
        option = "--" + name.replace("_", "-")
        if path.is_dir():
            raise spec.CommandError(f"{option} {path}: a directory; give a file name")
        parent = next((p for p in [path.parent, *path.parent.parents] if p.exists()), None)
        if parent is not None and not (parent.is_dir() and os.access(parent, os.W_OK | os.X_OK)):
            raise spec.CommandError(f"{option} {path}: {parent} is not a directory this user can write to")


def check_new(outdir, manifest, kind):
    """A new run's --output: not a file, and not holding a run of its own already."""
    outdir = Path(outdir)
    if outdir.exists() and not outdir.is_dir():
        raise spec.CommandError(f"--output {outdir}: a file, not a directory")
    if (outdir / manifest).exists():
        raise spec.CommandError(f"{outdir}: already holds {kind} run; use --resume or another --output")


@contextlib.contextmanager
def new_directory(outdir):
    """Around the start of a new run, up to its first invocation: where it fails (one line) or is
    interrupted there, what it created goes again, so that a wrong invocation leaves nothing
    behind (a bug's traceback included). What a directory held before stays as it was."""
    outdir = Path(outdir).resolve()
    first = outdir
    while not first.exists() and not first.parent.exists():
        first = first.parent
    held = {p.name for p in outdir.iterdir()} if outdir.is_dir() else None
    try:
        yield
    except BaseException:
        from analysis.sweep import steps_loop

        steps_loop.release_all(under=outdir)   # its lock files go with it
        for path in [first] if held is None else [p for p in outdir.iterdir() if p.name not in held]:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        raise


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
        formatter_class=argparse.RawDescriptionHelpFormatter, intermixed=True)
    parser.add_argument("commands", nargs="*", metavar="CMD", help="shell command (quote it); omit with --resume")
    parser.add_argument("--reruns", type=positive_int, default=5, help="benchexec invocations (default 5; 2 at least "
                        "to see how far the mean moves between invocations)")
    parser.add_argument("--output", type=Path, help="directory (default: " + paths.DEFAULT_HELP.format("bench/DATE") + ")")
    parser.add_argument("--resume", action="store_true", help="continue the bench run in --output (default: the latest)")
    parser.add_argument("--no-container", action="store_true", help="run without BenchExec's container")
    parser.add_argument("--verbose", action="store_true",
                        help="the trade-off of --repeat in full, where a command is shorter than BenchExec's cost per run")
    add_command_options(parser)


def bench_options(args):
    """The BenchOptions of `timekit bench`'s parsed arguments: the one place its namespace is read."""
    return BenchOptions(commands=tuple(args.commands or ()), reruns=args.reruns, output=args.output, resume=args.resume,
                        container=not args.no_container, verbose=args.verbose, command_line=command_line(),
                        **command_options(args))


def run(args):
    return bench(bench_options(args))


def bench(options):
    """`timekit bench` with its BenchOptions: the exit code."""
    from analysis.sweep import runner, steps_loop
    from analysis.sweep.model import Interrupted
    from analysis.tools.commands import bench, first_run, report

    if options.resume:
        if options.commands:
            raise spec.CommandError("--resume continues the bench run in --output (or the latest) with its own "
                                    f"commands; give none with it (got {options.commands[0]!r})")
        outdir = (options.output or latest("bench", bench.MANIFEST)).resolve()
        if not (outdir / bench.MANIFEST).exists():
            bench.BenchRun.load(outdir)   # its one line, before the lock would create the directory
        steps_loop.hold(outdir)
        record = bench.BenchRun.load(outdir)
    else:
        run_options = options_from(options, container=options.container)
        commands = spec.expand(list(options.commands), run_options, options.command_name)
        check_exports(options)
        where = paths.user_results()
        outdir = (options.output or where.root / "bench" / stamp()).resolve()   # benchexec runs in the kit's checkout
        check_new(outdir, bench.MANIFEST, "a bench")
        runner.build_programs()   # programs/bin/cmdrun
        first_run.check([(c.text, c.prepare) for c in commands], run_options, container=options.container)
        with new_directory(outdir):
            steps_loop.hold(outdir)
            record = bench.start(commands, run_options, outdir, options.reruns, options.container, options.command_line)
    steps_loop.hold(outdir)  # one timekit per directory, from here to the figures
    run_options = spec.Options(**record.options)
    note = "" if options.resume or options.output else where.note()
    print(f"bench: {len(record.commands)} command(s), {record.reruns} invocations of {run_options.runs} runs each"
          + (f" after {run_options.warmup} warmup run(s)" if run_options.warmup else "") + f"; results in {outdir}{note}",
          file=sys.stderr, flush=True)
    try:
        bench.run_pending(record, outdir)
    except Interrupted as e:
        raise e.continuing(f"timekit bench --resume --output {outdir}") from None
    commands = [spec.Command(**c) for c in record.commands]
    text, figures, extra = report.bench_text(outdir, commands, run_options, verbose=options.verbose)
    redone = steps_loop.redone(record)
    print(text + (f"\n{redone} invocation(s) ran again after being cut short; their files are under incomplete/, "
                  "not counted" if redone else ""))
    report.export(options, figures, extra)
    return 0
