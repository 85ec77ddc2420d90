"""Figures of the os-microbench experiment, one idea per figure.

Unlike analysis.core.plots these take values in the units the workload reports (ns, GB/s, bytes),
because the quantities span nine orders of magnitude and each axis says its unit. Every function
returns a matplotlib Figure for ``analysis.core.plots.to_png``; empty input gives a figure that says so.
"""

from __future__ import annotations

import matplotlib
import matplotlib.ticker
import numpy as np

from analysis.core import fmt, plots

__all__ = ["bandwidth_curve", "call_cost", "latency_curve", "overview"]

_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3")
_CACHE_COLOUR = "0.45"


def _size_axis(ax, sizes):
    """log2 x axis of working-set sizes, ticks at powers of 4 labelled in KiB/MiB."""
    ax.set_xscale("log", base=2)
    lo, hi = min(sizes), max(sizes)
    ticks = [2.0**k for k in range(int(np.floor(np.log2(lo))), int(np.ceil(np.log2(hi))) + 1) if k % 2 == 0]
    ax.set_xticks(ticks)
    ax.set_xticklabels([fmt.binary_size(t) for t in ticks], rotation=0)
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_xlim(lo / 1.3, hi * 1.3)


def _cache_lines(ax, caches, y=0.03):
    """Dashed verticals at the data cache sizes the OS reports, labelled 'L1 32 KiB (/sys)' at
    height ``y`` (axes fraction) to the right of the line."""
    left, right = ax.get_xlim()
    for level, size in sorted(caches.items()):
        if not left <= size <= right:
            continue
        ax.axvline(size, color=_CACHE_COLOUR, linestyle="--", linewidth=1, zorder=1)
        ax.annotate(f"L{level} {fmt.binary_size(size)}\n(/sys)", xy=(size, y), xycoords=("data", "axes fraction"),
                    xytext=(3, 0), textcoords="offset points", ha="left", va="bottom", fontsize=7.5, color="0.3",
                    bbox={"boxstyle": "square,pad=0.1", "facecolor": "white", "edgecolor": "none", "alpha": 0.8})


def _size_axes(fig, title, sizes):
    """The figure's axes with its title, and the sizes as floats; 'no valid runs' on it without any."""
    ax = fig.subplots()
    ax.set_title(title)
    sizes = np.asarray(sizes, dtype=float)
    if not sizes.size:
        plots.panel_message(ax, "no valid runs")
    return ax, sizes


def latency_curve(sizes, median, p10, p90, caches, plateaus=(), core_ghz=None, title="Memory latency vs working-set size"):
    """Dependent-load latency (ns, log scale) against working-set size (log2 bytes), p10-p90 band,
    the OS's cache sizes as dashed lines and the plateaus found in the data as flat segments."""
    with plots.styled_figure(8.6, 4.8) as fig:
        ax, sizes = _size_axes(fig, title, sizes)
        if not sizes.size:
            return fig
        median, p10, p90 = (np.asarray(a, dtype=float) for a in (median, p10, p90))
        ax.fill_between(sizes, p10, p90, color=_COLOURS[0], alpha=0.2, linewidth=0, label="p10–p90 of samples")
        ax.plot(sizes, median, marker="o", markersize=3.5, color=_COLOURS[0], linewidth=1.4, label="median")
        for k, plateau in enumerate(plateaus):
            xs = [plateau["first_bytes"], plateau["last_bytes"]]
            level = plateau["ns"]
            ax.plot(xs, [level, level], color=_COLOURS[1], linewidth=4, alpha=0.55, solid_capstyle="butt",
                    label="plateau found in the data" if k == 0 else None)
            ax.annotate(f"{plateau['label']}: {level:.3g} ns", xy=(np.sqrt(xs[0] * xs[1]), level), xytext=(0, -11),
                        textcoords="offset points", ha="center", va="top", fontsize=7.5, color="#8a4b16")
        ax.set_yscale("log")
        _size_axis(ax, sizes)
        ax.set_xlabel("working set (bytes, log scale; one pointer per 64-byte line, random cycle)")
        ax.set_ylabel("latency per dependent load (ns, log scale)")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        low = float(np.nanmin(p10)) if np.isfinite(p10).any() else float(np.nanmin(median))
        ax.set_ylim(bottom=low / 1.8)
        _cache_lines(ax, caches)
        if core_ghz:
            sec = ax.secondary_yaxis("right", functions=(lambda ns: ns * core_ghz, lambda c: c / core_ghz))
            sec.set_ylabel(f"core cycles (at {core_ghz:.2f} GHz, the kit's checked core clock)")
            sec.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.legend(loc="upper left", frameon=False)
    return fig


def bandwidth_curve(sizes, read, write, caches, title="Memory bandwidth vs buffer size"):
    """Read and write bandwidth (GB/s) against buffer size (log2 bytes); ``read``/``write`` are
    (median, p10, p90) triples aligned with ``sizes``."""
    with plots.styled_figure(8.6, 4.6) as fig:
        ax, sizes = _size_axes(fig, title, sizes)
        if not sizes.size:
            return fig
        for (label, triple), colour in zip((("read (16-byte loads, summed)", read), ("write (16-byte stores)", write)), _COLOURS):
            med, lo, hi = (np.asarray(a, dtype=float) for a in triple)
            ax.fill_between(sizes, lo, hi, color=colour, alpha=0.2, linewidth=0)
            ax.plot(sizes, med, marker="o", markersize=3.5, color=colour, linewidth=1.4, label=f"{label}, median; band p10–p90")
        _size_axis(ax, sizes)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("buffer size (bytes, log scale)")
        ax.set_ylabel("bandwidth (GB/s = 10⁹ bytes/s)")
        _cache_lines(ax, caches)
        ax.legend(loc="upper right", frameon=False)
    return fig


