"""report.html, report.json (the answer's fields under data.bisect) and bisect.png of a bisect.

The figure: each tested commit's change against GOOD with its CI, in commit order (GOOD at 0, BAD at
n), coloured by verdict, the threshold dashed and the commits that may hold the culprit shaded; the
page (analysis.core.report) opens with the answer's lines and holds the commits, the steps in the
order taken and the builds (GOOD's first) with their logs. samples.csv holds every execution the
steps timed, read back from each step's ab directory: what each step's ratio rests on.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from analysis.core import plots
from analysis.core.report import Figure, Report, Section, Table, write_report
from analysis.products.bisect.answer import Answer, lines

COLOURS = {"slower": "#c0392b", "same": "#4c72b0", "faster": "#2e8b57", "undecided": "#e69f00", "good": "#333333"}
LABELS = {"good": "GOOD"}
PNG = "bisect.png"


def figure(answer: Answer):
    """The tested commits' change against GOOD (%) with their CIs, in commit order."""
    rows = answer.rows()
    n = len(answer.commits)
    with plots.styled_figure(8.0, 4.2) as fig:
        ax = fig.subplots()
        o, shape = answer.outcome, answer.shape
        if answer.kind == "spread" and shape.parts:
            ax.axvspan(shape.parts[0].first + 0.5, shape.parts[-1].last + 1.5, color="#e69f00", alpha=0.08,
                       linewidth=0, label="spread over (decided parts)")
        elif o.found:
            ax.axvspan(o.lo + 1.5, o.hi + 1.5, color="#c0392b", alpha=0.12, linewidth=0,
                       label="culprit" if answer.kind == "culprit" else "may hold the culprit")
            ax.annotate(answer.commits[o.hi].short if answer.kind == "culprit" else f"{o.hi - o.lo} commits",
                        (o.hi + 1, 1), xycoords=("data", "axes fraction"), xytext=(0, -10),
                        textcoords="offset points", ha="center", fontsize=7, color="#c0392b")
        line = [r for r in rows if r["ratio"] is not None]
        ax.plot([r["position"] for r in line], [r["ratio"] * 100 - 100 for r in line], color="0.75",
                linewidth=0.8, zorder=0)
        ax.axhline(answer.threshold * 100, color="0.4", linestyle="--", linewidth=1,
                   label=f"threshold +{answer.threshold * 100:g} %")
        ax.axhline(0, color="0.6", linewidth=0.8)
        for verdict, colour in COLOURS.items():
            pts = [r for r in rows if r["verdict"] == verdict and r["ratio"] is not None]
            if not pts:
                continue
            x = np.array([r["position"] for r in pts], dtype=float)
            y = np.array([r["ratio"] for r in pts], dtype=float) * 100 - 100
            low = np.array([r["low"] if r["low"] is not None else r["ratio"] for r in pts], dtype=float) * 100 - 100
            high = np.array([r["high"] if r["high"] is not None else r["ratio"] for r in pts], dtype=float) * 100 - 100
            ax.errorbar(x, y, yerr=np.vstack([np.clip(y - low, 0, None), np.clip(high - y, 0, None)]), fmt="o",
                        color=colour, markersize=4, capsize=3, elinewidth=1, label=LABELS.get(verdict, verdict))
            for r, xi, yi in zip(pts, x, y):
                if r["step"] is not None:
                    ax.annotate(str(r["step"]), (xi, yi), xytext=(4, 3), textcoords="offset points", fontsize=7,
                                color="0.35")
        skipped = [r for r in rows if r["verdict"] == "skipped"]
        if skipped:
            ax.plot([r["position"] for r in skipped], [0] * len(skipped), "x", color="0.3", markersize=6,
                    label="did not build (skipped)")
            for r in skipped:
                ax.annotate(str(r["step"]), (r["position"], 0), xytext=(4, 3), textcoords="offset points",
                            fontsize=7, color="0.35")
        untested = [r["position"] for r in rows if not r["tested"]]
        if untested:
            ax.plot(untested, [0] * len(untested), "|", color="0.7", markersize=6, label="not tested")
        ax.set_xlim(-0.8, n + 0.8)
        ax.set_xlabel(f"commit on BAD's first-parent line (0 = GOOD {answer.good.short}, {n} = BAD "
                      f"{answer.bad.short}); numbers: step order")
        ax.set_ylabel("change against GOOD (%), with CI")
        ax.set_title(f"bisect: each tested commit against GOOD ({answer.kind})")
        ax.legend(loc="upper left", frameon=False)
    return fig


