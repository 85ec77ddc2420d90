"""report.json and samples.csv, and write_report, which writes them with the page.

``report.json`` holds title, environment, the opening answer, every finding (its id, verdict,
summary, parts and what would decide it, then the evidence) and warning (with the id of its
section) and ``Report.data`` (all summaries and tests); NaN and infinities are written as
``null``. ``samples.csv`` has one row per run from ``Report.samples``; the header is the union
of the keys in order of first appearance.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import json
import math
import numbers
import os
import pathlib
from typing import Any

from analysis.core.report.model import Report, sample_columns, sample_count
from analysis.core.report import answer, summary
from analysis.core.report.page import render_html


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
        return repr(value) if value == value else ""  # shortest text that reads back as the same float
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(jsonable(value, "sample"))
    return value


PART_FIELDS = ("label", "verdict", "estimate", "low", "high", "level", "unit", "replication", "m", "n", "why",
               "decide", "quantity")


def finding_json(section: str, finding) -> dict[str, Any]:
    """One finding as report.json holds it: its fields, the summary rendered from them, then the
    evidence paragraph and the cost line for whoever checks."""
    return {"id": finding.id, "section": section, "claim": finding.claim, "verdict": finding.verdict,
            "summary": summary.summary(finding),
            "parts": [jsonable({k: getattr(part, k) for k in PART_FIELDS}, "part") for part in finding.parts],
            "decide": jsonable(finding.decide, "decide"), "evidence": finding.evidence, "cost": finding.cost}


def report_json(report: Report) -> dict[str, Any]:
    """What ``report.json`` holds, as a JSON-ready dict."""
    return {
        "title": report.title,
        "generated": report.generated,
        "environment": jsonable(report.environment, "environment"),
        "sections": [{"id": s.id, "title": s.title, "runs": s.runs, "runs_missing": s.runs_missing} for s in report.sections],
        "answer": jsonable(answer.lines(report), "answer"),
        "findings": [finding_json(s.id, f) for s in report.sections for f in s.findings],
        "warnings": [{"section": s.id, "warning": w} for s in report.sections for w in s.warnings],
        "data": jsonable(report.data, "data"),
    }


def _csv_column(values: list) -> list:
    """A column's CSV cells; floats as their shortest exact text (repr), None and NaN (a column a
    run's result file does not have) as ''."""
    if all(type(v) is float for v in values):
        return [repr(v) if v == v else "" for v in values]
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


def write_report(report: Report, outdir) -> dict[str, pathlib.Path]:
    """Write ``report.html``, ``report.json`` and ``samples.csv`` into ``outdir`` (created if
    needed) and return their paths under the keys ``html``, ``json`` and ``csv``.

    Everything is rendered before anything is written, so a bad report (duplicate section id,
    unknown verdict, ragged table, data that is not JSON-serialisable) raises ValueError or
    TypeError and leaves no half-written files.
    """
    outdir = pathlib.Path(outdir)
    columns = sample_columns(report.samples)
    page = render_html(report, n_samples=sample_count(columns))
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
