"""Figures for the report: matplotlib with the Agg backend, one idea per figure.

Values come in seconds and are scaled for display with ``unit_scale``; NaN values are dropped and
counted on the figure, empty input gives 'no valid runs', and nothing loops over values in
Python. ``to_png`` makes a figure PNG bytes for ``analysis.core.report.Figure``. Only figures that
several experiments draw are here; one experiment's live in its folder's plots.py
(docs/architecture.md, "The report").
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Mapping, Sequence

import matplotlib
import matplotlib.colors
import matplotlib.ticker
import numpy as np
from matplotlib.figure import Figure

# Agg before anything here imports pyplot (only to_png does, to close figures made with pyplot).
# The figures below are plain Figure objects, never registered with pyplot, so they cannot pile up.
matplotlib.use("Agg")

__all__ = [
    "MAX_BINS",
    "histogram_grid",
    "means_with_ci",
    "overlay_histograms",
    "paired_scatter",
    "to_png",
]

#: Upper bound on histogram bins (Freedman-Diaconis can ask for thousands when a few outliers
#: stretch the range).
MAX_BINS = 60

_STYLE = {
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "figure.titlesize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "grid.linewidth": 0.6,
}

_EMPTY_TEXT = "no valid runs"
_MEAN_COLOUR = "#c0392b"
_BAR_COLOUR = "#4c72b0"


def to_png(fig: Figure, dpi: int = 110) -> bytes:
    """Render ``fig`` to PNG bytes at ``dpi`` and close it.

    The image is exactly figure size x dpi pixels (no tight bounding box: the figures use
    constrained layout instead, so sizes are predictable).
    """
    import matplotlib.pyplot as plt  # after matplotlib.use("Agg") above

    try:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, facecolor="white")
        return buf.getvalue()
    finally:
        plt.close(fig)  # a no-op for the figures made here, needed for ones made with pyplot


# --------------------------------------------------------------------------------------------
# helpers


@contextlib.contextmanager
def styled_figure(width: float, height: float):
    """A new figure in the kit's style, drawn on inside the with-block: matplotlib reads the style
    when artists are made, so every figure of the kit is made this way."""
    with matplotlib.rc_context(_STYLE):
        yield Figure(figsize=(width, height), layout="constrained")


def _clean(values, unit_scale: float) -> tuple[np.ndarray, int]:
    """Values as a flat float array scaled for display, NaN/inf removed; also how many were removed."""
    if values is None:
        return np.empty(0), 0
    arr = np.asarray(values, dtype=float).ravel()
    finite = np.isfinite(arr)
    dropped = int(arr.size - np.count_nonzero(finite))
    return arr[finite] * unit_scale, dropped


def _unit_name(unit_scale: float) -> str:
    return {1.0: "s", 1e3: "ms", 1e6: "µs", 1e9: "ns"}.get(float(unit_scale), "")


def _fmt(value: float, unit: str) -> str:
    text = f"{value:.4g}"
    return f"{text} {unit}" if unit else text


def _bin_edges(data: np.ndarray, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """Freedman-Diaconis bin edges over [lo, hi] (default: the data range), at most MAX_BINS bins.

    Falls back to Sturges' rule when the interquartile range is zero (e.g. a coarse timer that
    reports the same value for most runs), and to one narrow bin around a single distinct value.
    """
    lo = float(np.min(data)) if lo is None else lo
    hi = float(np.max(data)) if hi is None else hi
    if not hi > lo:
        half = 0.5 if lo == 0 else abs(lo) * 0.01
        return np.array([lo - half, lo + half])
    n = data.size
    q75, q25 = np.percentile(data, [75, 25])
    width = 2.0 * (q75 - q25) / np.cbrt(n) if n > 0 else 0.0
    if width > 0:
        bins = int(np.ceil((hi - lo) / width))
    else:
        bins = int(np.ceil(np.log2(max(n, 1)) + 1))
    bins = int(min(max(bins, 1), MAX_BINS))
    return np.linspace(lo, hi, bins + 1)


def panel_message(ax, text: str) -> None:
    """A grey note in the middle of an empty panel (instead of an exception or a blank plot)."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.45",
            fontsize=9, style="italic")


def _dropped_note(dropped: int) -> str:
    return f", {dropped} NaN dropped" if dropped else ""


# --------------------------------------------------------------------------------------------
# figures


