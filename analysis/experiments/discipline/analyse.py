"""
The measurement-discipline experiment (seed 001, the FOSDEM talk): run conditions and reruns.

Every benchexec invocation is one (condition, rerun); the conditions are the talk's: the measured
task alone (unpinned, and pinned to one CPU), with one CPU-bound competitor on another CPU, on the
same CPU, and on the same CPU at nice 19. The section separates within-run from between-run
variation, compares the conditions' means and spreads with tests, and warns where the talk's rules
(N >= 30 runs, M >= 5 reruns, a small CV) are not met.
"""

import re
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.stats

from analysis.core import plots
from analysis.core import stats
from analysis.core.report import Figure, Finding, Section, Table

ALPHA = 0.05
COLUMNS = ("status", "category", "cputime", "walltime")
MIN_RUNS = 30  # the talk's tip 2
MIN_RERUNS = 5  # the talk's tip 3
CV_WARNING = 0.05  # a condition whose pooled CV exceeds this is too noisy to compare small changes
CONDITIONS = ("unpinned", "alone", "separate-cores", "same-core", "same-core-niced")
LABEL = {
    "unpinned": "alone, unpinned",
    "alone": "alone, pinned",
    "separate-cores": "competitor on another CPU",
    "same-core": "competitor on the same CPU",
    "same-core-niced": "competitor on the same CPU, nice 19",
}
_NAME = re.compile(r"\.([a-z-]+)-rerun(\d+)$")


@dataclass
class Runs:
    """Valid runs of one experiment: condition, rerun, wall and CPU time (seconds) per run."""

    condition: np.ndarray
    rerun: np.ndarray
    wall: np.ndarray
    cpu: np.ndarray
    excluded: dict  # condition -> {status: count} of runs kept out

    def of(self, condition, rerun=None):
        mask = self.condition == condition
        if rerun is not None:
            mask &= self.rerun == rerun
        return mask


def step_of(table, conditions):
    """(condition, rerun) from the sweep manifest, else from the benchexec --name `COND-rerunM`."""
    step = conditions.get(table.path.name)
    if step is not None:
        return step.condition, step.rerun
    match = _NAME.search(table.benchmark)
    return (match.group(1), int(match.group(2))) if match else ("unpinned", 1)


def collect(tables, conditions=None):
    conditions = conditions or {}
    parts, excluded = [], {}
    for table in tables:
        condition, rerun = step_of(table, conditions)
        wall = table.columns.get("walltime", np.full(len(table), np.nan))
        cpu = table.columns.get("cputime", np.full(len(table), np.nan))
        valid = table.valid() & np.isfinite(wall) & np.isfinite(cpu)
        for status in table.status[~valid].tolist():
            counts = excluded.setdefault(condition, {})
            counts[status or "(no status)"] = counts.get(status or "(no status)", 0) + 1
        n = int(valid.sum())
        parts.append((np.full(n, condition, dtype=object), np.full(n, rerun), wall[valid], cpu[valid]))
    if not parts:
        return None
    return Runs(*(np.concatenate([p[i] for p in parts]) for i in range(4)), excluded=excluded)


def _present(runs):
    found = set(runs.condition.tolist())
    return [c for c in CONDITIONS if c in found] + sorted(found - set(CONDITIONS))


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


