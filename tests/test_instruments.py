"""Instrument checks (analysis.core.instruments): a finding rests only on quantities whose
instrument passed its check, and says `not testable here` with the reason otherwise.

The core clock is judged from what programs/kit.h's probe prints, by the rule kit.h applies; the
reports of two recorded machines are rebuilt: the Intel VM of 2026-11-25, whose add-immediate chain
read 20-25 GHz (several adds per cycle on Golden Cove), and the AMD EPYC VM of the recorded demo.
"""

import hashlib
import io
import json
import os
import re
from pathlib import Path

import pytest

from analysis import pipeline
from analysis.core import instruments
from analysis.core.instruments import CORE_CLOCK, TSC_INVARIANT, X86_64, Reading, Trust
from analysis.core.verdicts import ClaimSpec
from analysis.experiments.os_microbench import claims as microbench_claims
from analysis.experiments.os_microbench import figures as microbench_figures
from tests.helpers import figures_not_drawn

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
INTEL = REPO / "tests" / "data" / "machines" / "intel-vm-2026-11-25"
AMD = REPO / "tests" / "data" / "recorded-demo"
NOT_TESTABLE = "not testable here"


def test_kit_h_and_the_analysis_judge_the_clock_by_the_same_numbers():
    text = (REPO / "programs" / "kit.h").read_text()
    defined = {name: float(value) for name, value in re.findall(r"#define (KIT_\w+) ([0-9.e]+)\b", text)}
    assert defined["KIT_GHZ_MIN"] == instruments.GHZ_MIN and defined["KIT_GHZ_MAX"] == instruments.GHZ_MAX
    assert defined["KIT_CLOCK_AGREE"] == instruments.CLOCK_AGREE
    assert defined["KIT_CPUFREQ_MARGIN"] == instruments.CPUFREQ_MARGIN


# ---------------------------------------------------------------------------------------------
# Trust: ranges, bounds from another reading, required facts


def test_a_reading_outside_its_range_fails_with_the_figure_and_the_range():
    assert CORE_CLOCK.check({"core clock": Reading(3.69)}) == ""
    why = CORE_CLOCK.check({"core clock": Reading(20.08, how="one chain")})
    # a figure outside any core's range is cited as the rate the chain ran at, never as a clock
    assert why.startswith("instrument check failed: core clock 20.08 chain steps per ns (one chain) lies outside 0.1 GHz–7 GHz")
    assert "20.08 GHz" not in why
    assert CORE_CLOCK.check({}) == "instrument check failed: core clock not measured"
    assert CORE_CLOCK.check({"core clock": Reading(problem="core clock not measured here: x")}) == \
        "instrument check failed: core clock not measured here: x"


def test_a_bound_from_another_reading_and_a_required_fact():
    cache = Trust("cache size", 1024, 2**32, "B", "why", below="largest working set")
    readings = {"cache size": Reading(480 * 2**20, how="L3"), "largest working set": Reading(256 * 2**20)}
    assert cache.check(readings) == ("instrument check failed: cache size 480 MiB (L3) is not below the largest "
                                     "working set, 256 MiB: why")
    assert cache.check({**readings, "largest working set": Reading(2**31)}) == ""
    assert X86_64.check({"architecture": Reading("x86_64")}) == ""
    assert X86_64.check({"architecture": Reading("aarch64")}).startswith("not x86-64")
    assert TSC_INVARIANT.check({"TSC invariant": Reading(1.0)}) == ""
    assert TSC_INVARIANT.check({"TSC invariant": Reading(0.0)}).startswith("TSC not invariant")


def test_a_claim_is_untestable_by_its_first_failing_instrument():
    spec = ClaimSpec("c", "about", 1.0, instruments=(X86_64, CORE_CLOCK))
    assert spec.untestable({"architecture": Reading("x86_64"), "core clock": Reading(3.0)}) == ""
    assert spec.untestable({"architecture": Reading("aarch64"), "core clock": Reading(30.0)}).startswith("not x86-64")
    assert "30 chain steps per ns" in spec.untestable({"architecture": Reading("x86_64"), "core clock": Reading(30.0)})
    assert ClaimSpec("c", "about").untestable({}) == ""


# ---------------------------------------------------------------------------------------------
# the core clock from the probe's output, judged as kit.h judges it


