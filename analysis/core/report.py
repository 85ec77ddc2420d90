"""The report: one self-contained HTML page, plus the numbers behind it as JSON and CSV.

Each experiment contributes a ``Section`` (paragraphs, findings with verdicts, tables, figures,
warnings) to one ``Report``; ``write_report`` writes

* ``report.html`` – a single page that needs nothing else: CSS inline, figures inlined as base64
  PNG data URIs, no JavaScript, no external URL (a Content-Security-Policy forbids loading any);
* ``report.json`` – title, environment, every finding and warning (with the id of its section) and
  ``Report.data`` (all summaries and tests); NaN and infinities are written as ``null``;
* ``samples.csv`` – one row per run from ``Report.samples`` (a list of dicts, or a dict of columns);
  the header is the union of the keys in order of first appearance.

All text that reaches the page is escaped (task names may contain ``<``, ``&`` and quotes).
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import datetime
import html
import json
import math
import numbers
import os
import pathlib
import re
import struct
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "VERDICTS",
    "Figure",
    "Finding",
    "Report",
    "Section",
    "Table",
    "format_cell",
    "write_report",
]

#: The verdicts a finding can have, in the order the summary counts them.
VERDICTS = ("confirmed", "refuted", "inconclusive", "not testable here")

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]*$")
_MISSING = "\u2013"  # en dash, shown for None and NaN
_LONG_TABLE_ROWS = 25  # longer tables scroll inside a box with a sticky header


# --------------------------------------------------------------------------------------------
# content model


@dataclass
class Figure:
    """A figure as PNG bytes, e.g. ``plots.to_png(plots.histogram_grid(...))``."""

    title: str
    png: bytes
    caption: str = ""

    def __post_init__(self):
        if not isinstance(self.png, (bytes, bytearray)) or not bytes(self.png[:8]) == _PNG_SIGNATURE:
            raise ValueError(f"figure {self.title!r}: png must be PNG bytes (see plots.to_png)")


@dataclass
class Table:
    """A table; cells are str, int, float or None (shown as '–'), floats with 4 significant digits."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    caption: str = ""


@dataclass
class Finding:
    """A claim from a source document and what this machine's data says about it.

    ``evidence`` names the test, n, alpha and p (or why the claim cannot be tested here).
    """

    claim: str
    verdict: str
    evidence: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"finding {self.claim!r}: verdict {self.verdict!r} is not one of "
                             + ", ".join(repr(v) for v in VERDICTS))


@dataclass
class Section:
    """One experiment's (or one topic's) part of the page; ``id`` is the anchor in the contents."""

    id: str
    title: str
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


# --------------------------------------------------------------------------------------------
# values


def format_cell(value: Any) -> str:
    """Text for a table cell: None and NaN as '–', floats with 4 significant digits (large values
    as whole numbers rather than in exponent notation), everything else with ``str``."""
    if value is None:
        return _MISSING
    if isinstance(value, bool) or type(value).__name__ in ("bool", "bool_"):  # also numpy.bool_
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        if math.isnan(f):
            return _MISSING
        if math.isinf(f):
            return "\u221e" if f > 0 else "\u2212\u221e"
        if f == 0:
            return "0"
        if 1e4 <= abs(f) < 1e15:
            return f"{f:.0f}"
        return f"{f:.4g}"
    return str(value)


def _is_number(value: Any) -> bool:
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and type(value).__name__ not in ("bool", "bool_"))


def jsonable(obj: Any, where: str = "data") -> Any:
    """``obj`` with numpy types, tuples, dataclasses and paths turned into JSON types and
    non-finite floats into None; a clear TypeError names the place of anything else."""
    if obj is None or isinstance(obj, (str, bool)):
        return obj
    if isinstance(obj, numbers.Integral):
        return int(obj)
    if isinstance(obj, numbers.Real):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if isinstance(key, str):
                k = key
            elif isinstance(key, bool) or key is None:
                k = json.dumps(key)
            elif isinstance(key, numbers.Integral):
                k = str(int(key))
            elif isinstance(key, numbers.Real):
                k = repr(float(key))
            else:
                raise TypeError(f"{where}: key {key!r} ({type(key).__name__}) cannot be a JSON key; "
                                "use a string")
            out[k] = jsonable(value, f"{where}[{k!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        return [jsonable(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return jsonable(dataclasses.asdict(obj), where)
    if isinstance(obj, pathlib.PurePath):
        return str(obj)
    if isinstance(obj, (datetime.datetime, datetime.date)):
        return obj.isoformat()
    tolist = getattr(obj, "tolist", None)  # numpy arrays and scalars (e.g. numpy.bool_)
    if callable(tolist):
        return jsonable(tolist(), where)
    raise TypeError(f"{where}: {type(obj).__name__} is not JSON-serialisable")


def _csv_value(value: Any) -> Any:
    if value is None:
        return ""
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes)):
        try:
            value = item()
        except (ValueError, TypeError):  # arrays with more than one element
            pass
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same float
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(jsonable(value, "sample"))
    return value


