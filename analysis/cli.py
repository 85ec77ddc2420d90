"""
`timekit`: the kit's command line.

  timekit demo                  set up, run every experiment's quick preset, tables, one report
  timekit run EXPERIMENT ...    one sweep (background load x reruns) under real benchexec
  timekit report SWEEP...       the analysis report of finished sweeps
  timekit compare BASE NEW      faster/slower/~ per task and column; exit 1 on a regression
  timekit ab BASE NEW           two definitions in alternation, M reruns each, then compare by rerun
  timekit ab 'CMD A' 'CMD B'    the same for two shell commands (the kit writes the definition)
  timekit bench 'CMD' ...       shell commands under BenchExec, hyperfine-style, M invocations each
  timekit history RESULTS...    changepoints over result sets ordered by date (E-Divisive, permutation test)
  timekit calibrate RESULTS     compare's A/A false-positive rate and power at the measured CV
  timekit calibrate --claims    how often each finding's verdict is wrong, simulated with this VM's drift
  timekit plan PILOT...         how many invocations and runs a comparison needs (Kalibera & Jones), from a pilot
  timekit cores rank|run        rank the cores from core-heterogeneity results; run on the K fastest
  timekit lint FILE...          benchmark/table XML against BenchExec's DTDs, task YAML fields
  timekit env check             the machine's noise sources, as recorded with every sweep
  timekit env tune|restore      quiet the machine for measuring (root), and undo it
  timekit fleet submit|status|report   the experiments on many machines through SLURM

Errors are one line on stderr and a non-zero exit; `--debug` shows tracebacks.
"""

import argparse
import datetime
import sys
import textwrap
from pathlib import Path

from analysis.core.errors import UserError
from analysis.core.lists import parse_int_list
from analysis.core.paths import DEFAULT_HELP, RESULTS, user_results
from analysis.experiments import EXPERIMENTS
from analysis.machine import packages as system
from analysis.machine import tuning
from analysis.sweep.model import MANIFEST, Interrupted, Preset, SweepError
from analysis.ab import cli
from analysis.core.argtypes import positive_int
from analysis.tools.plan.args import duration
from analysis.experiments.core_heterogeneity import cli as cores_cli
from analysis.tools import history_cli
from analysis.products.bisect import cli as bisect_cli
from analysis.products.calibrate import cli as calibrate_cli
from analysis.tools.commands import cli as bench_cli
from analysis.tools.compare import cli as compare_cli
from analysis.tools.fleet import cli as fleet_cli
from analysis.products.plan import cli as plan_cli

# What each command needs beyond argument parsing (scipy, matplotlib, the pipeline) is imported in
# the command's function: `timekit --help`, `lint`, `env` and `fleet submit|status` start in a
# fraction of a second, and the fleet's per-node overhead is mostly start-up.
EXIT_ERROR = 2


