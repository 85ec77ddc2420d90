"""Figures of competition-style run sets and the paired comparison's report section.

Two figures, as table-generator and SV-COMP draw them but from the kit's numbers: a log-log
scatter of each task's CPU time, base against new (timeouts pinned at the limit), and a quantile
plot per run set (docs/calibration.md, "One run per task, one invocation a side").
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.ticker
import numpy as np

from analysis.core import plots
from analysis.core.report import Figure, Report, Section, Table, write_report
from analysis.tools.compare import per_task
from analysis.tools.compare import pairing
from analysis.tools.compare import per_task_text

_BASE_COLOUR, _NEW_COLOUR = "#4c72b0", "#c0392b"
_POINT_LIMIT = 20_000   # beyond, points are drawn as pixels


def _plain_log_axis(axis, decades_only=False):
    """Log-scale ticks labelled as plain numbers ('0.5', '20', '600'): at 1, 2, 5 x 10^k, or at the
    decades alone where those labels would run into each other."""
    subs = (1.0,) if decades_only else (1.0, 2.0, 5.0)
    axis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _limit(comparison):
    """The time limit to pin timeouts at: the run sets' own, else just above the largest time."""
    base, new = comparison.arrays["base"], comparison.arrays["new"]
    limits = [x for x in (base.time_limit, new.time_limit) if np.isfinite(x)]
    if limits:
        return max(limits)
    cpu = np.concatenate([base.values["cputime"], new.values["cputime"]])
    return float(np.nanmax(cpu)) * 1.2 if np.isfinite(cpu).any() else 1.0


def scatter(comparison, threshold, column="cputime"):
    """Base vs new per paired task, log-log; timeouts pinned at the limit."""
    pairs, base, new = (comparison.arrays[k] for k in ("pairs", "base", "new"))
    b = base.values[column][pairs.base]
    n = new.values[column][pairs.new]
    b_timeout = base.outcome[pairs.base] == pairing.TIMEOUT
    n_timeout = new.outcome[pairs.new] == pairing.TIMEOUT
    limit = _limit(comparison)
    b = np.where(b_timeout, limit, b)
    n = np.where(n_timeout, limit, n)
    shown = np.isfinite(b) & np.isfinite(n) & (b > 0) & (n > 0)
    timeout = b_timeout | n_timeout
    with plots.styled_figure(5.6, 5.2) as fig:
        ax = fig.subplots()
        if not shown.any():
            plots.panel_message(ax, "no task with a time on both sides")
            return fig
        lo = max(min(b[shown].min(), n[shown].min()) / 1.5, 1e-3)
        hi = max(b[shown].max(), n[shown].max()) * 1.5
        line = np.array([lo, hi])
        ax.plot(line, line, color="0.3", linewidth=1, label="same time")
        for factor, style in ((1 + threshold, "--"), (1 - threshold, "--")):
            ax.plot(line, line * factor, color="0.55", linewidth=0.8, linestyle=style)
        ax.plot([], [], color="0.55", linewidth=0.8, linestyle="--", label=f"±{threshold:.0%}")
        small = shown.sum() <= _POINT_LIMIT
        for mask, colour, label in ((shown & ~timeout, _BASE_COLOUR, "finished on both sides"),
                                    (shown & timeout, _NEW_COLOUR, f"timeout on one or both (pinned at {limit:g} s)")):
            if mask.any():
                ax.plot(b[mask], n[mask], "o" if small else ",", markersize=2.5, alpha=0.6, color=colour,
                        linestyle="none", rasterized=True)
                # the legend's own marker: a pixel marker would not show there
                ax.plot([], [], "o", markersize=4, color=colour, linestyle="none", label=f"{label}: {int(mask.sum())}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        _plain_log_axis(ax.xaxis, decades_only=hi / lo > 1e3)  # a 5.6-inch axis holds 3 decades of 1-2-5
        _plain_log_axis(ax.yaxis, decades_only=hi / lo > 1e3)
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        ax.set_aspect("equal")
        unit = base.units.get(column, "")
        ax.set_xlabel(f"base: {column} ({unit})")
        ax.set_ylabel(f"new: {column} ({unit})")
        ax.set_title(f"{comparison.name}: {column} per task\n{int(shown.sum())} tasks; above the diagonal: new slower",
                     loc="left")
        ax.legend(loc="lower right", frameon=True, framealpha=0.9, edgecolor="none")
    return fig


def solved_times(run_set, column="cputime"):
    """Sorted times of a run set's correct results; of its normally finished runs if it has no
    expected verdicts. Returns (times, what they are)."""
    correct = run_set.outcome == pairing.CORRECT
    if correct.any():
        chosen, what = correct, "correct results"
    else:
        chosen, what = run_set.finished, "runs that finished normally (no expected verdicts)"
    times = run_set.values[column][chosen & run_set.usable[column]]
    return np.sort(times), what


def quantile(run_sets, labels, column="cputime", limit=None):
    """SV-COMP-style quantile plot: per run set, its n-th fastest correct result against its time."""
    with plots.styled_figure(6.4, 4.2) as fig:
        ax = fig.subplots()
        colours = [_BASE_COLOUR, _NEW_COLOUR, "#55a868", "#8172b2", "#ccb974", "#64b5cd"]
        whats = set()
        drawn = False
        for i, (run_set, label) in enumerate(zip(run_sets, labels)):
            times, what = solved_times(run_set, column)
            whats.add(what)
            if times.size:
                drawn = True
                ax.step(np.arange(1, times.size + 1), np.maximum(times, 1e-3), where="post",
                        color=colours[i % len(colours)], linewidth=1.4, label=f"{label}: {times.size}")
        if not drawn:
            plots.panel_message(ax, "no correct or finished run with a time")
            return fig
        if limit and np.isfinite(limit):
            ax.axhline(limit, color="0.5", linewidth=0.8, linestyle=":", label=f"time limit {limit:g} s")
        ax.set_yscale("log")
        _plain_log_axis(ax.yaxis)
        unit = run_sets[0].units.get(column, "")
        ax.set_xlabel("n-th fastest result (number of tasks solved within the time)")
        ax.set_ylabel(f"{column} ({unit})")
        ax.set_title(f"Quantile plot: {' / '.join(sorted(whats))}, sorted by {column}", loc="left")
        ax.legend(loc="upper left", frameon=False)
    return fig


def figures(comparison, threshold):
    """{file stem: (title, PNG bytes, caption)} of one comparison."""
    stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in comparison.name.replace(" -> ", "_to_"))
    base, new = comparison.arrays["base"], comparison.arrays["new"]
    limit = _limit(comparison)
    return {
        f"{stem}.scatter": (f"{comparison.name}: CPU time per task, base against new",
                            plots.to_png(scatter(comparison, threshold)),
                            f"{comparison.base['label']} (x) against {comparison.new['label']} (y). "
                            f"Log-log; timeouts pinned at the time limit ({limit:g} s); solid: same time, dashed: "
                            f"±{threshold:.0%}. Points above the diagonal are tasks the new version is slower on."),
        f"{stem}.quantile": (f"{comparison.name}: quantile plot of CPU time",
                             plots.to_png(quantile([base, new], ["base", "new"], limit=limit)),
                             "Each side's correct results sorted by CPU time: further right is more tasks solved, "
                             "lower is faster."),
    }