# --------------------------------------------------------------------------------------------
# checks


_RESERVED_IDS = ("tk-top", "tk-environment", "tk-environment-h", "tk-contents", "tk-contents-h",
                 "tk-summary", "tk-summary-h")


def _section_ids(section: Section) -> list[str]:
    """Every id the page gives a section and its parts."""
    sid = section.id
    return ([sid, f"{sid}-h", f"{sid}-findings", f"{sid}-findings-table"]
            + [f"{sid}-table-{i}" for i in range(1, len(section.tables) + 1)]
            + [f"{sid}-figure-{i}" for i in range(1, len(section.figures) + 1)])


def _check(report: Report) -> None:
    seen = set(_RESERVED_IDS)
    for s_index, section in enumerate(report.sections):
        if not isinstance(section.id, str) or not _ID_RE.match(section.id):
            raise ValueError(f"section {s_index + 1} ({section.title!r}): id {section.id!r} must start "
                             "with a letter and contain only letters, digits, '_', '-', '.', ':'")
        for anchor in _section_ids(section):
            if anchor in seen:
                raise ValueError(f"section {section.title!r}: id {section.id!r} is used twice "
                                 f"(the page would have two elements with id {anchor!r})")
            seen.add(anchor)
        for finding in section.findings:
            if finding.verdict not in VERDICTS:
                raise ValueError(f"section {section.id!r}: finding {finding.claim!r} has verdict "
                                 f"{finding.verdict!r}, not one of {', '.join(VERDICTS)}")
        for table in section.tables:
            for r_index, row in enumerate(table.rows):
                if len(row) != len(table.columns):
                    raise ValueError(f"section {section.id!r}, table {table.title!r}: row {r_index + 1} "
                                     f"has {len(row)} cells for {len(table.columns)} columns")
        for figure in section.figures:
            if bytes(figure.png[:8]) != _PNG_SIGNATURE:
                raise ValueError(f"section {section.id!r}, figure {figure.title!r}: not PNG bytes")


def _png_size(png: bytes):
    """(width, height) from the IHDR chunk, or None."""
    if len(png) >= 24 and png[12:16] == b"IHDR":
        return struct.unpack(">II", png[16:24])
    return None


# --------------------------------------------------------------------------------------------
# HTML

