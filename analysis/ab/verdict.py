"""
The one verdict of `timekit ab`, for shell commands and benchmark definitions alike: the exit code
the gate gives and why there is none, and the last line that says it. Too much outside work and a
co-located design that changes what it measures leave no verdict whatever the rows say, but a
slowdown shown is one. An answer still open (no slowdown shown, none beyond the threshold excluded)
is no pass either: "undecided", exit 3, so that a gate never passes a regression for want of
invocations.
"""

from analysis.tools.compare.repeated import NOTHING, NOTHING_COMPARED, SAME, regressed


def is_open(verdict, ci_high, threshold, sequential):
    """Whether a row leaves the gate's question open: the sequential rule left it undecided, or
    (a fixed count of invocations) no change was shown while its CI reaches beyond +threshold."""
    return verdict == "undecided" or (verdict in SAME and not sequential and ci_high > 1 + threshold)


def gate(rows, busy=(), design_changed=(), open_rows=()):
    """(the exit code, why there is no verdict: '' where there is one): 1 where a row regressed,
    NOTHING_COMPARED where the machine was busy (`busy`: why, a line per pair), where the design
    changed what it measures without a slowdown shown, where no row was compared, or where a row's
    answer is open (`open_rows`: a line each, is_open); else 0."""
    if busy:
        return NOTHING_COMPARED, "; ".join(busy)
    if regressed(rows):
        return 1, ""
    if design_changed:
        return NOTHING_COMPARED, f"the design changes what it measures ({'; '.join(design_changed)})"
    if not rows:
        return NOTHING_COMPARED, NOTHING
    if open_rows:
        return NOTHING_COMPARED, "no slowdown shown, none beyond the threshold excluded: " + "; ".join(open_rows)
    return 0, ""


def verdict_line(comparison, regressed, threshold):
    """The last line: the gate's answer. '~' only says that no slowdown was shown; where a row's
    answer is still open (is_open: each comparison row says whether a sequential rule judged it),
    the line says "undecided", which rows reach how far, and what would decide them (exit 3)."""
    if regressed:
        slower = sorted({_name(c) for c in comparison if c["verdict"] == "slower"})
        return f"verdict: slower: {'; '.join(slower)} (exit 1)"
    open_rows = [c for c in comparison
                 if is_open(c["verdict"], c.get("ci_high", 0), threshold, c.get("sequential", False))]
    if not open_rows:
        return "verdict: no significant slowdown beyond the threshold (exit 0)"
    sequential = any(c.get("sequential") for c in open_rows)
    how = ("the budget ran out first; the lines above say what would decide it (a larger --budget)" if sequential
           else "more invocations would tell: leave out --reruns (ab then runs until decided), or raise it")
    by_command = {}
    for c in sorted(open_rows, key=lambda c: -c.get("ci_high", 0)):
        by_command.setdefault(_name(c), []).append(f"{c['column']}'s CI reaches {(c['ci_high'] - 1) * 100:+.1f} %")
    reaches = "; ".join(f"for {command}, {', '.join(parts)}" for command, parts in by_command.items())
    return (f"verdict: undecided: no significant slowdown, but one beyond the {threshold * 100:g} % threshold is not "
            f"excluded either: {reaches}; {how} (exit {NOTHING_COMPARED})")


def _name(row):
    """A row of the comparison as the text names it: its commands' labels ('A → B'), or in full."""
    return row.get("label") or row["command"]


def busy_line(found, exit_code):
    return f"verdict: undecided: {'; '.join(found)}; rerun on a quiet machine (exit {exit_code})"


def design_changed_line(changed, exit_code):
    return (f"verdict: undecided: the design changes what it measures ({'; '.join(changed)}); --design blocks, or "
            f"--until-decided, which goes on as blocks, would decide it (exit {exit_code})")
