"""`timekit compare BASE NEW`: the parser and the command (analysis/cli.py lists it)."""

import argparse
import sys
import textwrap
from pathlib import Path

from analysis.core.argtypes import probability
from analysis.core.errors import UserError
from analysis.tools.compare import per_task_output
from analysis.tools.options import CompareOptions

def add_parser(commands):
    paragraphs = (
        "Two modes, chosen from the data.",
        "Repeated runs (the kit's sweeps; any task run several times): per run definition, input and column, "
        "the change as a ratio of means with a bootstrap CI, Welch's t-test (drives the verdict) beside "
        "Mann-Whitney U, Holm over all rows. With 2+ benchexec invocations a side the invocation is the unit, "
        "so drift between invocations is not taken for a change; with one, the row says it cannot see that drift.",
        "One run per task (competition style: each side one invocation with every task once, or --paired): "
        "runs paired by task name and properties; status transitions and score; over tasks both sides finished "
        "with at least --min-cputime, the geometric mean of per-task ratios with a bootstrap CI and the Wilcoxon "
        "signed-rank test, also per task set (Holm). Such a definition rerun, 2+ invocations a side: one row per "
        "task set and column, the geometric mean of the per-task ratios with Welch's t on the invocations' log "
        "geometric means (--per-task: a row per task).",
        "Both: 'slower'/'faster' only when significant and beyond --threshold; a significant change within it "
        "is 'slightly slower'/'slightly faster' (it passes the gate), else '~'. Values that are no "
        "measurement (NaN, infinite, negative) and runs that did not finish normally are left out run by run and "
        "counted by reason.",
        "Exit code: 1 on a significant slowdown beyond the threshold (paired: or a newly wrong result); 3 when "
        "nothing was compared (no row with valid values on both sides; paired: e.g. every task under --min-cputime), "
        "so that a CI gate cannot pass on it; 2 on bad input; 0 otherwise.",
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
                         help="smallest relative change that counts, 0.02 or 2%% (the default)")
    compare.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    compare.add_argument("--per-task", action="store_true",
                         help="a one-run-per-task definition rerun on both sides: a row per task, not per task set")
    per_task_output.add_arguments(compare)


AB_BOTH_SIDES = (("paired.json", "a paired design"), ("blocks.json", "the blocks design"))   # ab's manifests


def _ab_side_missing(path):
    """One line for base/ or new/ of an A/B run whose design holds both sides in every invocation."""
    for manifest, design in AB_BOTH_SIDES:
        if path.name in ("base", "new") and not path.exists() and (path.parent / manifest).exists():
            raise UserError(f"{path}: no such directory: the A/B run in {path.parent} ran under {design}, which holds "
                            f"base and new in every invocation (no base/ and new/); timekit ab --resume --output "
                            f"{path.parent} prints its verdict again, and --design separate writes base/ and new/")


def options(args):
    """The CompareOptions of `timekit compare`'s parsed arguments: the one place its namespace is read."""
    return CompareOptions(base=args.base, new=args.new, columns=tuple(args.columns or ()), alpha=args.alpha,
                          threshold=args.threshold, format=args.format, per_task=args.per_task, paired=args.paired,
                          min_cputime=args.min_cputime, report=args.report)


def run(args):
    return compare(options(args))


def compare(options):
    """`timekit compare` with its CompareOptions: print the comparison; the exit code."""
    from analysis.core.results import machines
    from analysis.sweep.load import load_tables
    from analysis.tools.compare import repeated as compare_mod

    for path in (options.base, options.new):
        _ab_side_missing(path)
    columns = tuple(options.columns or compare_mod.DEFAULT_COLUMNS)
    wanted = {"status", "category", "host", *columns} | per_task_output.wanted_columns(options.columns)
    base = load_tables(options.base, wanted)[:2]  # a file that cannot be read: ResultFileError, one line
    new = load_tables(options.new, wanted)[:2]
    for column in options.columns:   # a misspelled column is bad input, not "nothing compared"
        if not any(column in t.columns or column in t.text_columns for t in [*base[0], *new[0]]):
            raise UserError(f"--column {column}: no result file of {options.base} or {options.new} has that column "
                            "(BenchExec's own are cputime, walltime, memory; others are the titles of the "
                            "definition's <column> elements)")
    measured = {"base": machines.of_tables(base[0]), "new": machines.of_tables(new[0])}
    warning = machines.warning(measured["base"], measured["new"])
    if warning:  # before the table; on stderr where stdout is JSON
        print(warning, file=sys.stderr if options.format == "json" else sys.stdout, flush=True)
    if per_task_output.applies(options, base[0], new[0]):
        sides = [base[0], new[0]]
        del base, new  # run() frees each side's tables once it has its run sets
        return per_task_output.run(options, sides, machines.environment(measured))
    result = compare_mod.compare(base, new, columns, alpha=options.alpha, threshold=options.threshold,
                                 per_task=options.per_task)
    if result.nothing and not result.not_compared:
        raise UserError(f"{options.base} and {options.new} share no run definition, input and column")
    from analysis.tools.commands import pair_record

    labels = pair_record.labels_of(options.base, options.new)   # an ab folder's sides: its commands, not 'command'
    print(compare_mod.render(result, options.format, options.alpha, options.threshold, labels))
    return compare_mod.exit_code(result)
