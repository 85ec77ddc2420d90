"""`timekit run --until-decided`: the repeated intervals keep their level over many looks, and the
loop replays the recorded discipline sweep's real invocations round by round."""

import math
import shutil
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.stats

from analysis import pipeline
from analysis.core import replication, verdicts
from analysis.core.report import Finding
from analysis.core.verdicts import Part
from analysis.experiments import EXPERIMENTS
from analysis.machine.disturbance import Record
from analysis.sweep.model import Step, Sweep
from analysis.tools.plan import run_looks, sequential, share_spending
from tests.test_cost import RECORDED

pytestmark = pytest.mark.unit


SLOWING = (0.3, 0.36, 0.43, 0.51, 0.6, 0.7, 0.82, 1.0)  # budget shares of looks at M = 3 .. 10, rounds getting slower


def _excluded_at(sequences, confidences):
    """Per sequence, whether its t interval over the first M values (at the look's confidence)
    excludes 1 at some look M = 3 .. 3 + len(confidences) - 1: the t intervals of
    replication.over_reruns, vectorised over the sequences."""
    excluded = np.zeros(len(sequences), dtype=bool)
    for m, confidence in enumerate(confidences, start=3):
        x = sequences[:, :m]
        half = scipy.stats.t.ppf((1 + confidence) / 2, m - 1) * x.std(axis=1, ddof=1) / np.sqrt(m) if confidence < 1 else np.inf
        excluded |= np.abs(x.mean(axis=1) - 1) > half
    return excluded


def _levels(shares, confidence=0.95):
    """The nominal confidence of each look, as the loop's look function gives it."""
    looks = [(m, share) for m, share in enumerate(shares, start=3)]
    return [run_looks.look_function(looks[:k + 1])(confidence, m)[0] for k, (m, _) in enumerate(looks)]


def test_looking_after_every_rerun_keeps_the_level_only_with_the_repeated_intervals():
    rng = np.random.default_rng(7)
    sequences = 1 + 0.02 * rng.standard_normal((4000, 10))
    naive = _excluded_at(sequences, [0.95] * 8).mean()
    levels = _levels(SLOWING)
    repeated = _excluded_at(sequences, levels).mean()
    assert naive > 0.09            # fixed 95 % intervals looked at 8 times: about 3 x alpha
    assert repeated <= 0.05 + 0.015
    # the last look, at the budget's end, tests at nearly alpha: little power is lost against the fixed design
    assert 0.95 < levels[-1] < 0.975
    # the vectorised intervals are over_reruns' under the look function
    token = replication.SEQUENTIAL_LOOK.set(run_looks.look_function([(m, s) for m, s in enumerate(SLOWING, start=3)]))
    try:
        est = replication.over_reruns(sequences[0], n=10, confidence=0.95)
    finally:
        replication.SEQUENTIAL_LOOK.reset(token)
    half = scipy.stats.t.ppf((1 + levels[-1]) / 2, 9) * sequences[0].std(ddof=1) / np.sqrt(10)
    assert est.high - est.value == pytest.approx(half) and run_looks.MARK in est.method


def test_the_final_look_spends_all_of_alpha_whatever_the_number_of_rounds():
    assert sequential.spent(1.0, 0.05) == pytest.approx(0.05)
    for looks in (((3, 0.4), (4, 1.0)), tuple(enumerate(SLOWING, start=3)),
                  ((3, 0.1), (4, 0.15), (5, 0.2), (7, 0.3), (9, 0.45), (12, 0.6), (15, 0.8), (20, 1.0))):
        assert share_spending.crossing_rate(0.05, looks) == pytest.approx(0.05, abs=1 / sequential.SIMULATIONS)
    # a loop that stops before the budget's end (every claim decided) leaves alpha unspent
    assert share_spending.crossing_rate(0.05, ((3, 0.2), (4, 0.3))) < 0.001
    assert share_spending.look_confidence(0.95, ((5, 1.0),)) == 0.95   # one look at the end: the fixed design