def call_cost(arg_counts, median, p10, p90, core_ghz, seed_cycles=None, seed_ghz=2.5,
              title="Procedure-call cost vs number of int arguments"):
    """Cost per call against argument count, median with p10-p90 bars, the seed's measured cycles
    as a second series: in core cycles (ns on the right axis) where the core clock passed its
    check, else in ns (the seed's cycles at its `seed_ghz`)."""
    with plots.styled_figure(7.6, 4.4) as fig:
        ax = fig.subplots()
        ax.set_title(title)
        arg_counts = np.asarray(arg_counts, dtype=float)
        if arg_counts.size == 0:
            plots.panel_message(ax, "no valid runs")
            return fig
        scale = core_ghz or 1.0  # cycles per ns, or ns as they are
        med, lo, hi = (np.asarray(a, dtype=float) * scale for a in (median, p10, p90))
        clock = f", {core_ghz:.2f} GHz" if core_ghz else "; no checked core clock: ns"
        ax.errorbar(arg_counts, med, yerr=np.vstack([np.clip(med - lo, 0, None), np.clip(hi - med, 0, None)]), marker="o",
                    markersize=5, capsize=3, color=_COLOURS[0], linewidth=1.4,
                    label=f"this machine: median, p10–p90 (per iteration of a counted loop{clock})")
        seed = None if seed_cycles is None else np.asarray(seed_cycles, dtype=float) / (1.0 if core_ghz else seed_ghz)
        if seed is not None:
            ax.plot(np.arange(len(seed)), seed, marker="s", markersize=5, linestyle="--", color=_COLOURS[1],
                    linewidth=1.2, label=f"seed report (i7-4710HQ, {seed_ghz:g} GHz), measured")
        ax.axvspan(6.5, 7.5, color="0.9", zorder=0)
        ax.annotate("7th argument on the stack\n(SysV ABI: 6 in registers)", xy=(7, 0.02), xycoords=("data", "axes fraction"),
                    ha="center", va="bottom", fontsize=7.5, color="0.35")
        ax.set_xticks(range(8))
        ax.set_xlabel("int arguments of the called function")
        ax.set_ylabel("core cycles per call (the kit's checked core clock)" if core_ghz else "ns per call")
        top = max(float(np.nanmax(hi)), float(seed.max()) if seed is not None else 0.0)
        ax.set_ylim(0, top * 1.35 + (0.5 if core_ghz else 0.2))
        if core_ghz:
            sec = ax.secondary_yaxis("right", functions=(lambda c: c / core_ghz, lambda ns: ns * core_ghz))
            sec.set_ylabel("ns per call")
        ax.legend(loc="upper left", frameon=False)
    return fig


def overview(rows, title="Every operation against its published range and the seed"):
    """A dot plot on a log time axis: one row per operation, this machine's median with its
    p10-p90 bar, the published range as a grey band, the seed's measured value as a cross.
    ``rows``: dicts with label, median, p10, p90, low, high (ns; NaN/None where unknown), seed."""
    rows = [r for r in rows if r.get("median") is not None and np.isfinite(r["median"])]
    with plots.styled_figure(8.6, max(2.6, 0.3 * len(rows) + 1.4)) as fig:
        ax = fig.subplots()
        ax.set_title(title)
        if not rows:
            plots.panel_message(ax, "no valid runs")
            return fig
        y = np.arange(len(rows))[::-1]
        for yi, row in zip(y, rows):
            if row.get("low") is not None and row.get("high") is not None:
                ax.plot([row["low"], row["high"]], [yi, yi], color="0.82", linewidth=7, solid_capstyle="butt", zorder=1)
            lo, hi = row.get("p10", row["median"]), row.get("p90", row["median"])
            ax.plot([lo, hi], [yi, yi], color=_COLOURS[0], linewidth=1.5, zorder=2)
            ax.plot([row["median"]], [yi], "o", color=_COLOURS[0], markersize=5, zorder=3)
            if row.get("seed") is not None:
                ax.plot([row["seed"]], [yi], "x", color=_COLOURS[3], markersize=6, mew=1.6, zorder=4)
        ax.set_yticks(y)
        ax.set_yticklabels([r["label"] for r in rows])
        ax.set_xscale("log")
        ax.set_xlabel("time per operation (ns, log scale)")
        ax.grid(axis="y", visible=False)
        handles = [
            matplotlib.lines.Line2D([], [], color="0.82", linewidth=7, label="published range (see table)"),
            matplotlib.lines.Line2D([], [], color=_COLOURS[0], marker="o", linewidth=1.5, label="this machine: median, p10–p90"),
            matplotlib.lines.Line2D([], [], color=_COLOURS[3], marker="x", linestyle="none", mew=1.6, label="seed report, measured"),
        ]
        ax.legend(handles=handles, loc="lower right", frameon=True, framealpha=0.9, edgecolor="none")
    return fig