def test_agreeing_chains_give_the_clock_and_say_how():
    r = instruments.core_clock({"arch": "x86_64", "core-ghz-add": 3.6944, "core-ghz-imul": 3.6941, "core-ghz": 3.6944})
    assert r.value == 3.6944 and not r.problem
    assert r.how.startswith("add chain 3.694 GHz, imul chain 3.694 GHz; no perf cycles:")
    with_perf = instruments.core_clock({"core-ghz-add": 4.05, "core-ghz-imul": 4.04, "core-ghz-perf": 4.06, "core-ghz": 4.05})
    assert with_perf.how == "add chain 4.050 GHz, imul chain 4.040 GHz, perf cycles 4.060 GHz"


@pytest.mark.parametrize("values, says", [
    ({"core-ghz-add": 4.05, "core-ghz-imul": 3.10}, "add chain 4.050 GHz, imul chain 3.100 GHz disagree by 31 %"),
    ({"core-ghz-add": 4.05, "core-ghz-imul": 4.04, "core-ghz-perf": 2.6}, "perf cycles 2.600 GHz disagree by 56 %"),
    ({"core-ghz-add": 3.69, "core-ghz-eor": 3.69, "cpufreq-min-ghz": 0.4, "cpufreq-max-ghz": 1.5},
     "outside the kernel's cpufreq range 0.400–1.500 GHz"),
])
def test_disagreeing_estimates_leave_the_clock_unmeasured_with_both_figures(values, says):
    r = instruments.core_clock(values)
    assert r.value is None and r.problem.startswith("core clock not measured here: ") and says in r.problem
    assert instruments.usable(CORE_CLOCK, r) is None
    assert CORE_CLOCK.check({"core clock": r}) == f"instrument check failed: {r.problem}"


def test_agreeing_but_impossible_chains_fail_the_physical_range():
    r = instruments.core_clock({"core-ghz-add": 20.1, "core-ghz-imul": 20.0})
    assert r.value == 20.1 and instruments.usable(CORE_CLOCK, r) is None
    assert "lies outside 0.1 GHz–7 GHz" in CORE_CLOCK.check({"core clock": r})


def test_an_old_figure_is_unverified_and_checked_against_the_physical_range():
    old = instruments.core_clock({"core-ghz": 3.69})
    assert old.value == 3.69 and "not cross-checked" in old.how and instruments.usable(CORE_CLOCK, old) == 3.69
    assert instruments.usable(CORE_CLOCK, instruments.core_clock({"core-ghz": 20.08})) is None
    assert instruments.core_clock({"core-clock": 24.6e9}).value == pytest.approx(24.6)  # the tracer's, in Hz
    assert instruments.core_clock({}) == Reading()


def test_several_runs_give_the_median_of_those_that_passed():
    runs = [{"core-ghz-add": 3.0, "core-ghz-imul": 3.6}, {"core-ghz-add": 3.69, "core-ghz-imul": 3.69, "core-ghz": 3.69},
            {"core-ghz-add": 3.71, "core-ghz-imul": 3.70, "core-ghz": 3.71}]
    r = instruments.core_clock_of_runs(runs)
    assert r.value == pytest.approx(3.70) and "2 of 3 runs" in r.how
    assert instruments.core_clock_of_runs(runs[:1]).problem.startswith("core clock not measured here")


# ---------------------------------------------------------------------------------------------
# findings in cycles with a clock that failed its check


def _variant(median, measure):
    return {"median": median, "p10": median * 0.99, "p90": median * 1.01, "min": median * 0.99, "n": 51, "runs": 1,
            "run_medians": [median], "invocations": ["a"], "measure": measure}


def test_cycle_findings_are_not_testable_when_the_chains_disagree():
    probe = {"core-ghz-add": 4.05, "core-ghz-imul": 3.1, "arch": "x86_64", "tsc-ghz": 2.6, "result-file": "a"}
    data = {"runs": {"loop": 1, "call": 1}, "info": {"loop": {"tsc-invariant": 1.0}, "call": {"tsc-invariant": 1.0}},
            "variants": {"loop": _variant(0.12, "loop"), "add": _variant(0.25, "loop"),
                         **{f"call{k}": _variant(1.0 + k / 4, "call") for k in range(8)}},
            "probes": [{"measure": "loop", **probe}, {"measure": "call", **probe}]}
    for finding in (microbench_claims.loop_cost(data)[0], microbench_claims.call_cost_grows(data)[0],
                    microbench_claims.tsc_counts_cycles(data)[0]):
        assert finding.verdict == NOT_TESTABLE
        assert finding.evidence == ("instrument check failed: core clock not measured here: add chain 4.050 GHz, imul "
                                    "chain 3.100 GHz disagree by 31 % (more than 5 %)")


