"""The paired comparison as text, markdown or JSON, and the `compare` command's paired mode.

`timekit compare BASE NEW` takes this path when each side is one benchexec invocation holding
each task once (or with --paired); repeated runs of the kit's experiments stay with
analysis.tools.compare.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from analysis.core import fmt
from analysis.core.errors import UserError
from analysis.tools import pairing, paired


def add_arguments(parser):
    """The options `compare` has for its paired mode."""
    parser.add_argument("--paired", action="store_true",
                        help="pair runs task by task (the default when both sides are one run per task)")
    parser.add_argument("--min-cputime", type=float, default=paired.MIN_CPUTIME, metavar="SECONDS",
                        help="paired mode: tasks under this CPU time (geometric mean of both sides) are left out of the statistics "
                             f"(default {paired.MIN_CPUTIME:g})")
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
    wanted = {"status", "category", "score", "cputime", *(columns or paired.DEFAULT_COLUMNS)}
    if wanted & set(pairing.MEMORY_COLUMNS):
        wanted |= set(pairing.MEMORY_COLUMNS)
    return wanted


def run(args, base, new):
    """`timekit compare` in paired mode on the loaded RunTables of both sides: print the
    comparison, write the report if asked; the exit code."""
    columns = tuple(args.columns or paired.DEFAULT_COLUMNS)
    result = paired.compare_paired(pairing.run_sets(base, columns), pairing.run_sets(new, columns), columns,
                                   alpha=args.alpha, threshold=args.threshold, min_cputime=args.min_cputime)
    if not result.comparisons:
        raise UserError(f"{args.base} and {args.new}: no pair of run sets to compare ({'; '.join(result.skipped)})")
    print(render(result, args.format))
    if getattr(args, "report", None):
        from analysis.tools import paired_plots

        written = paired_plots.write(result, args.report)
        print(f"report: {written['html']} (figures: {', '.join(p.name for p in written['png'])})", file=sys.stderr)
    return 1 if result.regression else 0


# --------------------------------------------------------------------------------------------
# text and markdown


def percent(ratio):
    return fmt.MISSING if ratio != ratio else f"{100 * (ratio - 1):+.2f} %"


def ci(stat):
    if stat.ci_low != stat.ci_low:
        return fmt.MISSING
    return f"{100 * (stat.ci_low - 1):+.2f} … {100 * (stat.ci_high - 1):+.2f} %"


def _value(v, unit):
    if v != v:
        return fmt.MISSING
    if unit == "B":
        return f"{v / 1e6:.4g} MB"
    return f"{v:.4g} {unit}".rstrip()


def left_out_text(left_out):
    """Reasons with their counts; the min-time filter always, the others only when they apply."""
    return "; ".join(f"{n} {reason}" for reason, n in left_out.items() if n or reason.startswith("under "))


STAT_HEADER = ["column", "tasks", "new/base (geo. mean)", "95 % CI", "Wilcoxon p (Holm)", "faster", "slower",
               "verdict", "median base → new", "left out"]
BLOCK_HEADER = ["task set", "tasks", "new/base (geo. mean)", "95 % CI", "Wilcoxon p (Holm)", "faster", "slower", "verdict"]


def stat_cells(stat, first):
    return [first, str(stat.n), percent(stat.geomean), ci(stat), f"{stat.p_holm:.3g}", fmt.pct(stat.faster, 1),
            fmt.pct(stat.slower, 1), stat.verdict]


def column_rows(comparison):
    return [stat_cells(col.overall, col.column)
            + [f"{_value(col.overall.median_base, col.unit)} → {_value(col.overall.median_new, col.unit)}",
               left_out_text(col.left_out)] for col in comparison.columns]


def transition_rows(comparison):
    """The status matrix without outcomes that occur on neither side: (header, rows)."""
    matrix = comparison.transitions
    shown = [k for k in range(len(pairing.OUTCOMES))
             if any(matrix[k]) or any(row[k] for row in matrix)]
    header = ["base \\ new"] + [pairing.OUTCOMES[k] for k in shown]
    rows = [[pairing.OUTCOMES[i]] + [str(matrix[i][k]) for k in shown] for i in shown]
    return header, rows


def grid(header, rows, markdown):
    """A table as aligned text or as markdown."""
    table = [header] + rows
    if markdown:
        lines = ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table]
        lines.insert(1, "|" + "---|" * len(header))
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table)


def _side(d):
    return f"{d['label']} ({d['date']}, version {d['version']}, {d['tasks']} tasks)"


def summary_lines(c):
    """What was paired, the score and the wrong results, as sentences."""
    lines = [f"base: {_side(c.base)}", f"new:  {_side(c.new)}",
             f"tasks: {c.paired} paired ({c.by_tail} of them by path tail after a rename), {c.only_base} only in base, "
             f"{c.only_new} only in new."]
    if c.only_base_tasks:
        lines.append(f"only in base: {', '.join(c.only_base_tasks)}{' …' if c.only_base > len(c.only_base_tasks) else ''}")
    if c.only_new_tasks:
        lines.append(f"only in new: {', '.join(c.only_new_tasks)}{' …' if c.only_new > len(c.only_new_tasks) else ''}")
    for side, n in c.duplicates.items():
        lines.append(f"{side}: {n} task name(s) occur more than once (no properties to tell them apart); paired in file order.")
    if c.score_base is not None:
        lines.append(f"score: {c.score_base:g} → {c.score_new:g} ({c.score_method}).")
    else:
        lines.append(f"score: none ({c.score_method}).")
    wrong = f"newly wrong: {c.newly_wrong}"
    if c.newly_wrong_tasks:
        wrong += f" ({', '.join(c.newly_wrong_tasks)}{' …' if c.newly_wrong > len(c.newly_wrong_tasks) else ''})"
    lines.append(f"{wrong}; newly correct: {c.newly_correct}.")
    return lines


def render(result, format="text"):
    """The whole comparison in one of the formats of `compare`."""
    if format == "json":
        from analysis.core.report import jsonable

        return json.dumps(jsonable(paired.jsonable(result)), indent=2)
    markdown = format == "markdown"
    out = []
    for c in result.comparisons:
        out.append(f"## {c.name}" if markdown else f"== {c.name}")
        out.append(("\n\n" if markdown else "\n").join(summary_lines(c)))
        out.append("status of the paired tasks (rows: base, columns: new):")
        out.append(grid(*transition_rows(c), markdown))
        out.append(grid(STAT_HEADER, column_rows(c), markdown))
        for col in c.columns[:1]:   # cputime; every column's in --format json and --report
            if col.blocks:
                out.append(f"per task set ({c.block_source}), {col.column} (other columns: --format json, --report):")
                out.append(grid(BLOCK_HEADER, [stat_cells(s, s.block) for s in col.blocks], markdown))
    if result.skipped:
        out.append("not compared: " + "; ".join(result.skipped))
    out.append(result.method())
    out.append("verdict: " + ("REGRESSION (exit 1)" if result.regression else "no regression (exit 0)"))
    return "\n\n".join(out)
