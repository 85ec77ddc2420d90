"""Figures of the fleet report, in the kit's style (analysis.core.plots): one idea each."""

import matplotlib
import matplotlib.patches
import matplotlib.ticker
import numpy as np

from analysis.core.plots import panel_message, styled_figure
from analysis.tools.fleet.outliers import THRESHOLD

Z_LIMIT = 10.0  # the colour scale of robust z ends here (larger values get the end colour)


def _node_colours(names):
    cmap = matplotlib.colormaps["tab10" if len(names) <= 10 else "viridis"]
    if len(names) <= 10:
        return {n: cmap(i) for i, n in enumerate(names)}
    return {n: cmap(x) for n, x in zip(names, np.linspace(0, 0.9, len(names)))}


def core_ranking(entry, workload_label, k):
    """Every (node, core) pair of one workload, fastest first: mean run time with its 95 % CI,
    coloured by node; the golden sample left of the dashed line, noisy cores ringed."""
    rows = entry["order"]
    nodes = list(dict.fromkeys(r["node"] for r in rows))
    colours = _node_colours(nodes)
    with styled_figure(min(6.5 + 0.12 * len(rows), 10.5), 4.2) as fig:
        ax = fig.subplots()
        ax.set_title(f"{workload_label}: every core of the fleet, fastest first")
        ax.set_xlabel("rank of the (node, CPU) pair")
        ax.set_ylabel("mean run time (ms), 95 % CI")
        if not rows:
            panel_message(ax, "no counted runs")
            return fig
        x = np.arange(1, len(rows) + 1)
        mean = np.array([r["mean"] for r in rows]) * 1e3
        low = mean - np.array([r["ci_low"] for r in rows]) * 1e3
        high = np.array([r["ci_high"] for r in rows]) * 1e3 - mean
        for node in nodes:
            mine = np.array([r["node"] == node for r in rows])
            ax.errorbar(x[mine], mean[mine], yerr=np.vstack([np.clip(low[mine], 0, None), np.clip(high[mine], 0, None)]),
                        fmt="o", markersize=4, capsize=2, elinewidth=1, color=colours[node], label=node)
        noisy = np.array([[r["node"], r["core"]] in entry["noisy"] for r in rows])
        if noisy.any():
            ax.scatter(x[noisy], mean[noisy], s=140, facecolors="none", edgecolors="#c0392b", linewidths=1.4,
                       label=f"noisy (CV robust z > {THRESHOLD})", zorder=3)
        if k < len(rows):
            ax.axvline(k + 0.5, color="0.4", linestyle="--", linewidth=1)
            ax.annotate(f"\u2190 golden sample (k = {k})", xy=(k + 0.5, 0.97), xycoords=("data", "axes fraction"),
                        xytext=(4, 0), textcoords="offset points", ha="left", va="top", fontsize=8, color="0.3")
        if len(rows) <= 40:
            ax.set_xticks(x)
            ax.set_xticklabels([f"{r['node']}:{r['core']}" for r in rows], rotation=90, fontsize=7)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, title="node")
    return fig


def outlier_heatmap(data, experiment):
    """Robust z of every node x measurement: which node differs from the fleet, and where."""
    labels, nodes = data["labels"], data["nodes"]
    z = np.array([[data["z"][label][i] for label in labels] for i in range(len(nodes))], dtype=float)
    with styled_figure(min(2.5 + 0.45 * len(labels), 10.5), 1.6 + 0.35 * len(nodes)) as fig:
        ax = fig.subplots()
        ax.grid(False)
        ax.set_title(f"{experiment}: robust z of each node's median (|z| > {THRESHOLD} outlined)")
        image = ax.imshow(np.clip(z, -Z_LIMIT, Z_LIMIT), cmap="RdBu_r", vmin=-Z_LIMIT, vmax=Z_LIMIT, aspect="auto")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(nodes)))
        ax.set_yticklabels(nodes)
        ax.set_ylabel("node")
        for i, j in zip(*np.nonzero(np.abs(np.nan_to_num(z)) > THRESHOLD)):
            ax.add_patch(matplotlib.patches.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.2))
            ax.text(j, i, f"{z[i, j]:+.0f}", ha="center", va="center", fontsize=7,
                    color="white" if abs(z[i, j]) > Z_LIMIT / 2 else "black")
        bar = fig.colorbar(image, ax=ax, shrink=0.9)
        bar.set_label(f"robust z (clipped at ±{Z_LIMIT:g})")
    return fig


def noise(data):
    """Per node, each repeated workload's CV relative to the fleet's median CV of that workload."""
    ranking = data["ranking"]
    with styled_figure(min(3.0 + 0.6 * len(ranking), 9.0), 3.8) as fig:
        ax = fig.subplots()
        ax.set_title("Noise per node: each repeated workload's CV / the fleet's median CV of it")
        ax.set_xlabel("node (quietest first)")
        ax.set_ylabel("CV relative to the fleet (log scale)")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.axhline(1.0, color="0.4", linewidth=1, linestyle="--")
        for i, entry in enumerate(ranking):
            ratios = np.array(entry["ratios"], dtype=float)
            flagged = np.array(entry["ratio_flagged"], dtype=bool)
            jitter = (np.arange(ratios.size) % 7 - 3) * 0.04
            ax.scatter(i + jitter[~flagged], ratios[~flagged], s=12, color="#4c72b0", alpha=0.7)
            ax.scatter(i + jitter[flagged], ratios[flagged], s=30, color="#c0392b",
                       label=f"robust z > {THRESHOLD}" if i == 0 or not ax.get_legend_handles_labels()[0] else None)
            ax.plot([i - 0.3, i + 0.3], [entry["relative_noise"]] * 2, color="black", linewidth=1.5)
        ax.set_xticks(range(len(ranking)))
        ax.set_xticklabels([e["node"] for e in ranking])
        handles, names = ax.get_legend_handles_labels()
        if handles:
            ax.legend(handles[:1], names[:1], loc="upper left", frameon=False)
        ax.annotate("bar: the node's median", xy=(0.99, 0.02), xycoords="axes fraction", ha="right", va="bottom",
                    fontsize=7, color="0.3")
    return fig
