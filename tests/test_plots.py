"""Tests for analysis.core.plots: every figure renders to a sane PNG, says its unit, and copes with
NaN, empty input, a single value and 100,000 values."""

import io
import time

import matplotlib.image
import numpy as np
import pytest

from analysis.core import plots

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DPI = 110

APIS = ["runexec", "bash time", "fish time", "GNU time"]
LOADS = ["load 0", "load 1", "load 2", "load 3"]


def decode(png):
    """The PNG as an array (height, width, channels), after checking the signature."""
    assert isinstance(png, bytes)
    assert png[:8] == PNG_SIGNATURE
    return matplotlib.image.imread(io.BytesIO(png), format="png")


def assert_png_of(fig, max_side=2000):
    """Render ``fig``; the image must be figure size x dpi and not huge. Returns the array."""
    width_in, height_in = fig.get_size_inches()
    image = decode(plots.to_png(fig, dpi=DPI))
    height, width = image.shape[:2]
    assert (height, width) == (round(height_in * DPI), round(width_in * DPI))
    assert 200 <= width <= max_side and 150 <= height <= max_side
    assert np.ptp(image[..., :3]) > 0, "image is one flat colour"
    return image


def panel_texts(ax):
    return [t.get_text() for t in ax.texts]


def fig_text(fig, which):
    getter = getattr(fig, f"get_{which}", None)  # matplotlib >= 3.8
    if getter is not None:
        return getter()
    artist = getattr(fig, f"_{which}")
    return artist.get_text() if artist is not None else ""


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def grid_samples(rng):
    samples = {(api, load): 1.2 + rng.gamma(2.0, 0.01, 30) for api in APIS for load in LOADS}
    samples[("bash time", "load 2")] = np.array([])                     # empty cell
    samples[("fish time", "load 1")] = np.array([1.25])                 # single value
    samples[("GNU time", "load 3")] = np.r_[samples[("GNU time", "load 3")][:27], [np.nan] * 3]
    samples[("runexec", "load 3")] = 1.2 + rng.gamma(2.0, 0.05, 100_000)  # big cell
    del samples[("GNU time", "load 0")]                                  # missing cell
    return samples


# ---------------------------------------------------------------------------------- to_png


def test_to_png_returns_png_bytes_of_expected_size():
    fig = plots.overlay_histograms({"a": [0.1, 0.2, 0.3]}, "time (ms)", "t")
    width_in, height_in = fig.get_size_inches()
    image = decode(plots.to_png(fig, dpi=50))
    assert image.shape[:2] == (round(height_in * 50), round(width_in * 50))


# ---------------------------------------------------------------------------------- histogram_grid


def test_histogram_grid_panels_units_empty_and_big_cells(grid_samples):
    start = time.perf_counter()
    fig = plots.histogram_grid(grid_samples, APIS, LOADS, "wall time (ms)", "Wall time")
    axes = np.array(fig.axes).reshape(len(APIS), len(LOADS))
    assert "ms" in fig_text(fig, "supxlabel")
    assert fig_text(fig, "suptitle") == "Wall time"
    assert [ax.get_title() for ax in axes[0]] == LOADS
    assert [ax.get_ylabel() for ax in axes[:, 0]] == APIS

    empty = axes[APIS.index("bash time"), LOADS.index("load 2")]
    assert any("no valid runs" in t for t in panel_texts(empty))
    missing = axes[APIS.index("GNU time"), LOADS.index("load 0")]
    assert any("no valid runs" in t for t in panel_texts(missing))

    big = axes[APIS.index("runexec"), LOADS.index("load 3")]
    note = " ".join(panel_texts(big))
    assert "n=100000" in note and "mean=" in note and "ms" in note
    (hist,) = big.patches
    values = hist.get_data().values
    assert len(values) <= plots.MAX_BINS and values.sum() == 100_000
    assert len(big.lines) == 1  # the mean
    mean_x = big.lines[0].get_xdata()[0]
    assert mean_x == pytest.approx(grid_samples[("runexec", "load 3")].mean() * 1e3)

    with_nan = axes[APIS.index("GNU time"), LOADS.index("load 3")]
    assert "n=27" in " ".join(panel_texts(with_nan))
    assert "3 NaN" in " ".join(panel_texts(with_nan))

    single = axes[APIS.index("fish time"), LOADS.index("load 1")]
    assert "n=1" in " ".join(panel_texts(single))

    # shared x axis: every panel shows the same range, which covers all data
    limits = {ax.get_xlim() for ax in axes.flat}
    assert len(limits) == 1
    lo, hi = limits.pop()
    assert lo <= 1200 and hi >= grid_samples[("runexec", "load 3")].max() * 1e3
    assert_png_of(fig)
    assert time.perf_counter() - start < 20


