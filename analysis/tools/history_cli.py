"""`timekit history`: the parser and the command (analysis/cli.py lists it)."""

import sys
import textwrap
from pathlib import Path

from analysis.core.argtypes import positive_int, probability

def add_parser(commands):
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


def run(args):
    from analysis.tools import history as history_mod

    return history_mod.history_command(args.results, args.column, args.format, args.plot, sys.stdout,
                                       permutations=args.permutations, p_threshold=args.p_threshold, seed=args.seed)