def test_tsc_findings_are_not_testable_off_x86():
    probe = {"core-ghz-add": 2.0, "core-ghz-eor": 2.0, "core-ghz": 2.0, "arch": "aarch64", "result-file": "a"}
    data = {"runs": {"timer": 1}, "info": {"timer": {"arch": "aarch64", "tsc-invariant": 0.0}},
            "variants": {"clock-gettime": _variant(20.0, "timer")}, "probes": [{"measure": "timer", **probe}]}
    for claim in (microbench_claims.tsc_counts_cycles, microbench_claims.timer_read_cost,
                  microbench_claims.cpuid_serialises_cheaply):
        (finding,) = claim(data)
        assert finding.verdict == NOT_TESTABLE and finding.evidence.startswith("not x86-64")


# ---------------------------------------------------------------------------------------------
# the reports of two recorded machines


def _report(machine, monkeypatch):
    """The os-microbench and scheduling-noise sections of a recorded machine, and the core clock
    every figure of the os-microbench section was given (None: none)."""
    monkeypatch.chdir(REPO)
    clocks = []
    for name in ("latency_curve", "call_cost"):
        original = getattr(microbench_figures.mplots, name)

        def spy(*args, _original=original, **kwargs):
            clocks.append(kwargs.get("core_ghz", args[4] if len(args) > 4 else None))
            return _original(*args, **kwargs)

        monkeypatch.setattr(microbench_figures.mplots, name, spy)
    with figures_not_drawn():   # made (the spies above see their clocks), not drawn
        report = pipeline.build_report([(machine / e).relative_to(REPO) for e in ("os-microbench", "scheduling-noise")])
    return report, clocks


_GHZ = re.compile(r"(\d+(?:\.\d+)?) GHz")


def _impossible_clocks(report):
    """Clocks outside the physical range anywhere the report states one: a finding of any verdict
    (a failed check cites what was measured, not an impossible clock), a warning, a paragraph, a table cell."""
    found = []
    for section in report.sections:
        texts = [(f.claim, f.evidence) for f in section.findings] + [(section.title, t) for t in section.warnings + section.paragraphs]
        found += [(where, x) for where, text in texts for x in map(float, _GHZ.findall(text))
                  if not instruments.GHZ_MIN <= x <= instruments.GHZ_MAX]
        for table in section.tables:
            for i, column in enumerate(table.columns):
                scale = 1e-3 if "MHz" in column else 1.0 if "GHz" in column else None
                if "core" not in column or scale is None:
                    continue
                found += [(table.title, row[i]) for row in table.rows if isinstance(row[i], (int, float))
                          and not instruments.GHZ_MIN <= row[i] * scale <= instruments.GHZ_MAX]
            found += [(table.title, x) for row in table.rows for cell in row if isinstance(cell, str)
                      for x in map(float, _GHZ.findall(cell)) if not instruments.GHZ_MIN <= x <= instruments.GHZ_MAX]
    return found


def test_the_check_for_impossible_clocks_finds_one():
    from analysis.core.report import Finding, Report, Section, Table
    section = Section("s", "s", findings=[Finding("c", "confirmed", "204–219 core cycles at 19.60 GHz")],
                      tables=[Table("t", ["core clock (MHz)"], [[24619.0], [3694.0]])])
    assert _impossible_clocks(Report(title="r", sections=[section])) == [("c", 19.6), ("t", 24619.0)]


def test_the_intel_recording_states_no_impossible_clock_and_says_why_its_cycle_findings_are_untestable(monkeypatch):
    report, clocks = _report(INTEL, monkeypatch)
    assert _impossible_clocks(report) == [] and clocks == [None, None]
    findings = {f.claim: f for s in report.sections for f in s.findings}
    in_cycles = [f for claim, f in findings.items() if "cycle" in claim.split("(")[0] or "loop iteration" in claim]
    assert len(in_cycles) == 4  # TSC = cycles (both sections), loop in cycles, calls in cycles
    for f in in_cycles:
        assert f.verdict == NOT_TESTABLE, f.claim
        assert re.match(r"instrument check failed: core clock (19|2\d)\.\d+ chain steps per ns \(one add-immediate chain, "
                        r"not cross-checked",
                        f.evidence), f.evidence
        assert "lies outside 0.1 GHz–7 GHz" in f.evidence
    l3 = next(f for claim, f in findings.items() if "(here L3, 480 MiB)" in claim)
    assert l3.verdict == NOT_TESTABLE and "cache size 480 MiB" in l3.evidence and "256 MiB" in l3.evidence
    microbench = next(s for s in report.sections if s.id == "os-microbench")
    assert any(w.startswith("core clock: instrument check failed") for w in microbench.warnings)
    # the verdicts in ns still stand: the clock is not needed for them
    assert findings[next(c for c in findings if "null system call" in c)].verdict == "confirmed"


