"""Tests for analysis.core.report (HTML, JSON, CSV) and tests.browser (screenshots of the page)."""

import base64
import csv
import html
import html.parser
import io
import json

import lxml.html
import matplotlib.image
import numpy as np
import pytest

from tests import browser
from analysis.core import plots
from analysis.core import report
from analysis.core.report import Figure, Finding, Report, Section, Table

HOSTILE = 'a<b>&"c\'; $(rm -rf /)'
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


@pytest.fixture(scope="module")
def png():
    rng = np.random.default_rng(3)
    fig = plots.histogram_grid({("runexec", "load 0"): 1.2 + rng.gamma(2, 0.01, 30)},
                               ["runexec"], ["load 0", "load 1"], "wall time (ms)", "Wall time")
    return plots.to_png(fig, dpi=60)


def small_report(png):
    return Report(
        title=f"Report for {HOSTILE}",
        generated="2024-01-02T03:04:05+00:00",
        environment={"CPU": "Test CPU @ 2.0GHz", "cores": "4", "kernel": "6.1.0", "task": HOSTILE},
        sections=[
            Section(
                id="timing-apis",
                title=f"Timing APIs ({HOSTILE})",
                paragraphs=[f"Task {HOSTILE} ran 3 times per API.", "Second paragraph."],
                findings=[
                    Finding(f"{HOSTILE} is timed alike by all APIs", "refuted",
                            "Welch t-test, n=3+3, alpha=0.01, p=0.0002"),
                    Finding("Wall time grows with load", "confirmed",
                            "Spearman, n=24, alpha=0.01, p=1e-5"),
                    Finding("Fish is coarser", "inconclusive", "KS, n=3+3, alpha=0.01, p=0.2"),
                    Finding("Turbo matters", "not testable here", "no root"),
                ],
                tables=[Table(f"Summary of {HOSTILE}", ["task", "API", "n", "mean (s)", "p"],
                              [[HOSTILE, "runexec", 3, 1.23456789, 0.000123456],
                               [HOSTILE, "bash time", 0, None, float("nan")],
                               [HOSTILE, "GNU time", np.int64(3), np.float64(12345.678), 1e-12]],
                              caption=f"caption {HOSTILE}")],
                figures=[Figure(f"Histogram of {HOSTILE}", png, f"figure caption {HOSTILE}")],
                warnings=[f"2 runs of {HOSTILE} timed out and are excluded"],
            ),
            Section(id="per-core", title="Per-core distributions",
                    paragraphs=["Not run."], warnings=["not run on this machine"]),
            Section(id="empty", title="Empty section"),
        ],
        data={"tests": [{"name": HOSTILE, "p": 0.01, "statistic": float("nan"),
                         "inf": float("inf"), "n": np.int64(3), "mean": np.float64(1.5),
                         "ok": np.bool_(True), "values": np.array([1.0, np.nan])}]},
        samples=[
            {"task": HOSTILE, "api": "runexec", "run": 1, "walltime": 1.2345678901234567},
            {"task": HOSTILE, "api": "bash time", "run": 2, "walltime": None, "status": "TIMEOUT"},
            {"api": "fish time", "run": 3, "walltime": np.float64(0.1), "cputime": 0.3},
        ],
    )


@pytest.fixture
def written(tmp_path, png):
    paths = report.write_report(small_report(png), tmp_path / "out")
    return paths


