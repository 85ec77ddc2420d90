"""report.html: one self-contained page, checked before it is rendered.

CSS inline (report.css, beside this module), figures inlined as base64 PNG data URIs, no
JavaScript, no external URL (a Content-Security-Policy forbids loading any). All text that
reaches the page is escaped (task names may contain ``<``, ``&`` and quotes).
"""

from __future__ import annotations

import base64
import html
import importlib.resources
import math
import numbers
import re
import struct
from typing import Any

from analysis.core.report import answer, summary
from analysis.core.report.model import PNG_SIGNATURE, VERDICTS, Figure, Finding, Report, Section, Table, sample_columns, sample_count

_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]*$")
_MISSING = "\u2013"  # en dash, shown for None and NaN
_LONG_TABLE_ROWS = 25  # longer tables scroll inside a box with a sticky header


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


_RESERVED_IDS = ("tk-top", "tk-environment", "tk-environment-h", "tk-contents", "tk-contents-h",
                 "tk-summary", "tk-summary-h", "tk-answer", "tk-answer-h")


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
            if bytes(figure.png[:8]) != PNG_SIGNATURE:
                raise ValueError(f"section {section.id!r}, figure {figure.title!r}: not PNG bytes")


def _png_size(png: bytes):
    """(width, height) from the IHDR chunk, or None."""
    if len(png) >= 24 and png[12:16] == b"IHDR":
        return struct.unpack(">II", png[16:24])
    return None


# The page's style sheet, a file of its own so that it reads (and lints) as CSS.
_CSS = importlib.resources.files(__package__).joinpath("report.css").read_text(encoding="utf-8")

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


def finding_anchor(finding: Finding) -> str:
    """The page anchor of a finding: its id, made a valid fragment."""
    return "f-" + re.sub(r"[^A-Za-z0-9_-]+", "-", finding.id or finding.claim).strip("-")


def _parts_html(finding: Finding) -> str:
    """Each part's verdict of a claim of parts (one refuted part refutes the whole claim)."""
    if len(finding.parts) < 2:
        return ""
    items = "".join(f"<li>{_badge(p.verdict)} {_e(p.label or 'part')}"
                    + (f": {_e(summary.interval(p, with_sizes=False))}" if summary.interval(p) else "") + "</li>"
                    for p in finding.parts)
    return f'<ul class="parts">{items}</ul>'


def _findings_html(findings: list[Finding], anchor: str) -> list[str]:
    out = ['<div class="table-wrap">',
           f'<table class="findings" id="{_e(anchor)}">',
           ('<thead><tr><th scope="col">Claim</th><th scope="col">Verdict</th>'
            '<th scope="col">Summary</th></tr></thead><tbody>')]
    for f in findings:
        details = (f"<details><summary>evidence</summary><p>{_e(f.evidence)}</p>"
                   + (f'<p class="cost">{_e(f.cost)}</p>' if f.cost else "") + "</details>")
        out.append(f'<tr id="{_e(finding_anchor(f))}"><td>{_e(f.claim)}{_parts_html(f)}</td>'
                   f'<td class="verdict">{_badge(f.verdict)}</td>'
                   f'<td class="evidence">{_e(summary.summary(f))}{details}</td></tr>')
    out.append("</tbody></table></div>")
    return out


def _answer_html(report: Report) -> list[str]:
    """The opening answer: a few sentences a person can act on, each linking the findings it rests on."""
    found = {f.id: f for s in report.sections for f in s.findings}
    lines = answer.lines(report)
    if not lines:
        return []
    out = ['<section id="tk-answer" aria-labelledby="tk-answer-h">',
           '<h2 id="tk-answer-h">What this machine\'s timing can be trusted for</h2>', "<ul>"]
    for line in lines:
        links = [f'<a href="#{_e(finding_anchor(found[i]))}">{k}</a>'
                 for k, i in enumerate(line["findings"], start=1) if i in found]  # all: a cap left findings unlinked
        rests = f' <span class="rests">(findings {", ".join(links)})</span>' if links else ""
        out.append(f"<li>{_e(line['text'])}{rests}</li>")
    out += ["</ul>", "</section>"]
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
        n_samples = sample_count(sample_columns(report.samples))
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_e(_CSP)}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="timekit">',
        f"<title>{_e(report.title)}</title>",
        f"<style>\n{_CSS}</style>",
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

    out.extend(_answer_html(report))

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
        if section.runs_missing:
            counts += f'<span class="count warn">{_plural(section.runs_missing, "run")} not finished</span>'
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
                out.append(f'<tr><td><a href="#{_e(s.id)}">{_e(s.title)}</a></td>'
                           f'<td><a href="#{_e(finding_anchor(f))}">{_e(f.claim)}</a>{_parts_html(f)}</td>'
                           f'<td class="verdict">{_badge(f.verdict)}</td></tr>')
        out.append("</tbody></table></div></section>")

    # sections
    table_no = 0
    figure_no = 0
    for number, section in enumerate(report.sections, start=1):
        sid = section.id
        out.append(f'<section id="{_e(sid)}" aria-labelledby="{_e(sid)}-h">')
        out.append(f'<h2 id="{_e(sid)}-h"><span class="secnum">{number}.</span>{_e(section.title)}</h2>')
        if section.runs:
            out.append(f'<p class="runs{" short" if section.runs_missing else ""}">Runs: {_e(section.runs)}</p>')
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
