"""
What `timekit ab` prints, composed last from its parts, the same way for shell commands and for
benchmark definitions: per pair hyperfine's blocks (commands only), a warning where the sides ran
on different machines, compare's table, the design's line and --until-decided's verdicts; then
BenchExec's cost (commands only) and the verdict line.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class PairText:
    """One compared pair's parts, each rendered already ('' where it has none)."""

    table: str
    design: str
    sequential: str = ""
    blocks: str = ""
    warning: str = ""


def compose(pairs, verdict_line, cost=""):
    """The text: the pairs' parts in order, then the cost and the verdict line, a blank line apart."""
    parts = []
    for pair in pairs:
        parts += [pair.blocks, "\n".join(filter(None, [pair.warning, pair.table])),
                  pair.design + (f"\n\n{pair.sequential}" if pair.sequential else "")]
    return "\n\n".join(p for p in [*parts, cost, verdict_line] if p)