def test_the_recorded_demo_of_this_kind_of_machine_keeps_its_cycle_findings_on_an_unverified_clock(monkeypatch):
    report, clocks = _report(AMD, monkeypatch)
    assert _impossible_clocks(report) == []
    assert len(clocks) == 2 and all(c and 3 < c < 4 for c in clocks)
    findings = {f.claim: f for s in report.sections for f in s.findings}
    assert NOT_TESTABLE not in {f.verdict for f in findings.values()}
    for claim, f in findings.items():
        if "cycle" in claim.split("(")[0] or "loop iteration" in claim:
            assert "not cross-checked" in f.evidence, claim


@pytest.mark.benchexec
@pytest.mark.parametrize("experiment", ["os-microbench", "scheduling-noise"])
def test_table_generator_pages_title_no_column_ghz_that_holds_a_rate_no_clock_has(experiment, tmp_path):
    """BenchExec's own pages (linked from every report) print the result files' values as they
    are: the Intel recording's one-chain probe read 19.6-20.1 steps per ns. A column titled GHz
    may only hold what a clock can be (0.1-7 GHz, the TSC's)."""
    files = sorted((INTEL / experiment).glob("*.results.*.xml.bz2"))
    page = pipeline._table_generator(REPO / "table-configs" / f"{experiment}.xml", files, tmp_path, experiment)
    rows = [line.split("\t") for line in page.with_name(f"{experiment}.table.csv").read_text().splitlines()]
    header = next(row for row in rows if "status" in row)
    for index, title in enumerate(header):
        if "GHz" not in title:
            continue
        for row in rows[rows.index(header) + 1:]:
            if index < len(row) and re.fullmatch(r"[\d.]+", row[index].strip()):
                assert 0.1 <= float(row[index]) <= 7, f"{title!r}: {row[index]}"
    assert any("per ns" in title for title in header)   # the probe's rates are there, titled as rates


def _digests(directory):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(Path(directory).rglob("*")) if p.is_file()}


@pytest.mark.benchexec
def test_a_report_over_a_recorded_machine_writes_its_pages_beside_itself_and_cites_no_impossible_clock(tmp_path):
    """`timekit report` over the Intel recording (os-microbench, scheduling-noise): its recorded
    table pages stay as they were (they title the one-chain probe's 19.6-20.1 steps per ns 'core
    GHz'; a report once rewrote them in place, into the recorded folder), the report's own pages
    are made under its folder and linked from it, and neither the report nor those pages cite a
    clock outside 0.1-7 GHz."""
    sweeps = [INTEL / "os-microbench", INTEL / "scheduling-noise"]
    before = _digests(INTEL)
    out = tmp_path / "report"
    paths = pipeline.tables_and_report(sweeps, out, out=io.StringIO())
    assert _digests(INTEL) == before
    pages = sorted((out / "tables").rglob("*.table.html"))
    assert {p.parent.name for p in pages} == {"os-microbench", "scheduling-noise"}
    html = paths["html"].read_text()
    assert all(os.path.relpath(p, out) in html for p in pages)
    texts = [html, *(p.with_suffix(".csv").read_text() for p in pages)]
    cited = [float(v) for text in texts for v in re.findall(r"([\d.]+) ?GHz", text)]
    assert cited and all(0.1 <= v <= 7 for v in cited), sorted(set(cited))
    # nor does report.json name one: the probe's 19.6-24.6 steps per ns stay, under that name
    clocks, renamed = [], []

    def walk(node):
        for key, value in (node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()):
            if isinstance(value, (int, float)) and key in instruments.CLOCK_FIGURES:
                clocks.append(value * instruments.CLOCK_FIGURES[key])
            renamed.extend([value] if str(key).endswith("-steps-per-ns") else [])
            walk(value)
    walk(json.loads(paths["json"].read_text())["data"])
    assert all(0.1 <= v <= 7 for v in clocks), sorted(set(clocks))
    assert renamed and all(19 < v < 25 for v in renamed), sorted(set(renamed))
