"""
The one verdict of `timekit ab`, for shell commands and benchmark definitions alike: the exit code
the gate gives and why there is none, and the last line that says it. Too much outside work and a
co-located design that changes what it measures leave no verdict whatever the rows say, but a
slowdown shown is one.
"""

from analysis.tools.compare.repeated import NOTHING, NOTHING_COMPARED, regressed


def gate(rows, busy=(), design_changed=()):
    """(the exit code, why there is no verdict: '' where there is one): 1 where a row regressed,
    NOTHING_COMPARED where the machine was busy (`busy`: why, a line per pair), where the design
    changed what it measures without a slowdown shown, or where no row was compared; else 0."""
    if busy:
        return NOTHING_COMPARED, "; ".join(busy)
    if regressed(rows):
        return 1, ""
    if design_changed:
        return NOTHING_COMPARED, f"the design changes what it measures ({'; '.join(design_changed)})"
    if not rows:
        return NOTHING_COMPARED, NOTHING
    return 0, ""


def verdict_line(comparison, regressed, threshold):
    """The last line: the gate's answer. '~' only says that no slowdown was shown; where a row's
    CI still reaches beyond the threshold, a slowdown that large is not excluded either, and the
    line says so."""
    if regressed:
        slower = sorted({_name(c) for c in comparison if c["verdict"] == "slower"})
        return f"verdict: slower: {'; '.join(slower)} (exit 1)"
    line = "verdict: no significant slowdown beyond the threshold (exit 0)"
    open_rows = [c for c in comparison if c["verdict"] in ("~", "undecided") and c.get("ci_high", 0) > 1 + threshold]
    if not open_rows:
        return line
    undecided = any(c["verdict"] == "undecided" for c in open_rows)
    how = ("undecided: the lines above say what would decide it" if undecided
           else "more --reruns, or --until-decided, would tell")
    by_command = {}
    for c in sorted(open_rows, key=lambda c: -c["ci_high"]):
        by_command.setdefault(_name(c), []).append(f"{c['column']}'s CI reaches {(c['ci_high'] - 1) * 100:+.1f} %")
    reaches = "; ".join(f"for {command}, {', '.join(parts)}" for command, parts in by_command.items())
    return f"{line}; not excluded either: {reaches}, beyond the {threshold * 100:g} % threshold ({how})"


def _name(row):
    """A row of the comparison as the text names it: its commands' labels ('A → B'), or in full."""
    return row.get("label") or row["command"]


def busy_line(found, exit_code):
    return f"verdict: undecided: {'; '.join(found)}; rerun on a quiet machine (exit {exit_code})"


def design_changed_line(changed, exit_code):
    return (f"verdict: undecided: the design changes what it measures ({'; '.join(changed)}); --design blocks, or "
            f"--until-decided, which goes on as blocks, would decide it (exit {exit_code})")