class TagBalance(html.parser.HTMLParser):
    """Checks that every non-void element is closed, in order, and collects ids and hrefs."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.ids, self.hrefs = [], [], [], []
        self.doctype = None

    def handle_decl(self, decl):
        self.doctype = decl

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "a" and "href" in attrs:
            self.hrefs.append(attrs["href"])
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.errors.append(f"self-closed non-void <{tag}/>")
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            self.errors.append(f"end tag for void <{tag}>")
        elif not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


# ---------------------------------------------------------------------------------- paths


def test_write_report_returns_the_three_files(written, tmp_path):
    assert set(written) == {"html", "json", "csv"}
    assert written["html"] == tmp_path / "out" / "report.html"
    assert written["json"].name == "report.json" and written["csv"].name == "samples.csv"
    for path in written.values():
        assert path.is_file() and path.stat().st_size > 0
    assert not list((tmp_path / "out").glob(".*.tmp"))


# ---------------------------------------------------------------------------------- HTML


def test_html_escapes_hostile_text_everywhere(written):
    text = written["html"].read_text(encoding="utf-8")
    assert HOSTILE not in text
    assert "<b>" not in text and "<b>&" not in text
    escaped = html.escape(HOSTILE, quote=True)
    # title, environment, section title, paragraph, finding, table title/cells/caption,
    # figure title (caption and alt), figure caption, warning
    assert text.count(escaped) >= 12
    doc = lxml.html.fromstring(text)
    assert HOSTILE in doc.findtext(".//title")
    assert HOSTILE in doc.get_element_by_id("timing-apis").text_content()
    cells = [td.text_content() for td in doc.xpath('//table[@id="timing-apis-table-1"]//td')]
    assert cells.count(HOSTILE) == 3
    assert doc.xpath("//img/@alt")[0] == f"Histogram of {HOSTILE}"


def test_html_is_well_formed_html5(written):
    text = written["html"].read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>\n")
    checker = TagBalance()
    checker.feed(text)
    checker.close()
    assert checker.doctype == "DOCTYPE html"
    assert checker.errors == []
    assert checker.stack == []
    assert len(checker.ids) == len(set(checker.ids)), "duplicate ids"
    for href in checker.hrefs:  # every in-page link has a target
        if href.startswith("#"):
            assert href[1:] in checker.ids
    doc = lxml.html.fromstring(text)
    assert doc.tag == "html" and doc.get("lang") == "en"
    assert doc.find("head/meta[@charset]").get("charset") == "utf-8"


def test_html_is_self_contained(written):
    text = written["html"].read_text(encoding="utf-8")
    assert "http://" not in text and "https://" not in text
    doc = lxml.html.fromstring(text)
    assert not doc.xpath("//script") and not doc.xpath("//link") and not doc.xpath("//iframe")
    assert doc.xpath("//style")
    images = doc.xpath("//img")
    assert len(images) == 1
    for img in images:
        src = img.get("src")
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == PNG_SIGNATURE
        assert int(img.get("width")) > 0 and int(img.get("height")) > 0
    for attr in doc.xpath("//@src | //@href"):
        assert attr.startswith(("data:", "#")) or attr in ("report.json", "samples.csv")


def test_toc_links_every_section(written, png):
    doc = lxml.html.fromstring(written["html"].read_text(encoding="utf-8"))
    toc = doc.xpath('//nav[@id="tk-contents"]//a/@href')
    for section in small_report(png).sections:
        assert f"#{section.id}" in toc
        assert doc.get_element_by_id(section.id).tag == "section"


def test_findings_have_verdict_badges_and_warnings_are_boxes(written):
    doc = lxml.html.fromstring(written["html"].read_text(encoding="utf-8"))
    section = doc.get_element_by_id("timing-apis")
    badges = section.xpath('.//span[contains(@class, "verdict-badge")]')
    assert [b.text for b in badges] == ["refuted", "confirmed", "inconclusive", "not testable here"]
    assert len({b.get("class") for b in badges}) == 4
    warnings = section.xpath('.//div[@class="warning"]')
    assert len(warnings) == 1 and "timed out" in warnings[0].text_content()
    # the summary at the top lists every finding with a link to its section
    summary = doc.get_element_by_id("tk-summary")
    assert len(summary.xpath(".//tbody/tr")) == 4
    assert summary.xpath(".//a/@href")[0] == "#timing-apis"


def test_table_cells_formatted_and_numbers_right_aligned(written):
    doc = lxml.html.fromstring(written["html"].read_text(encoding="utf-8"))
    rows = doc.xpath('//table[@id="timing-apis-table-1"]/tbody/tr')
    cells = [[td.text_content() for td in row.xpath("td")] for row in rows]
    assert cells[0][2:] == ["3", "1.235", "0.0001235"]
    assert cells[1][2:] == ["0", "\u2013", "\u2013"]
    assert cells[2][2:] == ["3", "12346", "1e-12"]
    assert "num" in rows[0].xpath("td")[3].get("class")
    assert rows[0].xpath("td")[0].get("class") is None
    header = doc.xpath('//table[@id="timing-apis-table-1"]/thead//th')
    assert [th.get("class") for th in header] == [None, None, "num", "num", "num"]


@pytest.mark.parametrize("value, text", [
    (None, "\u2013"), (float("nan"), "\u2013"), (0.0, "0"), (1.23456, "1.235"), (123.456, "123.5"),
    (0.000123456, "0.0001235"), (12345.678, "12346"), (1.5e20, "1.5e+20"), (7, "7"),
    (np.int64(7), "7"), (np.float32(0.5), "0.5"), (True, "yes"), (np.bool_(False), "no"),
    ("x<y", "x<y"),
    (float("inf"), "\u221e"),
])
def test_format_cell(value, text):
    assert report.format_cell(value) == text


# ---------------------------------------------------------------------------------- JSON


def test_json_has_data_findings_warnings_and_null_for_nan(written):
    raw = written["json"].read_text(encoding="utf-8")
    assert "NaN" not in raw and "Infinity" not in raw

    def no_constants(name):
        raise AssertionError(f"non-JSON constant {name}")

    doc = json.loads(raw, parse_constant=no_constants)
    assert doc["title"] == f"Report for {HOSTILE}"
    assert doc["environment"]["task"] == HOSTILE
    test = doc["data"]["tests"][0]
    assert test["name"] == HOSTILE
    assert test["statistic"] is None and test["inf"] is None
    assert test["n"] == 3 and test["mean"] == 1.5 and test["ok"] is True
    assert test["values"] == [1.0, None]
    assert [f["verdict"] for f in doc["findings"]] == ["refuted", "confirmed", "inconclusive",
                                                      "not testable here"]
    assert all(f["section"] == "timing-apis" for f in doc["findings"])
    assert "p=0.0002" in doc["findings"][0]["evidence"]
    assert [w["section"] for w in doc["warnings"]] == ["timing-apis", "per-core"]
    assert [s["id"] for s in doc["sections"]] == ["timing-apis", "per-core", "empty"]


# ---------------------------------------------------------------------------------- CSV


def test_csv_round_trips(written, png):
    with open(written["csv"], newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        header = reader.fieldnames
    assert header == ["task", "api", "run", "walltime", "status", "cputime"]
    assert len(rows) == 3
    assert rows[0]["task"] == HOSTILE
    assert float(rows[0]["walltime"]) == 1.2345678901234567  # no precision lost
    assert rows[1]["walltime"] == "" and rows[1]["status"] == "TIMEOUT"
    assert rows[2]["task"] == "" and rows[2]["walltime"] == "0.1" and rows[2]["cputime"] == "0.3"
    assert [int(r["run"]) for r in rows] == [1, 2, 3]


def test_samples_as_columns(tmp_path):
    columns = {"api": np.array(["runexec", "bash"]), "load": np.array([0, 1]),
               "cputime": np.array([1.25, np.nan])}
    paths = report.write_report(Report(title="columns", samples=columns), tmp_path)
    with open(paths["csv"], newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert rows == [{"api": "runexec", "load": "0", "cputime": "1.25"},
                    {"api": "bash", "load": "1", "cputime": ""}]  # NaN: no value
    assert "2 runs in samples.csv" in paths["html"].read_text(encoding="utf-8")
    with pytest.raises(ValueError, match="length"):
        report.write_report(Report(title="t", samples={"a": [1, 2], "b": [1]}), tmp_path / "x")


def test_empty_report(tmp_path):
    paths = report.write_report(Report(title="empty"), tmp_path)
    text = paths["html"].read_text(encoding="utf-8")
    lxml.html.fromstring(text)
    assert "Not recorded" in text
    assert json.loads(paths["json"].read_text())["findings"] == []
    assert paths["csv"].read_text() == ""


# ---------------------------------------------------------------------------------- bad input


def test_bad_reports_raise_before_writing(tmp_path, png):
    with pytest.raises(ValueError, match="verdict"):
        Finding("c", "maybe", "e")
    with pytest.raises(ValueError, match="PNG"):
        Figure("f", b"GIF89a", "")

    def attempt(rep, error, match):
        out = tmp_path / "bad"
        with pytest.raises(error, match=match):
            report.write_report(rep, out)
        assert not out.exists()

    attempt(Report("t", sections=[Section("a", "A"), Section("a", "B")]), ValueError, "twice")
    attempt(Report("t", sections=[Section("a", "A"), Section("a-h", "B")]), ValueError, "a-h")
    attempt(Report("t", sections=[Section("tk-summary", "A")]), ValueError, "tk-summary")
    attempt(Report("t", sections=[Section("has space", "A")]), ValueError, "id")
    attempt(Report("t", sections=[Section("a", "A", tables=[Table("T", ["x", "y"], [[1]])])]),
            ValueError, "row 1")
    attempt(Report("t", data={"x": object()}), TypeError, r"data\['x'\]")
    attempt(Report("t", data={("api", 0): 1}), TypeError, "key")


# ---------------------------------------------------------------------------------- screenshots


def test_screenshot_of_report_is_not_blank(written, tmp_path):
    target = tmp_path / "shot" / "report.png"
    try:
        result = browser.screenshot(written["html"], target, width=1000, height=1400)
    except browser.BrowserUnavailable as exc:
        pytest.skip(str(exc))
    assert result == target.resolve()
    data = target.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(io.BytesIO(data), format="png")
    assert image.shape[:2] == (1400, 1000)
    rgb = image[..., :3].reshape(-1, 3)
    assert len(np.unique(rgb, axis=0)) > 20, "screenshot is (nearly) one colour"
    # the page has content near the top and is mostly white like the page background
    assert np.mean(np.all(rgb > 0.97, axis=1)) > 0.5
    assert np.ptp(image[:200, :, :3]) > 0.5


def test_screenshot_without_chromium_raises_clearly(monkeypatch, tmp_path):
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    page = tmp_path / "p.html"
    page.write_text("<!DOCTYPE html><title>x</title>")
    with pytest.raises(browser.BrowserUnavailable, match="chromium"):
        browser.screenshot(page, tmp_path / "p.png")
    assert issubclass(browser.BrowserUnavailable, browser.BrowserError)


def test_screenshot_missing_page(tmp_path):
    with pytest.raises(FileNotFoundError):
        browser.screenshot(tmp_path / "nope.html", tmp_path / "p.png")


def test_screenshot_failure_is_reported(tmp_path):
    page = tmp_path / "p.html"
    page.write_text("<!DOCTYPE html><title>x</title>")
    with pytest.raises(browser.BrowserError, match="wrote no PNG"):
        browser.screenshot(page, tmp_path / "p.png", executable="/bin/true")