def _pct(x):
    return None if x is None else round(x * 100 - 100, 3)


def _where(path, outdir: Path):
    if not path:
        return None
    try:
        return os.path.relpath(path, outdir)
    except ValueError:
        return str(path)


def section(answer: Answer, png: bytes, outdir: Path) -> Section:
    rows = answer.rows()
    commits = Table("Tested commits in commit order, against GOOD",
                    ["position", "commit", "subject", "verdict", "change (%)", "CI low (%)", "CI high (%)", "step"],
                    [[r["position"], r["sha"][:12], r["subject"], r["verdict"] or "not tested", _pct(r["ratio"]),
                      _pct(r["low"]), _pct(r["high"]), r["step"]] for r in rows if r["tested"]],
                    caption="change: the commit's cost against GOOD's, with the CI of its step; position: on BAD's "
                            "first-parent line (report.json lists every commit).")
    steps = Table("Steps in the order taken", ["step", "commit", "verdict", "change (%)", "CI low (%)",
                                              "CI high (%)", "recorded", "measurement"],
                  [[t.order, t.commit[:12], t.step.verdict, _pct(t.step.ratio), _pct(t.step.low), _pct(t.step.high),
                    "yes" if t.reused else "no", _where(t.step.detail.get("directory"), outdir)] for t in answer.outcome.steps],
                  caption="measurement: the step's timekit ab directory (timekit ab --resume --output DIR reads it "
                          "again); samples.csv holds every execution of GOOD and the commit the steps timed.")
    builds = Table("Builds", ["commit", "built", "exit code", "seconds", "reused", "log", "why it failed"],
                   [[("GOOD " if sha == answer.good.sha else "") + sha[:12], "yes" if b["ok"] else "no (skipped)",
                     b["returncode"], b["seconds"], "yes" if b.get("reused") else "no", _where(b.get("log"), outdir),
                     b.get("error") or None] for sha, b in answer.builds.items()],
                   caption="every build of the bisect, GOOD's first; the logs stay in the results directory "
                           "after the worktrees are gone.")
    text = lines(answer)
    out = Section(id="bisect", title="Which commit made it slower", paragraphs=[text[-1]] + text[:-1],
                  tables=[commits, steps] + ([builds] if answer.builds else []))
    out.figures.append(Figure("Each tested commit against GOOD", png,
                              "Change of each tested commit's cost against GOOD's with its CI, in commit order; "
                              "shaded: the commits that may hold the culprit."))
    return out


def samples(answer: Answer) -> list:
    """One row per execution the steps timed (GOOD's side and the commit's), from each step's ab
    directory; invocations set aside for outside work are marked, not left out."""
    rows = []
    for taken in answer.outcome.steps:
        directory = taken.step.detail.get("directory")
        if directory:
            rows += _step_samples(taken, Path(directory))
    return rows


def _step_samples(taken, directory: Path) -> list:
    from analysis.ab import paired
    from analysis.tools.commands import executions

    if not (directory / paired.MANIFEST).exists():
        return []
    run = paired.PairedRun.load(directory)
    found = paired.loaded(directory, run)
    invocations = sorted(((invocation, set_aside) for tables, set_aside in ((found.tables, False),
                                                                           (found.set_aside or [], True))
                          for name in run.rundefinitions for invocation in executions.of_tables(tables, name)),
                         key=lambda item: item[0].key[1])
    return [{"step": taken.order, "commit": taken.commit[:12], "invocation": number, "run": k,
             "execution": e.index, "side": "GOOD" if e.side == "a" else "commit", "mode": e.mode,
             "cputime_s": e.cpu, "walltime_s": e.wall, "exit_status": e.status, "set_aside": set_aside}
            for number, (invocation, set_aside) in enumerate(invocations, 1)
            for k, executed in enumerate(invocation.runs, 1) for e in executed]


def write(answer: Answer, outdir, environment=None) -> dict:
    """report.html, report.json, samples.csv and bisect.png into OUTDIR; their paths."""
    outdir = Path(outdir)
    png = plots.to_png(figure(answer))
    report = Report(title="timekit bisect", environment=dict(environment or {}), samples=samples(answer))
    report.sections.append(section(answer, png, outdir))
    report.data["bisect"] = answer.to_dict()
    paths = write_report(report, outdir)
    (outdir / PNG).write_bytes(png)
    return {"html": paths["html"], "json": paths["json"], "csv": paths["csv"], "png": outdir / PNG}
