"""The one verdict policy (analysis.core.verdicts), on the cases that made it necessary."""

import math

import pytest
import scipy.stats

from analysis.core.deciding import smallest_size
from analysis.core.verdicts import Estimate, about, at_least, contradictions, decide_of, direction, no_effect

pytestmark = pytest.mark.unit


def test_a_ten_percent_gap_is_inconclusive_on_a_round_level_interval_that_contains_it():
    """Core heterogeneity: per-round ratios 0.984, 1.148, 0.986; round-level CI [0.81, 1.27]."""
    rounds = Estimate(1.037, 0.81, 1.27, unit="reruns", n=10, m=3)
    v = at_least(rounds, 1.10)
    assert v.verdict == "inconclusive" and "M = 3 of n = 10" in v.evidence and "reruns would decide" in v.evidence
    # the same data treated as 30 independent runs would have refuted it: the policy forbids that unit
    assert at_least(Estimate(1.037, 0.99, 1.08, unit="runs", n=30), 1.10).verdict == "refuted"


def test_no_effect_needs_equivalence_not_just_no_significance():
    """Time-APIs 'load does not increase CPU time': CI [0.991, 1.163] is not inside ±2 %."""
    assert no_effect(Estimate(1.07, 0.991, 1.163, unit="reruns", n=30, m=2), 0.02).verdict == "inconclusive"
    assert no_effect(Estimate(1.001, 0.995, 1.012, unit="reruns", n=30, m=5), 0.02).verdict == "confirmed"
    assert no_effect(Estimate(1.2, 1.1, 1.3, unit="reruns", n=30, m=5), 0.02).verdict == "refuted"


def test_a_claimed_benefit_is_refuted_when_the_interval_excludes_any_benefit_of_that_size():
    """'nice 19 helps' (would undo much of a 2.44x slowdown): niced/plain CI [0.988, 1.030]."""
    v = at_least(Estimate(1.009, 0.988, 1.030, unit="reruns", n=10, m=5), 0.9, larger=False)
    assert v.verdict == "refuted" and v.implies == (0.9, math.inf)


def test_a_measurement_on_a_grid_is_judged_with_the_grid():
    """CPUID;RDTSC 'about 8 ns' on a 10 ns grid: a median of 20 ns cannot be told from 15 ns."""
    v = about(Estimate(20, 20, 20, unit="runs", n=1000, grid=10, scale="ns"), 8)
    assert v.verdict == "inconclusive" and "grid" in v.evidence
    assert about(Estimate(20, 20, 20, unit="runs", n=1000, grid=1, scale="ns"), 8).verdict == "refuted"
    # 'loop about 2 cycles' at 0.96: outside a factor 2, as every other 'about' in the report
    assert about(Estimate(0.96, 0.95, 0.97, n=1000), 2).verdict == "refuted"


def test_direction_and_its_opposite():
    assert direction(Estimate(1.5, 1.2, 1.8, unit="reruns", n=10, m=5)).verdict == "confirmed"
    assert direction(Estimate(0.7, 0.6, 0.8, unit="reruns", n=10, m=5)).verdict == "refuted"
    assert direction(Estimate(1.05, 0.95, 1.15, unit="reruns", n=10, m=5)).verdict == "inconclusive"


def test_an_estimate_on_the_margin_says_no_repetition_decides_it():
    v = at_least(Estimate(1.10, 1.0, 1.2, unit="reruns", n=10, m=5), 1.10)
    assert v.verdict == "inconclusive" and "no number of reruns decides it: the estimate sits on the bound" in v.evidence
    assert v.part.decide == {"never": "the estimate sits on the bound", "cause": "bound"}
    assert "M = " not in v.evidence.split("runs:")[-1]


def test_the_m_named_is_the_smallest_whose_t_interval_decides():
    """Hand-computed: M = 3 reruns, 95 % t interval [0.99, 1.03] around 1.01, so s = 0.02 sqrt(3) /
    t(2, .975) = 0.02 * 1.7321 / 4.3027 = 0.008051; equivalence within ±0.02 needs a half-width of at
    most 0.01 (the distance to 1.02), i.e. t(M-1, .975) / sqrt(M) <= 0.01 / 0.008051 = 1.2421:
    M = 4 gives 3.1824 / 2 = 1.5912 (no), M = 5 gives 2.7764 / 2.2361 = 1.2417 (yes). The normal
    approximation would say M = 3 (1.96 / 1.2421 squared = 2.49), which does not decide; the old
    1/sqrt(M) scaling of today's interval said 12."""
    v = no_effect(Estimate(1.01, 0.99, 1.03, unit="reruns", n=10, m=3, level=0.95), 0.02)
    assert v.verdict == "inconclusive" and v.part.decide == {"reruns": 5}
    assert smallest_size(0.02, 3, 0.95, 0.01, 10_000) == 5
    # the M named decides: at M = 5 the same s gives a half-width within the distance, at M = 4 not
    s = 0.02 * math.sqrt(3) / scipy.stats.t.ppf(0.975, 2)
    assert scipy.stats.t.ppf(0.975, 4) * s / math.sqrt(5) <= 0.01 < scipy.stats.t.ppf(0.975, 3) * s / 2
    # a level not recorded is taken as 90 %, which names a larger M, never a smaller one
    assert smallest_size(0.02, 3, 0.0, 0.01, 10_000) == 6 > 5


