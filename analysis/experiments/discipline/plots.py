"""
The discipline experiment's figure: run times per condition with reruns side by side, so the
spread within and between reruns shows at a glance.
"""

import numpy as np

from analysis.core import plots
from analysis.core.report import Figure
from analysis.experiments.discipline.samples import LABEL


def wall_per_condition(runs, present):
    """Run times per condition, reruns side by side: spread within and between reruns at a glance."""
    with plots.styled_figure(8.5, 4.2) as fig:
        ax = fig.subplots()
        rng = np.random.default_rng(0)
        colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3"]
        reruns = sorted(set(runs.rerun.tolist()))
        width = 0.8 / max(len(reruns), 1)
        for i, c in enumerate(present):
            for j, r in enumerate(reruns):
                values = runs.wall[runs.of(c, r)] * 1e3
                x = i - 0.4 + width * (j + 0.5) + rng.uniform(-width / 3, width / 3, len(values))
                ax.scatter(x, values, s=9, color=colours[j % len(colours)], alpha=0.75,
                           label=f"rerun {r}" if i == 0 else None)
        ax.set_xticks(range(len(present)))
        ax.set_xticklabels([LABEL.get(c, c).replace(", ", ",\n").replace(" on ", "\non ") for c in present], fontsize=8)
        ax.set_ylabel("wall time per run (ms)")
        ax.set_title("Wall time per run condition; colours are reruns (separate benchexec invocations)")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=8)
    return Figure(title="Wall time per condition and rerun", png=plots.to_png(fig),
                  caption="Each dot is one run. Within a colour: within-run spread; between colours: between-run spread.")
