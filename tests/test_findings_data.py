"""A finding is data: every finding of the two recorded machines' reports carries an id that lines
up across machines, a summary a person can take in, its parts and what would decide it; nothing in
the package reads a finding's text back; the sizes named follow the interval's own distribution."""

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from analysis import pipeline
from analysis.core import verdicts
from analysis.core.report import Finding, Section, report_json
from analysis.core.report.summary import MAX_WORDS
from analysis.core.verdicts import Estimate
from analysis.experiments import EXPERIMENTS
from analysis.experiments.discipline.variation import rerun_effect
from analysis.experiments.os_microbench import estimates
from analysis.machine.scheduling import nice_can_act
from tests.helpers import figures_not_drawn

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
MACHINES = {"recorded demo (AMD EPYC VM)": REPO / "tests" / "data" / "recorded-demo",
            "Intel VM": REPO / "tests" / "data" / "machines" / "intel-vm-2026-11-25"}
EXPERIMENT_NAMES = tuple(EXPERIMENTS)


@pytest.fixture(scope="module")
def reports():
    """report.json of each recorded machine's six sweeps, as the report writes it."""
    out = {}
    with figures_not_drawn():
        for name, machine in MACHINES.items():
            sweeps = [(machine / e).relative_to(REPO) for e in EXPERIMENT_NAMES if (machine / e).is_dir()]
            out[name] = report_json(pipeline.build_report(sweeps))
    return out


def test_every_finding_carries_its_fields_and_a_short_summary(reports):
    for name, report in reports.items():
        findings = report["findings"]
        assert len(findings) >= 40, name
        ids = [f["id"] for f in findings]
        assert len(set(ids)) == len(ids) and all(ids), (name, ids)
        for f in findings:
            assert set(f) >= {"id", "claim", "verdict", "summary", "parts", "decide"}, f["claim"]
            assert 0 < len(f["summary"].split()) <= MAX_WORDS, (f["id"], f["summary"])
            if f["verdict"] == "inconclusive":
                assert f["decide"] and set(f["decide"]) & {"reruns", "runs", "cases", "grid", "never"}, f["id"]
            else:
                assert f["decide"] is None, f["id"]
            for part in f["parts"]:
                assert set(part) >= {"verdict", "estimate", "low", "high", "level", "unit", "m", "n"}, f["id"]
            if f["verdict"] in ("confirmed", "refuted") and f["parts"]:
                # a decided claim of parts shows why: every part confirmed, or one refuted
                kinds = {p["verdict"] for p in f["parts"]}
                assert kinds == {"confirmed"} if f["verdict"] == "confirmed" else "refuted" in kinds, f["id"]


def test_claims_line_up_across_machines_by_id(reports):
    """No machine's number in an id: the cache claims ('here L1, 32 KiB' on one machine, '48 KiB'
    on the other) are one id each, and both machines' reports have the same ids."""
    ids = {name: {f["id"] for f in report["findings"]} for name, report in reports.items()}
    first, second = ids.values()
    assert first == second
    plateaus = sorted(i for i in first if "latency-plateau" in i)
    assert plateaus == ["os-microbench/latency-plateau-L1", "os-microbench/latency-plateau-L2",
                        "os-microbench/latency-plateau-L3"]
    claims = {name: {f["id"]: f["claim"] for f in report["findings"]} for name, report in reports.items()}
    a, b = claims.values()
    assert any(a[i] != b[i] for i in plateaus)  # the texts name each machine's own sizes; the ids do not


def test_the_report_opens_with_an_answer_drawn_from_the_findings(reports):
    for name, report in reports.items():
        lines = report["answer"]
        topics = [line["topic"] for line in lines]
        assert topics[0] == "tally" and "gate" in topics and "comparisons" in topics, (name, topics)
        ids = {f["id"] for f in report["findings"]}
        assert all(set(line["findings"]) <= ids for line in lines)
        gate = next(line for line in lines if line["topic"] == "gate")
        assert gate["text"].startswith("Gate on CPU time") and gate["findings"]
        tally = lines[0]["text"]
        assert tally.startswith(f"{len(report['findings'])} findings")


