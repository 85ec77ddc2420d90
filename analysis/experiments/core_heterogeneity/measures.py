"""
What core-heterogeneity derives beside similarity and ranking: whether a core difference holds in
every round, the energy per core, and whether cg and the microbenchmark rank the cores alike.
"""

from __future__ import annotations

import numpy as np
import scipy.stats

from analysis.core.fmt import ms
from analysis.core.verdicts import Estimate


def per_round(samples, ratios):
    """Rows of mean ms per (workload, round) and core, and per workload in how many rounds the
    overall slowest core was the slowest."""
    counted = samples.select(samples.counted)
    all_cores = counted.cores()
    rows, consistency = [], {}
    for w in counted.workloads():
        fastest_overall, slowest_overall = (ratios[w][0], ratios[w][1]) if w in ratios else (None, None)
        agree = total = 0
        round_ratios, runs = [], []
        for r in sorted(set(counted.round[counted.workload == w].tolist())):
            means = {}
            for c in all_cores:
                values = counted.seconds[(counted.workload == w) & (counted.round == r) & (counted.core == c)]
                if values.size:
                    means[c] = float(np.mean(values))
            slowest = max(means, key=means.get) if len(means) > 1 else None
            if slowest is not None:
                total += 1
                agree += slowest == slowest_overall
            if slowest_overall in means and fastest_overall in means:
                round_ratios.append(means[slowest_overall] / means[fastest_overall])
                runs.append(int(np.sum((counted.workload == w) & (counted.round == r) & (counted.core == fastest_overall))))
            rows.append([w, r, *[ms(means.get(c)) for c in all_cores], "" if slowest is None else f"CPU {slowest}"])
        consistency[w] = {"slowest": slowest_overall, "rounds_slowest": agree, "rounds": total,
                          "round_ratios": round_ratios, "runs_per_round": min(runs, default=0)}
    return rows, consistency


def gap_estimate(ratio, rounds, n, confidence=0.95):
    """The slowest/fastest ratio as a verdict estimate: over rounds (the unit of replication: runs
    of one invocation share its drift) with a t interval of the per-round ratios where there are
    two or more rounds, else over the runs of the one round (its bootstrap interval)."""
    values = np.asarray(rounds.get("round_ratios", []), dtype=float)
    if values.size >= 2:
        low, high = scipy.stats.t.interval(confidence, values.size - 1, loc=values.mean(),
                                           scale=scipy.stats.sem(values))
        return Estimate(float(values.mean()), float(low), float(high), unit="reruns", m=int(values.size),
                        n=rounds.get("runs_per_round", 0), level=confidence,
                        method=f"t interval ({confidence:.0%}) of the per-round ratios slowest/fastest core")
    return Estimate(ratio.ratio, ratio.ci_low, ratio.ci_high, unit="runs", n=n, method=ratio.method)


def warmups_per_invocation(samples):
    counts = {}
    for inv, w in zip(samples.invocation[samples.warmup].tolist(), samples.workload[samples.warmup].tolist()):
        counts[(inv, w)] = counts.get((inv, w), 0) + 1
    return max(counts.values()) if counts else 0


def energy(samples, rapl):
    """Rows of energy per (workload, core) if BenchExec recorded it, and a note."""
    counted = samples.select(samples.counted)
    if np.isfinite(counted.energy).any():
        rows = []
        for w in counted.workloads():
            for c in counted.cores():
                mask = (counted.workload == w) & (counted.core == c) & np.isfinite(counted.energy)
                if mask.any():
                    joules = counted.energy[mask]
                    power = joules / counted.walltime[mask]
                    rows.append([w, c, int(mask.sum()), float(np.mean(joules)), float(np.nanmean(power))])
        return rows, ("RAPL measures a whole package, not one core: with one run at a time the package's energy "
                      "is attributed to the core the run used; idle cores' share is included.")
    if rapl:
        return [], ("not measured: RAPL exists here (/sys/class/powercap) but BenchExec recorded no cpuenergy "
                    "(install cpu-energy-meter to get it in every run).")
    return [], "not available: this machine exposes no RAPL interface (no /sys/class/powercap; usual in VMs)."


def correlation(groups):
    """Per-core means of cachestress and cg, normalised to each workload's fastest core, with
    Pearson's r across cores (paper Fig. 4b)."""
    if "cachestress" not in groups or "cg" not in groups:
        return {"testable": False, "why": "needs both cachestress and cg results"}
    common = sorted(set(groups["cachestress"]) & set(groups["cg"]))
    if len(common) < 3:
        return {"testable": False, "cores": common,
                "why": f"{len(common)} core(s) measured with both workloads; a correlation across cores needs at least 3 "
                       "(two points always lie on a line)"}
    micro = np.array([np.mean(groups["cachestress"][c]) for c in common])
    cg = np.array([np.mean(groups["cg"][c]) for c in common])
    micro, cg = micro / micro.min(), cg / cg.min()
    r = scipy.stats.pearsonr(micro, cg)
    return {"testable": True, "cores": common, "r": float(r.statistic), "p": float(r.pvalue), "n": len(common),
            "points": [(c, float(x), float(y)) for c, x, y in zip(common, micro, cg)]}
