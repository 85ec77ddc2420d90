"""Known-answer tests for analysis.core.stats: numbers worked out by hand or from seeded samples whose
true parameters are known."""

import json
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.core import stats as S
from analysis.core.modality import modality
from analysis.core.stats import (ALL_TESTS, adjust, holm, pairwise_tests, ratio_of_means, summarize,
                                 two_sample_tests)
from analysis.core.timers import bias_against, mean_offset_bound, scatter_before_rounding, timer_resolution

# t quantile t_{0.975, 4} from a printed table (2.776), to 7 digits
T_975_4 = 2.7764451


def rng(seed):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------------------- summarize

def test_summarize_known_answer():
    s = summarize([1, 2, 3, 4, 10, np.nan])
    # mean 20/5 = 4; squared deviations 9+4+1+0+36 = 50; var = 50/4 = 12.5
    sd = math.sqrt(12.5)
    assert s.n == 5
    assert s.mean == pytest.approx(4.0)
    assert s.sd == pytest.approx(sd)
    assert s.cv == pytest.approx(sd / 4)
    assert s.median == 3.0
    assert s.mad == 1.0            # |x - 3| = 2,1,0,1,7 -> median 1
    assert (s.min, s.max) == (1.0, 10.0)
    half = T_975_4 * sd / math.sqrt(5)   # 4.38994...
    assert s.ci_low == pytest.approx(4 - half, rel=1e-6)
    assert s.ci_high == pytest.approx(4 + half, rel=1e-6)
    d = s.as_dict()
    assert d["n"] == 5 and d["mad"] == 1.0
    json.dumps(d)


def test_summarize_confidence_level_widens_interval():
    x = rng(1).normal(5, 1, 50)
    s90, s99 = summarize(x, 0.90), summarize(x, 0.99)
    assert s99.ci_low < s90.ci_low < s90.mean < s90.ci_high < s99.ci_high


def test_summarize_empty_and_single():
    e = summarize([np.nan, np.nan])
    assert e.n == 0
    assert all(math.isnan(getattr(e, f)) for f in ("mean", "sd", "median", "min", "ci_low"))
    one = summarize([2.5])
    assert one.n == 1 and one.mean == 2.5 and one.median == 2.5 and one.min == one.max == 2.5
    assert math.isnan(one.sd) and math.isnan(one.ci_low) and math.isnan(one.ci_high)


def test_large_arrays_are_cheap():
    x = rng(2).lognormal(0, 0.1, 100_000)
    t0 = time.perf_counter()
    s = summarize(x)
    timer_resolution(x)
    modality(x)
    elapsed = time.perf_counter() - t0
    assert s.n == 100_000
    assert elapsed < 2.0, elapsed


# ------------------------------------------------------------------------------- Holm

def test_holm_hand_worked():
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_nan_and_cap():
    out = holm([0.01, np.nan, 0.04])          # family of two
    assert out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.04)
    assert math.isnan(out[1])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])
    assert holm([]).size == 0
    assert np.isnan(holm([np.nan])).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_properties(ps):
    p = np.array(ps)
    q = holm(p)
    assert np.all(q >= p - 1e-15) and np.all(q <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(q[order]) >= -1e-15)            # monotone in p
    assert np.all(q <= np.minimum(p * p.size, 1.0) + 1e-12)  # never worse than Bonferroni


NAN = float("nan")
# p-values and what the kit's own Holm (written by hand before statsmodels' took its place) made of them
HAND_WRITTEN_HOLM = [
    ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
    ([0.01, 0.01, 0.02, 0.02, 0.5], [0.05, 0.05, 0.06, 0.06, 0.5]),       # ties
    ([0.02, 0.02, 0.02], [0.06, 0.06, 0.06]),
    ([0.01, NAN, 0.04, NAN], [0.02, NAN, 0.04, NAN]),                     # NaN: kept, not counted
    ([0.5, 0.6, 0.9], [1.0, 1.0, 1.0]),                                   # capped
    ([0.0, 1.0, 0.0, 0.3], [0.0, 1.0, 0.0, 0.6]),
    ([0.03], [0.03]),
    ([NAN, NAN], [NAN, NAN]),
]


@pytest.mark.parametrize("p, before", HAND_WRITTEN_HOLM)
def test_holm_through_statsmodels_gives_what_the_hand_written_one_gave(p, before):
    assert holm(p).tolist() == pytest.approx(before, nan_ok=True, rel=0, abs=1e-15)