def test_what_would_decide_a_repeated_interval_is_sized_at_the_claims_own_level():
    values = [1.01, 1.03, 0.99, 1.02, 1.00]
    fixed = replication.over_reruns(values, n=10, confidence=0.90)
    token = replication.SEQUENTIAL_LOOK.set(run_looks.look_function([(5, 0.05)]))   # an early look spends nothing
    try:
        early = replication.over_reruns(values, n=10, confidence=0.90)
    finally:
        replication.SEQUENTIAL_LOOK.reset(token)
    assert early.low == -np.inf and early.high == np.inf
    sizes = verdicts.no_effect(early, 0.02).part.decide
    assert sizes["reruns"] > 5 and sizes == verdicts.no_effect(fixed, 0.02).part.decide
    assert verdicts.no_effect(early, 0.02).part.repeated and not verdicts.no_effect(fixed, 0.02).part.repeated


MEANT = Record(seconds=1.0, outside=0.0, steal=0.0, load=0.0, level=None)


def _replay(tmp_path, keep, budget):
    """The recorded discipline sweep cut to `keep` reruns; each added rerun 'runs' by revealing the
    recorded invocation of the same name (real BenchExec results, in the order they were measured).
    The replay judges the looks, not the machine: its steps say that work beside them was meant
    (analysis.machine.disturbance), so rerun 5, which met outside work, counts as in the fixed
    design before invocations were set aside (tests/test_disturbance.py judges that)."""
    source = RECORDED / "discipline"
    directory = tmp_path / "discipline"
    shutil.copytree(source, directory)
    recorded = {s.name: s for s in Sweep.load(source).steps}
    sweep = Sweep.load(directory)
    sweep.steps, sweep.reruns = [s for s in sweep.steps if s.rerun <= keep], keep
    for step in sweep.steps:
        step.disturbance = MEANT
    sweep.save(directory)

    def reveal(d):
        s = Sweep.load(d)
        for step in s.steps:
            if step.status != "done":
                r = recorded[step.name]
                step.status, step.result_files, step.seconds, step.disturbance = r.status, r.result_files, r.seconds, MEANT
        s.save(d)

    lines = []

    class Out:
        def write(self, text):
            lines.append(text)

        def flush(self):
            pass

    stop = run_looks.until_decided(EXPERIMENTS["discipline"], directory, budget, reveal,
                                   lambda d: pipeline.build_report([d]).sections[0].findings, out=Out())
    return directory, stop, "".join(lines)


def test_the_loop_adds_reruns_until_its_budget_and_records_every_look(tmp_path):
    directory, stop, text = _replay(tmp_path, keep=3, budget=110)   # 3 reruns took 57 s: room for 2 more
    record = Sweep.load(directory).sequential
    assert record["max_reruns"] == 5 and [look["reruns"] for look in record["looks"]] == [3, 4, 5]
    assert [look["final"] for look in record["looks"]] == [False, False, True] and record["looks"][-1]["share"] == 1.0
    assert 0.5 < record["looks"][0]["share"] < record["looks"][1]["share"] < 1
    assert stop.startswith("the budget does not fit another round") and "still undecided" in text and "of the budget left" in text
    assert record["judge_seconds"] > 0 and record["decided"]
    findings = pipeline.build_report([directory]).sections[0].findings
    same_core = next(f for f in findings if f.claim.startswith("Two CPU-bound tasks on the same core"))
    reruns_differ = next(f for f in findings if f.claim.startswith("Reruns of the same benchmark"))
    assert run_looks.MARK in same_core.evidence and "look M = 5 (the final look)" in same_core.evidence
    assert same_core.verdict == "refuted"         # decided at the last look, as the fixed design at M = 5
    assert "cost: 25 benchexec invocations" in same_core.cost
    # the F interval of 'reruns differ' is not sequential: judged once, no repeated interval
    assert run_looks.MARK not in reruns_differ.evidence
    # the preset's 3 reruns were judged at fixed levels before the first look: the report says what the budget added
    preset = record["preset"]
    assert preset["reruns"] == 3 and preset["judge_seconds"] > 0
    fixed = {f.id: f.verdict for f in pipeline.build_report([_first_reruns(directory, tmp_path / "first3", 3)]).sections[0].findings}
    assert preset["verdicts"] == fixed
    section = pipeline.build_report([directory]).sections[0]
    head = section.paragraphs[0]
    decided = sum(f.verdict in ("confirmed", "refuted") for f in findings)
    assert head.startswith("Decide, then stop (--until-decided, a budget of 2 min)") and "Stopped at M = 5" in head
    assert f"Decided {decided} of the {len(findings)} claims" in section.paragraphs[1]
    assert section.paragraphs[2].startswith("Against the preset's design on the same data: its M = 3 reruns")
    assert f"decided {decided} of {len(findings)} claims; the preset's M = 3 reruns alone" in text
    table = section.tables[0]
    assert table.title == "Decide, then stop: the looks" and [row[0] for row in table.rows] == [3, 4, 5]