def section(tables, conditions=None, environment=None, cpus=None):
    """The report section; `environment` is a sweep's probe list (for what cannot be varied here)."""
    sec = Section(id="discipline", title="Measurement discipline: run conditions and reruns")
    runs = collect(tables, conditions)
    if runs is None or not len(runs.wall):
        sec.warnings.append("No valid runs of the discipline experiment.")
        return sec, {}
    present = _present(runs)
    reruns_of = {c: sorted(set(runs.rerun[runs.of(c)].tolist())) for c in present}
    sec.paragraphs += [
        "Seed 001 (FOSDEM talk 'How to Reliably Measure Software Performance') gives rules: N >= 30 "
        "runs, M >= 5 reruns, deterministic inputs, CPU affinity and priority, no SMT contention, no "
        "frequency scaling. Here one CPU-bound task (divisors of 43434343) runs under BenchExec in "
        "each condition; every (condition, rerun) is its own benchexec invocation, conditions "
        "interleaved within each rerun so drift spreads over all of them.",
        f"Wall time is the talk's measure; CPU time (cgroup) shows the work itself. Tests: Welch t on "
        f"means and Brown-Forsythe (Levene, median-centred) on spreads, alpha = {ALPHA}, Holm within "
        f"each family; Kruskal-Wallis across the reruns of one condition.",
    ]
    data = {"conditions": {}, "comparisons": {}}
    rows, var_rows = [], []
    for c in present:
        wall, cpu, reruns = runs.wall[runs.of(c)], runs.cpu[runs.of(c)], runs.rerun[runs.of(c)]
        w, u = stats.summarize(wall), stats.summarize(cpu)
        v = variation(wall, reruns)
        data["conditions"][c] = {"wall": w.as_dict(), "cpu": u.as_dict(), "variation": v,
                                 "excluded": runs.excluded.get(c, {})}
        rows.append([LABEL.get(c, c), len(reruns_of[c]), w.n, _ms(w.mean), _ms(w.sd), _pct(w.cv), _ms(u.mean), _pct(u.cv),
                     sum(runs.excluded.get(c, {}).values())])
        for r, s in v["per_rerun"].items():
            var_rows.append([LABEL.get(c, c), r, s["n"], _ms(s["mean"]), _ms(s["sd"]), _pct(s["cv"]), None, None, None])
        var_rows.append([LABEL.get(c, c), "all", w.n, _ms(w.mean), _ms(w.sd), _pct(w.cv), _pct(v["between_cv"]),
                         v["kruskal_h"], v["kruskal_p"]])
    sec.tables.append(Table(
        title="Run conditions: wall and CPU time per condition",
        columns=["condition", "reruns M", "runs N", "wall mean (ms)", "wall sd (ms)", "wall CV", "CPU mean (ms)", "CPU CV",
                 "runs kept out"],
        rows=rows, caption="All reruns pooled. Runs that did not finish normally keep their BenchExec status and are kept out."))
    sec.tables.append(Table(
        title="Within-run and between-run variation of wall time (the talk's table of 5 runs)",
        columns=["condition", "rerun", "n", "mean (ms)", "sd (ms)", "CV", "CV of rerun means", "Kruskal-Wallis H", "p"],
        rows=var_rows,
        caption="Per rerun: within-run spread. 'all': pooled over reruns, the CV of the rerun means (between-run "
                f"variation) and whether the reruns' distributions differ (Kruskal-Wallis, alpha = {ALPHA})."))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for quantity in ("wall", "cpu"):
            data["comparisons"][quantity] = comparisons(runs, quantity)
    sec.tables.append(Table(
        title="Conditions compared (wall time)",
        columns=["A", "B", "n A", "n B", "mean A / mean B", "CV A", "CV B", "Welch p (Holm)", "Brown-Forsythe p (Holm)"],
        rows=[[LABEL[r["a"]], LABEL[r["b"]], r["n_a"], r["n_b"], r["ratio"], _pct(r["cv_a"]), _pct(r["cv_b"]),
               r["welch_p_holm"], r["levene_p_holm"]] for r in data["comparisons"]["wall"]],
        caption=f"alpha = {ALPHA}; Holm over the rows of each test."))
    sec.figures.append(_figure(runs, present))
    sec.warnings += rule_warnings(data["conditions"], reruns_of)
    kept_out = {}
    for counts in runs.excluded.values():
        for status, count in counts.items():
            kept_out[status] = kept_out.get(status, 0) + count
    if kept_out:
        total = sum(kept_out.values())
        sec.warnings.append(f"{total} of {total + len(runs.wall)} runs were kept out of every statistic: "
                            + ", ".join(f"{status}: {count}" for status, count in sorted(kept_out.items()))
                            + " (per condition in the first table).")
    sec.findings += _findings(data, environment or [], cpus)
    return sec, data


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


