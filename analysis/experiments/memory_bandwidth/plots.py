"""The figure of the memory-bandwidth experiment, in the kit's style (analysis.core.plots)."""

from __future__ import annotations

import matplotlib
import matplotlib.colors
import numpy as np

from analysis.core import plots


def heatmaps(nodes, bandwidth, derived, firmware, title):
    """Two heatmaps side by side: bandwidth (GB/s) and derived distance, each cell annotated with
    its value and the firmware's distance."""
    n = len(nodes)
    size = min(3.0 + 0.5 * n, 4.8)
    with plots.styled_figure(2 * size + 1.2, size + 0.6) as fig:
        axes = fig.subplots(1, 2)
        panels = ((axes[0], bandwidth / 1e3, "triad bandwidth (GB/s)", "viridis", "{:.2f}"),
                  (axes[1], derived, "distance from bandwidth", "magma_r", "{:.1f}"))
        for ax, matrix, label, cmap, fmt in panels:
            ax.grid(False)
            finite = matrix[np.isfinite(matrix)]
            vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            if vmax <= vmin:
                vmin, vmax = vmin - 1, vmax + 1
            image = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=vmin, vmax=vmax)
            fig.colorbar(image, ax=ax, shrink=0.8)
            ax.set_xticks(range(n), [str(x) for x in nodes])
            ax.set_yticks(range(n), [str(x) for x in nodes])
            ax.set_xlabel("memory node")
            ax.set_ylabel("CPU node")
            ax.set_title(label)
            _annotate(ax, matrix, firmware, cmap, fmt, matplotlib.colors.Normalize(vmin, vmax))
        fig.suptitle(title)
    return fig


def _annotate(ax, matrix, firmware, cmap, fmt, norm):
    """Each cell's value and the firmware's distance, in black or white as the cell's colour needs."""
    n = len(matrix)
    for i in range(n):
        for j in range(n):
            value = matrix[i, j]
            r, g, b = matplotlib.colormaps[cmap](norm(value))[:3] if np.isfinite(value) else (1, 1, 1)
            colour = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"
            text = fmt.format(value) if np.isfinite(value) else "not run"
            ax.text(j, i, f"{text}\nfirmware {firmware[i, j]:g}", ha="center", va="center", fontsize=7.5 if n > 3 else 9,
                    color=colour)