def _first_reruns(directory, target, m):
    """A copy of a sweep holding its first `m` reruns only and no sequential record: what the preset's
    report would read."""
    shutil.copytree(directory, target)
    sweep = Sweep.load(target)
    sweep.steps = [s for s in sweep.steps if s.rerun <= m]
    sweep.reruns, sweep.sequential = m, {}
    sweep.save(target)
    return target


def test_no_round_is_added_when_the_budget_is_spent(tmp_path):
    directory, stop, _ = _replay(tmp_path, keep=3, budget=30)
    sweep = Sweep.load(directory)
    assert sweep.reruns == 3 and len(sweep.steps) == 15
    assert sweep.sequential["max_reruns"] == 3 and stop.startswith("the budget does not fit another round")
    assert sweep.sequential["looks"][0]["share"] == 1.0   # the only look is the final one: the fixed design's level


def test_the_report_keeps_a_decision_made_at_an_earlier_look(tmp_path):
    directory, _, _ = _replay(tmp_path, keep=3, budget=110)
    sweep = Sweep.load(directory)
    claim = next(c for c in (f.claim for f in pipeline.build_report([directory]).sections[0].findings)
                 if c.startswith("A CPU-bound task on a separate core"))
    sweep.sequential["decided"][claim] = {"verdict": "refuted", "reruns": 4, "evidence": "the look at M = 4's evidence."}
    sweep.save(directory)
    finding = next(f for f in pipeline.build_report([directory]).sections[0].findings if f.claim == claim)
    assert finding.verdict == "refuted"
    assert finding.evidence.startswith("Decided at look M = 4 and kept") and "the look at M = 4's evidence." in finding.evidence
    assert "would read inconclusive" in finding.evidence and "to decide it" not in finding.cost
    # it cost what ran up to its look: 4 reruns of the 5 conditions, not the 5th round run for others
    assert finding.cost.startswith("cost: 20 benchexec invocations") and "(up to look M = 4; the sweep: 25 benchexec" in finding.cost


# The loop with fakes: one step per rerun, each invocation 10 s, a look costs 2 s on an injected clock.

class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Quiet:
    def write(self, text):
        pass

    def flush(self):
        pass


FAKE = SimpleNamespace(name="fake", plan=lambda preset: [Step(load=0, rerun=r, name=f"rerun{r}") for r in range(1, preset.reruns + 1)])


def _fake_sweep(directory, reruns):
    steps = [Step(load=0, rerun=r, name=f"rerun{r}", status="done", seconds=10.0) for r in range(1, reruns + 1)]
    Sweep(experiment="fake", preset="quick", reps=1, loads=[0], reruns=reruns, tasksets=[], container=True,
          created="", steps=steps).save(directory)
    return directory


def _run_pending(directory):
    sweep = Sweep.load(directory)
    for step in sweep.steps:
        if step.status != "done":
            step.status, step.seconds = "done", 10.0
    sweep.save(directory)


