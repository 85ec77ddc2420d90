"""The report's section for result files that belong to no experiment of the kit.

Any BenchExec result file gets something: per run set the runs by status and outcome, CPU, wall
time and memory summaries and a quantile plot; for run sets that share tasks, the paired
comparison of each against the first. What was analysed and what was skipped comes back as lines
for the terminal, never a silently empty page (docs/calibration.md, "One run per task, one
invocation a side").
"""

from __future__ import annotations

import collections
import dataclasses

import numpy as np

from analysis.core import stats, validity
from analysis.core.report import Figure, Section, Table
from analysis.tools.compare import per_task
from analysis.tools.compare import per_task_plots
from analysis.tools.compare import pairing

COLUMNS = pairing.DEFAULT_COLUMNS
MAX_STATUSES = 8    # statuses listed per run set; the rest summed as 'other'


def wanted_columns():
    """The columns this section reads, for the loader."""
    from analysis.tools.compare import per_task_output

    return per_task_output.wanted_columns(COLUMNS)


@dataclasses.dataclass
class GenericResult:
    sections: list
    data: dict
    notes: list          # lines for the terminal: what was analysed, what was skipped and why
    skipped_files: list


def _summary_rows(run_set):
    rows = []
    for column in COLUMNS:
        values = run_set.values[column][run_set.usable[column]]
        invalid = validity.describe(run_set.invalid[column])
        not_finished = int((~run_set.finished).sum())
        if not values.size:
            rows.append([column, 0] + [None] * 5 + [f"{not_finished} not finished normally; no value in this run set"])
            continue
        s = stats.summarize(values)
        scale, unit = (1e-6, "MB") if run_set.units.get(column) == "B" else (1.0, run_set.units.get(column, ""))
        left = f"{not_finished} not finished normally" + (f"; {invalid}" if invalid else "")
        rows.append([f"{column} ({unit})", s.n, s.mean * scale, s.median * scale, s.min * scale, s.max * scale,
                     float(values.sum()) * scale, left])
    return rows


def _status_rows(run_set):
    ranked = collections.Counter(run_set.statuses.tolist()).most_common()
    rows = [[status or "(none)", n] for status, n in ranked[:MAX_STATUSES]]
    if len(ranked) > MAX_STATUSES:
        rows.append([f"other ({len(ranked) - MAX_STATUSES} statuses)", sum(n for _, n in ranked[MAX_STATUSES:])])
    return rows


def run_set_section(run_sets, figure_stem="runsets"):
    """One section describing every run set, and its data."""
    section = Section(id="generic-runsets", title="Result files of no kit experiment: run sets")
    data = []
    labels = [f"{rs.name} ({rs.date[:16]})" for rs in run_sets]  # one run set name is often several dates
    for rs, label in zip(run_sets, labels):
        outcome_counts = np.bincount(rs.outcome, minlength=len(pairing.OUTCOMES))
        section.paragraphs.append(
            f"{rs.name} ({rs.label}; {rs.date}; version {rs.version}): {len(rs)} runs; "
            + ", ".join(f"{n} {o}" for o, n in zip(pairing.OUTCOMES, outcome_counts) if n)
            + (f"; score {rs.score.sum():g} ({rs.score_method})" if rs.score is not None else "") + ".")
        section.tables.append(Table(f"{label}: runs by status", ["status", "runs"], _status_rows(rs)))
        section.tables.append(Table(
            f"{label}: measurements of the runs that finished normally",
            ["column", "n", "mean", "median", "min", "max", "sum", "left out"], _summary_rows(rs),
            caption="Runs that timed out, ran out of memory or failed are left out, and so are values that are "
                    "no measurement (none, NaN, infinite, negative), counted by reason."))
        data.append({"run set": rs.name, "label": rs.label, "date": rs.date, "runs": len(rs),
                     "outcomes": dict(zip(pairing.OUTCOMES, outcome_counts.tolist())),
                     "invalid": rs.invalid, "score": None if rs.score is None else float(rs.score.sum())})
    limits = {rs.time_limit for rs in run_sets[:6]}
    shared_limit = limits.pop() if len(limits) == 1 else None   # a line only for a limit all of them had
    figure = per_task_plots.quantile(run_sets[:6], labels[:6], limit=shared_limit)
    section.figures.append(Figure("Quantile plot of CPU time", per_task_plots.plots.to_png(figure),
                                  caption="Per run set its correct results (or, without expected verdicts, its "
                                          "runs that finished normally) sorted by CPU time."
                                  + (f" First 6 of {len(run_sets)} run sets." if len(run_sets) > 6 else "")))
    return section, data


def generic(tables, alpha=0.05, threshold=0.02, min_cputime=pairing.MIN_CPUTIME) -> GenericResult:
    """Sections, data and terminal notes for RunTables of no kit experiment."""
    run_sets, notes, skipped_files = [], [], []
    for rs in pairing.run_sets(tables, COLUMNS):
        if len(rs) == 0:
            notes.append(f"skipped {rs.label}: no run in the file")
            skipped_files.append(rs.label)
            continue
        run_sets.append(rs)
        notes.append(f"analysed {rs.label}: run set {rs.name}, {len(rs)} runs, "
                     f"{int(rs.finished.sum())} finished normally")
    if not run_sets:
        return GenericResult([], {}, notes, skipped_files)
    section, data = run_set_section(run_sets)
    sections, out = [section], {"run sets": data}
    if len(run_sets) >= 2:
        first, pairs, not_comparable = run_sets[0], [], []
        for rs in run_sets[1:]:
            if pairing.pair(first, rs).base.size:
                pairs.append((first, rs))
            else:
                not_comparable.append(f"{rs.name} ({rs.label}) has no task in common with {first.name} ({first.label})")
        result = per_task.compare_pairs(pairs, COLUMNS, alpha, threshold, min_cputime, not_comparable)
        notes += [f"compared {c.new['label']} against {c.base['label']} task by task: {c.paired} tasks paired"
                  for c in result.comparisons]
        notes += [f"not compared: {s}" for s in result.skipped]
        if result.comparisons:
            sections.append(per_task_plots.section(
                result, section_id="generic-paired",
                title=f"Result files of no kit experiment: each run set against the first ({first.name}, {first.date})"))
            out["paired"] = per_task.jsonable(result)
    else:
        notes.append("no paired comparison: one run set only (give two or more result files to compare them task by task)")
    return GenericResult(sections, out, notes, skipped_files)