def test_histogram_grid_shared_per_column(grid_samples):
    fig = plots.histogram_grid(grid_samples, APIS, LOADS, "wall time (ms)", "t", sharex="col")
    axes = np.array(fig.axes).reshape(len(APIS), len(LOADS))
    for j in range(len(LOADS)):
        assert len({ax.get_xlim() for ax in axes[:, j]}) == 1
    assert axes[0, 3].get_xlim() != axes[0, 0].get_xlim()
    assert_png_of(fig)
    with pytest.raises(ValueError):
        plots.histogram_grid(grid_samples, APIS, LOADS, "x (ms)", "t", sharex="sideways")


def test_histogram_grid_all_empty_and_all_nan():
    fig = plots.histogram_grid({("a", "b"): np.array([np.nan, np.nan])}, ["a"], ["b", "c"],
                               "time (ms)", "nothing")
    assert all(any("no valid runs" in t for t in panel_texts(ax)) for ax in fig.axes)
    assert "2 NaN" in " ".join(panel_texts(fig.axes[0]))
    assert_png_of(fig)


def test_histogram_grid_unit_scale_seconds():
    fig = plots.histogram_grid({("a", "b"): np.array([1.5, 1.6, 1.7])}, ["a"], ["b"], "time (s)",
                               "t", unit_scale=1)
    assert "mean=1.6 s" in " ".join(panel_texts(fig.axes[0]))
    assert_png_of(fig)


def test_histogram_grid_identical_values():
    fig = plots.histogram_grid({("a", "b"): np.full(50, 0.25)}, ["a"], ["b"], "time (ms)", "t")
    (hist,) = fig.axes[0].patches
    values = hist.get_data().values
    assert values.sum() == 50
    assert_png_of(fig)


# ---------------------------------------------------------------------------------- overlay


def test_overlay_histograms_legend_common_bins_nan(rng):
    observed = 1.2 + rng.gamma(2, 0.01, 1000)
    reported = observed - 0.002
    reported[:10] = np.nan
    fig = plots.overlay_histograms({"observed": observed, "reported": reported, "none": []},
                                   "CPU time (ms)", "observed vs reported")
    (ax,) = fig.axes
    assert "ms" in ax.get_xlabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("observed (mean ") and "n=1000" in labels[0]
    assert labels[1].startswith("reported (mean ") and "n=990" in labels[1] and "10 NaN" in labels[1]
    assert "no valid runs" in labels[2]
    steps = ax.patches
    assert len(steps) == 2
    np.testing.assert_array_equal(steps[0].get_data().edges, steps[1].get_data().edges)  # same bins
    assert len(steps[0].get_data().values) <= plots.MAX_BINS
    assert_png_of(fig)


def test_overlay_histograms_empty_and_single():
    fig = plots.overlay_histograms({}, "time (ms)", "empty")
    assert any("no valid runs" in t for t in panel_texts(fig.axes[0]))
    assert_png_of(fig)
    fig = plots.overlay_histograms({"one": [0.5]}, "time (ms)", "one")
    assert "n=1" in fig.axes[0].get_legend().get_texts()[0].get_text()
    assert_png_of(fig)


# ---------------------------------------------------------------------------------- scatter


def test_paired_scatter_labels_nan_and_identity_line(rng):
    x = 1.2 + rng.gamma(2, 0.01, 120)
    y = x - rng.uniform(0, 0.003, x.size)
    y[5] = np.nan   # label 0
    x[37] = np.nan  # label 1
    labels = np.repeat([0, 1, 2, 3], 30)
    fig = plots.paired_scatter(x, y, labels, "observed CPU time (ms)", "reported CPU time (ms)",
                               "observed vs reported", legend_title="load")
    (ax,) = fig.axes
    assert "ms" in ax.get_xlabel() and "ms" in ax.get_ylabel()
    points = sum(len(c.get_offsets()) for c in ax.collections)
    assert points == 118
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:4] == ["0 (n=29)", "1 (n=29)", "2 (n=30)", "3 (n=30)"]
    assert "y = x" in legend
    assert any("2 pairs with NaN dropped" in t for t in panel_texts(ax))
    assert ax.get_xlim() == ax.get_ylim()
    assert_png_of(fig)