def test_on_a_grid_the_size_leaves_room_for_half_a_step_or_none_is_named():
    # half a 0.004 step takes 0.002 of the 0.01 distance: the t interval must fit in 0.008
    v = no_effect(Estimate(1.01, 0.99, 1.03, unit="reruns", n=10, m=3, level=0.95, grid=0.004), 0.02)
    assert v.part.decide == {"reruns": smallest_size(0.02, 3, 0.95, 0.008, 10_000)} == {"reruns": 7}
    # bash 0->1 of the recorded demo: 0.9787 against the margin's 0.98, half a step 0.0114
    v = no_effect(Estimate(0.9787, 0.9545, 0.9926, unit="reruns", n=10, m=3, grid=0.02281), 0.02)
    assert v.verdict == "inconclusive" and "never" in v.part.decide
    assert "no number of reruns decides it: on this 0.02281 grid, half a step (0.01141) is at least the distance" in v.evidence
    # a grid at least twice the margin: no M either
    v = no_effect(Estimate(1.0, 0.9, 1.1, unit="runs", n=30, grid=0.1134), 0.02)
    assert v.part.decide["cause"] == "grid" and "no number of reruns decides it" in v.evidence


def test_contradictory_verdicts_on_one_quantity_are_found():
    spread = "CV same core / CV separate cores"
    far_more = at_least(Estimate(3.0, 2.5, 3.5, unit="reruns", n=10, m=5), 2.0)  # confirmed: >= 2
    equal = no_effect(Estimate(1.0, 0.97, 1.03, unit="reruns", n=10, m=5), 0.05)  # confirmed: 0.95..1.05
    more = direction(Estimate(1.04, 1.01, 1.07, unit="reruns", n=10, m=5))  # confirmed: > 1, compatible with both
    found = contradictions([("far more", far_more.as_part(quantity=spread)), ("equal", equal.as_part(quantity=spread)),
                            ("more", more.as_part(quantity=spread))])
    assert [(a, b) for a, b, _ in found] == [("far more", "equal")]
    assert contradictions([("far more", far_more.as_part(quantity=spread)), ("equal", equal.as_part(quantity="other"))]) == []


def test_a_part_on_the_refuting_side_decides_a_claim_of_parts_soonest():
    """A claim whose parts must all hold is refuted by one part: where one part's estimate lies
    beyond the margin (1.077 against ±2 %, the load claim of a time-apis run here) and another sits
    just inside it (needing hundreds of reruns to confirm), what decides the claim is the refuting
    part's M, not the largest; a part on the bound elsewhere does not make it undecidable."""
    from analysis.core import cost
    from analysis.core.report import Finding

    refuting = no_effect(Estimate(1.077, 1.002, 1.159, unit="reruns", n=10, m=23, scale="ratio", level=0.9875), 0.02)
    inside = no_effect(Estimate(0.985, 0.97, 1.0, unit="reruns", n=10, m=23, scale="ratio", level=0.9875), 0.02)
    on_bound = no_effect(Estimate(1.02, 1.0, 1.04, unit="reruns", n=10, m=23, scale="ratio", level=0.9875), 0.02)
    assert "would decide it (as refuted)" in refuting.evidence and "(as refuted)" not in inside.evidence
    alone = refuting.part.decide["reruns"]
    assert inside.part.decide["reruns"] > alone
    assert decide_of([inside.part, refuting.part]) == {"reruns": alone, "refuting": True}
    assert decide_of([inside.part, inside.part]) == inside.part.decide
    finding = Finding("a claim", "inconclusive", "", parts=[on_bound.part, refuting.part])
    plan = cost.decision_plan(finding, cost.Cost(3, 120, 60.0, 66.0, 3), "time-apis")
    assert plan.startswith(f"to decide it: about M = {alone} reruns") and "a part that would refute it" in plan