def histogram_grid(
    samples: Mapping[tuple[str, str], np.ndarray],
    rows: Sequence[str],
    cols: Sequence[str],
    xlabel: str,
    title: str,
    unit_scale: float = 1e3,
    sharex="all",
) -> Figure:
    """A rows x cols grid of histograms, e.g. rows = timing APIs, columns = load levels.

    ``samples[(row, col)]`` holds the values in seconds; a missing or empty panel says 'no valid
    runs'. ``sharex`` ('all', 'col', 'row', 'none') picks which panels share the x axis ('col' keeps
    narrow distributions visible beside a far wider column). Each panel has its own bins
    (Freedman-Diaconis, at most ``MAX_BINS``) and count axis, the mean as a line and 'mean=…, n=…'
    in the corner.
    """
    share = {True: "all", False: "none"}.get(sharex, sharex)
    if share not in ("all", "col", "row", "none"):
        raise ValueError(f"histogram_grid: sharex must be 'all', 'col', 'row' or 'none', not {sharex!r}")
    rows = list(rows)
    cols = list(cols)
    if not rows or not cols:
        raise ValueError("histogram_grid needs at least one row and one column")
    unit = _unit_name(unit_scale)

    cleaned = {}
    for r in rows:
        for c in cols:
            cleaned[(r, c)] = _clean(samples.get((r, c)), unit_scale)

    def group_of(r, c):
        return {"all": None, "col": c, "row": r, "none": (r, c)}[share]

    limits = {}  # x range per group of panels that share an axis
    for (r, c), (data, _) in cleaned.items():
        if data.size:
            key = group_of(r, c)
            lo, hi = float(data.min()), float(data.max())
            old_lo, old_hi = limits.get(key, (lo, hi))
            limits[key] = (min(lo, old_lo), max(hi, old_hi))
    for key, (lo, hi) in list(limits.items()):
        if not hi > lo:
            half = 0.5 if lo == 0 else abs(lo) * 0.01
            lo, hi = lo - half, hi + half
        pad = 0.03 * (hi - lo)
        limits[key] = (lo - pad, hi + pad)

    ncols, nrows = len(cols), len(rows)
    # about 1000 px wide at the default dpi for 4 or more columns: the page shows it 1:1
    width = min(max(2.2 * ncols + 0.8, 4.0), 9.4)
    height = min(max(1.45 * nrows + 1.0, 2.6), 16.0)
    with styled_figure(width, height) as fig:
        axes = fig.subplots(nrows, ncols, sharex=share, squeeze=False)
        small = ncols > 4
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                ax = axes[i, j]
                data, dropped = cleaned[(r, c)]
                if i == 0:
                    ax.set_title(str(c))
                if j == 0:
                    ax.set_ylabel(str(r), fontweight="bold")
                ax.tick_params(labelsize=7 if small else 8)
                ax.grid(axis="x", visible=False)
                if data.size == 0:
                    ax.set_yticks([])
                    panel_message(ax, _EMPTY_TEXT + (f"\n({dropped} NaN)" if dropped else ""))
                    continue
                counts, edges = np.histogram(data, bins=_bin_edges(data))
                ax.stairs(counts, edges, fill=True, color=_BAR_COLOUR, alpha=0.85, linewidth=0)
                mean = float(data.mean())
                ax.axvline(mean, color=_MEAN_COLOUR, linewidth=1.2)
                ax.set_ylim(0, counts.max() * 1.35 + 0.5)
                ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(3, integer=True))
                note = f"mean={_fmt(mean, unit)}\nn={data.size}{_dropped_note(dropped)}"
                ax.text(0.97, 0.95, note, transform=ax.transAxes, ha="right", va="top",
                        fontsize=6.5 if small else 7.5, linespacing=1.15,
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white",
                              "edgecolor": "none", "alpha": 0.9})
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                if group_of(r, c) in limits:
                    axes[i, j].set_xlim(*limits[group_of(r, c)])
                    axes[i, j].xaxis.set_major_locator(
                        matplotlib.ticker.MaxNLocator(3 if small else 4))
                else:  # no panel sharing this axis has data: no made-up 0..1 scale
                    axes[i, j].set_xticks([])
        fig.supxlabel(xlabel)
        fig.supylabel("runs per bin", fontsize=9)
        fig.suptitle(title)
    return fig


