"""
The statistics of the discipline experiment: within-run and between-run variation of one
condition, the talk's contrasts between conditions, and the talk's rules (N >= 30 runs, M >= 5
reruns, a small CV) as warnings.
"""

import numpy as np
import scipy.stats

from analysis.core import stats
from analysis.experiments.discipline.samples import LABEL

ALPHA = 0.05
MIN_RUNS = 30  # the talk's tip 2
MIN_RERUNS = 5  # the talk's tip 3
CV_WARNING = 0.05  # a condition whose pooled CV exceeds this is too noisy to compare small changes


def variation(values, reruns):
    """Within-run and between-run variation of one condition: per rerun (n, mean, sd, CV), the
    pooled CV, the CV of the rerun means, and Kruskal-Wallis over the reruns."""
    per_rerun = {int(r): stats.summarize(values[reruns == r]) for r in sorted(set(reruns.tolist()))}
    pooled = stats.summarize(values)
    means = np.array([s.mean for s in per_rerun.values()])
    between = float(np.std(means, ddof=1) / np.mean(means)) if len(means) > 1 else float("nan")
    groups = [values[reruns == r] for r in per_rerun]
    if len(groups) > 1 and all(len(g) > 0 for g in groups) and np.ptp(values) > 0:
        h, p = scipy.stats.kruskal(*groups)
    else:
        h, p = float("nan"), float("nan")
    return {"per_rerun": {r: s.as_dict() for r, s in per_rerun.items()}, "pooled": pooled.as_dict(),
            "between_cv": between, "kruskal_h": float(h), "kruskal_p": float(p)}


def comparisons(runs, quantity="wall"):
    """The talk's contrasts: Welch t on the means and Brown-Forsythe on the spreads, Holm over each
    family. Only pairs whose conditions both ran are compared."""
    pairs = [("same-core", "separate-cores"), ("same-core-niced", "same-core"), ("alone", "unpinned"),
             ("separate-cores", "alone")]
    present = set(runs.condition.tolist())
    values = getattr(runs, quantity)
    rows = []
    for a, b in pairs:
        if a in present and b in present:
            x, y = values[runs.of(a)], values[runs.of(b)]
            welch = scipy.stats.ttest_ind(x, y, equal_var=False)
            spread = scipy.stats.levene(x, y, center="median")
            rows.append({"a": a, "b": b, "n_a": len(x), "n_b": len(y), "ratio": float(np.mean(x) / np.mean(y)),
                         "cv_a": float(stats.summarize(x).cv), "cv_b": float(stats.summarize(y).cv),
                         "welch_p": float(welch.pvalue), "levene_p": float(spread.pvalue)})
    for key in ("welch_p", "levene_p"):
        adjusted = stats.holm([r[key] for r in rows]) if rows else []
        for row, p in zip(rows, adjusted):
            row[key + "_holm"] = float(p)
    return rows


def rule_warnings(conditions, reruns_of):
    """The talk's rules as warnings, one per rule broken: N < 30 runs per rerun, M < 5 reruns,
    CV above the threshold; each names the conditions concerned."""
    few_runs, few_reruns, noisy = [], [], []
    for c, d in conditions.items():
        per_rerun = [s["n"] for s in d["variation"]["per_rerun"].values()]
        if per_rerun and min(per_rerun) < MIN_RUNS:
            few_runs.append(f"{LABEL.get(c, c)} ({min(per_rerun)})")
        if len(reruns_of[c]) < MIN_RERUNS:
            few_reruns.append(f"{LABEL.get(c, c)} ({len(reruns_of[c])})")
        cv = d["wall"]["cv"]
        if np.isfinite(cv) and cv > CV_WARNING:
            noisy.append(f"{LABEL.get(c, c)} ({cv:.1%})")
    out = []
    if few_runs:
        out.append(f"Fewer than N = {MIN_RUNS} runs per rerun (the talk's minimum): {'; '.join(few_runs)}. "
                   "The quick preset trades this for time; --preset talk runs 30.")
    if few_reruns:
        out.append(f"Fewer than M = {MIN_RERUNS} reruns, so between-run variation is not known: {'; '.join(few_reruns)}.")
    if noisy:
        out.append(f"Wall-time CV above {CV_WARNING:.0%}: {'; '.join(noisy)}. Differences smaller than a few times "
                   "the CV cannot be resolved in these conditions.")
    return out