def _findings(data, environment, cpus):
    found, walls = [], {r["a"] + "|" + r["b"]: r for r in data["comparisons"]["wall"]}
    probes = {p["name"]: p for p in environment}
    pair = walls.get("same-core|separate-cores")
    if pair:
        noisier = pair["levene_p_holm"] < ALPHA and pair["cv_a"] > pair["cv_b"]
        found.append(Finding(
            claim="Two CPU-bound tasks on the same core take longer and vary far more than on separate cores "
                  "(talk, bare metal: CV 23.9 % vs 0.04 %, mean 1538 vs 737 ms).",
            verdict="confirmed" if noisier and pair["welch_p_holm"] < ALPHA and pair["ratio"] > 1 else "refuted",
            evidence=f"wall CV {pair['cv_a']:.2%} vs {pair['cv_b']:.2%}, mean ratio {pair['ratio']:.2f}; Brown-Forsythe "
                     f"p (Holm) = {pair['levene_p_holm']:.3g}, Welch p (Holm) = {pair['welch_p_holm']:.3g}, alpha = {ALPHA}, "
                     f"n = {pair['n_a']} and {pair['n_b']}. Without SMT here, 'same core' is one logical CPU shared "
                     "by time slicing, the closest this machine has to the talk's sibling threads."
                     + (" Here the competitor on the other CPU disturbed more: see the separate-core finding."
                        if pair["cv_b"] > pair["cv_a"] else "")))
    else:
        found.append(Finding(claim="Same core vs separate cores.", verdict="not testable here",
                             evidence=f"needs two usable CPUs; this sweep had {cpus or 'unknown'}."))
    apart = walls.get("separate-cores|alone")
    if apart:
        disturbed = (apart["levene_p_holm"] < ALPHA and apart["cv_a"] > apart["cv_b"]) or (
            apart["welch_p_holm"] < ALPHA and apart["ratio"] > 1 + CV_WARNING / 2)
        cpu = {r["a"] + "|" + r["b"]: r for r in data["comparisons"]["cpu"]}.get("separate-cores|alone", {})
        found.append(Finding(
            claim="A CPU-bound task on a separate core leaves the measured task alone (talk: CV 0.04 %, as without it).",
            verdict="refuted" if disturbed else "confirmed",
            evidence=f"wall CV {apart['cv_a']:.2%} with the competitor on another CPU vs {apart['cv_b']:.2%} alone, mean ratio "
                     f"{apart['ratio']:.3f}; Brown-Forsythe p (Holm) = {apart['levene_p_holm']:.3g}, Welch p (Holm) = "
                     f"{apart['welch_p_holm']:.3g}, alpha = {ALPHA}, n = {apart['n_a']} and {apart['n_b']}; CPU-time CV "
                     f"{cpu.get('cv_a', float('nan')):.2%} vs {cpu.get('cv_b', float('nan')):.2%}."
                     + (" The run's own CPU time varies too, so the competitor slowed its execution, not just its "
                        "scheduling: in a VM two vCPUs can be hardware threads of one host core, the talk's SMT "
                        "contention arriving through the hypervisor." if disturbed and cpu.get("cv_a", 0) > 2 * cpu.get("cv_b", 1) else "")))
    niced = walls.get("same-core-niced|same-core")
    if niced:
        found.append(Finding(
            claim="Priority helps: a competitor at nice 19 slows the measured task less than one at nice 0 "
                  "(talk: set process priority).",
            verdict="confirmed" if niced["welch_p_holm"] < ALPHA and niced["ratio"] < 1 else "inconclusive",
            evidence=f"wall mean ratio niced/plain {niced['ratio']:.3f}, Welch p (Holm) = {niced['welch_p_holm']:.3g}, "
                     f"alpha = {ALPHA}, n = {niced['n_a']} and {niced['n_b']}. The competitor runs outside BenchExec's "
                     "cgroup; with group scheduling, nice weighs a task only against tasks of its own cgroup, so "
                     "under BenchExec priority is better set with cgroup CPU shares or by pinning."))
    alone = data["conditions"].get("alone") or data["conditions"].get("unpinned")
    if alone:
        v = alone["variation"]
        p = v["kruskal_p"]
        found.append(Finding(
            claim="Reruns of the same benchmark differ beyond their within-run noise, so M >= 5 reruns are needed "
                  "(talk: 5 runs with CV 2.2-3.2 % each, 2.94 % pooled).",
            verdict="confirmed" if np.isfinite(p) and p < ALPHA else "inconclusive",
            evidence=f"{len(v['per_rerun'])} reruns of the task alone: Kruskal-Wallis H = {v['kruskal_h']:.3g}, p = {p:.3g}, "
                     f"alpha = {ALPHA}, n = {alone['wall']['n']}; within-run CV "
                     f"{_range(v['per_rerun'])}, pooled {alone['wall']['cv']:.2%}, CV of rerun means {v['between_cv']:.2%}."))
    governor = probes.get("frequency governor", {})
    found.append(Finding(
        claim="Disabling dynamic frequency scaling cuts variation about 10x (talk: CV 0.383 % -> 0.041 %).",
        verdict="not testable here",
        evidence=_frequency_reason(governor)))
    smt = probes.get("SMT", {})
    if smt.get("value") not in (None, "on"):
        found.append(Finding(
            claim="Disabling SMT removes contention between sibling threads.", verdict="not testable here",
            evidence=f"SMT is '{smt.get('value', 'unknown')}' on this machine: there are no siblings to compare; "
                     "the same-core condition above shows time-slicing contention instead."))
    return found


def _frequency_reason(governor):
    value = governor.get("value")
    if value is None:
        return "the frequency governor was not recorded with these results, so frequency scaling cannot be judged."
    if value == "no cpufreq":
        return ("not controllable here: the kernel exposes no cpufreq (no scaling_governor files; the hypervisor sets "
                "the clock), so frequency scaling cannot be switched on and off for a comparison.")
    return (f"governor is '{value}'; the kit does not switch it during a sweep. Compare a sweep made after "
            "'timekit env tune' (performance governor, no boost) with one made before, using 'timekit compare'.")


def _figure(runs, present):
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


def _range(per_rerun):
    cvs = [s["cv"] for s in per_rerun.values() if np.isfinite(s["cv"])]
    return f"{min(cvs):.2%}-{max(cvs):.2%}" if cvs else "unknown"


def _ms(seconds):
    return None if seconds is None or not np.isfinite(seconds) else seconds * 1e3


def _pct(fraction):
    return None if fraction is None or not np.isfinite(fraction) else f"{fraction:.2%}"
