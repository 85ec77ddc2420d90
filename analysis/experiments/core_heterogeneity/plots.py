"""Figures of the core-heterogeneity experiment (seed 002), in the style of analysis.core.plots.

Values come in seconds and are shown in milliseconds. Each function returns a matplotlib Figure;
analysis.core.plots.to_png turns it into PNG bytes (re-exported here as to_png).
"""

from __future__ import annotations

import matplotlib
import matplotlib.patches
import numpy as np

from analysis.core.plots import panel_message, styled_figure, to_png

__all__ = ["cdf_per_core", "correlation", "similarity_matrices", "slowest_vs_fastest", "to_png"]

_EMPTY = "no counted runs"


def _core_colours(cores):
    cmap = matplotlib.colormaps["tab10" if len(cores) <= 10 else "viridis"]
    if len(cores) <= 10:
        return {c: cmap(i) for i, c in enumerate(cores)}
    return {c: cmap(x) for c, x in zip(cores, np.linspace(0, 0.9, len(cores)))}


def _tick_label(cpu, topology_cpus):
    for c in topology_cpus or ():
        if c.id == cpu and c.core is not None:
            return f"{cpu}\nc{c.core}" if c.package in (None, 0) else f"{cpu}\np{c.package}c{c.core}"
    return str(cpu)


def cdf_per_core(groups, labels, topology_cpus=None):
    """One panel per workload: the empirical CDF of the kernel time on each core (paper Fig. 1)."""
    workloads = list(groups)
    cores = sorted({c for by_core in groups.values() for c in by_core})
    colours = _core_colours(cores)
    with styled_figure(min(3.3 * max(len(workloads), 1) + 0.6, 10.5), 3.6) as fig:
        axes = fig.subplots(1, max(len(workloads), 1), squeeze=False)[0]
        if not workloads:
            panel_message(axes[0], _EMPTY)
        for ax, workload in zip(axes, workloads):
            ax.set_title(labels.get(workload, workload))
            ax.set_xlabel("kernel time (ms)")
            for core, values in sorted(groups[workload].items()):
                x = np.sort(np.asarray(values, dtype=float) * 1e3)
                if x.size == 0:
                    continue
                y = np.arange(1, x.size + 1) / x.size
                ax.step(np.concatenate([[x[0]], x]), np.concatenate([[0.0], y]), where="post", color=colours[core],
                        linewidth=1.4, label=f"CPU {core} (n={x.size})")
            ax.set_ylim(0, 1.02)
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4))
        axes[0].set_ylabel("share of runs ≤ x")
        handles, names = axes[0].get_legend_handles_labels()
        title = "Kernel time per core (empirical CDF)"
        if len(cores) <= 10 and handles:
            for ax in axes:
                ax.legend(loc="lower right", frameon=False, fontsize=7)
        elif handles:  # in the title, where the constrained layout keeps it clear of the x labels
            title += f"\ncolour: CPU {cores[0]} (dark) to {cores[-1]} (light)"
        fig.suptitle(title)
    return fig


def slowest_vs_fastest(ratios, labels, gap=0.10):
    """Horizontal bars: mean on the slowest core / mean on the fastest, with CI (paper Fig. 2/3).
    ratios[workload] = (fastest core, slowest core, stats.Ratio)."""
    workloads = list(ratios)
    with styled_figure(7.0, 0.7 * max(len(workloads), 1) + 1.6) as fig:
        ax = fig.subplots()
        ax.set_title("Mean on the slowest core, normalised to the fastest core")
        ax.set_xlabel("mean slowest / mean fastest")
        if not workloads:
            panel_message(ax, "needs at least two cores")
            return fig
        y = np.arange(len(workloads))[::-1]
        values = np.array([ratios[w][2].ratio for w in workloads])
        low = np.array([ratios[w][2].ci_low for w in workloads])
        high = np.array([ratios[w][2].ci_high for w in workloads])
        err = np.vstack([np.clip(values - low, 0, None), np.clip(high - values, 0, None)])
        ax.barh(y, values - 1, left=1, height=0.55, color="#4c72b0", alpha=0.85)
        ax.errorbar(values, y, xerr=np.nan_to_num(err), fmt="none", ecolor="black", capsize=4, linewidth=1)
        ax.set_yticks(y)
        ax.set_yticklabels([f"{labels.get(w, w)}\nCPU {ratios[w][1]} / CPU {ratios[w][0]}" for w in workloads])
        ax.axvline(1.0, color="0.3", linewidth=1)
        ax.axvline(1 + gap, color="#c0392b", linestyle="--", linewidth=1)
        ax.annotate(f"paper: > {gap:.0%}", xy=(1 + gap, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -3),
                    textcoords="offset points", ha="left", va="top", fontsize=8, color="#c0392b")
        right = max(1 + gap * 1.3, float(np.nanmax(high)) * 1.04)
        left = min(0.99, float(np.nanmin(low)) - 0.01) if np.isfinite(low).any() else 0.99
        ax.set_xlim(left, right)
        for yy, v, h in zip(y, values, high):
            ax.annotate(f"{v:.3f}", (max(v, h if np.isfinite(h) else v), yy), xytext=(6, 0), textcoords="offset points",
                        va="center", fontsize=8)
        ax.grid(axis="y", visible=False)
    return fig