def section(result, section_id="paired", title=None, drawn=None):
    """The paired comparison as a report Section (summary, status matrix, statistics, figures);
    drawn: figures() per comparison, if already made."""
    drawn = drawn or [figures(c, result.threshold) for c in result.comparisons]
    out = Section(id=section_id, title=title or "Paired comparison over tasks",
                  paragraphs=[result.method()], warnings=[f"Not compared: {s}" for s in result.skipped])
    if result.nothing:
        out.warnings.append(result.nothing_why())
    for c, made in zip(result.comparisons, drawn):
        out.paragraphs += [f"{c.name}: " + " ".join(per_task_text.summary_lines(c))]
        if c.newly_wrong:
            out.warnings.append(f"{c.name}: {c.newly_wrong} task(s) newly wrong: {', '.join(c.newly_wrong_tasks)}")
        out.warnings += [f"{c.name}: {line}" for line in per_task_text.not_compared_lines(c)]
        header, rows = per_task_text.transition_rows(c)
        out.tables.append(Table(f"{c.name}: status of the paired tasks", header, rows,
                                caption="Rows: outcome on the base side; columns: on the new side."))
        if per_task_text.compared(c):
            out.tables.append(Table(f"{c.name}: per-task ratios new/base", per_task_text.STAT_HEADER[:-1],
                                    per_task_text.column_rows(c, with_left_out=False),
                                    caption="Over the tasks both sides finished normally; the method is stated above."))
        out.tables.append(Table(f"{c.name}: tasks left out of the ratios", per_task_text.LEFT_OUT_HEADER,
                                per_task_text.left_out_rows(c)))
        for col in c.columns:
            if col.blocks:
                out.tables.append(Table(f"{c.name}: {col.column} per task set ({c.block_source})",
                                        per_task_text.BLOCK_HEADER,
                                        [per_task_text.stat_cells(s, s.block) for s in col.blocks],
                                        caption="Holm over the task sets."))
        for title_, png, caption in made.values():
            out.figures.append(Figure(title_, png, caption))
    return out


def write(result, outdir, environment=None):
    """report.html/json (+ samples.csv, empty) and one PNG per figure into outdir; their paths.
    `environment`: the Environment rows (machines and limits of both sides)."""
    outdir = Path(outdir)
    drawn = [figures(c, result.threshold) for c in result.comparisons]
    report = Report(title="timekit compare: paired over tasks", environment=dict(environment or {}))
    report.sections.append(section(result, drawn=drawn))
    report.data["paired"] = per_task.jsonable(result)
    paths = write_report(report, outdir)
    pngs = []
    for made in drawn:
        for stem, (_, png, _) in made.items():
            path = outdir / f"{stem}.png"
            path.write_bytes(png)
            pngs.append(path)
    return {"html": paths["html"], "json": paths["json"], "png": pngs}