def overlay_histograms(
    groups: Mapping[str, np.ndarray],
    xlabel: str,
    title: str,
    unit_scale: float = 1e3,
) -> Figure:
    """Several distributions on one axis as step histograms with common bins, e.g. the time a
    program reports for itself against the time the timer observed. Legend: 'label (mean …, n=…)'.
    """
    unit = _unit_name(unit_scale)
    cleaned = {str(k): _clean(v, unit_scale) for k, v in groups.items()}
    with styled_figure(8.0, 4.2) as fig:
        ax = fig.subplots()
        ax.set_xlabel(xlabel)
        ax.set_ylabel("runs per bin")
        ax.set_title(title)
        nonempty = [d for d, _ in cleaned.values() if d.size]
        if not nonempty:
            panel_message(ax, _EMPTY_TEXT)
            return fig
        alldata = np.concatenate(nonempty)
        edges = _bin_edges(alldata)
        colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        for k, (label, (data, dropped)) in enumerate(cleaned.items()):
            colour = colours[k % len(colours)]
            if data.size == 0:
                ax.plot([], [], color=colour, label=f"{label} ({_EMPTY_TEXT})")
                continue
            counts, _ = np.histogram(data, bins=edges)
            mean = float(data.mean())
            ax.stairs(counts, edges, color=colour, linewidth=1.6,
                      label=f"{label} (mean {_fmt(mean, unit)}, n={data.size}{_dropped_note(dropped)})")
            ax.axvline(mean, color=colour, linewidth=0.9, linestyle="--")
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.16), ncols=1 if len(cleaned) < 3 else 2,
                  frameon=False)
    return fig


def paired_scatter(
    x,
    y,
    labels: np.ndarray | None,
    xlabel: str,
    ylabel: str,
    title: str,
    unit_scale: float = 1e3,
    legend_title: str | None = None,
    difference: bool = False,
) -> Figure:
    """One point per run: ``x`` (e.g. time observed by the timer) against ``y`` (e.g. time the
    program reported), with the line y = x, coloured by ``labels`` (e.g. load level; numeric labels
    get an ordered colour map), with equal scales on both axes.

    When the two differ by far less than runs differ from each other, every point sits on the
    diagonal; ``difference=True`` then plots y - x against x (the line y = x becomes y = 0; say
    so in ``ylabel``). Pairs with a NaN on either side are dropped and counted in the corner.
    """
    xs = np.asarray(x, dtype=float).ravel()
    ys = np.asarray(y, dtype=float).ravel()
    if xs.shape != ys.shape:
        raise ValueError(f"paired_scatter: x has {xs.size} values but y has {ys.size}")
    keep = np.isfinite(xs) & np.isfinite(ys)
    lab = None
    if labels is not None:
        lab = np.asarray(labels).ravel()
        if lab.shape != xs.shape:
            raise ValueError(f"paired_scatter: {xs.size} values but {lab.size} labels")
        lab = lab[keep]
    dropped = int(xs.size - np.count_nonzero(keep))
    xs, ys = xs[keep] * unit_scale, ys[keep] * unit_scale
    if difference:
        ys = ys - xs

    with styled_figure(6.6, 5.2) as fig:
        ax = fig.subplots()
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        if xs.size == 0:
            panel_message(ax, _EMPTY_TEXT + (f" ({dropped} NaN pairs)" if dropped else ""))
            return fig
        size = 14 if xs.size <= 500 else (6 if xs.size <= 10_000 else 2)
        alpha = 0.75 if xs.size <= 2_000 else 0.35
        if lab is None:
            ax.scatter(xs, ys, s=size, alpha=alpha, color=_BAR_COLOUR, linewidths=0,
                       rasterized=True)
        else:
            try:
                uniq, inverse = np.unique(lab, return_inverse=True)
            except TypeError:  # mixed types that do not sort: compare as text
                uniq, inverse = np.unique(lab.astype(str), return_inverse=True)
            numeric = np.issubdtype(uniq.dtype, np.number)
            if numeric:
                colours = matplotlib.colormaps["viridis"](np.linspace(0.0, 0.88, max(len(uniq), 1)))
            else:
                cyc = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
                colours = [cyc[k % len(cyc)] for k in range(len(uniq))]
            colours = np.asarray(matplotlib.colors.to_rgba_array(colours))
            counts = np.bincount(inverse.ravel(), minlength=len(uniq))
            # one call for all points, drawn in a fixed random order so that no label is always
            # painted over the others; the legend gets one proxy per label
            order = np.random.default_rng(0).permutation(xs.size)
            ax.scatter(xs[order], ys[order], s=size, alpha=alpha, c=colours[inverse.ravel()[order]],
                       linewidths=0, rasterized=True)
            for k, value in enumerate(uniq):
                ax.scatter([], [], s=size, color=colours[k], linewidths=0,
                           label=f"{value} (n={int(counts[k])})")
        if difference:
            ax.axhline(0.0, color="0.35", linestyle="--", linewidth=1, label="y = x", zorder=0)
        else:
            lo = float(min(xs.min(), ys.min()))
            hi = float(max(xs.max(), ys.max()))
            if not hi > lo:
                half = 0.5 if lo == 0 else abs(lo) * 0.01
                lo, hi = lo - half, hi + half
            pad = 0.04 * (hi - lo)
            ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="0.35", linestyle="--",
                    linewidth=1, label="y = x", zorder=0)
            ax.set_xlim(lo - pad, hi + pad)
            ax.set_ylim(lo - pad, hi + pad)
            ax.set_aspect("equal", adjustable="box")
        if dropped:
            ax.text(0.98, 0.02, f"{dropped} pairs with NaN dropped", transform=ax.transAxes,
                    ha="right", va="bottom", fontsize=8, color="0.35")
        legend = ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), title=legend_title,
                           frameon=False, markerscale=max(1.0, (14 / size) ** 0.5))
        for handle in getattr(legend, "legend_handles", None) or legend.legendHandles:
            handle.set_alpha(1.0)
    return fig