def similarity_matrices(similarities, labels, topology_cpus=None):
    """One panel per workload: KS distance between every pair of cores as colour, a black dot
    where the pair is 'similar', SMT siblings framed (paper Fig. 5). Axes: Linux CPU numbers."""
    workloads = list(similarities)
    k = max((len(s.cores) for s in similarities.values()), default=1)
    panels = max(len(workloads), 1)
    panel = min(max(2.2, 0.32 * k + 1.4), 9.0)
    width = min(panel * panels + 1.2, 12.0)
    panel = (width - 1.2) / panels  # square panels: the height follows the width each one gets
    siblings = {c.id: set(c.siblings) for c in topology_cpus or ()}
    vmax = max([0.05] + [float(np.nanmax(s.ks)) for s in similarities.values() if s.ks.size])
    cmap = matplotlib.colormaps["coolwarm"]
    with styled_figure(width, panel + 1.5) as fig:
        axes = fig.subplots(1, max(len(workloads), 1), squeeze=False)[0]
        image = None
        if not workloads:
            panel_message(axes[0], _EMPTY)
        for ax, workload in zip(axes, workloads):
            sim = similarities[workload]
            n = len(sim.cores)
            image = ax.imshow(sim.ks, cmap=cmap, vmin=0, vmax=vmax, origin="lower", interpolation="nearest")
            rows, cols = np.nonzero(sim.similar)
            ax.scatter(cols, rows, s=max(6, 120 / max(n, 1)), color="black", zorder=3, linewidths=0)
            for i, a in enumerate(sim.cores):
                for j, b in enumerate(sim.cores):
                    if a != b and b in siblings.get(a, ()):
                        ax.add_patch(matplotlib.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False,
                                                                  edgecolor="white", linewidth=2.0, zorder=4))
            step = max(1, n // 16)
            ticks = list(range(0, n, step))
            ax.set_xticks(ticks)
            ax.set_yticks(ticks)
            ax.set_xticklabels([_tick_label(sim.cores[t], topology_cpus) for t in ticks], fontsize=7)
            ax.set_yticklabels([_tick_label(sim.cores[t], topology_cpus).replace("\n", " ") for t in ticks], fontsize=7)
            ax.set_title(f"{labels.get(workload, workload)}\n{_count(sim)}")
            ax.grid(False)
            for spine in ax.spines.values():
                spine.set_visible(True)
        axes[0].set_ylabel("CPU")
        fig.supxlabel("CPU (Linux numbering; c = physical core, white frame = SMT siblings)", fontsize=9)
        if image is not None:
            bar = fig.colorbar(image, ax=list(axes), shrink=0.8, pad=0.02)
            bar.set_label("two-sample KS statistic D")
        fig.suptitle(f"Core similarity (black dot: similar, Anderson-Darling, Holm, alpha "
                     f"{next(iter(similarities.values())).alpha if similarities else 0.01})")
    return fig


def _count(sim):
    pairs = list(sim.pairs())
    similar = sum(bool(sim.similar[i, j]) for i, j in pairs)
    return f"{similar} of {len(pairs)} pairs similar"


def correlation(points, xlabel, ylabel, topology_cpus=None):
    """One point per core: normalised mean of one workload against another's (paper Fig. 4b).
    points = [(core, x, y), ...]."""
    with styled_figure(5.2, 4.4) as fig:
        ax = fig.subplots()
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title("Per-core means, normalised to each workload's fastest core")
        if not points:
            panel_message(ax, "needs at least three cores")
            return fig
        cores, x, y = zip(*points)
        ax.scatter(x, y, s=30, color="#4c72b0", zorder=3)
        for c, xx, yy in points:
            ax.annotate(str(c), (xx, yy), xytext=(4, 3), textcoords="offset points", fontsize=8)
        if len(points) >= 2 and np.ptp(x) > 0:
            slope, intercept = np.polyfit(x, y, 1)
            xs = np.linspace(min(x), max(x), 10)
            ax.plot(xs, slope * xs + intercept, color="0.4", linestyle="--", linewidth=1, label="least squares")
            ax.legend(loc="upper left", frameon=False)
    return fig