def _evidence(verdict, needed=None):
    """Evidence as a claim on a repeated interval writes it (replication.over_reruns, verdicts._needed)."""
    tail = f"; about M = {needed} reruns would decide it." if needed else ": the CI excludes 1 on the claimed side."
    return f"claim: > 1; 1.01, CI [0.99, 1.03] (t interval (95 %; {run_looks.MARK} at look M = 5 ...) over x){tail}"


def _finding(claim, verdict, needed=None, *, never="", cause="bound", refuting=False, level=0.95, m=5):
    """A finding of one part judged on a repeated interval at look M = m, as replication.over_reruns and
    verdicts._needed make it: what would decide it `needed` reruns, or never (why, cause)."""
    decide = None
    if verdict == "inconclusive":
        decide = {"never": never, "cause": cause} if never else {"reruns": needed, **({"refuting": True} if refuting else {})}
    part = Part(verdict, 1.01, 0.99, 1.03, level, "ratio", "reruns", m, 10, "why", decide, repeated=True, claim_level=level)
    return Finding(claim, verdict, _evidence(verdict, needed), id=claim, parts=[part])


def _judge(clock, script, seen):
    """findings(M) from `script`: claim -> M -> (verdict, needed M); each look costs 2 s on `clock`."""
    def judge(directory):
        clock.now += 2.0
        m = Sweep.load(directory).reruns
        seen.append(m)
        return [_finding(claim, *by_m(m)) for claim, by_m in script.items()]
    return judge


def test_a_claim_decided_at_a_look_stays_decided_while_rounds_run_for_others(tmp_path):
    clock, seen = Clock(), []
    script = {"A": lambda m: ("confirmed", None) if m == 4 else ("inconclusive", 8),   # reads inconclusive again later
              "B": lambda m: ("confirmed", None) if m >= 6 else ("inconclusive", 8)}
    directory = _fake_sweep(tmp_path, 3)
    stop = run_looks.until_decided(FAKE, directory, 500, _run_pending, _judge(clock, script, seen), out=Quiet(), clock=clock)
    # the first judgement at M = 3 is the preset's, at fixed levels; the looks follow
    assert seen == [3, 3, 4, 5, 6] and stop == "every claim judged on a repeated interval is decided"
    record = Sweep.load(directory).sequential
    assert record["decided"]["A"]["reruns"] == 4 and record["decided"]["B"]["reruns"] == 6
    assert [look["decided"] for look in record["looks"]] == [[], ["A"], [], ["B"]]
    final = {f.claim: f for f in run_looks.settled(_judge(clock, script, [])(directory), record)}
    assert final["A"].verdict == "confirmed" and final["A"].evidence.startswith("Decided at look M = 4 and kept")
    assert final["B"].verdict == "confirmed" and not final["B"].evidence.startswith("Decided")   # decided at this look


def test_the_looks_time_counts_against_the_budget(tmp_path):
    clock, seen = Clock(), []
    script = {"A": lambda m: ("inconclusive", 8)}
    directory = _fake_sweep(tmp_path, 3)
    # 60 s: 30 s spent, rounds of 10 s; counting the invocations alone would fit 3 more rounds, with 2 s a look 2
    stop = run_looks.until_decided(FAKE, directory, 60, _run_pending, _judge(clock, script, seen), out=Quiet(), clock=clock)
    record = Sweep.load(directory).sequential
    assert seen == [3, 3, 4, 5] and stop.startswith("the budget does not fit another round")  # the preset's, then looks
    assert record["judge_seconds"] == 8.0 and [look["seconds"] for look in record["looks"]] == [34.0, 46.0, 58.0]
    assert [look["share"] for look in record["looks"]] == [0.5333, 0.7333, 1.0] and record["looks"][-1]["final"]


