"""compare over tasks (one run per task): the real CPAchecker pairs of the corpus, generated pairs
with a known per-task change, renamed paths, values that are not times."""

import bz2
import contextlib
import io
import json
import math
import re
import sys
from types import SimpleNamespace
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from analysis import cli
from analysis.core import results, validity
from analysis.tools.compare import per_task
from analysis.tools.compare import pairing

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "benchexec-results-corpus"  # BenchExec's own test data (NOTICE.md)
INTEGRATION = "integration-predicateAnalysis.2015-10-{}.results.xml.bz2"
TEST_1613 = "test.2015-03-03_1613.results.{}.xml"
TEST_1815 = "test.2015-03-03_1815.results.{}.xml"

sys.path.insert(0, str(REPO / "benchmarks"))
import make_competition_result  # noqa: E402


def corpus(name):
    path = CORPUS / name
    assert path.exists(), f"{path} is missing from the repository's test data"
    return path


def timekit(*argv):
    """(exit code, stdout) of the real CLI."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue()


def raw_runs(path):
    """{task name: (status, category, cputime s)} read with lxml alone, independent of the kit."""
    opener = bz2.open if str(path).endswith(".bz2") else open
    with opener(path, "rb") as f:
        root = etree.parse(f).getroot()
    runs = {}
    for run in root.iter("run"):
        values = {}
        for column in run.iter("column"):
            values.setdefault(column.get("title"), column.get("value"))
        cpu = values.get("cputime", "")
        runs[run.get("name")] = (values.get("status", ""), values.get("category", ""),
                                 float(cpu.rstrip("s")) if cpu else math.nan)
    return runs


# --------------------------------------------------------------------------------------------
# the corpus's real CPAchecker pairs


@pytest.mark.unit
@pytest.mark.parametrize("days", [("20_1355", "22_1113"), ("22_1113", "23_1348")])
def test_integration_pairs_match_a_computation_from_the_raw_xml(days):
    """484 tasks each side, paired by name; the geometric mean of the per-task CPU ratios over
    tasks both finished (not category error) with 0.5 s CPU time (geometric mean) equals the one computed here
    from the XML with lxml; the status matrix counts every task once."""
    base, new = (corpus(INTEGRATION.format(d)) for d in days)
    code, out = timekit("compare", base, new, "--format", "json")
    data = json.loads(out)
    assert data["mode"] == "paired over tasks"
    c = data["comparisons"][0]
    assert (c["paired"], c["only_base"], c["only_new"], c["by_tail"]) == (484, 0, 0, 0)
    assert sum(map(sum, c["transitions"])) == 484

    a, b = raw_runs(base), raw_runs(new)
    finished = lambda r: r[0] != "" and r[1] != "error"  # noqa: E731
    logs = [math.log(b[t][2] / a[t][2]) for t in a
            if finished(a[t]) and finished(b[t]) and math.sqrt(a[t][2] * b[t][2]) >= 0.5]
    cpu = next(col for col in c["columns"] if col["column"] == "cputime")
    assert cpu["overall"]["n"] == len(logs)
    assert cpu["overall"]["geomean"] == pytest.approx(math.exp(np.mean(logs)), rel=1e-9)
    assert cpu["overall"]["ci_low"] < cpu["overall"]["geomean"] < cpu["overall"]["ci_high"]
    timeouts = sum(1 for t in a if a[t][0] == "TIMEOUT" and b[t][0] == "TIMEOUT")
    assert c["transitions"][pairing.TIMEOUT][pairing.TIMEOUT] == timeouts
    assert code == (1 if data["regression"] else 0)


@pytest.mark.unit
def test_integration_20_to_22_is_a_slowdown_the_gate_fails_on():
    """2015-10-22 ran on other machines, twice the CPU time per task: slower, exit 1; the
    score falls by the SV-COMP scheme (25 correct results became timeouts)."""
    code, out = timekit("compare", corpus(INTEGRATION.format("20_1355")), corpus(INTEGRATION.format("22_1113")))
    assert code == 1
    assert "REGRESSION (exit 1)" in out
    cputime_row = next(line for line in out.splitlines() if line.startswith("cputime "))
    assert "slower" in cputime_row and "+95.79 %" in cputime_row
    assert "score: 342 → 304" in out
    data = json.loads(timekit("compare", corpus(INTEGRATION.format("20_1355")),
                              corpus(INTEGRATION.format("22_1113")), "--format", "json")[1])
    assert data["comparisons"][0]["transitions"][pairing.CORRECT][pairing.TIMEOUT] == 25


@pytest.mark.unit
def test_predicate_against_value_analysis_newly_wrong_and_correct():
    """The 2015-03-03 files: predicateAnalysis answers one task wrongly that valueAnalysis gets
    right; the other way round nothing becomes wrong. Two differently named run sets, one a side,
    are paired anyway; the memory column is found under its old name memUsage."""
    predicate, value = corpus(TEST_1613.format("predicateAnalysis")), corpus(TEST_1613.format("valueAnalysis"))
    data = json.loads(timekit("compare", predicate, value, "--format", "json")[1])
    c = data["comparisons"][0]
    assert c["name"] == "predicateAnalysis -> valueAnalysis"
    assert (c["paired"], c["only_base"], c["only_new"], c["newly_wrong"]) == (4, 1, 0, 0)
    assert c["only_base_tasks"] == ["test/programs/simple/builtin_expect_true-unreach-label.c"]
    assert c["transitions"][pairing.WRONG][pairing.CORRECT] == 1
    assert [col["column"] for col in c["columns"]] == ["cputime", "walltime", "memory"]
    code, out = timekit("compare", value, predicate, "--format", "json")
    back = json.loads(out)["comparisons"][0]
    assert back["newly_wrong"] == 1
    assert back["newly_wrong_tasks"] == ["test/programs/simple/bitvectors/implicitunsignedconversion_false-unreach-label.i"]
    assert code == 1   # a newly wrong result fails the gate whatever the times say


@pytest.mark.unit
def test_same_run_set_two_hours_later_markdown():
    """1613 -> 1815 of predicateAnalysis: markdown output with the status matrix and the rows."""
    code, out = timekit("compare", corpus(TEST_1613.format("predicateAnalysis")),
                        corpus(TEST_1815.format("predicateAnalysis")), "--format", "markdown")
    assert code in (0, 1)
    assert "| base \\ new |" in out
    assert "| cputime | 5 |" in out or "| cputime | 4 |" in out


# --------------------------------------------------------------------------------------------
# generated pairs with a known per-task change


def generated_pair(directory, slowdown, seed, tasks=300, flip=0.0):
    base, new = directory / f"base-{seed}.results.xml", directory / f"new-{seed}.results.xml"
    make_competition_result.write(str(base), tasks, seed, 0, 0.0, 0.0, "2025-01-10 12:00:00")
    make_competition_result.write(str(new), tasks, seed, 1, slowdown, flip, "2025-01-17 12:00:00")
    return base, new


def judge(base, new, **kwargs):
    sets = [pairing.run_sets(results.load_results([p], paired_output_columns()), per_task.DEFAULT_COLUMNS)
            for p in (base, new)]
    return per_task.compare_paired(*sets, **kwargs)


def paired_output_columns():
    from analysis.tools.compare import per_task_output

    return per_task_output.wanted_columns()


@pytest.mark.unit
def test_five_percent_slower_on_every_task_is_found(scratch):
    """Every task 5 % slower, 3 % noise per task and side: cputime 'slower', the geometric mean
    within 1.5 % of 1.05 (about 4 standard errors at n ~ 170), exit 1; at 0 % the same seed passes."""
    for seed in range(3):
        result = judge(*generated_pair(scratch, 0.05, seed))
        cpu = result.comparisons[0].columns[0]
        assert cpu.column == "cputime" and cpu.overall.verdict == "slower", (seed, cpu.overall)
        assert cpu.overall.geomean == pytest.approx(1.05, abs=0.015)
        assert cpu.overall.ci_low < cpu.overall.geomean < cpu.overall.ci_high
        assert result.regression
        assert not judge(*generated_pair(scratch, 0.0, seed)).regression


@pytest.mark.unit
def test_no_change_is_not_found_in_95_percent_of_seeded_tries(scratch):
    """40 seeds at 0 %: the gate stays quiet in at least 95 % of them, and the Wilcoxon test alone
    (Holm p < 0.05 on cputime, before the threshold) fires about as often as alpha says (binomial
    n = 40, p = 0.05 x 2 time columns at most: at most 8 of 40)."""
    regressions = significant = 0
    for seed in range(40):
        result = judge(*generated_pair(scratch, 0.0, seed, tasks=200))
        regressions += result.regression
        significant += result.comparisons[0].columns[0].overall.p_holm < 0.05
    assert regressions <= 2
    assert significant <= 8


@pytest.mark.unit
def test_per_task_set_rows_and_min_time_filter(scratch):
    """The generated tasks lie in 40 directories: 40 task-set rows with Holm-adjusted p >= raw p;
    the min-time filter's count equals the tasks under 0.5 s (geometric mean of both sides), and
    grows with it."""
    base, new = generated_pair(scratch, 0.05, 7, tasks=800)
    result = judge(base, new)
    cpu = result.comparisons[0].columns[0]
    assert len(cpu.blocks) == 40 and {b.block for b in cpu.blocks} == {f"set{i:02d}" for i in range(40)}
    assert all(b.p_holm >= b.wilcoxon_p for b in cpu.blocks)
    a, b = raw_runs(base), raw_runs(new)
    done = lambda r: r[0] != "" and r[1] != "error"  # noqa: E731
    under = sum(1 for t in a if done(a[t]) and done(b[t]) and math.sqrt(a[t][2] * b[t][2]) < 0.5)
    assert cpu.left_out[per_task.under_label(0.5)] == under > 0
    stricter = judge(base, new, min_cputime=2.0).comparisons[0].columns[0]
    assert stricter.left_out[per_task.under_label(2.0)] > under
    assert stricter.overall.n < cpu.overall.n


@pytest.mark.unit
def test_flipped_outcomes_are_counted_and_newly_wrong_fails_the_gate(scratch):
    result = judge(*generated_pair(scratch, 0.0, 3, tasks=400, flip=0.05))
    c = result.comparisons[0]
    matrix = np.array(c.transitions)
    assert matrix.sum() == 400
    assert c.newly_wrong == matrix[:, pairing.WRONG].sum() - matrix[pairing.WRONG, pairing.WRONG] > 0
    assert result.regression


# --------------------------------------------------------------------------------------------
# renamed paths, tasks on one side only


@pytest.mark.unit
def test_renamed_collection_is_paired_by_path_tail(scratch):
    """The new side's tasks moved from ../sv-benchmarks/c/ to sv-benchmarks-2025/c/; 3 tasks
    were dropped and one added: paired by path tail, the rest listed per side."""
    base, new = generated_pair(scratch, 0.0, 1, tasks=50)
    text = new.read_text().replace("../sv-benchmarks/c/", "sv-benchmarks-2025/c/")
    runs = re.findall(r"  <run .*?</run>\n", text, re.S)
    header = text[:text.index("  <run ")]
    dropped = [re.search(r'name="([^"]+)"', r).group(1) for r in runs[:3]]
    added = runs[3].replace("task0000003", "task9999999")
    new.write_text(header + "".join(runs[3:]) + added + "</result>\n")
    c = judge(base, new).comparisons[0]
    assert (c.paired, c.by_tail, c.only_base, c.only_new) == (47, 47, 3, 1)
    assert sorted(c.only_base_tasks) == sorted(t.replace("sv-benchmarks-2025/c/", "../sv-benchmarks/c/") for t in dropped)
    assert c.only_new_tasks == ["sv-benchmarks-2025/c/set03/task9999999.yml"]


@pytest.mark.unit
def test_a_task_checked_for_two_properties_pairs_by_identity():
    """Run identity is task name plus properties: with properties, two runs of one task pair with
    their own property's run even in another order; without them (old files) the repeated name is
    reported and paired in file order."""
    def table(order):
        t = results.load_result(corpus(TEST_1613.format("predicateAnalysis")))
        t.tasks[1] = t.tasks[0]
        t.properties = np.array(["unreach-label", "valid-memsafety", "p2", "p3", "p4"], dtype=object)
        for array in (t.tasks, t.properties, t.status, t.category, t.columns["cputime"]):
            array[[0, 1]] = array[order]
        return t

    a, b = pairing.run_set([table([0, 1])], ["cputime"]), pairing.run_set([table([1, 0])], ["cputime"])
    pairs = pairing.pair(a, b)
    assert len(pairs.base) == 5 and a.duplicates == 0
    assert np.array_equal(a.values["cputime"][pairs.base], b.values["cputime"][pairs.new])
    for t in (ta := table([0, 1]), tb := table([1, 0])):
        t.properties[:] = ""
    a, b = pairing.run_set([ta], ["cputime"]), pairing.run_set([tb], ["cputime"])
    assert a.duplicates == 1 and len(pairing.pair(a, b).base) == 5


# --------------------------------------------------------------------------------------------
# values that are not times


NAN_FILE = """<?xml version="1.0"?>
<result benchmarkname="t" date="2020-01-0{day} 10:00:00 UTC" name="r" tool="x" timelimit="10s">
{runs}
</result>
"""


def small_files(directory, bad):
    """Two files of 6 tasks, one run each; `bad` (task index -> (cputime, walltime)) on the new side."""
    paths = []
    for day in (1, 2):
        runs = []
        for k in range(6):
            cpu, wall = f"{1.0 + 0.1 * k}s", f"{1.1 + 0.1 * k}s"
            if day == 2 and k in bad:
                cpu, wall = bad[k]
            runs.append(f'<run name="dir/task{k}.c" files="[dir/task{k}.c]"><column title="status" value="done"/>'
                        f'<column title="cputime" value="{cpu}"/><column title="walltime" value="{wall}"/>'
                        '<column hidden="true" title="category" value="missing"/></run>')
        path = directory / f"small{day}.results.xml"
        path.write_text(NAN_FILE.format(day=day, runs="\n".join(runs)))
        paths.append(path)
    return paths


@pytest.mark.unit
def test_nan_and_negative_times_are_left_out_with_their_reason(scratch):
    """A NaN CPU time and a walltime of -5 s on the new side: each column counts its one invalid
    task with the reason, the statistics use the 5 others, nothing is averaged in."""
    base, new = small_files(scratch, {0: ("NaN", "1.1s"), 1: ("1.1s", "-5s")})
    code, out = timekit("compare", base, new, "--format", "json")
    columns = {c["column"]: c for c in json.loads(out)["comparisons"][0]["columns"]}
    assert columns["cputime"]["left_out"]["new: not a valid value (1 NaN)"] == 1
    assert columns["walltime"]["left_out"]["new: not a valid value (1 negative)"] == 1
    assert columns["cputime"]["overall"]["n"] == columns["walltime"]["overall"]["n"] == 5
    assert columns["walltime"]["overall"]["geomean"] == pytest.approx(1.0)
    code, text = timekit("compare", base, new)
    assert "1 new: not a valid value (1 negative)" in text


@pytest.mark.unit
def test_repeated_runs_compare_no_longer_averages_a_negative_walltime(scratch):
    """The repeated-runs compare (runs named as the kit's repetitions) leaves the -5 s out too."""
    base, new = small_files(scratch, {1: ("1.1s", "-5s")})
    for path in (base, new):
        path.write_text(re.sub(r"dir/task(\d)\.c", r"tasks/in.r00\1.yml", path.read_text()))
    code, out = timekit("compare", base, new, "--format", "json")
    rows = {r["column"]: r for r in json.loads(out)["rows"]}
    assert rows["walltime"]["n_new"] == 5 and rows["walltime"]["excluded_new"] == 1
    assert rows["walltime"]["mean_new"] > 1


@pytest.mark.unit
def test_nan_and_inf_corpus_file_counts_per_column():
    """nan_and_inf.xml against itself on its columns with NaN and Inf: every value that is not a
    number is counted per column under its reason (the file writes 'Nan' and '-Inf')."""
    table = results.load_result(corpus("nan_and_inf.xml"))
    floats = validity.of_column(table, "Floats")
    assert floats.reasons == {validity.NAN: 1}
    loops = validity.of_column(table, "Loops")
    assert loops.reasons == {validity.INFINITE: 1} and loops.usable.sum() == 2
    boolean = validity.of_column(table, "Boolean")   # '-inf' once; a negative count is a value, not a time
    assert boolean.reasons == {validity.INFINITE: 1}
    assert validity.check([1.0, -1.0], unit="").reasons == {}
    assert validity.check([1.0, -1.0, np.nan], unit="s").reasons == {validity.NEGATIVE: 1, validity.NAN_OR_NO_VALUE: 1}


@pytest.mark.unit
def test_report_option_writes_html_and_pngs(scratch):
    base, new = generated_pair(scratch, 0.05, 2, tasks=200)
    code, _ = timekit("compare", base, new, "--report", scratch / "report")
    assert code == 1
    pngs = sorted(p.name for p in (scratch / "report").glob("*.png"))
    stem = "SV-COMP25_unreach-call_2025-01-10_to_2025-01-17"
    assert pngs == [f"{stem}.quantile.png", f"{stem}.scatter.png"]
    page = (scratch / "report" / "report.html").read_text()
    assert "per-task ratios new/base" in page and page.count("<img") == 2


@pytest.mark.unit
def test_direction_and_significance_from_one_statistic():
    """180 of 200 tasks 3 % faster, 20 of them 80 % slower: the geometric mean says +3 %, the signed
    ranks (Wilcoxon, p far below alpha) say faster. That is 'mixed', neither 'slower' nor 'faster';
    200 tasks all 3 % slower are 'slower'."""
    g = np.random.default_rng(7)
    base = g.uniform(1, 10, 200)
    factor = np.where(np.arange(200) < 180, 0.97, 1.8) * g.normal(1, 0.002, 200)
    stat = per_task.ratio_stat(base, base * factor, threshold=0.02)
    assert stat.geomean > 1.02 and stat.wilcoxon_p < 1e-6 and stat.wilcoxon_side == -1
    assert per_task.verdict(stat.wilcoxon_p, stat, alpha=0.05, threshold=0.02) == "mixed"
    slower = per_task.ratio_stat(base, base * 1.03 * g.normal(1, 0.002, 200), threshold=0.02)
    assert slower.wilcoxon_side == 1
    assert per_task.verdict(slower.wilcoxon_p, slower, alpha=0.05, threshold=0.02) == "slower"


@pytest.mark.unit
def test_tasks_without_properties_have_no_score_and_no_score_line():
    """An SV-COMP score of '0 → 0' would read as a measured score where there is none to state."""
    from analysis.core.results import load_results
    from analysis.tools.compare import per_task_text

    corpus = Path(__file__).parent / "data" / "benchexec-results-corpus"
    table = load_results([corpus / "benchmark-example-true.2019-11-06_0932.results.no options.xml.bz2"])[0]
    codes = pairing.outcomes(table)
    score, why = pairing.scores(table, codes)
    assert score is None and "no task has a property" in why
    with_property = load_results([corpus / "integration-predicateAnalysis.2015-10-20_1355.results.xml.bz2"])[0]
    assert pairing.scores(with_property, pairing.outcomes(with_property))[0] is not None
    side = {"label": "x", "date": "d", "version": "v", "tasks": 1}
    comparison = SimpleNamespace(base=side, new=side, paired=1, by_tail=0, only_base=0, only_new=0, only_base_tasks=[],
                                 only_new_tasks=[], duplicates={}, score_base=None, newly_wrong=0, newly_wrong_tasks=[],
                                 newly_correct=0)
    comparison_lines = per_task_text.summary_lines(comparison)
    assert not any(line.startswith("score") for line in comparison_lines)
