"""
Which node stands out: a node x measurement table per experiment with outliers flagged by a robust
z-score, and the nodes ranked by the noise of their repeated workloads.

Robust z (Iglewicz & Hoaglin 1993): (x - median) / (1.4826 MAD), |z| > 3.5 an outlier, from 3 nodes
on; the spread has a floor (MIN_CHANGE of the median, or a CV's own standard error), so that no
difference smaller than matters is called an outlier (docs/commands.md, "On a cluster").
"""

import numpy as np
import scipy.stats

from analysis.core.report import Table

THRESHOLD = 3.5
MIN_NODES = 3
MIN_CHANGE = 0.02  # a node within 2 % of the fleet's median is never an outlier (compare's default threshold)


def robust_z(values, floor=0.0):
    """Robust z of each value (NaN stays NaN; all NaN with fewer than MIN_NODES finite values);
    `floor`: the smallest spread used (differences below floor x THRESHOLD are never outliers)."""
    x = np.asarray(values, dtype=float)
    z = np.full(x.shape, np.nan)
    finite = np.isfinite(x)
    if finite.sum() < MIN_NODES:
        return z
    clean = x[finite]
    median = np.median(clean)
    spread = 1.4826 * scipy.stats.median_abs_deviation(clean, scale=1.0)
    if spread == 0:
        spread = 1.2533 * np.mean(np.abs(clean - median))
    spread = max(spread, floor)
    z[finite] = 0.0 if spread == 0 else (clean - median) / spread
    return z


# ---------------------------------------------------------------------------------------------
# measurements per node, from each node report's numbers: {label: value}


def _microbench(data):
    return {f"{measure} {entry.get('variant', '')} ({entry.get('unit', '')})": entry.get("median")
            for measure, entry in data.get("main", {}).items()}


def _time_apis(data):
    values = {}
    for task, entry in data.get("inputs", {}).items():
        for quantity, what in (("cpu_summary", "CPU"), ("wall_summary", "wall")):
            rows = entry.get(quantity, [])
            lowest = min((r["load"] for r in rows), default=None)
            for row in rows:
                if row["load"] == lowest and row.get("median") is not None:
                    values[f"{task} {row['api']} {what}, load {lowest} (ms)"] = row["median"] * 1e3
    return values


def _bandwidth(data):
    values = {}
    for kernel, matrix in data.get("bandwidth_mbs", {}).items():
        local = [row[i] for i, row in enumerate(matrix) if i < len(row) and row[i] is not None]
        if local:
            values[f"{kernel}, local node (MB/s)"] = float(np.mean(local))
    return values


MEASUREMENTS = {"os-microbench": _microbench, "time-apis": _time_apis, "memory-bandwidth": _bandwidth}


def measurement_table(nodes, experiment):
    """(Table, data) of the nodes that ran `experiment`: its measurements with robust z; None when
    no node has numbers for it."""
    per_node = {n.name: MEASUREMENTS[experiment](n.data(experiment)) for n in nodes if n.data(experiment)}
    labels = list(dict.fromkeys(label for values in per_node.values() for label in values))
    if not labels:
        return None
    names = list(per_node)
    z = {}
    for label in labels:
        values = np.array([per_node[n].get(label, np.nan) for n in names], dtype=float)
        floor = MIN_CHANGE * abs(np.nanmedian(values)) / THRESHOLD if np.isfinite(values).any() else 0.0
        z[label] = robust_z(values, floor)
    rows, flagged = [], {}
    for i, node in enumerate(names):
        row, marks = [node], []
        for label in labels:
            value, score = per_node[node].get(label), z[label][i]
            if value is not None and np.isfinite(score) and abs(score) > THRESHOLD:
                row.append(f"{value:.4g}\u00a0(z\u00a0{score:+.1f})")  # kept on one line in the page
                marks.append(label)
            else:
                row.append(value)
        flagged[node] = marks
        # a node off in most measurements is one fact (a slower machine), not a list to read
        listed = (", ".join(marks) or "none") if len(marks) <= 3 else f"{len(marks)} of {len(labels)} measurements"
        rows.append(row + [listed])
    judged = len(names) >= MIN_NODES
    table = Table(
        title=f"{experiment}: node x measurement",
        columns=["node"] + labels + [f"outliers (|robust z| > {THRESHOLD})"],
        rows=rows,
        caption=(f"Medians as each node's report gives them. Robust z = (x - median) / (1.4826 MAD) over the nodes; "
                 f"|z| > {THRESHOLD} marks a node that differs from the fleet (a misconfigured, slower or noisy machine); "
                 f"the spread has a floor of {MIN_CHANGE:.0%} of the median / {THRESHOLD}, so a node within "
                 f"{MIN_CHANGE:.0%} of the median is never an outlier."
                 if judged else f"Only {len(names)} node(s): outliers need at least {MIN_NODES}; values shown unjudged."))
    data = {"labels": labels, "nodes": names,
            "values": {n: [per_node[n].get(label) for label in labels] for n in names},
            "z": {label: z[label] for label in labels}, "outliers": {n: m for n, m in flagged.items() if m},
            "outlier_nodes": sorted(n for n, m in flagged.items() if m), "judged": judged}
    return table, data