def test_holm_of_rows_is_holm_of_each_row_and_rejects_as_before():
    rows = np.array([p for p, _ in HAND_WRITTEN_HOLM if len(p) == 4])
    assert np.array_equal(holm(rows), np.array([holm(r) for r in rows]), equal_nan=True)
    # the vectorized holm_reject of calibrate/family.py, before: these rows at alpha 0.05
    from analysis.tools.calibrate import family
    p = np.array([[0.01, 0.04, 0.03, 0.005], [0.01, 0.01, 0.02, 0.02], [0.01, NAN, 0.04, 0.02],
                  [0.02, 0.02, 0.02, 0.02], [NAN] * 4, [0.0124, 0.0126, 0.5, 0.0166]])
    assert family.holm_reject(p, 0.05).tolist() == [[True, False, False, True], [True, True, True, True],
                                                     [True, False, True, True], [False] * 4, [False] * 4,
                                                     [True, True, False, True]]


def test_adjust_sets_p_adjusted_and_significance():
    base = two_sample_tests(rng(3).normal(size=40), rng(4).normal(size=40), tests=("Welch t",))[0]
    fam = [S.dataclasses.replace(base, p=p, p_adjusted=p) for p in (0.01, 0.04, 0.03, 0.005)]
    out = adjust(fam)
    assert [r.p_adjusted for r in out] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [r.significant for r in out] == [True, False, False, True]
    assert [r.p for r in fam] == [0.01, 0.04, 0.03, 0.005]    # originals unchanged


# ------------------------------------------------------------------------------- two-sample tests

def test_same_distribution_nothing_significant():
    g = rng(10)
    res = two_sample_tests(g.normal(10, 1, 200), g.normal(10, 1, 200), "A", "B")
    assert [r.test for r in res] == list(ALL_TESTS)
    for r in res:
        assert (r.label_a, r.label_b, r.n_a, r.n_b, r.alpha) == ("A", "B", 200, 200, 0.05)
        assert 0 < r.p <= 1 and r.p_adjusted == r.p
        assert not r.significant, r
        json.dumps(r.as_dict())


def test_one_sd_shift_all_significant():
    g = rng(11)
    res = two_sample_tests(g.normal(10, 1, 200), g.normal(11, 1, 200), "A", "B")
    for r in res:
        assert r.significant and r.p < 0.001, r
    welch = res[0]
    assert welch.statistic < 0          # mean(A) < mean(B)


def test_anderson_darling_permutation_when_capped():
    g = rng(12)
    a, b = g.normal(0, 1, 200), g.normal(0, 1, 200)
    ad = two_sample_tests(a, b, tests=("k-sample Anderson-Darling",))[0]
    # scipy's asymptotic p is capped at 0.25 here; the permutation gives a real value
    assert "permutation" in ad.note and "capped" in ad.note
    assert 0.25 < ad.p <= 1
    shifted = two_sample_tests(a, b + 1, tests=("k-sample Anderson-Darling",))[0]
    assert "permutation" in shifted.note and "floored" in shifted.note
    assert shifted.p == pytest.approx(1 / 1001)   # no permutation beats the observed statistic
    # same seed -> same p
    again = two_sample_tests(a, b, tests=("k-sample Anderson-Darling",))[0]
    assert again.p == ad.p


def test_anderson_darling_large_samples_are_bounded():
    g = rng(13)
    a, b = g.normal(0, 1, 400), g.normal(0, 1, 400)
    ad = two_sample_tests(a, b, tests=("k-sample Anderson-Darling",), ad_max_pooled=300)[0]
    assert "subsample of 150+150" in ad.note and ad.n_a == 400
    far = two_sample_tests(a, b + 1, tests=("k-sample Anderson-Darling",), ad_max_pooled=300)[0]
    assert far.p == 0.001 and "upper bound" in far.note and far.significant


