"""What a report holds (Report, Section, Finding, Table, Figure) and Report.samples as columns."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from analysis.core.verdicts import decide_of

#: The verdicts a finding can have, in the order the summary counts them.
VERDICTS = ("confirmed", "refuted", "inconclusive", "not testable here")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass
class Figure:
    """A figure as PNG bytes, e.g. ``plots.to_png(plots.histogram_grid(...))``."""

    title: str
    png: bytes
    caption: str = ""

    def __post_init__(self):
        if not isinstance(self.png, (bytes, bytearray)) or not bytes(self.png[:8]) == PNG_SIGNATURE:
            raise ValueError(f"figure {self.title!r}: png must be PNG bytes (see plots.to_png)")


@dataclass
class Table:
    """A table; cells are str, int, float or None (shown as '–'), floats with 4 significant digits."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""


@dataclass(frozen=True)
class Claim:
    """A claim in its parts: what it states, the label it is stated under (an input, the seed
    report), the source it cites and whether it is written as a sentence (a full stop). ``text``
    is the line a report shows; a table cell shows it without its source (``short``), the
    report's opening answer the statement alone: taken from here, never cut out of the text."""

    statement: str
    source: str = ""
    label: str = ""
    sentence: bool = False

    @property
    def short(self) -> str:
        return f"{self.label}: {self.statement}" if self.label else self.statement

    @property
    def text(self) -> str:
        return (f"{self.short} ({self.source})" if self.source else self.short) + ("." if self.sentence else "")


@dataclass
class Finding:
    """A claim from a source document and what this machine's data says about it, as data.

    ``id`` is stable across machines and runs ("section/slug"), so that claims line up in a fleet;
    ``parts`` holds one analysis.core.verdicts.Part per judged part, and ``decide`` what would decide
    an inconclusive finding; ``evidence``, ``cost`` and ``summary`` are rendered from these fields.
    Every field and its forms: docs/verdicts.md, "A finding is data".
    """

    claim: str
    verdict: str
    evidence: str
    cost: str = ""
    id: str = ""
    parts: tuple = ()
    decide: dict | None = None
    why: str = ""
    summary: str = ""
    stated: Claim | None = None

    def __post_init__(self):
        if isinstance(self.claim, Claim):
            self.stated, self.claim = self.claim, self.claim.text
        if self.verdict not in VERDICTS:
            raise ValueError(f"finding {self.claim!r}: verdict {self.verdict!r} is not one of "
                             + ", ".join(repr(v) for v in VERDICTS))
        self.parts = tuple(self.parts)
        if self.verdict != "inconclusive":
            self.decide = None
        elif self.decide is None:
            self.decide = decide_of(self.parts)

    @property
    def statement(self) -> str:
        """The claim without its label and source (the whole claim where it was given as text)."""
        return self.stated.statement if self.stated else self.claim

    @property
    def short(self) -> str:
        """The claim without its source (the whole claim where it was given as text)."""
        return self.stated.short if self.stated else self.claim


@dataclass
class Section:
    """One experiment's (or one topic's) part of the page; ``id`` is the anchor in the contents.
    ``runs`` heads it: how many runs finished and why the others did not
    (analysis.core.results.outcome); ``runs_missing`` counts those others."""

    id: str
    title: str
    runs: str = ""
    runs_missing: int = 0
    paragraphs: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _now_iso() -> str:
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")


@dataclass
class Report:
    """The whole page. ``data`` must be JSON-serialisable (numpy scalars and arrays are accepted);
    ``samples`` is one dict per run, or a dict of equally long columns (one value per run)."""

    title: str
    generated: str = field(default_factory=_now_iso)
    environment: dict[str, str] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    samples: list[dict[str, Any]] | dict[str, Any] = field(default_factory=list)


def sample_columns(samples) -> dict[str, list]:
    """``Report.samples`` as equally long columns of plain Python values.

    Accepts the documented list of dicts (one per run; a key a run lacks is None) or a dict of
    equally long columns (numpy arrays or lists): 100,000 runs stay 20 lists, not 100,000 dicts.
    """
    if isinstance(samples, dict):
        columns = {str(k): (v.tolist() if hasattr(v, "tolist") else list(v)) for k, v in samples.items()}
        lengths = {name: len(values) for name, values in columns.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError("samples: columns differ in length: "
                             + ", ".join(f"{k}={n}" for k, n in lengths.items()))
        return columns
    rows = list(samples or [])
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise TypeError(f"samples[{index}]: {type(row).__name__}, expected a dict (one per run)")
    names = list(dict.fromkeys(str(key) for row in rows for key in row))
    return {name: [row.get(name) for row in rows] for name in names}


def sample_count(columns: dict[str, list]) -> int:
    return len(next(iter(columns.values()))) if columns else 0
