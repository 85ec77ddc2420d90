"""Core heterogeneity beyond two cores: similarity matrix, ranking and figures on synthetic fleets
of 8 and 96 cores with known structure, the false-positive rate of 'different' on identical
distributions, the power for a 2 % shift, and the ranking of a known ordered fleet.

Every sample is drawn from a seeded numpy generator, so each assertion has one known answer."""

import dataclasses
import io
import math
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
import scipy.stats

from analysis.experiments.core_heterogeneity import analyse as cores
from analysis.experiments.core_heterogeneity import plots as cores_plots
from analysis.core import stats
from analysis.machine import facts
from analysis.machine.topology import Cpu


def facts_with(topology_cpus, root):
    """A recorded machine below root with a synthetic topology (k cores that cannot exist here)."""
    recorded = facts.record(root)
    recorded.cpus = [dataclasses.asdict(c) for c in topology_cpus]
    return recorded


MACHINES = Path(__file__).resolve().parent / "data" / "machines"
BASE = 0.05  # seconds: kernel times around 50 ms


def draw(scales, n, cv=0.01, seed=0):
    """{core: n kernel times}: BASE x scale x lognormal noise of mean 1 and coefficient of variation cv."""
    rng = np.random.default_rng(seed)
    sigma = math.sqrt(math.log1p(cv * cv))
    return {c: BASE * s * rng.lognormal(-sigma * sigma / 2, sigma, n) for c, s in scales.items()}


