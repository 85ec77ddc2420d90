"""Figures of the scheduling-noise experiment: activity timeline, inactive-period lengths and the
distances between gaps. Same style as ``analysis.core.plots`` (Agg, constrained layout); each function
returns a matplotlib Figure for ``plots.to_png``."""

from __future__ import annotations

import matplotlib
import numpy as np

from analysis.core import plots

ACTIVE = "#4c72b0"
INACTIVE = "#c0392b"
_MARK_COLOURS = ("#c0392b", "#2ca02c", "#8c564b", "#9467bd")


def timeline(rows, window_ms, title):
    """One horizontal lane per trace: active periods blue, inactive red, over [0, window_ms].

    ``rows``: list of (label, start_ms, duration_ms, inactive) arrays. Inactive periods are drawn
    at least 1/600 of the window wide, or most would be invisible; the caption must say so.
    """
    with plots.styled_figure(9.0, 0.75 * len(rows) + 1.4) as fig:
        ax = fig.subplots()
        ax.set_title(title)
        ax.set_xlabel("time since the start of the trace (ms)")
        ax.grid(axis="y", visible=False)
        min_width = window_ms / 600
        for lane, (_label, start, duration, inactive) in enumerate(rows):
            start, duration, inactive = map(np.asarray, (start, duration, inactive))
            keep = start < window_ms
            start, duration, inactive = start[keep], duration[keep], inactive[keep].astype(bool)
            y = len(rows) - 1 - lane
            act = ~inactive
            ax.broken_barh(list(zip(start[act], np.minimum(duration[act], window_ms - start[act]))), (y - 0.3, 0.6),
                           facecolors=ACTIVE, linewidth=0)
            widths = np.minimum(np.maximum(duration[inactive], min_width), window_ms - start[inactive])
            ax.broken_barh(list(zip(start[inactive], widths)), (y - 0.38, 0.76), facecolors=INACTIVE, linewidth=0)
            ax.text(window_ms * 1.005, y, f"{int(inactive.sum())} inactive", va="center", fontsize=7, color="0.35")
        ax.set_yticks(range(len(rows)), [r[0] for r in reversed(rows)])
        ax.set_xlim(0, window_ms * 1.12)
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.plot([], [], color=ACTIVE, linewidth=6, label="active")
        ax.plot([], [], color=INACTIVE, linewidth=6, label="inactive")
        ax.legend(loc="upper right", bbox_to_anchor=(1.0, 1.18), ncols=2, frameon=False)
    return fig


def inactive_histogram(groups, threshold_us, title):
    """Step histograms of inactive-period lengths (us) on a log x axis with log-spaced bins."""
    with plots.styled_figure(8.0, 5.2) as fig:
        ax = fig.subplots()
        ax.set_title(title)
        ax.set_xlabel("inactive period (µs, log scale)")
        ax.set_ylabel("periods per bin")
        values = [np.asarray(v, dtype=float) for v in groups.values()]
        values = [v[np.isfinite(v) & (v > 0)] for v in values]
        present = [v for v in values if v.size]
        if not present:
            plots.panel_message(ax, "no inactive periods")
            return fig
        lo = min(float(v.min()) for v in present)
        hi = max(float(v.max()) for v in present)
        edges = np.logspace(np.log10(lo * 0.9), np.log10(hi * 1.1), 50)
        colours = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
        for k, (label, v) in enumerate(zip(groups, values)):
            if not v.size:
                continue
            counts, _ = np.histogram(v, bins=edges)
            ax.stairs(counts, edges, color=colours[k % len(colours)], linewidth=1.5,
                      label=f"{label} (n={v.size}, median {np.median(v):.3g} µs, mean {v.mean():.3g} µs)")
        if threshold_us:
            ax.axvline(threshold_us, color="0.3", linestyle=":", linewidth=1, label=f"threshold {threshold_us:.3g} µs")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.8)
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.16), ncols=1, frameon=False)
    return fig


def lag_histogram(edges_ms, counts, base, marks, title):
    """Pairs of gaps per distance between their starts (an autocorrelation of the gap train), with
    the median count (random coincidences) as a dashed line and vertical marks {label: ms}."""
    with plots.styled_figure(9.0, 4.0) as fig:
        ax = fig.subplots()
        ax.set_title(title)
        ax.set_xlabel("distance between the starts of two gaps (ms)")
        ax.set_ylabel("pairs of gaps per 0.03 ms")
        ax.stairs(counts, edges_ms, color=ACTIVE, linewidth=0.9, fill=True, alpha=0.8)
        if np.isfinite(base):
            ax.axhline(base, color="0.4", linestyle="--", linewidth=0.9, label=f"median (coincidences): {base:.0f}")
        for k, (label, x) in enumerate(marks.items()):
            if x is not None and np.isfinite(x):
                # a short mark above the bars and a faint line through them: the peak stays visible
                colour = _MARK_COLOURS[k % len(_MARK_COLOURS)]
                ax.axvline(x, ymin=0.95 - 0.06 * k, ymax=1.0 - 0.06 * k, color=colour, linewidth=2.2, label=f"{label}: {x:.4g} ms")
                ax.axvline(x, color=colour, linewidth=0.6, alpha=0.35, zorder=0)
        ax.set_xlim(edges_ms[0], edges_ms[-1])
        ax.set_ylim(0, max(float(np.max(counts)) if len(counts) else 1.0, 1.0) * 1.25)
        ax.legend(loc="upper right", frameon=True, framealpha=0.9)
    return fig
