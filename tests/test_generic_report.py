"""`timekit report FILES` on result files of no kit experiment: a generic section, the paired
comparison of run sets that share tasks, and a terminal account of what was analysed and skipped."""

import contextlib
import io
import json
from pathlib import Path

import pytest

from analysis import cli, pipeline

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "benchexec-results-corpus"  # BenchExec's own test data (NOTICE.md)
INTEGRATION = ["integration-predicateAnalysis.2015-10-{}.results.xml.bz2".format(d) for d in ("20_1355", "22_1113", "23_1348")]


def corpus(name):
    path = CORPUS / name
    assert path.exists(), f"{path} is missing from the repository's test data"
    return path


def report(*paths, outdir):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["report", *map(str, paths), "--output", str(outdir)])
    return code, out.getvalue(), json.loads((outdir / "report.json").read_text())


@pytest.mark.unit
def test_three_cpachecker_runs_get_sections_and_comparisons(scratch):
    """The three integration files: one section of run sets (status counts, summaries, quantile
    plot) and the paired comparison of the later two against the first; the terminal lists all."""
    code, out, data = report(*(corpus(n) for n in INTEGRATION), outdir=scratch)
    assert code == 0
    assert [s["id"] for s in data["sections"]] == ["generic-runsets", "generic-paired"]
    for name in INTEGRATION:
        assert f"analysed {name}: run set integration-predicateAnalysis, 484 runs" in out
    assert out.count("compared ") == 2 and "task by task: 484 tasks paired" in out
    runsets = data["data"]["no experiment"]["run sets"]
    assert [r["runs"] for r in runsets] == [484, 484, 484]
    assert sum(runsets[0]["outcomes"].values()) == 484
    comparisons = data["data"]["no experiment"]["paired"]["comparisons"]
    assert [c["name"] for c in comparisons] == ["integration-predicateAnalysis 2015-10-20 -> 2015-10-22",
                                                "integration-predicateAnalysis 2015-10-20 -> 2015-10-23"]
    assert "not analysed" not in data["data"]
    page = (scratch / "report.html").read_text()
    assert page.count("<img") == 1 + 2 * 2   # quantile of all run sets, scatter + quantile per comparison


@pytest.mark.unit
def test_unrelated_file_is_described_and_its_comparison_skipped_with_a_reason(scratch):
    code, out, data = report(corpus(INTEGRATION[0]), corpus("nan_and_inf.xml"), outdir=scratch)
    assert code == 0
    assert "analysed nan_and_inf.xml: run set Model-Based-Selection, 3 runs" in out
    assert "not compared: Model-Based-Selection (nan_and_inf.xml) has no task in common" in out
    assert [s["id"] for s in data["sections"]] == ["generic-runsets"]


@pytest.mark.unit
def test_one_file_gets_a_section_and_says_why_nothing_is_compared(scratch):
    code, out, data = report(corpus("test.2015-03-03_1613.results.predicateAnalysis.xml"), outdir=scratch)
    assert code == 0 and data["sections"]
    assert "no paired comparison: one run set only" in out
    rows = data["data"]["no experiment"]["run sets"][0]
    assert rows["outcomes"]["correct"] == 3 and rows["outcomes"]["wrong"] == 1


@pytest.mark.unit
def test_a_result_file_without_output_gets_its_report_beside_it(scratch):
    """`timekit report FILE` as a new user types it: X.results.xml.bz2 gets X.report/ next to it."""
    path = scratch / INTEGRATION[0]
    path.write_bytes(corpus(INTEGRATION[0]).read_bytes())
    with contextlib.redirect_stdout(io.StringIO()):
        assert cli.main(["report", str(path)]) == 0
    assert (scratch / "integration-predicateAnalysis.2015-10-20_1355.report" / "report.html").is_file()


@pytest.mark.unit
def test_invalid_values_are_counted_in_the_summary(scratch):
    """A walltime of -5 s and a NaN CPU time are left out of the summaries with their reason."""
    path = scratch / "bad.results.xml"
    runs = "\n".join(
        f'<run name="t{k}.c" files="[t{k}.c]"><column title="status" value="done"/>'
        f'<column title="cputime" value="{"NaN" if k == 0 else "1.0s"}"/>'
        f'<column title="walltime" value="{"-5s" if k == 1 else "2.0s"}"/></run>' for k in range(4))
    path.write_text(f'<?xml version="1.0"?>\n<result benchmarkname="b" date="2020-01-01 10:00:00 UTC" tool="x">\n{runs}\n</result>\n')
    notes = []
    built = pipeline.build_report([path], notes=notes)
    summary = next(t for t in built.sections[0].tables if "measurements" in t.title)
    rows = {row[0]: row for row in summary.rows}
    assert rows["cputime (s)"][1] == 3 and rows["cputime (s)"][-1].endswith("1 NaN")
    assert rows["walltime (s)"][1] == 3 and rows["walltime (s)"][2] == pytest.approx(2.0)
    assert rows["walltime (s)"][-1].endswith("1 negative")
    assert notes == ["analysed bad.results.xml: run set b, 4 runs, 4 finished normally",
                     "no paired comparison: one run set only (give two or more result files to compare them task by task)"]
