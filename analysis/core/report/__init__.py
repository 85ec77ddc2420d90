"""The report: one self-contained HTML page, plus the numbers behind it as JSON and CSV.

Each experiment contributes a ``Section`` (paragraphs, findings with verdicts, tables, figures,
warnings) to one ``Report`` (model); ``write_report`` (writers) writes

* ``report.html`` – a single page that needs nothing else (page): CSS inline, figures inlined as
  base64 PNG data URIs, no JavaScript, no external URL (a Content-Security-Policy forbids loading any);
* ``report.json`` – title, environment, every finding and warning (with the id of its section) and
  ``Report.data`` (all summaries and tests); NaN and infinities are written as ``null``;
* ``samples.csv`` – one row per run from ``Report.samples`` (a list of dicts, or a dict of columns);
  the header is the union of the keys in order of first appearance.

All text that reaches the page is escaped (task names may contain ``<``, ``&`` and quotes).
"""

from analysis.core.report.model import VERDICTS, Claim, Figure, Finding, Report, Section, Table
from analysis.core.report.page import format_cell, render_html
from analysis.core.report.writers import jsonable, report_json, write_report

__all__ = [
    "VERDICTS",
    "Claim",
    "Figure",
    "Finding",
    "Report",
    "Section",
    "Table",
    "format_cell",
    "jsonable",
    "render_html",
    "report_json",
    "write_report",
]
