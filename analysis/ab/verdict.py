"""
The one verdict of `timekit ab`, for shell commands and benchmark definitions alike: `judge` reads
the rows once, with the threshold, and gives the exit code, the verdict word, why there is none and
the last line that says it. Too much outside work and a co-located design that changes what it
measures leave no verdict whatever the rows say, but a slowdown shown is one. An answer still open
(no slowdown shown, none beyond the threshold excluded) is no pass either: "undecided", exit 3, so
that a gate never passes a regression for want of invocations.
"""

from dataclasses import asdict, dataclass
from typing import Sequence

from analysis.tools.compare.repeated import NOTHING_COMPARED, NOTHING_WHY, SAME, UNDECIDED

WORSE = ("slower", "larger")   # a row's verdict that fails the gate (larger: memory)


@dataclass(frozen=True)
class Gated:
    """A row as the gate reads it."""
    name: str           # how the last line names what it compares ('A → B', a run definition)
    column: str
    verdict: str
    ratio: float
    ci_low: float
    ci_high: float
    sequential: bool    # judged by the sequential rule: its '~' is a decision, its 'undecided' the rule's


@dataclass(frozen=True)
class Gate:
    exit_code: int      # 0 pass, 1 slower, NOTHING_COMPARED no verdict
    verdict: str        # slower, faster, same or undecided
    reason: str         # why there is no verdict ('' where there is one)
    line: str           # the last line of the text

    def to_dict(self):
        return asdict(self)


def is_open(row: Gated, threshold: float) -> bool:
    """Whether a row leaves the gate's question (a slowdown beyond the threshold?) open. Sequential:
    the rule's undecided while its repeated interval, valid at any stop, reaches beyond +threshold;
    one that ends below (a speedup near -threshold, say) answers the gate although not the rule's
    two-sided question. A fixed count: undecided (the test and the interval disagree), or no change
    beyond the threshold shown while its CI reaches beyond +threshold."""
    if row.sequential:
        return row.verdict == UNDECIDED and row.ci_high > 1 + threshold
    return row.verdict == UNDECIDED or (row.verdict in SAME and row.ci_high > 1 + threshold)


def judge(rows: Sequence[Gated], threshold: float, busy=(), design_changed=()) -> Gate:
    """The gate, in order: the machine busy from outside (`busy`: why, a line per pair), a slowdown
    shown, a co-located design that changed what it measures (`design_changed`: a line per pair),
    nothing compared, an open row (is_open); else a pass: faster where a row is, else same."""
    if busy:
        return _undecided("; ".join(busy), f"{'; '.join(busy)}; rerun on a quiet machine")
    worse = [r for r in rows if r.verdict in WORSE]
    if worse:
        return Gate(1, "slower", "", f"verdict: slower: {_changes(worse)} (exit 1)")
    if design_changed:
        why = f"the design changes what it measures ({'; '.join(design_changed)})"
        return _undecided(why, f"{why}; --design blocks, or --until-decided, which goes on as blocks, would decide it")
    if not rows:
        return _undecided(NOTHING_WHY, NOTHING_WHY)
    open_rows = [r for r in rows if is_open(r, threshold)]
    if open_rows:
        return _open(open_rows, threshold)
    return Gate(0, "faster" if any(r.verdict == "faster" for r in rows) else "same", "",
                "verdict: no significant slowdown beyond the threshold (exit 0)")


def _undecided(reason, said):
    return Gate(NOTHING_COMPARED, "undecided", reason, f"verdict: undecided: {said} (exit {NOTHING_COMPARED})")


def _changes(rows):
    """'A → B: cputime +5.0 %, memory larger +20.0 %; C → D: ...' (a row of memory says larger)."""
    by_name = {}
    for r in rows:
        word = "" if r.verdict == "slower" else f" {r.verdict}"
        by_name.setdefault(r.name, []).append(f"{r.column}{word} {(r.ratio - 1) * 100:+.1f} %")
    return "; ".join(f"{name}: {', '.join(parts)}" for name, parts in by_name.items())


def _open(rows, threshold):
    """Undecided: how far each open row reaches, and what would decide it. A row whose CI excludes
    no change shows a slowdown, only not whether it exceeds the threshold: the line says that of it,
    never "no significant slowdown"."""
    sequential = any(r.sequential for r in rows)
    how = ("the budget ran out first; the lines above say what would decide it (a larger --budget)" if sequential
           else "more invocations would tell: leave out --reruns (ab then runs until decided), or raise it")
    by_name = {}
    for r in sorted(rows, key=lambda r: -r.ci_high):
        torn = r.verdict == UNDECIDED and not r.sequential
        reach = (f"{r.column} slower by {(r.ci_low - 1) * 100:+.1f} … {(r.ci_high - 1) * 100:+.1f} %" if r.ci_low > 1
                 else f"{r.column}'s CI reaches {(r.ci_high - 1) * 100:+.1f} %")
        by_name.setdefault(r.name, []).append(reach + (" (its test and interval disagree)" if torn else ""))
    reaches = "; ".join(f"for {name}, {', '.join(parts)}" for name, parts in by_name.items())
    limit = f"{threshold * 100:g} % threshold"
    if any(r.ci_low > 1 for r in rows):
        head = f"a slowdown is shown, but not whether it exceeds the {limit}"
    else:
        head = f"no significant slowdown, but one beyond the {limit} is not excluded either"
    reason = f"{head}: {reaches}"
    return Gate(NOTHING_COMPARED, "undecided", reason, f"verdict: undecided: {reason}; {how} (exit {NOTHING_COMPARED})")