def means_with_ci(
    levels: Sequence,
    series: Mapping[str, tuple[Sequence[float], Sequence[float], Sequence[float]]],
    xlabel: str,
    ylabel: str,
    title: str,
    unit_scale: float = 1e3,
    cores: int | None = None,
) -> Figure:
    """One line per series (e.g. timing API) of means against ``levels`` (e.g. background load),
    with confidence intervals as error bars: ``series[label] = (means, ci_low, ci_high)``, each
    aligned with ``levels``, in seconds.

    Series are nudged sideways a little so that their error bars do not hide each other. A NaN mean
    leaves a gap; a NaN bound draws the mean without a bar. With ``cores``, a dashed vertical line
    at x = cores is labelled 'all cores busy' (numeric levels only).
    """
    levels = list(levels)
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                  for v in levels)
    positions = np.asarray(levels, dtype=float) if numeric else np.arange(len(levels), dtype=float)
    spacing = float(np.min(np.diff(np.unique(positions)))) if len(np.unique(positions)) > 1 else 1.0
    k = len(series)
    offsets = (np.arange(k) - (k - 1) / 2) * min(0.08, 0.3 / max(k, 1)) * spacing

    with styled_figure(8.0, 4.6) as fig:
        ax = fig.subplots()
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        drawn = False
        handles, labels = [], []
        for idx, (label, triple) in enumerate(series.items()):
            if len(triple) != 3:
                raise ValueError(f"means_with_ci: series {label!r} must be (means, ci_low, ci_high)")
            means, low, high = (np.asarray(a, dtype=float).ravel() * unit_scale for a in triple)
            for name, arr in (("means", means), ("ci_low", low), ("ci_high", high)):
                if arr.size != len(levels):
                    raise ValueError(f"means_with_ci: series {label!r} has {arr.size} {name} "
                                     f"for {len(levels)} levels")
            ok = np.isfinite(means)
            if not ok.any():
                (handle,) = ax.plot([], [], marker="o", markersize=4, linewidth=1.4)
                handles.append(handle)
                labels.append(f"{label} ({_EMPTY_TEXT})")
                continue
            # a bar only where both bounds are known; bounds on the wrong side of the mean count 0
            bounded = ok & np.isfinite(low) & np.isfinite(high)
            lower = np.where(bounded, np.clip(means - np.where(bounded, low, 0), 0, None), 0.0)
            upper = np.where(bounded, np.clip(np.where(bounded, high, 0) - means, 0, None), 0.0)
            # NaN means stay NaN in the line: a gap instead of a line across a missing level
            handle = ax.errorbar(positions + offsets[idx], np.where(ok, means, np.nan),
                                 yerr=np.vstack([lower, upper]), marker="o", markersize=4,
                                 capsize=3, linewidth=1.4, elinewidth=1)
            handles.append(handle)
            labels.append(str(label))
            drawn = True
        if not drawn:
            panel_message(ax, _EMPTY_TEXT)
        ax.set_xticks(positions)
        ax.set_xticklabels([str(v) for v in levels])
        if cores is not None and numeric:
            ax.axvline(cores, color="0.4", linestyle="--", linewidth=1)
            # beside the line near the bottom: means rise with load, so that corner is usually free
            ax.annotate("all cores busy", xy=(cores, 0.03), xycoords=("data", "axes fraction"),
                        xytext=(4, 0), textcoords="offset points", rotation=90,
                        ha="left", va="bottom", fontsize=8, color="0.3",
                        bbox={"boxstyle": "square,pad=0.15", "facecolor": "white",
                              "edgecolor": "none", "alpha": 0.85})
            left, right = ax.get_xlim()
            ax.set_xlim(min(left, cores - 0.5 * spacing), max(right, cores + 0.5 * spacing))
        if handles:
            ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig
