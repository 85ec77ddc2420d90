"""
The measurement-discipline experiment (seed 001, the FOSDEM talk): run conditions and reruns.

Every benchexec invocation is one (condition, rerun). The section separates within-run from
between-run variation, compares the conditions over reruns, and warns where the talk's rules
(N >= 30 runs, M >= 5 reruns, a small CV) are not met; its parts are samples, variation, plots
and claims (docs/experiments.md, "discipline").
"""

import warnings

import numpy as np

from analysis.core import fmt
from analysis.core import stats, validity
from analysis.core.report import Section, Table
from analysis.experiments.discipline.claims import findings
from analysis.experiments.discipline.plots import wall_per_condition
from analysis.experiments.discipline.samples import LABEL, collect, present_conditions
from analysis.experiments.discipline.variation import contrasts, rule_warnings, variation

PARAGRAPHS = [
    "Seed 001 (FOSDEM talk 'How to Reliably Measure Software Performance') gives rules: N >= 30 "
    "runs, M >= 5 reruns, deterministic inputs, CPU affinity and priority, no SMT contention, no "
    "frequency scaling. Here one CPU-bound task (divisors of 43434343) runs under BenchExec in "
    "each condition; every (condition, rerun) is its own benchexec invocation, conditions "
    "interleaved within each rerun so drift spreads over all of them.",
    "Wall time is the talk's measure; CPU time (cgroup) shows the work itself. The rerun is the unit "
    "of replication and pairs the conditions (they ran interleaved in it): conditions are compared by "
    "the ratio of their means and the ratio of their CVs per rerun, with t intervals over reruns (of "
    "the logs for CV ratios), and judged by the report's verdict policy (docs/verdicts.md).",
]


def _conditions(runs, present, reruns_of, data):
    """Summaries and variation per condition into ``data``; the rows of the conditions table and
    of the variation table."""
    rows, var_rows = [], []
    for c in present:
        wall, cpu, reruns = runs.wall[runs.of(c)], runs.cpu[runs.of(c)], runs.rerun[runs.of(c)]
        w, u = stats.summarize(wall), stats.summarize(cpu[np.isfinite(cpu)])   # CPU times left out are NaN
        v = variation(wall, reruns)
        finite = np.isfinite(cpu)
        data["conditions"][c] = {"wall": w.as_dict(), "cpu": u.as_dict(), "variation": v,
                                 "cpu_variation": variation(cpu[finite], reruns[finite]) if finite.sum() > 1 else None,
                                 "excluded": runs.excluded.get(c, {})}
        rows.append([LABEL.get(c, c), len(reruns_of[c]), w.n, fmt.ms(fmt.finite(w.mean)), fmt.ms(fmt.finite(w.sd)),
                     fmt.pct(w.cv, missing=None), fmt.ms(fmt.finite(u.mean)), fmt.pct(u.cv, missing=None),
                     sum(runs.excluded.get(c, {}).values())])
        for r, s in v["per_rerun"].items():
            var_rows.append([LABEL.get(c, c), r, s["n"], fmt.ms(fmt.finite(s["mean"])), fmt.ms(fmt.finite(s["sd"])),
                             fmt.pct(s["cv"], missing=None), None, None])
        effect = v["rerun_effect"]
        var_rows.append([LABEL.get(c, c), "all", w.n, fmt.ms(fmt.finite(w.mean)), fmt.ms(fmt.finite(w.sd)),
                         fmt.pct(w.cv, missing=None), fmt.pct(v["between_cv"], missing=None),
                         _interval(effect, "{:.2f}")])
    return rows, var_rows


def _condition_tables(rows, var_rows):
    return [
        Table(title="Run conditions: wall and CPU time per condition",
              columns=["condition", "reruns M", "runs N", "wall mean (ms)", "wall sd (ms)", "wall CV", "CPU mean (ms)",
                       "CPU CV", "runs kept out"],
              rows=rows,
              caption="All reruns pooled. Runs that did not finish normally keep their BenchExec status and are kept out."),
        Table(title="Within-run and between-run variation of wall time (the talk's table of 5 runs)",
              columns=["condition", "rerun", "n", "mean (ms)", "sd (ms)", "CV", "CV of rerun means",
                       "rerun effect theta (95 % CI)"],
              rows=var_rows,
              caption="Per rerun: within-run spread. 'all': pooled over reruns, the CV of the rerun means (between-run "
                      "variation) and theta = 1 + n var(between) / var(within), 1 when reruns differ only by chance "
                      "(one-way ANOVA F, interval from the F distribution)."),
    ]


def _interval(estimate, form):
    """'value [low, high]' of an Estimate kept as a dict, None when there is none."""
    if not estimate:
        return None
    return f"{form.format(estimate['value'])} [{form.format(estimate['low'])}, {form.format(estimate['high'])}]"


def _comparison_table(wall_contrasts):
    def m(est):
        return est["m"] if est else None

    return Table(
        title="Conditions compared (wall time)",
        columns=["A", "B", "reruns M", "mean A / mean B (95 % CI)", "CV A / CV B (95 % CI)"],
        rows=[[LABEL[r["a"]], LABEL[r["b"]], m(r["mean_ratio"]) or m(r["cv_ratio"]), _interval(r["mean_ratio"], "{:.3f}"),
               _interval(r["cv_ratio"], "{:.2f}")] for r in wall_contrasts],
        caption="Paired by rerun: mean A / mean B is the mean of the per-rerun ratios, CV A / CV B the geometric mean "
                "of the per-rerun CV ratios, each with a 95 % t interval over reruns (with one rerun: the mean ratio "
                "over runs, bootstrap). The findings use intervals at their own family's level.")


def _kept_out_warning(runs):
    """How many runs were kept out, counted by status over all conditions."""
    kept_out = {}
    for counts in runs.excluded.values():
        for status, count in counts.items():
            kept_out[status] = kept_out.get(status, 0) + count
    lines = []
    if kept_out:
        total = sum(kept_out.values())
        lines.append(f"{total} of {total + len(runs.wall)} runs were kept out of every statistic: "
                     + ", ".join(f"{status}: {count}" for status, count in sorted(kept_out.items()))
                     + " (per condition in the first table).")
    cpu = validity.merge(*runs.cpu_left_out.values())
    if cpu:
        lines.append(f"CPU time {validity.left_out_text(cpu)} (of the CPU-time statistics only; those runs' wall times count).")
    return lines


def _placements(tables, conditions):
    """What the runner recorded about the scheduling groups in each niced step of these tables."""
    steps = [conditions.get(t.path.name) for t in tables]
    return [s.scheduling for s in steps if s is not None and s.condition == "same-core-niced"]


def section(tables, conditions=None, environment=None, cpus=None):
    """The report section; `environment` is a sweep's probe list (for what cannot be varied here)."""
    sec = Section(id="discipline", title="Measurement discipline: run conditions and reruns")
    runs = collect(tables, conditions)
    if runs is None or not len(runs.wall):
        sec.warnings.append("No valid runs of the discipline experiment.")
        return sec, {}
    present = present_conditions(runs)
    reruns_of = {c: sorted(set(runs.rerun[runs.of(c)].tolist())) for c in present}
    sec.paragraphs += PARAGRAPHS
    data = {"conditions": {}, "comparisons": {}}
    sec.tables += _condition_tables(*_conditions(runs, present, reruns_of, data))
    with warnings.catch_warnings():  # constant values (a test's synthetic runs) give NaN intervals, not noise
        warnings.simplefilter("ignore", RuntimeWarning)
        for quantity in ("wall", "cpu"):
            data["comparisons"][quantity] = contrasts(runs, quantity)
        found = findings(runs, environment or [], cpus, _placements(tables, conditions or {}))
    sec.tables.append(_comparison_table(data["comparisons"]["wall"]))
    sec.figures.append(wall_per_condition(runs, present))
    sec.warnings += rule_warnings(data["conditions"], reruns_of)
    sec.warnings += _kept_out_warning(runs)
    sec.findings += found
    return sec, data