def smt_topology(k):
    """k CPUs numbered as Linux numbers a two-package SMT machine: CPU i and i + k/2 are the two
    hardware threads of one physical core; package 0 holds CPUs 0..k/4-1 and k/2..3k/4-1."""
    half = k // 2
    per_package = half // 2
    return [Cpu(id=i, package=(i % half) // per_package, core=i % per_package, siblings=(i % half, i % half + half), caches=())
            for i in range(k)]


def two_clusters_and_an_outlier(k):
    """(fast cores, slow cores, outlier): package 0 fast, package 1 5 % slower, one CPU of package 1 15 % slower."""
    topology = smt_topology(k)
    fast = {c.id for c in topology if c.package == 0}
    outlier = 3 * k // 4 + 1  # second hardware thread of package 1's second core: CPU 7 of 8 (sibling 3), 73 of 96 (sibling 25)
    slow = {c.id for c in topology if c.package == 1} - {outlier}
    return fast, slow, outlier


def coarse_capped_p(monkeypatch, resamples):
    """similarity() has no resamples parameter. A pair whose scipy p is capped (>= 0.25: 'similar' at any
    resolution) gets a permutation p of stats.AD_RESAMPLES (1000) resamples, ~70 ms a pair, only for the
    p it shows. Fewer resamples keep every such p >= 1/(resamples + 1) > alpha: no decision changes. The
    resamples of floored pairs (ad_resamples(m) >= 1000, or the KS bound from 7 cores on) are untouched."""
    assert 1 / (resamples + 1) >= cores.ALPHA
    monkeypatch.setattr(stats, "AD_RESAMPLES", resamples)


@pytest.fixture(scope="module", params=[(8, 100), (96, 30)], ids=["8 cores", "96 cores"])
def fleet(request):
    """(k, groups, Similarity) of k cores: package 0 fast, package 1 5 % slower, one outlier 15 % slower."""
    k, n = request.param
    fast, slow, outlier = two_clusters_and_an_outlier(k)
    groups = draw({c: 1.0 if c in fast else 1.05 if c in slow else 1.15 for c in range(k)}, n, seed=k)
    with pytest.MonkeyPatch.context() as monkeypatch:
        if k > 8:  # 2,200 capped pairs: minutes with 1000 resamples each, ~7 s with 9
            coarse_capped_p(monkeypatch, 9)
        return k, groups, cores.similarity(groups)


def overlapping_texts(fig):
    """Pairs of visible texts of a drawn figure whose boxes overlap (titles, axis and tick labels, figure texts)."""
    fig.draw_without_rendering()
    texts = list(fig.texts)  # suptitle and supxlabel included
    for ax in fig.axes:
        (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label]
        texts += [t for t in ax.get_xticklabels() if x0 <= t.get_position()[0] <= x1]  # drawn ticks only
        texts += [t for t in ax.get_yticklabels() if y0 <= t.get_position()[1] <= y1]
    boxes = [(t.get_text(), t.get_window_extent()) for t in dict.fromkeys(texts) if t.get_visible() and t.get_text().strip()]
    return [(a, b) for (i, (a, box_a)) in enumerate(boxes) for (b, box_b) in boxes[i + 1:] if box_a.overlaps(box_b)]


# ---------------------------------------------------------------------------------------------
# 1. no two-core assumption: 8 and 96 cores, two clusters and an outlier


def test_two_clusters_and_an_outlier_are_found_among_many_cores(fleet):
    k, groups, sim = fleet
    fast, slow, outlier = two_clusters_and_an_outlier(k)
    assert len(fast) == k // 2 and len(slow) == k // 2 - 1 and outlier not in fast | slow
    cluster = {c: "fast" if c in fast else "slow" if c in slow else "outlier" for c in range(k)}

    m = k * (k - 1) // 2
    assert sim.cores == list(range(k)) and f"Holm over the {m} pairs" in sim.correction
    wrong = [(sim.cores[i], sim.cores[j], float(sim.p_adjusted[i, j])) for i, j in sim.pairs()
             if sim.similar[i, j] != (cluster[sim.cores[i]] == cluster[sim.cores[j]] != "outlier")]
    assert not wrong, wrong[:10]
    assert sum(1 for _ in sim.pairs()) == m
    across = [sim.ks[i, j] for i, j in sim.pairs() if cluster[sim.cores[i]] != cluster[sim.cores[j]]]
    within = [sim.ks[i, j] for i, j in sim.pairs() if cluster[sim.cores[i]] == cluster[sim.cores[j]]]
    assert min(across) > 0.9 and np.median(within) < 0.35  # 5 sd apart: no overlap; same distribution: small D
    assert np.all(np.diag(sim.similar)) and np.array_equal(sim.similar, sim.similar.T)
    # from 7 cores on no permutation resolves alpha/m: a floored Anderson-Darling p is bounded by the KS p
    assert "two-sample KS p" in sim.correction
    i, j = sim.cores.index(outlier), sim.cores.index(min(fast))
    assert "two-sample KS p" in sim.notes[i, j] and sim.p[i, j] < cores.ALPHA / m

    ranking = cores.rank({"cg": groups})
    entry = ranking["workloads"]["cg"]
    order = entry["order"]
    assert sorted(order) == list(range(k))
    assert set(order[:len(fast)]) == fast and set(order[len(fast):-1]) == slow and order[-1] == outlier
    significant = [pair["significant"] for pair in entry["adjacent"]]
    # exactly the two steps between groups: fastest cluster -> slower cluster -> outlier
    assert significant == [i in (len(fast) - 1, k - 2) for i in range(k - 1)], [i for i, s in enumerate(significant) if s]
    step = entry["adjacent"][len(fast) - 1]
    assert step["faster"] in fast and step["slower"] in slow and step["ci_low"] > 1.03 and step["p_adjusted"] < cores.ALPHA
    spread = entry["slowest_vs_fastest"]
    assert spread["slowest"] == outlier and spread["ci_low"] < 1.15 * 1.01 and spread["ci_high"] > 1.15 / 1.01


def test_similarity_figure_is_a_readable_png_that_shows_smt_siblings(fleet):
    k, groups, sim = fleet
    half = k // 2
    topology = smt_topology(k)
    fig = cores_plots.similarity_matrices({"cg": sim}, cores.LABEL, topology)
    assert not overlapping_texts(fig)
    ax = fig.axes[0]
    # tick labels carry the physical core (and package), so CPU i and its sibling i + k/2 read alike
    labels = {int(t.get_text().split("\n")[0]): t.get_text() for t in ax.get_xticklabels()}
    assert len(labels) == min(k, 16) and {0, half // 2, half, half + half // 2} <= set(labels)
    assert labels[0] == "0\nc0" and labels[half] == f"{half}\nc0"
    assert labels[half // 2] == f"{half // 2}\np1c0" and labels[half + half // 2] == f"{half + half // 2}\np1c0"
    for cpu, text in labels.items():
        c = topology[cpu]
        assert text.endswith(f"c{c.core}") and (f"p{c.package}" in text) == (c.package != 0), text
    # one white frame per ordered SMT-sibling cell: (i, i + k/2) and (i + k/2, i)
    frames = {(round(p.get_x() + 0.5), round(p.get_y() + 0.5)) for p in ax.patches}
    assert frames == {(i, (i + half) % k) for i in range(k)}
    assert "SMT siblings" in fig._supxlabel.get_text()
    similar = math.comb(half, 2) + math.comb(half - 1, 2)  # the pairs within the fast and within the slow cluster
    assert ax.get_title().endswith(f"{similar} of {k * (k - 1) // 2} pairs similar")

    png = cores_plots.to_png(fig)
    assert png.startswith(b"\x89PNG")
    image = matplotlib.image.imread(io.BytesIO(png), format="png")
    height, width = image.shape[:2]
    expected = 110 * fig.get_size_inches()  # to_png's 110 dpi, no cropping
    assert abs(width - expected[0]) <= 1 and abs(height - expected[1]) <= 1, (width, height, expected)
    assert (900 <= width <= 1600 and 900 <= height <= 1600) if k == 96 else (500 <= width <= 900), (width, height)
    assert 0.8 <= width / height <= 1.25  # square panels
    # the matrix is not blank: red (far) and blue (close) cells both occur
    rgb = image[..., :3]
    red = (rgb[..., 0] > 0.6) & (rgb[..., 2] < 0.4)
    blue = (rgb[..., 2] > 0.6) & (rgb[..., 0] < 0.4)
    assert red.mean() > 0.05 and blue.mean() > 0.05

    # per-core CDFs (three workloads, as in the report): a legend up to 10 cores, else a colour note, clear of the labels
    cdf = cores_plots.cdf_per_core({w: groups for w in cores.WORKLOADS}, cores.LABEL, topology)
    assert not overlapping_texts(cdf)
    if k > 10:
        assert f"colour: CPU 0 (dark) to {k - 1} (light)" in " ".join(t.get_text() for t in cdf.texts)
    else:
        assert all(len(ax.get_legend().get_texts()) == k for ax in cdf.axes)
    cdf_height, cdf_width = matplotlib.image.imread(io.BytesIO(cores_plots.to_png(cdf)), format="png").shape[:2]
    assert 900 <= cdf_width <= 1600 and 300 <= cdf_height <= 800, (cdf_width, cdf_height)


def test_eight_core_section_labels_siblings_and_confirms_the_outlier():
    k = 8
    topology = smt_topology(k)
    fast, slow, outlier = two_clusters_and_an_outlier(k)
    groups = draw({c: 1.0 if c in fast else 1.05 if c in slow else 1.15 for c in range(k)}, 100, seed=11)
    sec, data = cores.analyse(cores.samples_from_groups({"cg": groups}), facts_with(topology, MACHINES / "baremetal"))
    pairs = next(t for t in sec.tables if t.title.startswith("Core similarity"))
    assert len(pairs.rows) == k * (k - 1) // 2
    assert {(r[1], r[2]) for r in pairs.rows if r[3] == "yes"} == {(i, i + 4) for i in range(4)}
    assert data["ranking"]["workloads"]["cg"]["order"][-1] == outlier
    cg = next(f for f in sec.findings if f.claim.startswith("cg:"))
    assert cg.verdict == "confirmed" and f"slowest CPU {outlier}" in cg.evidence
    smt = next(f for f in sec.findings if f.claim.startswith("SMT siblings"))
    # the outlier (CPU 7) differs from its sibling (CPU 3); the other three sibling pairs are alike
    assert smt.verdict == "refuted" and "3 of 4 sibling pairs similar" in smt.evidence
    # CDF, slowest/fastest, similarity matrix; the cg-against-cachestress figure needs both workloads
    assert len(sec.figures) == 3 and all(f.png.startswith(b"\x89PNG") for f in sec.figures)


# ---------------------------------------------------------------------------------------------
# 2. identical distributions are called similar at the stated rate


def test_identical_distributions_are_called_different_at_most_at_alpha(monkeypatch):
    coarse_capped_p(monkeypatch, 99)  # 1 s instead of 10; the floored pairs' permutation keeps 1000 resamples
    trials, n = 200, 100
    rng = np.random.default_rng(2024)
    sigma = math.sqrt(math.log1p(0.01 ** 2))
    p = []
    for t in range(trials):
        a, b = BASE * rng.lognormal(0, sigma, (2, n))
        sim = cores.similarity({0: a, 1: b}, seed=t)
        assert sim.similar[0, 1] == (sim.p_adjusted[0, 1] >= cores.ALPHA)
        p.append(sim.p[0, 1])
    p = np.array(p)
    assert np.all((p > 0) & (p <= 1))
    different = int(np.sum(p < cores.ALPHA))
    # before correction: the count is not significantly above alpha (one-sided binomial test at 1 %)
    assert scipy.stats.binomtest(different, trials, cores.ALPHA, alternative="greater").pvalue >= 0.01, different
    # ... and p is not stuck at 1: the share below 0.1 is consistent with 10 % (p is uniform under the null)
    assert scipy.stats.binomtest(int(np.sum(p < 0.1)), trials, 0.1).pvalue >= 0.001, np.sum(p < 0.1)
    # Holm over the 200 pairs as one family: none different
    assert np.all(stats.holm(p) >= cores.ALPHA)


def test_twelve_identical_cores_have_no_pair_different_after_holm(monkeypatch):
    coarse_capped_p(monkeypatch, 99)
    sim = cores.similarity(draw({c: 1.0 for c in range(12)}, 100, seed=5))
    assert sum(1 for _ in sim.pairs()) == 66 and all(sim.similar[i, j] for i, j in sim.pairs())
    ranking = cores.rank({"isort": draw({c: 1.0 for c in range(12)}, 100, seed=6)})
    assert not any(pair["significant"] for pair in ranking["workloads"]["isort"]["adjacent"])


# ---------------------------------------------------------------------------------------------
# 3. power: a 2 % shift at CV 1 % with n = 200 per core


def test_a_two_percent_shift_is_detected_with_200_runs_per_core():
    groups = draw({0: 1.0, 1: 1.02}, 200, cv=0.01, seed=3)
    sim = cores.similarity(groups)
    assert not sim.similar[0, 1] and sim.p_adjusted[0, 1] < cores.ALPHA
    assert "permutation" in sim.notes[0, 1]  # two cores: scipy's floored p is resolved by permutation
    entry = cores.rank({"cg": groups})["workloads"]["cg"]
    assert entry["order"] == [0, 1]
    pair = entry["adjacent"][0]
    assert pair["significant"] and pair["ci_low"] < 1.02 < pair["ci_high"] and pair["ci_low"] > 1.01


def test_a_two_percent_slower_core_among_eight_is_found(monkeypatch):
    coarse_capped_p(monkeypatch, 99)
    scales = {c: 1.02 if c == 5 else 1.0 for c in range(8)}
    groups = draw(scales, 200, cv=0.01, seed=4)
    sim = cores.similarity(groups)
    for i, j in sim.pairs():
        assert sim.similar[i, j] == (5 not in (sim.cores[i], sim.cores[j])), (sim.cores[i], sim.cores[j], sim.p_adjusted[i, j])
    entry = cores.rank({"cg": groups})["workloads"]["cg"]
    assert entry["order"][-1] == 5
    assert [pair["significant"] for pair in entry["adjacent"]] == [False] * 6 + [True]


# ---------------------------------------------------------------------------------------------
# 4. the ranking orders a known fleet


def test_rank_orders_a_known_fleet_with_shuffled_core_ids():
    rng = np.random.default_rng(8)
    ids = [int(c) for c in rng.permutation(8) * 3 + 1]  # CPU numbers unrelated to speed
    truth = {cpu: 1.0 + 0.01 * position for position, cpu in enumerate(ids)}  # ids[0] fastest, ids[7] slowest
    assert ids != sorted(ids)
    groups = draw(dict(sorted(truth.items())), 50, cv=0.003, seed=9)
    for ranking in (cores.rank({"cg": groups}), cores.rank(cores.samples_from_groups({"cg": groups}))):
        entry = ranking["workloads"]["cg"]
        assert entry["order"] == ids
        assert all(pair["significant"] for pair in entry["adjacent"])
        for pair in entry["adjacent"]:
            expected = truth[pair["slower"]] / truth[pair["faster"]]
            assert pair["ci_low"] < expected < pair["ci_high"] and abs(pair["ratio"] - expected) < 0.003
        spread = entry["slowest_vs_fastest"]
        assert (spread["fastest"], spread["slowest"]) == (ids[0], ids[-1]) and spread["ci_low"] < 1.07 < spread["ci_high"]
