"""
The statistics of the discipline experiment: within-run and between-run variation of one
condition, the talk's contrasts between conditions on the rerun level (ratios of means and of
per-rerun CVs, the reruns pairing the conditions), and the talk's rules (N >= 30 runs, M >= 5
reruns, a small CV) as warnings.
"""

from dataclasses import asdict

import numpy as np
import scipy.stats

from analysis.core import replication, stats
from analysis.core.verdicts import Estimate
from analysis.experiments.discipline.samples import LABEL

MIN_RUNS = 30  # the talk's tip 2
MIN_RERUNS = 5  # the talk's tip 3
CV_WARNING = 0.05  # a condition whose pooled CV exceeds this is too noisy to compare small changes


def variation(values, reruns):
    """Within-run and between-run variation of one condition: per rerun (n, mean, sd, CV), the
    pooled CV, the CV of the rerun means, and the rerun effect (rerun_effect, 95 %)."""
    per_rerun = {int(r): stats.summarize(values[reruns == r]) for r in sorted(set(reruns.tolist()))}
    pooled = stats.summarize(values)
    means = np.array([s.mean for s in per_rerun.values()])
    between = float(np.std(means, ddof=1) / np.mean(means)) if len(means) > 1 else float("nan")
    effect = rerun_effect(values, reruns) if np.ptp(values) > 0 else None
    return {"per_rerun": {r: s.as_dict() for r, s in per_rerun.items()}, "pooled": pooled.as_dict(),
            "between_cv": between, "rerun_effect": asdict(effect) if effect else None}


PAIRS = (("same-core", "separate-cores"), ("same-core-niced", "same-core"), ("alone", "unpinned"),
         ("separate-cores", "alone"))  # the talk's contrasts, A against B


def mean_ratio(runs, a, b, quantity="wall", confidence=0.95):
    """mean A / mean B as an Estimate: t interval over the per-rerun ratios (the reruns pair the
    conditions: they ran interleaved in each), or over runs with one rerun."""
    values = getattr(runs, quantity)
    in_a, in_b = runs.of(a) & np.isfinite(values), runs.of(b) & np.isfinite(values)  # CPU times left out are NaN
    return replication.ratio_of_means(values[in_b], values[in_a], runs.rerun[in_b], runs.rerun[in_a],
                                      confidence=confidence, what=f"{quantity} mean {a} / {b}")


def rerun_cvs(runs, condition, quantity="wall"):
    """{rerun: CV of its runs (sd with ddof 1 / mean)} of one condition, reruns with 2+ runs."""
    values = getattr(runs, quantity)
    mask = runs.of(condition) & np.isfinite(values)
    out = {}
    for r in sorted(set(runs.rerun[mask].tolist())):
        x = values[mask & (runs.rerun == r)]
        if x.size >= 2 and np.mean(x) > 0:
            out[int(r)] = float(np.std(x, ddof=1) / np.mean(x))
    return out


def cv_ratio(runs, a, b, quantity="wall", confidence=0.95):
    """CV A / CV B as an Estimate: the geometric mean of the per-rerun CV ratios with a t interval of
    their logs; one statistic for direction and size, robust to one noisy rerun pulling a pooled
    CV. None with fewer than two shared reruns."""
    cv_a, cv_b = rerun_cvs(runs, a, quantity), rerun_cvs(runs, b, quantity)
    shared = [r for r in cv_a if r in cv_b and cv_a[r] > 0 and cv_b[r] > 0]
    n = min((int(np.sum(runs.of(c, r))) for c in (a, b) for r in shared), default=0)
    return replication.over_reruns([cv_a[r] / cv_b[r] for r in shared], n=n, confidence=confidence, log=True,
                                   method=f"the per-rerun {quantity} CV ratios {a} / {b}")


def rerun_effect(values, reruns, confidence=0.95):
    """How much more the rerun means vary than within-run noise predicts, as an Estimate of
    theta = 1 + n var(between) / var(within) (1: reruns differ only by chance). One-way ANOVA:
    F = MS between / MS within is theta times an F(M-1, N-M) variate, which gives the interval."""
    groups = [values[reruns == r] for r in sorted(set(reruns.tolist()))]
    groups = [g for g in groups if g.size >= 2]
    m, total = len(groups), sum(g.size for g in groups)
    if m < 2 or total - m < 1:
        return None
    f = scipy.stats.f_oneway(*groups).statistic
    if not np.isfinite(f):
        return None
    tail = (1 - confidence) / 2
    low = f / scipy.stats.f.ppf(1 - tail, m - 1, total - m)
    high = f / scipy.stats.f.ppf(tail, m - 1, total - m)
    return Estimate(float(f), float(low), float(high), unit="reruns", n=min(g.size for g in groups), m=m,
                    scale="ratio", level=confidence, interval="F", method=f"one-way ANOVA F over reruns, interval from F({m - 1}, {total - m}), "
                                      f"{100 * confidence:.3g} %")


def contrasts(runs, quantity="wall"):
    """The talk's contrasts at 95 %: per pair whose conditions both ran, mean A / mean B and CV A /
    CV B over reruns (data for report.json; the findings compute their own, at their family's level)."""
    present = set(runs.condition.tolist())
    rows = []
    for a, b in PAIRS:
        if a in present and b in present:
            mean, cv = mean_ratio(runs, a, b, quantity), cv_ratio(runs, a, b, quantity)
            rows.append({"a": a, "b": b, "mean_ratio": asdict(mean) if mean else None,
                         "cv_ratio": asdict(cv) if cv else None})
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