def test_a_claim_the_budget_cannot_decide_is_given_up_and_the_loop_stops(tmp_path):
    clock, seen = Clock(), []
    script = {"far": lambda m: ("inconclusive", 2000),    # on its bound as good as: not within 150 s
              "near": lambda m: ("confirmed", None) if m >= 6 else ("inconclusive", 8)}
    directory = _fake_sweep(tmp_path, 5)
    stop = run_looks.until_decided(FAKE, directory, 150, _run_pending, _judge(clock, script, seen), out=Quiet(), clock=clock)
    record = Sweep.load(directory).sequential
    assert seen == [5, 5, 6] and stop == "no undecided claim can be decided within the budget"
    given = record["given_up"]["far"]
    assert given["reruns"] == 5 and given["allowed"] == 13 and given["needed"] > 13
    assert "near" not in record["given_up"]
    final = {f.claim: f for f in run_looks.settled(_judge(clock, script, [])(directory), record)}
    assert final["far"].verdict == "inconclusive"
    assert f"Not pursued from look M = 5: needs about M = {given['needed']}" in final["far"].evidence
    assert "the budget allows 13" in final["far"].evidence


def test_the_forecast_reads_what_the_verdict_policy_writes_when_no_m_decides():
    """A part on a grid as wide as the margin is never decided (given up at once); a part whose
    estimate sits on the bound might be, one SE nearer: a finite forecast beyond today's M."""
    from analysis.core.verdicts import Estimate, no_effect
    from analysis.tools.plan import pursuit

    on_grid = no_effect(Estimate(1.0, 0.99, 1.01, unit="reruns", n=10, m=5, scale="ratio", grid=0.05), 0.02)
    assert on_grid.part.decide["cause"] == "grid" and "no number of reruns decides it" in on_grid.evidence
    assert math.isinf(pursuit.needed_reruns(Finding("g", "inconclusive", "", parts=[on_grid.part]), 5, 20))
    on_bound = _finding("b", "inconclusive", never="the estimate sits on the bound")
    needed = pursuit.needed_reruns(on_bound, 5, 20)
    assert math.isfinite(needed) and needed > 5
    # within half a grid step of the bound is where the estimate stands now, not the grid's width
    near_grid = _finding("n", "inconclusive", never="on this grid, half a step (0.005) is as wide as the distance "
                                                   "from the estimate to the bound (0.004)")
    assert pursuit.needed_reruns(near_grid, 5, 20) == needed


def test_the_forecast_takes_the_spread_at_its_lower_confidence_bound():
    """At M = 5 the SD of five reruns is known to a factor of about 1.4 either way (chi-square on 4
    df), and one disturbed invocation inflates it further: a claim whose evidence asks for M = 400
    at M = 5 is still pursued where 13 reruns are allowed (its SD at the 90 % lower bound, 0.72 of
    today's, and its estimate one such SE nearer: 12), where today's SD gave it up (14); at M = 2000
    it is given up either way."""
    from analysis.tools.plan import pursuit

    assert pursuit.needed_reruns(_finding("A", "inconclusive", 400), 5, 13) == 12
    record = {}
    assert pursuit.give_up(record, [_finding("A", "inconclusive", 400)], 5, 13) == []
    assert pursuit.give_up(record, [_finding("far", "inconclusive", 2000)], 5, 13) == ["far"]
    assert pursuit.optimistic_spread(5) == pytest.approx(0.717, abs=0.001)
    assert pursuit.optimistic_spread(30) > pursuit.optimistic_spread(5)


def test_a_refuting_part_keeps_a_claim_pursued_whatever_its_other_parts_need():
    """One part beyond the margin heading for refutation decides a claim of parts, even when another
    part sits on the bound ('no number of reruns decides it'): the forecast follows the refuting part."""
    from analysis.tools.plan import pursuit

    never = _finding("c", "inconclusive", never="the estimate sits on the bound", level=0.988, m=10)
    refuting = _finding("c", "inconclusive", 14, refuting=True, level=0.988, m=10)
    both = Finding("c", "inconclusive", "", id="c", parts=never.parts + refuting.parts)
    alone = pursuit.needed_reruns(never, 10, 20)
    assert alone > 20 and pursuit.needed_reruns(both, 10, 20) <= 14