# ---------------------------------------------------------------------------------------------
# noise: the coefficient of variation of every repeated workload, per node


def _core_cvs(data):
    return {f"{w}, CPU {row['core']}": (row.get("cv"), row.get("n")) for w, entry in data.get("workloads", {}).items()
            for row in entry.get("summary", [])}


def _time_api_cvs(data):
    return {f"{task}, {row['api']}, load {row['load']}": (row.get("cv"), row.get("n"))
            for task, entry in data.get("inputs", {}).items() for row in entry.get("cpu_summary", [])}


def _discipline_cvs(data):
    return {condition: (entry.get("cpu", {}).get("cv"), entry.get("cpu", {}).get("n"))
            for condition, entry in data.get("conditions", {}).items()}


def cv_standard_error(cv, n):
    """Standard error of a sample CV from n normal values (McKay's approximation)."""
    return cv * np.sqrt((1 + 2 * cv * cv) / (2 * n)) if n and n > 1 else 0.0


NOISE = {"core-heterogeneity": _core_cvs, "time-apis": _time_api_cvs, "discipline": _discipline_cvs}


def noise_ranking(nodes):
    """(Table, data) or None: nodes from quietest to noisiest by the median, over their repeated
    workloads, of the workload's CV relative to its median CV across the fleet; a workload whose CV
    on one node has robust z > THRESHOLD against the same workload on the other nodes is flagged."""
    cvs, runs = {}, {}
    for node in nodes:
        for experiment, extract in NOISE.items():
            for group, (cv, n) in extract(node.data(experiment)).items():
                if cv is not None and np.isfinite(cv):
                    cvs.setdefault(f"{experiment}: {group}", {})[node.name] = float(cv)
                    runs.setdefault(f"{experiment}: {group}", []).append(n or 0)
    if not cvs:
        return None
    relative, flagged = {n.name: {} for n in nodes}, {n.name: [] for n in nodes}
    for group, by_node in cvs.items():
        names = list(by_node)
        fleet_median = float(np.median(list(by_node.values())))
        floor = cv_standard_error(fleet_median, min(runs[group]))
        for name, score in zip(names, robust_z([by_node[n] for n in names], floor)):
            relative[name][group] = by_node[name] / fleet_median if fleet_median > 0 else np.nan
            if np.isfinite(score) and score > THRESHOLD:
                flagged[name].append((group, by_node[name], fleet_median, float(score)))
    scored = [(float(np.nanmedian(list(r.values()))), name) for name, r in relative.items() if r]
    rows, data = [], []
    for rank, (score, name) in enumerate(sorted(scored), start=1):
        worst = max(relative[name], key=lambda g: relative[name][g])
        rows.append([rank, name, float(np.median([cvs[g][name] for g in relative[name]])), score,
                     f"{worst}: CV {cvs[worst][name]:.2%} ({relative[name][worst]:.2f}x the fleet's)",
                     "; ".join(f"{g}: CV {cv:.2%} vs fleet median {m:.2%} (z {z:+.1f})" for g, cv, m, z in flagged[name])
                     or "none"])
        groups = list(relative[name])
        data.append({"node": name, "median_cv": rows[-1][2], "relative_noise": score, "workloads": groups,
                     "ratios": [relative[name][g] for g in groups],
                     "ratio_flagged": [g in {f[0] for f in flagged[name]} for g in groups],
                     "flagged": [{"workload": g, "cv": cv, "fleet_median_cv": m, "z": z} for g, cv, m, z in flagged[name]]})
    table = Table(
        title="Nodes ranked by noise (CV of the repeated workloads)",
        columns=["rank", "node", "median CV", "relative noise", "noisiest workload", f"workloads with robust z > {THRESHOLD}"],
        rows=rows,
        caption="Each repeated workload (a core-heterogeneity workload on one CPU, a timing API at one load, a discipline "
                "condition) has a CV (sd/mean) on every node; relative noise is the node's median over its workloads of "
                "CV / the fleet's median CV of that workload (1 = typical, 2 = twice as noisy). A workload is flagged "
                f"where its CV's robust z against the same workload on the other nodes exceeds {THRESHOLD} (at least "
                f"{MIN_NODES} nodes; the spread is at least the CV's standard error at the runs measured).")
    return table, {"ranking": data, "noisy_nodes": sorted(d["node"] for d in data if d["flagged"])}
