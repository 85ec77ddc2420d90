"""The words of a report say what its fields say, on the recorded demo: "agree"
only within the 2 % margin, the direction words of an "at most" claim, every open finding linked,
an interval's ends to the same digits, and the TSC line that another sweep recorded."""

import json
import re
import shutil
from pathlib import Path

import lxml.html
import pytest

from analysis import pipeline
from analysis.core import verdicts
from analysis.core.report import answer, render_html, summary
from analysis.core.verdicts import Estimate
from analysis.experiments import EXPERIMENTS
from tests.helpers import figures_not_drawn

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "recorded-demo"


@pytest.fixture(scope="module")
def report():
    """The recorded demo's report, its figures not drawn."""
    with figures_not_drawn():
        return pipeline.build_report([(RECORDED / e).relative_to(REPO) for e in EXPERIMENTS if (RECORDED / e).is_dir()])


def _finding(report, suffix):
    return next(f for s in report.sections for f in s.findings if f.id.endswith(suffix))


def test_clock_and_cgroup_agree_only_within_the_two_percent_margin(report):
    """Recorded: clock() / cgroup 0.9591 (90 % CI 0.9576-0.9606) confirms 'within 5 %', but lies
    wholly outside the 2 % that every no-effect claim uses: the gate line must not say 'agree'."""
    clock = _finding(report, "/clock-close-to-cgroup")
    assert clock.verdict == "confirmed" and clock.parts[0].high < 0.98
    gate = next(line for line in answer.lines(report) if line["topic"] == "gate")["text"]
    assert "agree" not in gate
    assert ("clock() and the cgroup differ by more than 2 %, 0.9591 (90 % CI 0.9576–0.9606, n = 90 runs) "
            "(clock() / cgroup), within the claim's 5 %") in gate
    inside = verdicts.no_effect(Estimate(1.001, 0.995, 1.008, unit="runs", n=90, level=0.9), 0.05).as_part()
    straddling = verdicts.no_effect(Estimate(0.9793, 0.9772, 0.9814, unit="reruns", n=10, m=3, level=0.9), 0.05).as_part()
    assert "agree within 2 %" in answer._clock_agreement(inside)
    assert answer._clock_agreement(straddling).endswith("; within 2 % is not shown")


def test_an_at_most_claim_says_below_when_it_holds_and_above_when_it_fails(report):
    """Recorded: one use of CPUID costs 7.118 µs against 'under 1 µs': refuted, the CI lies above
    1 µs (it said 'short of'). nice 19 as measured on 2026-11-25, 0.527 (CI 0.337-0.825) against
    'at most 0.9': confirmed, the CI lies below (it said 'beyond')."""
    cpuid = _finding(report, "os-microbench/cpuid-is-cheap")
    assert cpuid.verdict == "refuted" and cpuid.parts[0].estimate > 1
    assert summary.summary(cpuid).endswith("the whole CI is above the claimed bound 1 µs.")
    assert "short of" not in cpuid.evidence
    nice = verdicts.at_least(Estimate(0.527, 0.337, 0.825, unit="reruns", n=10, m=5, level=0.95), 0.9, larger=False)
    assert nice.verdict == "confirmed" and nice.part.why == "the whole CI is at or below the claimed bound 0.9"
    more = verdicts.at_least(Estimate(1.2, 1.15, 1.25, unit="reruns", n=10, m=5), 1.1)
    assert more.part.why == "the whole CI is beyond the claimed bound 1.1"  # an "at least" keeps its words


def test_the_still_open_line_links_every_inconclusive_finding(report):
    """Recorded: 14 inconclusive findings (13 before discipline's disturbed rerun was set aside);
    the page linked the first 8."""
    line = next(line for line in answer.lines(report) if line["topic"] == "open")
    assert len(line["findings"]) == 14
    page = lxml.html.fromstring(render_html(report))
    item = next(li for li in page.xpath('//section[@id="tk-answer"]//li') if li.text_content().startswith("Still open"))
    assert len(item.xpath(".//a")) == 14


def _digits(text):
    """Significant digits of a number as printed ('0.9950' -> 4, '7' -> 1)."""
    mantissa = text.split()[0].split("e")[0].lstrip("-")
    return len(mantissa.replace(".", "").lstrip("0"))


def test_an_intervals_ends_keep_the_same_significant_digits(report):
    """Both ends of every interval on the recorded demo's page and in its evidence show as many
    significant digits, trailing zeros kept where one end has fewer: 'CI 1.000–1.241', not '1–1.241'
    nor '0.2691–7'."""
    ends = 0
    for f in (f for s in report.sections for f in s.findings):
        for part in f.parts:
            low, high, _ = summary._distinct(part)
            if part.unit == "pct" or not all(x[0].isdigit() for x in (low, high)) or 0 in (_digits(low), _digits(high)):
                continue  # a percentage's decimals are fixed; an end at 0 or ∞ has no digits to match
            assert _digits(low) == _digits(high), (f.id, low, high)
            ends += 1
    assert ends >= 30
    assert verdicts.format_interval(0.26911, 7.0, "ratio") == ["0.2691", "7.000"]
    assert verdicts.format_interval(32, 48, "KiB") == ["32 KiB", "48 KiB"]  # the same digits already
    assert summary.interval(verdicts.Part("inconclusive", 1.37, 0.26911, 7.0, 0.95, "ratio")) == "1.37 (95 % CI 0.2691–7.000, n = 0 runs)"
    interrupt = _finding(report, "scheduling-noise/interrupt-cost")
    assert "10.75 µs, CI [1.600 µs, 72.17 µs]" in interrupt.evidence  # printed '1.6 µs' before


def test_the_tsc_line_another_sweep_recorded_is_used(tmp_path):
    """The scheduling-noise sweep recorded no kernel log, the time-apis sweep of the same boot did
    ('tsc: Detected 2596.144 MHz processor'): the TSC is compared with that line, and the section
    does not say that the kernel log is unreadable."""
    shutil.copytree(RECORDED / "scheduling-noise", tmp_path / "scheduling-noise")
    sweep = tmp_path / "scheduling-noise" / "sweep.json"
    manifest = json.loads(sweep.read_text())
    manifest["machine"]["kernel_log"] = None
    sweep.write_text(json.dumps(manifest))
    time_apis = json.loads((RECORDED / "time-apis" / "sweep.json").read_text())["machine"]
    assert "tsc: Detected 2596.144 MHz" in time_apis["kernel_log"]
    assert (time_apis["hostname"], time_apis["boot_time"]) == (manifest["machine"]["hostname"], manifest["machine"]["boot_time"])
    with figures_not_drawn():
        alone = pipeline.build_report([tmp_path / "scheduling-noise"])
        both = pipeline.build_report([RECORDED / "time-apis", tmp_path / "scheduling-noise"])
    for built, kernel in ((alone, False), (both, True)):
        section = next(s for s in built.sections if s.id == "scheduling-noise")
        tsc = _finding(built, "scheduling-noise/tsc-frequency-is-the-kernels")
        assert any("kernel log" in w for w in section.warnings) is not kernel
        assert ("kernel log, detected (recorded by the time-apis sweep)" in tsc.evidence) is kernel
    assert not any(re.search("unreadable", w) for s in both.sections for w in s.warnings)