_CSS = """
:root { --ink: #1d232b; --muted: #5b6573; --line: #d9dee5; --head: #eef1f5; --stripe: #f7f8fa;
        --accent: #2a5d9f; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; color: var(--ink); background: #fff;
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.page { max-width: 1060px; margin: 0 auto; padding: 24px 24px 48px; }
h1 { font-size: 1.7em; line-height: 1.25; margin: 0 0 .2em; }
h2 { font-size: 1.3em; margin: 2.2em 0 .6em; padding-bottom: .25em; border-bottom: 2px solid var(--line); }
h3 { font-size: 1.05em; margin: 1.6em 0 .5em; }
a { color: var(--accent); }
p { margin: .6em 0; max-width: 80ch; }
.meta { color: var(--muted); margin: 0 0 1.2em; max-width: none; }
.secnum { color: var(--muted); font-weight: normal; margin-right: .35em; }
nav.toc { background: var(--stripe); border: 1px solid var(--line); border-radius: 6px;
          padding: .6em 1.2em .8em; margin: 1.5em 0; }
nav.toc h2 { border: 0; margin: .3em 0 .4em; font-size: 1.05em; }
nav.toc ol { margin: 0; padding-left: 1.6em; }
nav.toc li { margin: .15em 0; }
.count { display: inline-block; font-size: .78em; color: var(--muted); margin-left: .5em; }
.count.warn { color: #8a5300; font-weight: 600; }
.table-wrap { overflow-x: auto; margin: .5em 0 1.4em; border: 1px solid var(--line); border-radius: 4px; }
.table-wrap.scroll { max-height: 34em; overflow: auto; }
table { border-collapse: separate; border-spacing: 0; width: 100%; font-size: .9em; }
caption { caption-side: top; text-align: left; font-weight: 600; padding: .5em .7em; background: #fff; }
th, td { padding: .32em .7em; text-align: left; vertical-align: top; border-bottom: 1px solid var(--line); }
thead th { position: sticky; top: 0; z-index: 1; background: var(--head); font-weight: 600;
           white-space: nowrap; border-bottom: 1px solid #c5ccd6; }
tbody tr:nth-child(even) { background: var(--stripe); }
tbody tr:last-child td, tbody tr:last-child th { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.missing { color: var(--muted); }
table.kv th { width: 14em; background: transparent; position: static; font-weight: 600; }
table.findings td.verdict { white-space: nowrap; width: 1%; }
table.findings td.evidence { color: #333b46; font-size: .95em; }
.verdict-badge { display: inline-block; padding: .08em .6em; border-radius: 999px; font-size: .85em;
                 font-weight: 600; border: 1px solid transparent; }
.v-confirmed { background: #e3f4e8; color: #17632a; border-color: #a9dcb6; }
.v-refuted { background: #fdecea; color: #a21b12; border-color: #f1b2ab; }
.v-inconclusive { background: #eef0f3; color: #454d58; border-color: #c9cfd7; }
.v-not-testable-here { background: #e8eef8; color: #2f4a7d; border-color: #b7c7e3; }
.table-caption, figcaption { color: var(--muted); font-size: .9em; }
.table-caption { margin: -1em 0 1.4em; max-width: 80ch; }
.warning { background: #fff6e0; border: 1px solid #f0c36d; border-left: 5px solid #e69500;
           border-radius: 4px; padding: .55em .9em; margin: .7em 0; color: #4a3500; }
.warning strong { color: #8a5300; }
figure { margin: 1.2em 0 2em; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { margin-top: .45em; max-width: 80ch; }
figcaption strong { color: var(--ink); }
footer { margin-top: 3em; padding-top: .8em; border-top: 1px solid var(--line); color: var(--muted);
         font-size: .88em; }
@media print {
  .table-wrap.scroll { max-height: none; overflow: visible; }
  thead th { position: static; }
  h2 { break-after: avoid; }
  figure, tr { break-inside: avoid; }
}
"""

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _verdict_class(verdict: str) -> str:
    return "v-" + re.sub(r"[^a-z0-9]+", "-", verdict.lower()).strip("-")