def test_no_module_reads_a_findings_text_back():
    """The fields travel; no regular expression or substring test runs over evidence, cost, summary
    or claim text anywhere in the package (but the page's re.sub that makes an HTML id of a claim
    without an id: it writes, it reads nothing back)."""
    offenders = []
    for path in (REPO / "analysis").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    isinstance(node.func.value, ast.Name) and node.func.value.id == "re":
                texts = ("evidence", "cost", "summary") + (() if node.func.attr == "sub" and path.name == "page.py" else ("claim",))
                if any(isinstance(a, ast.Attribute) and a.attr in texts
                       for arg in node.args for a in ast.walk(arg)):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
                if any(isinstance(c, ast.Attribute) and c.attr in ("evidence", "cost", "claim") for c in node.comparators):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert offenders == []


def test_a_claims_parts_travel_as_fields_and_its_text_is_rendered_from_them():
    """The claim's text is what reports showed before (sweep records and fleets key by it); a table
    cell takes the claim without its source, the opening answer the statement, from the fields,
    never cut out of the text."""
    from analysis.core.report import Claim, Report, answer
    from analysis.tools.plan import run_summary

    cases = {Claim("the choice of timing API does not change the measured CPU time", "thesis, ch. 3.3", "input 43434343"):
             "input 43434343: the choice of timing API does not change the measured CPU time (thesis, ch. 3.3)",
             Claim("a null system call (getppid) costs about 42 ns (107 cycles)", label="seed report"):
             "seed report: a null system call (getppid) costs about 42 ns (107 cycles)",
             Claim("Disabling SMT removes contention between sibling threads", sentence=True):
             "Disabling SMT removes contention between sibling threads.",
             Claim("A CPU-bound task on a separate core leaves the measured task alone", "talk: CV 0.04 %, as without it",
                   sentence=True):
             "A CPU-bound task on a separate core leaves the measured task alone (talk: CV 0.04 %, as without it)."}
    findings = [Finding(c, "not testable here", "why", id=f"x/{k}") for k, c in enumerate(cases)]
    assert [f.claim for f in findings] == list(cases.values())
    assert [f.statement for f in findings] == [c.statement for c in cases]
    assert [f.short for f in findings][:2] == ["input 43434343: the choice of timing API does not change the measured CPU time",
                                               "seed report: a null system call (getppid) costs about 42 ns (107 cycles)"]
    plain = Finding("plain text (source)", "confirmed", "e")
    assert plain.statement == plain.short == "plain text (source)"  # given as text: whole
    kept = [f.claim for f in findings]
    import dataclasses
    assert [dataclasses.replace(f, verdict="refuted").claim for f in findings] == kept     # replace keeps the text
    line = next(x for x in answer.lines(Report("r", sections=[Section("x", "x", findings=findings)]))
                if x["topic"] == "not testable")
    assert line["text"] == ("Not testable on this machine (4): the choice of timing API does not change the measured CPU "
                            "time; a null system call (getppid) costs about 42 ns (107 cycles); Disabling SMT removes "
                            "contention between sibling threads; A CPU-bound task on a separate core leaves the measured "
                            "task alone.")
    # sweep.json records claims as text (and earlier records only that): shown from their findings
    record = {"looks": [{"reruns": 3, "share": 1.0, "decided": [kept[0]], "given_up": [kept[3], "gone (paper)"]}]}
    [row] = run_summary.looks_table(record, findings).rows
    assert row[4:] == [findings[0].short, "A CPU-bound task on a separate core leaves the measured task alone; gone (paper)"]


def test_theta_is_sized_by_the_f_distribution():
    """'Reruns differ' judges theta = 1 + n var(between) / var(within) on an F interval; what would
    decide it follows the same F quantiles (the t quantile of a t interval named M = 663 where the F
    distribution says 15): at the M named, the F interval around today's theta excludes 1, one
    fewer does not."""
    rng = np.random.default_rng(3)
    reruns = np.repeat(np.arange(1, 6), 10)
    values = 1.0 + rng.normal(0, 0.02, 50) + np.repeat(rng.normal(0, 0.006, 5), 10)
    est = rerun_effect(values, reruns)
    v = verdicts.direction(est)
    assert v.verdict == "inconclusive" and est.interval == "F"
    m = v.part.decide["reruns"]
    tail = (1 - est.level) / 2

    def low(reruns_count):
        return est.value / scipy.stats.f.ppf(1 - tail, reruns_count - 1, reruns_count * (est.n - 1))

    assert est.value > 1 and low(m) > 1 >= low(m - 1)
    assert f"about M = {m} reruns would decide it" in v.evidence


