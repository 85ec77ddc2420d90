"""
A row's verdict under `timekit ab --until-decided` as data: what the sequential rule decided, what
it cost, and for an undecided row what would decide it. ab's text and its JSON are both made from
these records, the text last.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class WouldDecide:
    """What would decide an undecided row, from the run's own spread."""

    goal: str                   # "change": show the measured change; "within": show it stays within the threshold
    change: float               # the measured relative change
    invocations: int | None     # M that would decide it (a side, under separate); None: beyond reach
    minutes: float              # at this run's time per invocation
    power: float = 0.9          # for goal "change"
    sd: float | None = None     # paired designs: sd of an invocation's log ratio
    runs: int | None = None     # separate: runs an invocation


@dataclass
class RowVerdict:
    row: str
    verdict: str                # slower, faster, ~, or inconclusive
    invocations: int            # M at the look that decided it (or the last), a side under separate
    test: str                   # "one-sample t" (paired designs) or "Welch" (separate)
    p: float
    level: float                # the look's nominal p threshold
    ratio: float
    rci_low: float              # repeated confidence interval at `confidence`
    rci_high: float
    minutes: float              # measuring time up to that look
    pairs: int | None = None    # paired designs: pairs up to that look
    runs: int | None = None     # separate: runs a side up to that look
    would_decide: WouldDecide | None = None
    confidence: float = 0.0     # 1 - level; 1 - 2 level for "~" (two one-sided tests)

    @property
    def interval(self):
        """The repeated interval as text ("no alpha spent" before the first look that may decide)."""
        if not self.level > 0:
            return "no alpha spent at this look yet"
        return (f"repeated {100 * self.confidence:.3g} % CI {100 * (self.rci_low - 1):+.2f} … "
                f"{100 * (self.rci_high - 1):+.2f} %")

    @property
    def decided(self):
        return self.verdict != "inconclusive"


@dataclass
class SequentialReport:
    """The sequential rule's verdicts of one A/B run: its text, and the rows it is made from."""

    text: str = ""
    rows: list = field(default_factory=list)     # [RowVerdict]

    def to_dict(self):
        return {"text": self.text, "rows": [asdict(r) for r in self.rows]}
