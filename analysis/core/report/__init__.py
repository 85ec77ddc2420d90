"""The report: one self-contained HTML page, plus the numbers behind it as JSON and CSV.

Each experiment contributes a ``Section`` to one ``Report`` (model); ``write_report`` (writers)
writes ``report.html`` (page: CSS and figures inline, no JavaScript, no external URL, all text
escaped), ``report.json`` (every finding, warning and summary; NaN as ``null``) and
``samples.csv`` (one row per run). docs/architecture.md, "The report".
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
