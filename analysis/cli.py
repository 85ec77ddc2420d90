"""
`timekit`: the kit's command line.

  timekit demo                  set up, run every experiment's quick preset, tables, one report
  timekit run EXPERIMENT ...    one sweep (background load x reruns) under real benchexec
  timekit report SWEEP...       the analysis report of finished sweeps
  timekit compare BASE NEW      faster/slower/~ per task and column; exit 1 on a regression
  timekit ab BASE NEW           two definitions in alternation, M reruns each, then compare by rerun
  timekit history RESULTS...    changepoints over result sets ordered by date (E-Divisive, permutation test)
  timekit calibrate RESULTS     compare's A/A false-positive rate and power at the measured CV
  timekit calibrate --claims    how often each finding's verdict is wrong, simulated with this VM's drift
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
from analysis.core.verdicts import DRIFT
from analysis.core.lists import parse_int_list
from analysis.core.paths import RESULTS
from analysis.experiments import EXPERIMENTS
from analysis.machine import packages as system
from analysis.machine import tuning
from analysis.sweep.model import MANIFEST, Interrupted, Preset, SweepError
from analysis.tools import ab as ab_mod
from analysis.tools import paired_output
from analysis.tools.fleet import cli as fleet_cli

# What each command needs beyond argument parsing (scipy, matplotlib, the pipeline) is imported in
# the command's function: `timekit --help`, `lint`, `env` and `fleet submit|status` start in a
# fraction of a second, and the fleet's per-node overhead is mostly start-up.
EXIT_ERROR = 2


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


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer")
    return value


def probability(text):
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number between 0 and 1")
    return value


def build_parser():
    parser = argparse.ArgumentParser(
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
    _add_compare(commands)
    ab_mod.add_parser(commands, positive_int, probability)
    _add_history(commands)
    _add_calibrate(commands)
    _add_cores(commands)
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
    run.add_argument("--output", type=Path, help="sweep directory (default: results/EXPERIMENT/DATE)")
    run.add_argument("--resume", action="store_true", help="continue the sweep in --output (default: the latest) from its first unfinished step")
    run.add_argument("--no-container", action="store_true", help="run without BenchExec's container (less isolation; the report warns)")


def _add_compare(commands):
    paragraphs = (
        "Two modes, chosen from the data.",
        "Repeated runs (the kit's sweeps; any task run several times): per run definition, input and column, "
        "the change as a ratio of means with a bootstrap CI, Welch's t-test (drives the verdict) beside "
        "Mann-Whitney U, Holm over all rows. With 2+ benchexec invocations a side the invocation is the unit, "
        "so drift between invocations is not taken for a change; with one, the row says it cannot see that drift.",
        "One run per task (competition style: each side one invocation with every task once, or --paired): "
        "runs paired by task name and properties; status transitions and score; over tasks both sides finished "
        "with at least --min-cputime, the geometric mean of per-task ratios with a bootstrap CI and the Wilcoxon "
        "signed-rank test, also per task set (Holm).",
        "Both: 'slower'/'faster' only when significant and beyond --threshold, else '~'. Exit code 1 on a "
        "significant slowdown beyond the threshold (paired: or a newly wrong result), 0 otherwise, 2 on bad input.",
    )
    compare = commands.add_parser(
        "compare", help="compare two result sets; exit 1 on a significant slowdown (a CI gate)",
        description="\n\n".join(textwrap.fill(p, 78, break_on_hyphens=False) for p in paragraphs),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    compare.add_argument("base", type=Path, help="result file, directory of result files, or sweep directory")
    compare.add_argument("new", type=Path, help="the same, for the candidate")
    compare.add_argument("--column", action="append", dest="columns",
                         help="column to compare (repeatable; default: cputime and walltime, paired: and memory)")
    compare.add_argument("--alpha", type=probability, default=0.05, help="significance level (default 0.05)")
    compare.add_argument("--threshold", type=probability, default=0.02,
                         help="smallest relative change that counts, e.g. 0.02 = 2 %% (default)")
    compare.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    paired_output.add_arguments(compare)


def _add_history(commands):
    history = commands.add_parser(
        "history", help="changepoints in a sequence of result sets (E-Divisive means, permutation test)",
        description=textwrap.fill(
            "Orders the result sets by BenchExec's date attribute (not by argument order; one result set is one benchexec "
            "invocation or one sweep) and, per run definition and input, finds changepoints in the series of per-result-set "
            "means of --column: E-Divisive means (Matteson & James 2014, energy statistic, alpha = 1), each changepoint "
            "significant by a seeded permutation test. Prints position, date, mean before/after, change and p.", 78))
    history.add_argument("results", nargs="+", type=Path,
                         help="result files, directories of them, or sweep directories (at least 4 result sets)")
    history.add_argument("--column", default="cputime", help="column whose means are followed (default: cputime)")
    history.add_argument("--permutations", type=positive_int, default=999, help="permutations per significance test (default 999)")
    history.add_argument("--p-threshold", type=probability, default=0.05, help="a changepoint needs a permutation p below this (default 0.05)")
    history.add_argument("--seed", type=int, default=0, help="seed of the permutations (default 0)")
    history.add_argument("--plot", type=Path, help="write the figure (mean with 95 %% CI per result set, changepoints) as PNG")
    history.add_argument("--format", choices=["text", "markdown", "json"], default="text")


def _add_calibrate(commands):
    calibrate = commands.add_parser(
        "calibrate", help="compare's A/A false-positive rate and power at a measured or given CV",
        description=textwrap.fill(
            "A/A: random halvings of one measured sample (and fresh lognormal pairs) judged by compare's rule (Welch t at "
            "--alpha; verdict also needs --threshold), rates with binomial CIs. Power to flag 1, 2 and 5 % slowdowns at "
            "10, 30 and 100 runs per side, simulated and analytic (noncentral t). One calibration per run definition and "
            "input of a result set, at its measured CV of --column; or at --cv. Given 4+ benchexec invocations of one run "
            "definition and input (a directory), between invocations instead: A/A of compare's rerun rule and of the old "
            "per-run rule over random splits into M = 3, 5, 7, 10 a side, power against --slower invocations, --until.", 78))
    source = calibrate.add_mutually_exclusive_group(required=True)
    source.add_argument("results", nargs="?", type=Path, help="a result file, a directory of one invocation or of 4+, or a sweep")
    source.add_argument("--cv", type=probability, help="coefficient of variation as a fraction, e.g. 0.014 for 1.4 %%")
    source.add_argument("--claims", action="store_true",
                        help="the report's findings instead: each claim simulated true, false and at its bound with "
                             "drift between invocations (--drift), wrong verdicts counted per claim and preset")
    calibrate.add_argument("--drift", type=probability, default=DRIFT,
                           help="with --claims: CV of a mean between invocations (default %(default)s, measured here)")
    calibrate.add_argument("--column", default="cputime", help="column whose CV is used (default: cputime)")
    calibrate.add_argument("--alpha", type=probability, default=0.05, help="significance level (default 0.05)")
    calibrate.add_argument("--threshold", type=probability, default=0.02, help="compare's noise threshold (default 0.02 = 2 %%)")
    calibrate.add_argument("--slower", type=Path, help="between invocations: invocations of a slower variant, for power at M = 3, 5, 7, 10")
    calibrate.add_argument("--until", type=ab_mod.percent, metavar="PCT", help="between invocations: also the sequential rule of ab --until PCT")
    calibrate.add_argument("--plot", type=Path, help="write the power figure (power against runs per side) as PNG")
    calibrate.add_argument("--format", choices=["text", "markdown", "json"], default="text")


def _add_cores(commands):
    cores_cmd = commands.add_parser(
        "cores", help="rank the cores from core-heterogeneity results; run a command on the fastest",
        description="rank RESULTS: the cores fastest to slowest per workload (Welch t on adjacent cores, Holm, "
        "alpha 0.01), written to results/cores-ranking.json. run -k K -- COMMAND: run COMMAND pinned to the K "
        "fastest cores of that ranking; refused when there is none, or it predates the machine's last boot.")
    cores_actions = cores_cmd.add_subparsers(dest="action", metavar="ACTION", required=True)
    cores_rank = cores_actions.add_parser("rank", help="rank the cores from result files, directories or sweeps")
    cores_rank.add_argument("results", nargs="+", type=Path)
    cores_rank.add_argument("--output", type=Path, help="ranking file (default results/cores-ranking.json)")
    cores_run = cores_actions.add_parser("run", help="run a command on the K fastest cores of the last ranking")
    cores_run.add_argument("-k", type=positive_int, required=True, help="how many of the fastest cores")
    cores_run.add_argument("--workload", help="rank by this workload (default: the ranking's cache-heavy one)")
    cores_run.add_argument("--ranking", type=Path, help="ranking file (default results/cores-ranking.json)")
    cores_run.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]", help="what to run")


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
    candidates = sorted(p.parent for p in (RESULTS / experiment.name).glob("*/" + MANIFEST))
    if not candidates:
        raise SweepError(f"no sweep of {experiment.name} to resume under results/{experiment.name}/; give --output")
    return candidates[-1]


def cmd_run(args):
    from analysis.sweep import runner

    experiment = EXPERIMENTS[args.experiment]
    preset = _preset(experiment, args)
    if args.resume:
        outdir = args.output or _latest_sweep(experiment)
    else:
        outdir = args.output or RESULTS / experiment.name / _stamp()
    system.ensure_packages()
    runner.run_sweep(experiment, args.preset, preset, outdir, resume=args.resume, container=not args.no_container)
    from analysis import pipeline  # scipy, matplotlib: imported once the sweep is done

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


def cmd_compare(args):
    from analysis.sweep.load import load_tables
    from analysis.tools import compare as compare_mod

    columns = tuple(args.columns or compare_mod.DEFAULT_COLUMNS)
    wanted = {"status", "category", *columns} | paired_output.wanted_columns(args.columns)
    base = load_tables(args.base, wanted)[:2]  # a file that cannot be read: ResultFileError, one line
    new = load_tables(args.new, wanted)[:2]
    if paired_output.applies(args, base[0], new[0]):
        sides = [base[0], new[0]]
        del base, new  # run() frees each side's tables once it has its run sets
        return paired_output.run(args, sides)
    rows = compare_mod.compare(base, new, columns, alpha=args.alpha, threshold=args.threshold)
    if not rows:
        raise UserError(f"{args.base} and {args.new} share no run definition, input and column with 2+ finished runs each")
    print(compare_mod.render(rows, args.format, args.alpha, args.threshold))
    return 1 if compare_mod.regressed(rows) else 0


def cmd_env(args):
    from analysis.machine import environment

    if args.action == "tune":
        tuning.tune()
        return 0
    if args.action == "restore":
        tuning.restore()
        return 0
    for probe in environment.check():
        print(f"{probe.name:24} {probe.value:34} {probe.verdict:8} {probe.why}")
    return 0


def cmd_history(args):
    from analysis.tools import history as history_mod

    return history_mod.history_command(args.results, args.column, args.format, args.plot, sys.stdout,
                                       permutations=args.permutations, p_threshold=args.p_threshold, seed=args.seed)


def cmd_calibrate(args):
    from analysis.tools import calibration, calibration_between, claims_calibration

    if args.claims:
        specs = [spec for experiment in EXPERIMENTS.values() for spec in experiment.claim_specs()]
        outcomes = claims_calibration.calibrate_claims(specs, drift=args.drift)
        print(claims_calibration.render(outcomes, args.format))
        return 0
    if args.results is not None and calibration_between.holds_invocations(args.results, args.column):
        return calibration_between.command(args.results, args.slower, sys.stdout, args.format, args.plot, column=args.column,
                                           alpha=args.alpha, threshold=args.threshold, until=args.until)
    source = args.cv if args.cv is not None else args.results
    return calibration.calibration_command(source, sys.stdout, args.format, args.plot, column=args.column,
                                           alpha=args.alpha, threshold=args.threshold)


def cmd_cores(args):
    from analysis.experiments.core_heterogeneity import pinning as cores_pinning
    from analysis.experiments.core_heterogeneity.samples import CoresError

    if args.action == "rank":
        return cores_pinning.rank_command(args.results, args.output)
    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not command:
        raise CoresError("no command given; usage: timekit cores run -k K -- COMMAND [ARGS...]")
    return cores_pinning.run_command(args.k, command, ranking_path=args.ranking, workload=args.workload)


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


COMMANDS = {"demo": cmd_demo, "run": cmd_run, "report": cmd_report, "compare": cmd_compare, "history": cmd_history,
            "calibrate": cmd_calibrate, "cores": cmd_cores, "lint": cmd_lint, "env": cmd_env, "ab": ab_mod.run,
            "fleet": lambda args: fleet_cli.run(args, _tables_and_report)}
USER_ERRORS = (UserError,)  # every one-line error of the kit derives from it


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except USER_ERRORS as e:
        if args.debug:
            raise
        print(f"timekit: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except (KeyboardInterrupt, Interrupted):
        print("timekit: interrupted; finished runs are kept, continue with: timekit run EXPERIMENT --resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