class Parser(argparse.ArgumentParser):
    """argparse with the kit's edge: a wrong invocation is one line on stderr and exit 2 (argparse's
    usage block stays behind --help), naming the command it is wrong for, and, where built with
    `intermixed=True`, options may stand between positional arguments, as hyperfine's do
    (`timekit bench './a' -L n 1,2 './b {n}'`)."""

    def __init__(self, *args, intermixed=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.intermixed, self._parsing = intermixed, False

    def parse_known_args(self, args=None, namespace=None):
        if self._parsing:
            return super().parse_known_args(args, namespace)
        self._parsing = True   # parse_known_intermixed_args calls parse_known_args twice itself
        try:
            parse = self.parse_known_intermixed_args if self.intermixed else super().parse_known_args
            namespace, extras = parse(args, namespace)
        finally:
            self._parsing = False
        if extras:   # here, not in the top level's parse_args: the line names the subcommand
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras

    def error(self, message):
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parse_loads(text):
    """'0-6' or '0,2,4' (or a mix) -> sorted distinct load levels."""
    try:
        levels = set(parse_int_list(text))
        if not levels:
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of load levels like 0-6 or 0,2,4") from None
    if max(levels) > 256:
        raise argparse.ArgumentTypeError(f"{max(levels)} background processes is beyond any sane sweep (max 256)")
    return tuple(sorted(levels))


def build_parser():
    parser = Parser(
        prog="timekit",
        description="Measure time you can trust: BenchExec experiments, statistics and reports.",
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = commands.add_parser("demo", help="set up, run the quick presets, write tables and one report")
    demo.add_argument("--output", type=Path, help="directory for results and report (default: results/demo-DATE)")

    _add_run(commands)
    report = commands.add_parser("report", help="write the analysis report of finished sweeps or of any BenchExec result files")
    report.add_argument("sweeps", nargs="+", type=Path, metavar="PATH",
                        help="sweep directories (holding sweep.json), or BenchExec result files or directories of them "
                             "(of any benchmark: run sets described, two or more compared task by task)")
    report.add_argument("--output", type=Path, help="report directory (default: SWEEP/report; for a result file "
                                                    "X.results.xml.bz2, X.report/ beside it)")
    compare_cli.add_parser(commands)
    cli.add_parser(commands)
    bench_cli.add_parser(commands)
    history_cli.add_parser(commands)
    bisect_cli.add_parser(commands)
    calibrate_cli.add_parser(commands)
    plan_cli.add_parser(commands)
    cores_cli.add_parser(commands)
    lint = commands.add_parser(
        "lint", help="check benchmark definitions, table configs and task files before running them",
        description="BenchExec silently ignores a misspelled element and reads task files only when it runs them. "
        "lint checks .xml files against BenchExec's DTDs and .yml task files (format 2.0: fields, input files). "
        "One line per problem, FILE:LINE where known; exit 2 if any.")
    lint.add_argument("files", nargs="+", type=Path, help="benchmark-defs/*.xml, table-configs/*.xml, task .yml files")

    _add_env(commands)
    fleet_cli.add_parser(commands)
    return parser


def _add_run(commands):
    run = commands.add_parser(
        "run", help="run one experiment's sweep under benchexec",
        description=textwrap.fill(
            "Run an experiment as a sweep of benchexec invocations, each with a distinct --name and the "
            "conditions BenchExec cannot express set around it (background busy processes outside BenchExec's "
            "cgroups, one core at a time, a pinned or niced competitor). Writes sweep.json (conditions, "
            "environment, the machine's facts, result files) next to BenchExec's results, then tables and "
            "the report.", 78),
        epilog="experiments (what --loads/--reruns vary; presets):\n" + "\n".join(
            f"  {e.name:<20} {e.summary}\n  {'':<20} {e.conditions}; presets: {', '.join(e.presets)}"
            for e in EXPERIMENTS.values())
        + "\n\nexamples:\n  timekit run time-apis                      # quick: 30 runs, loads 0-2\n"
        "  timekit run time-apis --preset thesis      # 1000 runs x loads 0-6 x 4 APIs (hours)\n"
        "  timekit run time-apis --loads 0-4 --reps 100 --reruns 5\n"
        "  timekit run core-heterogeneity --reruns 10 # 10 rounds over all cores\n"
        "  timekit run discipline --preset talk       # N = 30 runs x M = 5 reruns per condition\n"
        "  timekit run time-apis --resume             # continue the latest interrupted sweep",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("experiment", choices=sorted(EXPERIMENTS))
    run.add_argument("--preset", default="quick", help="quick (demo-sized, the default) or the source's full design (see below)")
    run.add_argument("--loads", type=parse_loads, help="background processes per level, e.g. 0-6 or 0,2,4 (overrides the preset)")
    run.add_argument("--reps", type=positive_int, help="runs per task and run definition in one invocation (overrides the preset)")
    run.add_argument("--reruns", type=positive_int, help="benchexec invocations per condition, rounds for core-heterogeneity (overrides the preset)")
    run.add_argument("--output", type=Path, help="sweep directory (default: " + DEFAULT_HELP.format("EXPERIMENT/DATE") + ")")
    run.add_argument("--resume", action="store_true", help="continue the sweep in --output (default: the latest) from its first unfinished step")
    run.add_argument("--no-container", action="store_true", help="run without BenchExec's container (less isolation; the report warns)")
    run.add_argument("--until-decided", action="store_true",
                     help="after the preset's reruns, add one rerun at a time while a claim that the budget can "
                          "still decide is undecided (group-sequential looks, alpha spent by budget share, "
                          "docs/calibration.md) and --budget fits another; a claim decided at a look stays decided")
    run.add_argument("--budget", type=duration, help="with --until-decided: wall time for all invocations and looks, e.g. 15m")


def _add_env(commands):
    env = commands.add_parser(
        "env", help="the machine's noise sources: check (default), tune, restore",
        description="check: every noise source with its value, whether it is good for measuring, and why. "
        "tune (root): turn SMT and boost off, the governor to performance, ASLR off and the perf sample rate "
        f"down, where the machine has these knobs; the previous values go to {tuning.STATE_FILE.relative_to(RESULTS.parent)} "
        "first. restore (root): put them back (harmless when nothing is saved).")
    env.add_argument("action", nargs="?", choices=["check", "tune", "restore"], default="check")


def _stamp():
    return datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")


def _preset(experiment, args):
    if args.preset not in experiment.presets:
        raise SweepError(f"unknown preset '{args.preset}'; {experiment.name} has: {', '.join(experiment.presets)}")
    preset = experiment.presets[args.preset]
    if args.loads and not experiment.takes_loads:
        raise SweepError(f"--loads does not apply to {experiment.name}: its conditions are not background load levels")
    return Preset(
        reps=args.reps or preset.reps,
        loads=args.loads or preset.loads,
        reruns=args.reruns or preset.reruns,
        tasksets=preset.tasksets,
    )


def _latest_sweep(experiment):
    root = user_results().root / experiment.name
    candidates = sorted(p.parent for p in root.glob("*/" + MANIFEST))
    if not candidates:
        raise SweepError(f"no sweep of {experiment.name} to resume under {root}; give --output")
    return candidates[-1]


def cmd_run(args):
    from analysis.sweep import runner, steps_loop

    experiment = EXPERIMENTS[args.experiment]
    preset = _preset(experiment, args)
    if args.resume:
        outdir = args.output or _latest_sweep(experiment)
    else:
        where = user_results()
        outdir = args.output or where.root / experiment.name / _stamp()
        if not args.output:
            print(f"timekit run: results in {outdir}{where.note()}", file=sys.stderr, flush=True)
    if args.until_decided and args.budget is None:
        raise SweepError("--until-decided needs --budget (e.g. --budget 15m): the looks' alpha spending is fixed by it")
    system.ensure_packages()
    if args.resume:
        steps_loop.hold(outdir)
    try:
        runner.run_sweep(experiment, args.preset, preset, outdir, resume=args.resume, container=not args.no_container)
    except Interrupted as e:
        raise e.continuing(f"timekit run {experiment.name} --preset {args.preset} --resume --output {outdir}") from None
    steps_loop.hold(outdir)  # one timekit per directory, through the looks and the report
    from analysis import pipeline  # scipy, matplotlib: imported once the sweep is done

    if args.until_decided:
        from analysis.tools.plan import run_looks

        run_looks.until_decided(
            experiment, outdir, args.budget,
            lambda d: runner.run_sweep(experiment, args.preset, preset, d, resume=True, container=not args.no_container),
            lambda d: pipeline.build_report([d]).sections[0].findings)

    paths = pipeline.tables_and_report([outdir], outdir / "report")
    print(f"report: {paths['html']}")
    return 0


def default_report_dir(first):
    """SWEEP/report for a directory; beside a result file X.results.xml.bz2, X.report/ (as
    table-generator writes X.table.html there)."""
    if first.is_dir():
        return first / "report"
    return first.parent / (first.name.split(".results")[0] + ".report")


def cmd_report(args):
    from analysis import pipeline

    outdir = args.output or default_report_dir(args.sweeps[0])
    paths = pipeline.tables_and_report(args.sweeps, outdir)
    print(f"report: {paths['html']}")
    return 0


def cmd_demo(args):
    from analysis import pipeline
    from analysis.sweep import runner

    outdir = args.output or RESULTS / f"demo-{_stamp()}"
    system.ensure_packages()
    sweeps = []
    for experiment in EXPERIMENTS.values():
        sweep_dir = outdir / experiment.name
        runner.run_sweep(experiment, "quick", experiment.presets["quick"], sweep_dir)
        sweeps.append(sweep_dir)
    paths = pipeline.tables_and_report(sweeps, outdir / "report")
    print(f"report: {paths['html']}")
    return 0


def cmd_env(args):
    from analysis.machine import environment

    if args.action == "tune":
        tuning.tune()
        return 0
    if args.action == "restore":
        tuning.restore()
        return 0
    probes = environment.check()
    for probe in probes:
        print(f"{probe.name:24} {probe.value:34} {probe.verdict:8} {probe.why}")
    print(environment.advice(probes))
    return 0


def _tables_and_report(paths, outdir):
    from analysis import pipeline

    return pipeline.tables_and_report(paths, outdir)


def cmd_lint(args):
    from analysis.sweep import lint as lint_mod

    problems = lint_mod.check(args.files)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        return EXIT_ERROR
    print(f"ok: {len(args.files)} file(s) valid")
    return 0


COMMANDS = {"demo": cmd_demo, "run": cmd_run, "report": cmd_report, "compare": compare_cli.run, "history": history_cli.run,
            "calibrate": calibrate_cli.run, "cores": cores_cli.run, "lint": cmd_lint, "env": cmd_env, "ab": cli.run,
            "fleet": lambda args: fleet_cli.run(args, _tables_and_report), "plan": plan_cli.run, "bench": bench_cli.run,
            "bisect": bisect_cli.run}
USER_ERRORS = (UserError,)  # every one-line error of the kit derives from it


def main(argv=None):
    from analysis.sweep import steps_loop

    args = build_parser().parse_args(argv)
    try:
        with steps_loop.signals_interrupt():
            return COMMANDS[args.command](args)
    except USER_ERRORS as e:
        if args.debug:
            raise
        print(f"timekit: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as e:   # a path that cannot be written or read (permissions, a full disk): one line too
        if args.debug:
            raise
        print(f"timekit: error: {str(e.filename) + ': ' if e.filename else ''}{e.strerror or e}", file=sys.stderr)
        return EXIT_ERROR
    except (KeyboardInterrupt, Interrupted) as e:
        print(interrupted_line(e), file=sys.stderr)
        return 130
    except ImportError as e:   # an interrupt inside a C extension's initialisation leaves wrapped
        interrupt = _interrupt_within(e)
        if interrupt is None or args.debug:
            raise
        print(interrupted_line(interrupt), file=sys.stderr)
        return 130
    finally:
        steps_loop.release_all()


def _interrupt_within(error):
    """The Interrupted or KeyboardInterrupt that an error was raised from (None: none was)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, (Interrupted, KeyboardInterrupt)):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def interrupted_line(e):
    """What an interrupted command says last: which signal, and the command that continues this run."""
    name = getattr(e, "signal_name", "SIGINT")
    if getattr(e, "resume", None):
        return f"timekit: interrupted ({name}); finished work is kept, continue with: {e.resume}"
    return f"timekit: interrupted ({name})"


if __name__ == "__main__":
    sys.exit(main())