def test_the_printing_grid_keeps_a_zero_width_interval_from_deciding():
    """Identical medians of every invocation (printed to 0.0001 ns) gave the loop 'about 2 cycles'
    an interval [1, 1] that touched the band's edge and confirmed it; half a printing step on each
    side makes it straddle the edge: inconclusive, and no number of reruns moves it."""
    variant = {"median": 0.2712, "p10": 0.2712, "p90": 0.2712, "n": 51, "run_medians": [0.2712] * 3,
               "invocations": ["a", "b", "c"]}
    assert estimates.printing_step(variant) == pytest.approx(1e-4)
    cycles = estimates.ratio(variant, variant, what="loop / add")
    assert cycles.low < 1 < cycles.high
    v = verdicts.about(cycles, 2.0)
    assert v.verdict == "inconclusive" and "never" in v.part.decide


def test_timer_steps_rest_on_values_of_several_invocations():
    from tests.test_verdict_cases import recorded

    invocations = len(json.loads((MACHINES["recorded demo (AMD EPYC VM)"] / "time-apis" / "sweep.json").read_text())["steps"])
    steps = [f for f in recorded("time-apis").findings if f.id.endswith("-steps")]
    assert steps and invocations == 3   # loads 0, 1, 2 of one rerun, 30 runs each (10 per timing API)
    for f in steps:
        [part] = f.parts
        assert part.replication == "cases" and part.m == invocations and part.n == 180, part  # user + real of 90 runs
        assert f"of 90 runs from {invocations} invocation(s)" in f.evidence and "runs of one invocation" not in f.evidence


def test_the_nice_evidence_says_which_scheduling_group_was_read():
    competitor = {"cpu_cgroup": "/", "cgroups": "v1", "autogroup": "/autogroup-12"}
    can, why = nice_can_act({"competitor": competitor, "run": None, "sched_autogroup_enabled": "1"})
    assert can is None and why.startswith("a run's scheduling group could not be read")
    assert "the competitor's: cpu cgroup / (v1), /autogroup-12" in why


def test_the_contradiction_check_reads_every_section():
    """Two findings in different sections that judge one quantity and cannot both hold."""
    far = verdicts.at_least(Estimate(20, 15, 25, unit="reruns", n=10, m=5), 10)
    equal = verdicts.no_effect(Estimate(1.0, 0.9, 1.1, unit="reruns", n=10, m=5), 0.5)
    a = Section("a", "A", findings=[Finding("far more", far.verdict, far.evidence, id="a/x",
                                            parts=[far.as_part(quantity="CV ratio")])])
    b = Section("b", "B", findings=[Finding("alone", equal.verdict, equal.evidence, id="b/y",
                                            parts=[equal.as_part(quantity="CV ratio")])])
    pipeline._check_contradictions([a, b])
    assert a.warnings == [] and len(b.warnings) == 1 and "'far more' is confirmed" in b.warnings[0]


def test_every_preset_has_at_least_three_reruns():
    for name, experiment in EXPERIMENTS.items():
        for preset_name, preset in experiment.presets.items():
            assert preset.reruns >= 3, (name, preset_name, preset.reruns)


def test_the_cores_a_correlation_needs_follow_fishers_z():
    from analysis.experiments.core_heterogeneity.claims import _cores_to_decide

    k = _cores_to_decide(0.5)["cases"]
    # at k cores r = 0.5 is significant at 5 %, at k - 1 not
    z = math.atanh(0.5)
    assert z * math.sqrt(k - 3) > 1.96 >= z * math.sqrt(k - 4)


def test_summary_json_roundtrips(reports):
    for report in reports.values():
        json.dumps(report, allow_nan=False)


def test_the_page_opens_with_the_answer_shows_parts_and_folds_the_evidence():
    from analysis.core.report import Report, render_html

    longer = verdicts.direction(Estimate(2.0, 1.9, 2.1, unit="reruns", n=10, m=5))
    far = verdicts.at_least(Estimate(3.0, 2.0, 4.0, unit="reruns", n=10, m=5), 10)
    finding = Finding("Two tasks on one core take longer and vary far more", verdicts.all_of([longer, far]),
                      "the long evidence paragraph", id="discipline/same-core-noisier",
                      parts=[longer.as_part("takes longer"), far.as_part("varies far more")])
    page = render_html(Report("r", sections=[Section("discipline", "D", findings=[finding])]))
    assert page.index('id="tk-answer"') < page.index('id="tk-environment"')
    assert '<ul class="parts">' in page and "takes longer" in page and page.count("v-refuted") >= 2
    assert "<details><summary>evidence</summary><p>the long evidence paragraph</p>" in page
    assert 'id="f-discipline-same-core-noisier"' in page and 'href="#f-discipline-same-core-noisier"' in page