def test_degenerate_samples_give_nan_not_errors():
    res = two_sample_tests([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    by = {r.test: r for r in res}
    assert math.isnan(by["Welch t"].p) and "constant" in by["Welch t"].note
    assert math.isnan(by["k-sample Anderson-Darling"].p)
    assert by["Mann-Whitney U"].p == 1.0 and by["two-sample KS"].p == 1.0
    assert not any(r.significant for r in res)
    tiny = two_sample_tests([1.0], [2.0, 3.0], tests=("Welch t",))[0]
    assert math.isnan(tiny.p) and "at least 2" in tiny.note
    with pytest.raises(ValueError):
        two_sample_tests([1, 2], [3, 4], tests=("t",))


def test_welch_known_answer():
    # means 2.5 and 7, variances 5/3 and 14: se = sqrt(5/12 + 14/6) = sqrt(2.75)
    # (Student's pooled t would be -4.5 / sqrt(9.375 * (1/4 + 1/6)) = -2.2768)
    r = two_sample_tests([1, 2, 3, 4], [2, 4, 6, 8, 10, 12], tests=("Welch t",))[0]
    assert r.statistic == pytest.approx(-4.5 / math.sqrt(2.75))   # -2.7136
    assert (r.n_a, r.n_b) == (4, 6)


def test_welch_false_positive_rate():
    g = rng(20)
    rejections = sum(
        two_sample_tests(g.normal(0, 1, 30), g.normal(0, 1, 30), tests=("Welch t",))[0].significant
        for _ in range(400))
    assert abs(rejections / 400 - 0.05) <= 0.025, rejections


def test_pairwise_holm_per_test_kind():
    g = rng(21)
    groups = {"bash": g.normal(1.0, 0.05, 150), "fish": g.normal(1.0, 0.05, 150),
              "gnu": g.normal(1.05, 0.05, 150)}
    res = pairwise_tests(groups)
    assert len(res) == 3 * 4
    pairs = {(r.label_a, r.label_b) for r in res}
    assert pairs == {("bash", "fish"), ("bash", "gnu"), ("fish", "gnu")}
    for test in ALL_TESTS:
        fam = [r for r in res if r.test == test]
        assert len(fam) == 3
        assert [r.p_adjusted for r in fam] == pytest.approx(list(holm([r.p for r in fam])))
        assert all("Holm over 3 pairs" in r.note for r in fam)
        sig = {(r.label_a, r.label_b): r.significant for r in fam}
        assert sig == {("bash", "fish"): False, ("bash", "gnu"): True, ("fish", "gnu"): True}
    only = pairwise_tests(groups, tests=("Welch t",))
    assert len(only) == 3 and {r.test for r in only} == {"Welch t"}


# ------------------------------------------------------------------------------- ratio of means

def test_ratio_of_means_contains_truth():
    g = rng(30)
    a, b = g.normal(10, 1, 500), 1.05 * g.normal(10, 1, 500)
    r = ratio_of_means(a, b)
    assert r.ratio == pytest.approx(np.mean(b) / np.mean(a))
    assert r.ci_low < 1.05 < r.ci_high
    assert r.ci_low > 1.0
    assert "BCa" in r.method and r.confidence == 0.95


def test_ratio_of_means_coverage():
    g = rng(31)
    hits = 0
    for i in range(100):
        a, b = g.gamma(20, 0.05, 60), 1.2 * g.gamma(20, 0.05, 60)
        r = ratio_of_means(a, b, seed=i, n_resamples=500)
        hits += r.ci_low < 1.2 < r.ci_high
    assert 88 <= hits <= 100, hits


def test_ratio_of_means_degenerate_and_large():
    r = ratio_of_means([2.0] * 20, [3.0] * 20)
    assert r.ratio == 1.5 and r.ci_low == r.ci_high == 1.5 and "percentile" in r.method
    g = rng(32)
    big = ratio_of_means(g.normal(10, 1, 20_000), 1.05 * g.normal(10, 1, 20_000))
    assert "delta" in big.method and big.ci_low < 1.05 < big.ci_high
    assert big.ci_high - big.ci_low < 0.005
    assert math.isnan(ratio_of_means([0.0, 0.0], [1.0, 2.0]).ratio)


# ------------------------------------------------------------------------------- resolution

def texts(values, fmt):
    """Values as a timer would print them and a parser would read them back."""
    return [float(fmt.format(v)) for v in values]


def test_timer_resolution_centiseconds_and_milliseconds():
    x = rng(40).gamma(20, 0.05, 2000)
    r2 = timer_resolution(texts(x, "{:.2f}"))
    assert r2.step == pytest.approx(0.01) and r2.share_on_grid >= 0.99
    r3 = timer_resolution(texts(x, "{:.3f}"))
    assert r3.step == pytest.approx(0.001)
    assert timer_resolution(texts(x, "{:.1f}")).step == pytest.approx(0.1)
    assert math.isnan(timer_resolution(x).step)          # continuous values: no grid
    # zeros lie on every grid and do not count (GNU time's sys time is mostly 0.00)
    assert timer_resolution([0.0] * 500 + texts(x[:50], "{:.2f}")).step == pytest.approx(0.01)
    assert math.isnan(timer_resolution([0.0, np.nan]).step)


def fish_text(seconds):
    """fish's `time`: 2 decimals of micros, millis or secs of a whole number of microseconds."""
    us = round(seconds * 1e6)
    if us < 1000:
        return f"{us:.2f} micros"
    if us < 1_000_000:
        return f"{us / 1e3:.2f} millis"
    return f"{us / 1e6:.2f} secs"


def parse_fish(text):
    num, unit = text.split()
    return float(num) * {"micros": 1e-6, "millis": 1e-3, "secs": 1.0}[unit]


def test_timer_resolution_fish_like():
    g = rng(41)
    mixed = [parse_fish(fish_text(v)) for v in g.gamma(2, 0.0008, 1000)]   # ~30 % below 1 ms
    assert sum(v < 1e-3 for v in mixed) > 100
    assert timer_resolution(mixed).step == pytest.approx(1e-6)   # micros texts: 1 us grid
    millis = [parse_fish(fish_text(v)) for v in g.uniform(0.002, 0.9, 1000)]
    assert timer_resolution(millis).step == pytest.approx(1e-5)  # "12.34 millis": 10 us grid


def _worst_rounding_error(step, sd):
    """The largest |mean of the rounded times - their true mean| over the times' phase on the grid,
    with a million normal times per phase: what mean_offset_bound must bound."""
    g = rng(44)
    z = g.standard_normal(1_000_000) * sd
    worst = 0.0
    for phase in np.linspace(0, step, 21)[:-1]:
        x = 0.085 + phase + z
        worst = max(worst, abs(float(np.mean(np.round(x / step) * step - x))))
    return worst


@pytest.mark.parametrize("sd_steps", [0.0, 0.1, 0.2, 0.3, 0.5, 0.7])
def test_the_offset_bound_holds_the_mean_of_rounded_times(sd_steps):
    """Half a step where the times do not scatter; where they scatter over a step or so the
    rounding averages out (bash's 1 ms steps under 0.7 ms of spread: under 0.01 % of a step), and
    the bound is never below what rounding does to the mean (nor more than a little above it once
    the times scatter)."""
    step = 0.001
    bound, worst = mean_offset_bound(step, sd_steps * step), _worst_rounding_error(step, sd_steps * step)
    assert worst <= bound + 2e-6 * step / 0.001  # the simulated mean's own noise: sd / 1000
    if sd_steps == 0:
        assert bound == step / 2
    if 0.2 <= sd_steps <= 0.5:  # tight where rounding still shows: the worst phase reaches it
        assert bound <= 1.05 * worst + 3 * sd_steps * step / 1000
    if sd_steps >= 0.5:
        assert bound < 0.005 * step
    if sd_steps >= 0.7:
        assert bound < 1e-4 * step


def test_the_scatter_before_rounding_leaves_out_the_rounding_and_far_outliers():
    """Sheppard's correction takes the rounding's own step^2 / 12 out of the spread; a few runs the
    machine disturbed do not make times that all round to 80 ms look scattered."""
    g = rng(45)
    x = 0.085 + g.standard_normal(2000) * 0.0007
    groups = np.repeat(np.arange(200), 10)
    assert scatter_before_rounding(np.round(x / 0.001) * 0.001, groups, 0.001) == pytest.approx(0.0007, rel=0.1)
    flat = np.full(200, 0.08)
    flat[::20] = 0.13  # one run in 20 disturbed by 50 ms
    assert scatter_before_rounding(flat, np.repeat(np.arange(20), 10), 0.01) == 0.0
    assert scatter_before_rounding([0.08, np.nan], [1, 1], 0.01) == 0.0


# ------------------------------------------------------------------------------- bias

def test_bias_truncation_to_10ms():
    ref = rng(50).gamma(20, 0.05, 1000)                     # cgroup values, ~1 s
    timer = texts(np.floor(ref * 100) / 100, "{:.2f}")       # GNU time's %U truncates
    b = bias_against(timer, ref)
    assert b.n == 1000 and b.step == pytest.approx(0.01)
    assert -0.01 < b.mean_diff < 0
    assert b.mean_diff == pytest.approx(-0.005, abs=0.0005)
    assert b.ci_low < b.mean_diff < b.ci_high < 0
    assert b.share_below > 0.99 and b.share_above == 0
    assert "truncates" in b.summary


def test_bias_rounding_to_1ms():
    ref = rng(51).gamma(20, 0.05, 1000)
    b = bias_against(texts(ref, "{:.3f}"), ref)
    assert abs(b.mean_diff) < 0.0005
    assert "rounds" in b.summary
    assert 0.4 < b.share_below < 0.6


def test_bias_offset_and_unbiased_and_nan_pairs():
    g = rng(52)
    ref = g.gamma(20, 0.05, 500)
    late = bias_against(ref + 0.003 + g.normal(0, 1e-4, 500), ref)
    assert late.summary.startswith("above") and late.ci_low > 0.0029
    noisy = bias_against(ref + g.normal(0, 1e-3, 500), ref)
    assert noisy.summary.startswith("unbiased") and noisy.ci_low < 0 < noisy.ci_high
    same = bias_against(ref, ref)
    assert same.summary == "identical to reference" and same.mean_diff == 0
    with_nan = bias_against([1.0, np.nan, 1.2], [1.1, 1.0, np.nan])
    assert with_nan.n == 1 and with_nan.mean_diff == pytest.approx(-0.1)
    with pytest.raises(ValueError):
        bias_against([1.0, 2.0], [1.0])


# ------------------------------------------------------------------------------- modality

def test_modality_one_normal():
    for seed in range(5):
        m = modality(rng(60 + seed).normal(5, 1, 1000))
        assert m.modes == 1, (seed, m)
        assert abs(m.mode_locations[0] - 5) < 0.5
        assert m.bimodality_coefficient < 5 / 9
        assert "gaussian_kde" in m.method and "Silverman" in m.method


def test_modality_skewed_timing_like_is_unimodal():
    for seed in range(5):
        g = rng(70 + seed)
        assert modality(1 + g.gamma(3, 0.02, 500)).modes == 1
        assert modality(g.lognormal(0, 0.3, 500)).modes == 1


def test_modality_two_and_three_modes():
    g = rng(80)
    two = modality(np.concatenate([g.normal(0, 1, 500), g.normal(6, 1, 500)]))
    assert two.modes == 2
    assert two.mode_locations == pytest.approx([0, 6], abs=0.4)
    assert two.bimodality_coefficient > 5 / 9
    three = modality(np.concatenate([g.normal(c, 1, 400) for c in (0, 5, 10)]))
    assert three.modes == 3
    assert three.mode_locations == pytest.approx([0, 5, 10], abs=0.5)
    # an unequal mixture (80/20) is still two modes
    uneq = modality(np.concatenate([g.normal(0, 1, 800), g.normal(6, 1, 200)]))
    assert uneq.modes == 2


def test_modality_ignores_outliers_and_timer_grid():
    g = rng(90)
    bulk = np.concatenate([g.normal(1.0, 0.01, 490), g.normal(1.06, 0.01, 490)])
    with_outliers = np.concatenate([bulk, g.normal(2.0, 0.01, 20)])   # 2 % far away
    m = modality(with_outliers)
    assert m.modes == 2 and m.mode_locations == pytest.approx([1.0, 1.06], abs=0.01)
    # a tight cluster of 3 % identical values is a peak, but too little mass to be a mode
    piled = modality(np.concatenate([bulk, np.full(30, 2.0)]))
    assert piled.modes == 2
    # values on GNU time's 10 ms grid: the lattice must not count as modes
    lattice = modality(texts(g.normal(0.1, 0.01, 5000), "{:.2f}"))
    assert lattice.modes == 1 and "grid step" in lattice.method


def test_modality_small_and_nan():
    m = modality([1.0, 2.0, np.nan, 3.0])
    assert m.modes == 1 and m.mode_locations == [2.0] and "n=3" in m.note
    assert modality([]).modes == 0
    x = np.concatenate([rng(91).normal(0, 1, 300), [np.nan, np.inf]])
    assert modality(x).modes == 1
    json.dumps(modality(x).as_dict())


def test_identical_values_have_exactly_zero_spread():
    s = summarize(np.full(30, 0.08) + np.zeros(30))
    assert s.sd == 0.0 and s.cv == 0.0 and s.mean == 0.08 and s.ci_low == s.ci_high == 0.08


def test_verdict_needs_significance_and_a_change_beyond_the_threshold():
    assert S.verdict(True, 1.05, 0.02) == "slower" and S.verdict(True, 0.95, 0.02) == "faster"
    assert S.verdict(False, 1.05, 0.02) == "~" and S.verdict(True, 1.01, 0.02) == "~"
