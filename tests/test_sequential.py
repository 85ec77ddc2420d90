"""Decide, then stop: the group-sequential rule keeps its error rates when it looks after every
pair of invocations, on simulated and on the recorded real invocations."""

import numpy as np
import pytest
import scipy.stats

from analysis.tools.calibrate import family, until_decided
from analysis.tools.plan import sequential
from tests.helpers import REPO

RECORDED = REPO / "docs" / "calibration-between"


@pytest.mark.unit
def test_spending_reaches_alpha_at_the_last_look_and_boundaries_grow():
    assert sequential.spent(1.0, 0.05) == pytest.approx(0.05)
    assert sequential.spent(0.3, 0.05) < 0.001
    levels = sequential.boundaries(0.05, 10)
    assert list(levels) == list(range(3, 11))
    assert levels[10] > levels[6] > levels[4] and levels[10] < 0.05


@pytest.mark.unit
def test_looking_after_every_pair_keeps_alpha_where_the_naive_rule_does_not():
    rng = np.random.default_rng(11)
    trials, top = 600, 10
    base = 1 + 0.02 * rng.standard_normal((trials, top))
    new = 1 + 0.02 * rng.standard_normal((trials, top))
    wrong = sum(sequential.run_sequence(a, b, 0.05, 0.0, top).verdict in ("slower", "faster") for a, b in zip(base, new))
    # the naive rule (stop at the first p < alpha), vectorised over the trials
    naive = np.any([scipy.stats.ttest_ind(base[:, :m], new[:, :m], axis=1, equal_var=False).pvalue < 0.05
                    for m in range(3, top + 1)], axis=0).sum()
    assert wrong / trials <= 0.065, wrong
    assert naive / trials > 0.08, naive


@pytest.mark.unit
def test_equivalence_decides_no_change_and_a_large_change_stops_early():
    rng = np.random.default_rng(12)
    quiet = [sequential.run_sequence(1 + 0.002 * rng.standard_normal(20), 1 + 0.002 * rng.standard_normal(20), 0.05, 0.02, 20)
             for _ in range(50)]
    assert all(d.decided and d.verdict == "~" for d in quiet)
    assert np.mean([d.reruns for d in quiet]) < 6
    large = sequential.run_sequence(1 + 0.01 * rng.standard_normal(20), 1.2 + 0.01 * rng.standard_normal(20), 0.05, 0.02, 20)
    assert large.verdict == "slower" and large.reruns <= 6


@pytest.mark.unit
def test_equivalence_by_two_one_sided_tests_errs_at_the_threshold_as_often_as_alpha():
    """A change of exactly the threshold is called "~" when the upper one-sided test crosses at
    some look: about alpha of the runs (a two-sided 1 - c_M interval, as the rule had before, gave
    half of that: equivalence decided later than it may be)."""
    rng = np.random.default_rng(13)
    alpha, top, threshold = 0.05, 6, 0.01
    at_threshold = np.log1p(threshold) + 0.002 * rng.standard_normal((800, top))
    decisions = [sequential.run_paired_sequence(x, alpha, threshold, top) for x in at_threshold]
    wrong = np.mean([d.verdict == "~" for d in decisions])
    assert 0.03 < wrong <= alpha + 0.015, wrong
    d = next(d for d in decisions if d.verdict == "~")
    assert d.confidence == pytest.approx(1 - 2 * d.level) and d.rci_high < 1 + threshold


@pytest.mark.unit
def test_on_real_invocations_the_sequential_rule_holds_alpha_and_decides_no_later_than_the_fixed_design():
    base = list(family.load_groups([RECORDED / "base"], ("cputime",)).values())
    slower = list(family.load_groups([RECORDED / "new"], ("cputime",)).values())
    result = until_decided.check(base, slower, trials=150, splits=500)
    assert result["max_reruns"] == 12
    assert result["aa"]["wrong"]["rate"] <= 0.05 + 0.015
    [row] = result["rows"]
    assert row["power"]["rate"] >= 0.9
    assert row["fixed_reruns_same_power"] is not None and row["mean_reruns"] <= row["fixed_reruns_same_power"]
