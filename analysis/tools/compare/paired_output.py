"""The `compare` command's paired mode: its options, when it applies, what it loads, what it prints.

`timekit compare BASE NEW` takes this path when each side is one benchexec invocation holding
each task once (or with --paired); repeated runs of the kit's experiments stay with
analysis.tools.compare.repeated.
"""

from __future__ import annotations

import sys
from pathlib import Path

from analysis.core.errors import UserError
from analysis.tools.compare import pairing


def add_arguments(parser):
    """The options `compare` has for its paired mode."""
    parser.add_argument("--paired", action="store_true",
                        help="pair runs task by task (the default when both sides are one run per task)")
    parser.add_argument("--min-cputime", type=float, default=pairing.MIN_CPUTIME, metavar="SECONDS",
                        help="paired mode: tasks under this CPU time (geometric mean of both sides) are left out of the statistics "
                             f"(default {pairing.MIN_CPUTIME:g})")
    parser.add_argument("--report", type=Path, metavar="DIR",
                        help="paired mode: write report.html (scatter and quantile plots) and the PNGs into DIR")


def applies(args, base_tables, new_tables) -> bool:
    """Paired mode: asked for, or each side one invocation with every task once."""
    if getattr(args, "paired", False):
        return True
    sides = (base_tables, new_tables)
    return all(len({(t.benchmark, t.date) for t in side}) == 1 for side in sides) and pairing.one_run_per_task(
        [t for side in sides for t in side])


def wanted_columns(columns=None):
    """Columns to load for the paired mode: the asked ones (default DEFAULT_COLUMNS; memory under
    either name), cputime for the min-time filter, score, status and category."""
    wanted = {"status", "category", "score", "cputime", *(columns or pairing.DEFAULT_COLUMNS)}
    if wanted & set(pairing.MEMORY_COLUMNS):
        wanted |= set(pairing.MEMORY_COLUMNS)
    return wanted


def run(args, sides, environment=None):
    """`timekit compare` in paired mode on the loaded RunTables of both sides, [base, new]: print
    the comparison, write the report if asked (`environment`: its Environment rows); the exit code. The list is emptied: each side's
    tables are freed once its run sets are made (a million runs: tens of MB each)."""
    from analysis.tools.compare import paired  # scipy: only when comparing, not for --help
    from analysis.tools.compare import paired_text

    columns = tuple(args.columns or pairing.DEFAULT_COLUMNS)
    base = pairing.run_sets(sides.pop(0), columns)
    new = pairing.run_sets(sides.pop(0), columns)
    result = paired.compare_paired(base, new, columns,
                                   alpha=args.alpha, threshold=args.threshold, min_cputime=args.min_cputime)
    if not result.comparisons:
        raise UserError(f"{args.base} and {args.new}: no pair of run sets to compare ({'; '.join(result.skipped)})")
    print(paired_text.render(result, args.format))
    if getattr(args, "report", None):
        from analysis.tools.compare import paired_plots

        written = paired_plots.write(result, args.report, environment)
        print(f"report: {written['html']} (figures: {', '.join(p.name for p in written['png'])})", file=sys.stderr)
    return result.exit_code
