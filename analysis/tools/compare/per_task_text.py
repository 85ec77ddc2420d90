"""The paired comparison (analysis.tools.compare.per_task) as text, markdown or JSON, and the rows the report's
tables share with them."""

from __future__ import annotations

import json

from analysis.core import fmt
from analysis.tools.compare import pairing
from analysis.tools.compare import per_task


def percent(ratio):
    return fmt.MISSING if ratio != ratio else f"{100 * (ratio - 1):+.2f} %"


def ci(stat):
    if stat.ci_low != stat.ci_low:
        return fmt.MISSING
    # no-break spaces: a browser would wrap the interval over three lines in a narrow table
    return f"{100 * (stat.ci_low - 1):+.2f}\u00a0…\u00a0{100 * (stat.ci_high - 1):+.2f}\u00a0%"


def _value(v, unit):
    if v != v:
        return fmt.MISSING
    if unit == "B":
        return f"{v / 1e6:.4g} MB"
    return f"{v:.4g} {unit}".rstrip()


def _shown(left_out):
    """(reason, count): the min-time filter always, the other reasons only when they apply."""
    return [(reason, n) for reason, n in left_out.items() if n or reason.startswith("under ")]


def left_out_text(left_out):
    return "; ".join(f"{n} {reason}" for reason, n in _shown(left_out))


STAT_HEADER = ["column", "tasks", "new/base (geo. mean)", "95 % CI", "Wilcoxon p (Holm)", "lower", "higher",
               "verdict", "median base → new", "left out"]
BLOCK_HEADER = ["task set", "tasks", "new/base (geo. mean)", "95 % CI", "Wilcoxon p (Holm)", "lower", "higher", "verdict"]


def stat_cells(stat, first):
    p = fmt.p_value(stat.p_holm)
    return [first, str(stat.n), percent(stat.geomean), ci(stat), p, fmt.pct(stat.faster, 1),
            fmt.pct(stat.slower, 1), stat.verdict]


def compared(comparison):
    """The columns with tasks left to compare (a row of 0 tasks and '~' would read as an answer)."""
    return [col for col in comparison.columns if col.overall.n]


def not_compared_lines(comparison):
    """One line per column with nothing to compare: no valid value on a side, or no task left."""
    lines = [f"{line}: not compared" for line in comparison.not_compared]
    lines += [f"{col.column}: not compared, no task left ({left_out_text(col.left_out)})"
              for col in comparison.columns if not col.overall.n]
    return lines


def column_rows(comparison, with_left_out=True):
    """Table rows per column compared; the report gives the left-out tasks a table of their own instead."""
    return [stat_cells(col.overall, col.column)
            + [f"{_value(col.overall.median_base, col.unit)} → {_value(col.overall.median_new, col.unit)}"]
            + ([left_out_text(col.left_out)] if with_left_out else []) for col in compared(comparison)]


LEFT_OUT_HEADER = ["column", "tasks left out", "why"]


def left_out_rows(comparison):
    """(column, count, reason) per reason, as left_out_text chooses them."""
    return [[col.column, str(n), reason] for col in comparison.columns for reason, n in _shown(col.left_out)]


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
    if c.score_base is not None:   # only for tasks with properties: no line where there is no score
        lines.append(f"score: {c.score_base:g} → {c.score_new:g} ({c.score_method}).")
    wrong = f"newly wrong: {c.newly_wrong}"
    if c.newly_wrong_tasks:
        wrong += f" ({', '.join(c.newly_wrong_tasks)}{' …' if c.newly_wrong > len(c.newly_wrong_tasks) else ''})"
    lines.append(f"{wrong}; newly correct: {c.newly_correct}.")
    return lines


def render(result, format="text"):
    """The whole comparison in one of the formats of `compare`."""
    if format == "json":
        from analysis.core.report import jsonable

        return json.dumps(jsonable(per_task.jsonable(result)), indent=2)
    markdown = format == "markdown"
    out = []
    for c in result.comparisons:
        out.append(f"## {c.name}" if markdown else f"== {c.name}")
        out.append(("\n\n" if markdown else "\n").join(summary_lines(c)))
        out.append("status of the paired tasks (rows: base, columns: new):")
        out.append(grid(*transition_rows(c), markdown))
        if compared(c):
            out.append(grid(STAT_HEADER, column_rows(c), markdown))
        if not_compared_lines(c):
            out.append(("\n\n" if markdown else "\n").join(not_compared_lines(c)))
        for col in compared(c)[:1]:   # cputime; every column's in --format json and --report
            if col.blocks:
                out.append(f"per task set ({c.block_source}), {col.column} (other columns: --format json, --report):")
                out.append(grid(BLOCK_HEADER, [stat_cells(s, s.block) for s in col.blocks], markdown))
    if result.skipped:
        out.append("not compared: " + "; ".join(result.skipped))
    out.append(result.method())
    if result.regression:
        out.append("verdict: REGRESSION (exit 1)")
    elif result.nothing:
        out.append(f"verdict: {result.nothing_why()} (exit {result.exit_code})")
    else:
        out.append("verdict: no regression (exit 0)")
    return "\n\n".join(out)
