"""
Sudden or gradual: how much of GOOD -> BAD the named commit (or range) carries. A part is the rise
between two neighbouring tested commits in units of GOOD's cost, its CI the two half-widths in
quadrature (wider than the truth, since both share GOOD's noise, never narrower). At or above half
of BAD's rise the slowdown is sudden, below half spread (the decided parts listed), else unclear.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from analysis.products.bisect.search import Outcome

SUDDEN = 0.5   # the share of GOOD -> BAD one commit (or range) must carry to be "the" culprit


@dataclass(frozen=True)
class Part:
    """The rise from position `after` (exclusive; -1 is GOOD) to `last` (inclusive), in units of GOOD's
    cost, with its interval; `first` = after + 1 is the first commit that may have added it."""

    after: int
    last: int
    rise: float
    low: float
    high: float

    @property
    def first(self) -> int:
        return self.after + 1

    @property
    def decided(self) -> bool:
        return self.low > 0 or self.high < 0

    def to_dict(self) -> dict:
        return {**asdict(self), "first": self.first, "decided": self.decided}


@dataclass(frozen=True)
class Shape:
    kind: str            # sudden, spread or unclear
    carried: Part        # the culprit's (or the range's) own part
    total: float         # BAD's ratio to GOOD - 1
    total_low: float
    total_high: float
    share: float         # carried.rise / total
    parts: tuple         # the decided parts, in commit order

    def to_dict(self) -> dict:
        return {"kind": self.kind, "carried": self.carried.to_dict(), "total": self.total,
                "total_low": self.total_low, "total_high": self.total_high, "share": self.share,
                "parts": [p.to_dict() for p in self.parts]}


def _point(outcome: Outcome, index: int):
    """(ratio, half-width) of a position; GOOD is (1, 0)."""
    if index < 0:
        return 1.0, 0.0
    step = outcome.tested()[index]
    half = (step.high - step.low) / 2 if math.isfinite(step.high) and math.isfinite(step.low) else math.inf
    return step.ratio, half


def part(outcome: Outcome, after: int, last: int) -> Part:
    (ra, ha), (rb, hb) = _point(outcome, after), _point(outcome, last)
    half = math.hypot(ha, hb)
    return Part(after, last, rb - ra, rb - ra - half, rb - ra + half)


def measured(outcome: Outcome) -> list:
    """Positions with a ratio to GOOD, in commit order (skipped commits have none)."""
    return sorted(i for i, s in outcome.tested().items() if math.isfinite(s.ratio))


def parts(outcome: Outcome) -> list:
    """The parts between neighbouring measured commits (GOOD first), in commit order."""
    points = [-1] + measured(outcome)
    return [part(outcome, a, b) for a, b in zip(points, points[1:])]


def shape(outcome: Outcome) -> Shape:
    """Sudden or spread, for a search that found BAD slower."""
    if not outcome.found:
        raise ValueError("shape: BAD was not shown slower, there is no slowdown to shape")
    bad = outcome.tested()[len(outcome.commits) - 1]
    carried = part(outcome, outcome.lo, outcome.hi)
    total = bad.ratio - 1
    share = carried.rise / total if total > 0 else math.nan
    half = SUDDEN * total
    kind = "sudden" if carried.low >= half else ("spread" if carried.high < half else "unclear")
    return Shape(kind, carried, total, bad.low - 1, bad.high - 1, share,
                 tuple(p for p in parts(outcome) if p.decided and p.rise > 0))