def _badge(verdict: str) -> str:
    return f'<span class="verdict-badge {_verdict_class(verdict)}">{_e(verdict)}</span>'


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _table_html(table: Table, number: int, anchor: str) -> list[str]:
    numeric_cols = []
    for j in range(len(table.columns)):
        values = [row[j] for row in table.rows if row[j] is not None]
        numeric_cols.append(bool(values) and all(_is_number(v) for v in values))
    num_attr = ' class="num"'
    wrap = "table-wrap scroll" if len(table.rows) > _LONG_TABLE_ROWS else "table-wrap"
    out = [f'<div class="{wrap}">',
           f'<table id="{_e(anchor)}">',
           f"<caption>Table {number}. {_e(table.title)}</caption>",
           "<thead><tr>"
           + "".join(f'<th scope="col"{num_attr if numeric_cols[j] else ""}>{_e(c)}</th>'
                     for j, c in enumerate(table.columns))
           + "</tr></thead>",
           "<tbody>"]
    for row in table.rows:
        cells = []
        for j, value in enumerate(row):
            classes = []
            if _is_number(value) or (numeric_cols[j] and value is None):
                classes.append("num")
            text = format_cell(value)
            if text == _MISSING and (value is None or _is_number(value)):
                classes.append("missing")
            attr = f' class="{" ".join(classes)}"' if classes else ""
            cells.append(f"<td{attr}>{_e(text)}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    if not table.rows:
        out.append(f'<tr><td class="missing" colspan="{max(len(table.columns), 1)}">no rows</td></tr>')
    out.append("</tbody></table></div>")
    if table.caption:
        out.append(f'<p class="table-caption">{_e(table.caption)}</p>')
    return out


def _findings_html(findings: list[Finding], anchor: str) -> list[str]:
    out = ['<div class="table-wrap">',
           f'<table class="findings" id="{_e(anchor)}">',
           ('<thead><tr><th scope="col">Claim</th><th scope="col">Verdict</th>'
            '<th scope="col">Evidence</th></tr></thead><tbody>')]
    for f in findings:
        out.append(f"<tr><td>{_e(f.claim)}</td><td class=\"verdict\">{_badge(f.verdict)}</td>"
                   f'<td class="evidence">{_e(f.evidence)}</td></tr>')
    out.append("</tbody></table></div>")
    return out


def _figure_html(figure: Figure, number: int, anchor: str) -> list[str]:
    data = base64.b64encode(bytes(figure.png)).decode("ascii")
    size = _png_size(bytes(figure.png))
    dims = f' width="{size[0]}" height="{size[1]}"' if size else ""
    caption = f"<strong>Figure {number}.</strong> {_e(figure.title)}"
    if figure.caption:
        caption += f" \u2014 {_e(figure.caption)}"
    return [f'<figure id="{_e(anchor)}">',
            f'<img src="data:image/png;base64,{data}" alt="{_e(figure.title)}"{dims}>',
            f"<figcaption>{caption}</figcaption>",
            "</figure>"]


def render_html(report: Report, n_samples: int | None = None) -> str:
    """The page as a string (``write_report`` writes it; exposed for tests and previews)."""
    _check(report)
    if n_samples is None:
        n_samples = _n_samples(_sample_columns(report.samples))
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="timekit">',
        f"<title>{_e(report.title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        '<div class="page" id="tk-top">',
        "<header>",
        f"<h1>{_e(report.title)}</h1>",
    ]
    n_findings = sum(len(s.findings) for s in report.sections)
    n_warnings = sum(len(s.warnings) for s in report.sections)
    meta = [f"Generated {_e(report.generated)}", _plural(len(report.sections), "section"),
            _plural(n_findings, "finding"), _plural(n_warnings, "warning"),
            _plural(n_samples, "run") + " in samples.csv"]
    out.append('<p class="meta">' + " \u00b7 ".join(meta) + "</p>")
    out.append("</header>")

    # environment
    out.append('<section id="tk-environment" aria-labelledby="tk-environment-h">')
    out.append('<h2 id="tk-environment-h">Environment</h2>')
    if report.environment:
        out.append('<div class="table-wrap"><table class="kv"><tbody>')
        for key, value in report.environment.items():
            out.append(f'<tr><th scope="row">{_e(key)}</th><td>{_e(format_cell(value))}</td></tr>')
        out.append("</tbody></table></div>")
    else:
        out.append('<p class="meta">Not recorded.</p>')
    out.append("</section>")

    # contents
    out.append('<nav class="toc" id="tk-contents" aria-labelledby="tk-contents-h">')
    out.append('<h2 id="tk-contents-h">Contents</h2><ol>')
    if n_findings:
        out.append('<li><a href="#tk-summary">Findings at a glance</a></li>')
    for section in report.sections:
        counts = ""
        if section.findings:
            counts += f'<span class="count">{_plural(len(section.findings), "finding")}</span>'
        if section.warnings:
            counts += f'<span class="count warn">{_plural(len(section.warnings), "warning")}</span>'
        out.append(f'<li><a href="#{_e(section.id)}">{_e(section.title)}</a>{counts}</li>')
    out.append("</ol></nav>")

    # summary of all findings
    if n_findings:
        out.append('<section id="tk-summary" aria-labelledby="tk-summary-h">')
        out.append('<h2 id="tk-summary-h">Findings at a glance</h2>')
        tally = {v: 0 for v in VERDICTS}
        for s in report.sections:
            for f in s.findings:
                tally[f.verdict] += 1
        out.append("<p>" + ", ".join(f"{_badge(v)} {n}" for v, n in tally.items() if n) + "</p>")
        out.append('<div class="table-wrap"><table class="findings"><thead><tr>'
                   '<th scope="col">Section</th><th scope="col">Claim</th><th scope="col">Verdict</th>'
                   "</tr></thead><tbody>")
        for s in report.sections:
            for f in s.findings:
                out.append(f'<tr><td><a href="#{_e(s.id)}">{_e(s.title)}</a></td><td>{_e(f.claim)}</td>'
                           f'<td class="verdict">{_badge(f.verdict)}</td></tr>')
        out.append("</tbody></table></div></section>")

    # sections
    table_no = 0
    figure_no = 0
    for number, section in enumerate(report.sections, start=1):
        sid = section.id
        out.append(f'<section id="{_e(sid)}" aria-labelledby="{_e(sid)}-h">')
        out.append(f'<h2 id="{_e(sid)}-h"><span class="secnum">{number}.</span>{_e(section.title)}</h2>')
        for w in section.warnings:
            out.append(f'<div class="warning" role="note"><strong>Warning:</strong> {_e(w)}</div>')
        for p in section.paragraphs:
            out.append(f"<p>{_e(p)}</p>")
        if section.findings:
            out.append(f'<h3 id="{_e(sid)}-findings">Findings</h3>')
            out.extend(_findings_html(section.findings, f"{sid}-findings-table"))
        for t_index, table in enumerate(section.tables, start=1):
            table_no += 1
            out.extend(_table_html(table, table_no, f"{sid}-table-{t_index}"))
        for f_index, figure in enumerate(section.figures, start=1):
            figure_no += 1
            out.extend(_figure_html(figure, figure_no, f"{sid}-figure-{f_index}"))
        out.append("</section>")

    out.append("<footer>")
    out.append('<p>The numbers behind this page: <a href="report.json">report.json</a> (every summary, '
               'test, finding and warning) and <a href="samples.csv">samples.csv</a> (one row per run). '
               'Produced by timekit.</p>')
    out.append("</footer>")
    out.append("</div>")
    out.append("</body>")
    out.append("</html>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------------------------
# JSON and CSV


def report_json(report: Report) -> dict[str, Any]:
    """What ``report.json`` holds, as a JSON-ready dict."""
    return {
        "title": report.title,
        "generated": report.generated,
        "environment": jsonable(report.environment, "environment"),
        "sections": [{"id": s.id, "title": s.title} for s in report.sections],
        "findings": [{"section": s.id, "claim": f.claim, "verdict": f.verdict, "evidence": f.evidence}
                     for s in report.sections for f in s.findings],
        "warnings": [{"section": s.id, "warning": w} for s in report.sections for w in s.warnings],
        "data": jsonable(report.data, "data"),
    }


def _sample_columns(samples) -> dict[str, list]:
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


def _csv_column(values: list) -> list:
    """A column's CSV cells; floats as their shortest exact text (repr), None as ''."""
    if all(type(v) is float for v in values):
        return list(map(repr, values))
    return [_csv_value(v) for v in values]


def _write_samples_csv(columns: dict[str, list], path: pathlib.Path, chunk: int = 8192) -> None:
    """Stream the CSV to `path`, converting a block of rows at a time (bounded memory)."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        if not columns:
            return
        writer = csv.writer(handle)
        writer.writerow(columns)
        length = len(next(iter(columns.values())))
        for begin in range(0, length, chunk):
            cells = [_csv_column(values[begin:begin + chunk]) for values in columns.values()]
            writer.writerows(zip(*cells))


def _n_samples(columns: dict[str, list]) -> int:
    return len(next(iter(columns.values()))) if columns else 0


def write_report(report: Report, outdir) -> dict[str, pathlib.Path]:
    """Write ``report.html``, ``report.json`` and ``samples.csv`` into ``outdir`` (created if
    needed) and return their paths under the keys ``html``, ``json`` and ``csv``.

    Everything is rendered before anything is written, so a bad report (duplicate section id,
    unknown verdict, ragged table, data that is not JSON-serialisable) raises ValueError or
    TypeError and leaves no half-written files.
    """
    outdir = pathlib.Path(outdir)
    columns = _sample_columns(report.samples)
    page = render_html(report, n_samples=_n_samples(columns))
    payload = json.dumps(report_json(report), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    outdir.mkdir(parents=True, exist_ok=True)
    paths = {"html": outdir / "report.html", "json": outdir / "report.json", "csv": outdir / "samples.csv"}
    temporary = {key: path.with_name(f".{path.name}.tmp") for key, path in paths.items()}
    try:
        temporary["html"].write_text(page, encoding="utf-8")
        temporary["json"].write_text(payload, encoding="utf-8")
        _write_samples_csv(columns, temporary["csv"])
        for key, path in paths.items():  # all three complete before any replaces an old one
            os.replace(temporary[key], path)
    finally:
        for tmp in temporary.values():
            tmp.unlink(missing_ok=True)
    return paths
