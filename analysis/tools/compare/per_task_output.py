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


def applies(options, base_tables, new_tables) -> bool:
    """Paired mode: asked for (CompareOptions.paired), or each side one invocation with every task once."""
    if options.paired:
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


def run(options, sides, environment=None):
    """`timekit compare` in paired mode (its CompareOptions) on the loaded RunTables of both sides,
    [base, new]: print the comparison, write the report if asked (`environment`: its Environment
    rows); the exit code. The list is emptied: each side's tables are freed once its run sets are
    made (a million runs: tens of MB each)."""
    from analysis.tools.compare import per_task  # scipy: only when comparing, not for --help
    from analysis.tools.compare import per_task_text

    columns = tuple(options.columns or pairing.DEFAULT_COLUMNS)
    base = pairing.run_sets(sides.pop(0), columns)
    new = pairing.run_sets(sides.pop(0), columns)
    min_cputime = pairing.MIN_CPUTIME if options.min_cputime is None else options.min_cputime
    result = per_task.compare_paired(base, new, columns, alpha=options.alpha, threshold=options.threshold,
                                   min_cputime=min_cputime)
    if not result.comparisons:
        raise UserError(f"{options.base} and {options.new}: no pair of run sets to compare ({'; '.join(result.skipped)})")
    print(per_task_text.render(result, options.format))
    if options.report:
        from analysis.tools.compare import per_task_plots

        written = per_task_plots.write(result, options.report, environment)
        print(f"report: {written['html']} (figures: {', '.join(p.name for p in written['png'])})", file=sys.stderr)
    return result.exit_code