def test_paired_scatter_without_labels_empty_single_and_mismatch():
    fig = plots.paired_scatter([], [], None, "x (ms)", "y (ms)", "empty")
    assert any("no valid runs" in t for t in panel_texts(fig.axes[0]))
    assert_png_of(fig)
    fig = plots.paired_scatter([np.nan], [1.0], None, "x (ms)", "y (ms)", "nan")
    assert any("no valid runs" in t for t in panel_texts(fig.axes[0]))
    assert_png_of(fig)
    fig = plots.paired_scatter([1.0], [1.0], None, "x (ms)", "y (ms)", "single")
    assert_png_of(fig)
    with pytest.raises(ValueError):
        plots.paired_scatter([1.0, 2.0], [1.0], None, "x", "y", "t")
    with pytest.raises(ValueError):
        plots.paired_scatter([1.0, 2.0], [1.0, 2.0], [0], "x", "y", "t")


def test_paired_scatter_difference_and_string_labels(rng):
    x = 1.0 + rng.random(40)
    y = x - 0.001
    fig = plots.paired_scatter(x, y, np.array(["a", "b"] * 20), "observed (ms)",
                               "reported - observed (ms)", "diff", difference=True)
    (ax,) = fig.axes
    offsets = np.concatenate([c.get_offsets() for c in ax.collections if len(c.get_offsets())])
    np.testing.assert_allclose(offsets[:, 1], -1.0, atol=1e-9)  # y - x in ms
    assert_png_of(fig)


def test_paired_scatter_100k_points_fast(rng):
    x = 1.2 + rng.gamma(2, 0.05, 100_000)
    y = x - rng.uniform(0, 0.01, x.size)
    start = time.perf_counter()
    fig = plots.paired_scatter(x, y, rng.integers(0, 7, x.size), "observed (ms)", "reported (ms)",
                               "100k")
    assert_png_of(fig)
    assert time.perf_counter() - start < 10


# ---------------------------------------------------------------------------------- means_with_ci


def test_means_with_ci_series_cores_line_and_nan():
    levels = [0, 1, 2, 3, 4, 5, 6]
    means = 1.2 + 0.02 * np.arange(7)
    series = {
        "runexec": (means, means - 0.01, means + 0.01),
        "bash time": (np.r_[means[:3], np.nan, means[4:]], means - 0.01, [np.nan] * 7),
        "fish time": ([np.nan] * 7, [np.nan] * 7, [np.nan] * 7),
    }
    fig = plots.means_with_ci(levels, series, "background load (busy processes)",
                              "mean wall time (ms)", "wall time vs load", cores=4)
    (ax,) = fig.axes
    assert "ms" in ax.get_ylabel()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["runexec", "bash time", "fish time (no valid runs)"]
    assert any(a.get_text() == "all cores busy" for a in ax.texts)
    vertical = [ln for ln in ax.lines if np.allclose(ln.get_xdata(), 4) and ln.get_linestyle() == "--"]
    assert vertical
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(v) for v in levels]
    assert_png_of(fig)


def test_means_with_ci_categorical_empty_and_mismatch():
    fig = plots.means_with_ci(["small", "large"], {"a": ([0.1, 0.2], [0.09, 0.19], [0.11, 0.21])},
                              "input", "time (ms)", "categorical", cores=2)
    assert_png_of(fig)
    fig = plots.means_with_ci([0, 1], {}, "load", "time (ms)", "no series")
    assert any("no valid runs" in t for t in panel_texts(fig.axes[0]))
    assert_png_of(fig)
    fig = plots.means_with_ci([3], {"a": ([0.5], [0.4], [0.6])}, "load", "time (ms)", "single")
    assert_png_of(fig)
    with pytest.raises(ValueError):
        plots.means_with_ci([0, 1], {"a": ([0.1], [0.1], [0.1])}, "load", "time (ms)", "t")
