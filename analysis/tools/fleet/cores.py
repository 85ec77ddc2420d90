"""
Core heterogeneity across machines (seed 002's golden sample, over a fleet): one ranking of every
(node, core) pair per workload, the fleet's slowest / fastest ratio with a bootstrap CI, the cores
whose runs vary far more than the fleet's others, and the K fastest cores as a ranking file that
`timekit cores run --ranking FILE` accepts on each node, picking its own entry
(docs/commands.md, "On a cluster").
"""

import datetime
import json

import numpy as np

from analysis.core import stats
from analysis.core.report import Table, jsonable
from analysis.experiments.core_heterogeneity import analyse as cores
from analysis.experiments.core_heterogeneity.pinning import FLEET_KIND
from analysis.tools.fleet.outliers import THRESHOLD, cv_standard_error, robust_z

EXPERIMENT = "core-heterogeneity"


def pairs(nodes):
    """({workload: {(node, core): run times in s}} of the counted runs of every node's sweep,
    [(node, why)] of the nodes left out: a node without usable runs (every run left its core, say)
    is named in the report, and does not stop the other nodes' ranking)."""
    found, skipped = {}, []
    for node in nodes:
        entry = node.sweeps.get(EXPERIMENT)
        if entry is None:
            continue
        try:
            samples, _ = cores.load([entry.directory / f for step in entry.sweep.steps if not step.disturbed
                                     for f in step.result_files])  # outside work is no core's speed
        except cores.CoresError as e:
            skipped.append((node.name, str(e)))
            continue
        for workload, by_core in samples.groups().items():
            for core, values in by_core.items():
                found.setdefault(workload, {})[(node.name, int(core))] = np.asarray(values, dtype=float)
    return found, skipped


def fleet_ranking(groups):
    """Per workload: every (node, core) fastest first by mean, the slowest/fastest ratio (bootstrap
    CI) and the pairs whose CV has robust z > THRESHOLD among all the fleet's pairs."""
    ranking = {}
    for workload, by_pair in groups.items():
        summaries = {pair: stats.summarize(v) for pair, v in by_pair.items()}
        order = sorted(by_pair, key=lambda p: (summaries[p].mean, p))
        spread = stats.ratio_of_means(by_pair[order[0]], by_pair[order[-1]]) if len(order) > 1 else None
        cvs = [summaries[p].cv for p in order]
        cv_z = robust_z(cvs, cv_standard_error(float(np.nanmedian(cvs)), min(summaries[p].n for p in order)))
        ranking[workload] = {
            "order": [{"node": n, "core": c, "cv_z": z, **summaries[(n, c)].as_dict()} for (n, c), z in zip(order, cv_z)],
            "slowest_vs_fastest": None if spread is None else {
                "fastest": list(order[0]), "slowest": list(order[-1]), **spread.as_dict()},
            "noisy": [[n, c] for (n, c), z in zip(order, cv_z) if np.isfinite(z) and z > THRESHOLD],
        }
    return ranking


def pin_workload(ranking):
    return "cachestress" if "cachestress" in ranking else next(iter(ranking), None)


def golden_file(ranking, nodes, k):
    """The golden sample (the k fastest (node, core) pairs of each workload) as a fleet ranking
    file: {node: a core ranking of that node's golden cores} in `timekit cores rank`'s format."""
    now = datetime.datetime.now().astimezone()
    by_name = {n.name: n for n in nodes}
    entries = {}
    for workload, entry in ranking.items():
        for row in entry["order"][:k]:
            node = by_name[row["node"]]
            sweep = node.sweeps[EXPERIMENT].sweep
            ranking_of_node = entries.setdefault(row["node"], {
                "kind": "timekit core ranking",
                "created": now.isoformat(timespec="seconds"),
                "created_epoch": now.timestamp(),
                "boot_time": sweep.machine.get("boot_time"),
                "measured_from": datetime.datetime.fromisoformat(sweep.created).timestamp(),
                "host": node.host,
                "node": node.name,
                "test": f"fleet golden sample: the {k} fastest (node, core) pairs by mean of each workload",
                "sources": [str(node.sweeps[EXPERIMENT].directory)],
                "workloads": {},
            })
            workloads = ranking_of_node["workloads"].setdefault(
                workload, {"order": [], "cores": [], "adjacent": [], "slowest_vs_fastest": None})
            workloads["order"].append(row["core"])
            workloads["cores"].append({k_: v for k_, v in row.items() if k_ not in ("node", "cv_z")})
    workload = pin_workload(ranking)
    for entry in entries.values():
        entry["pin_workload"] = workload if workload in entry["workloads"] else next(iter(entry["workloads"]))
    return {"kind": FLEET_KIND, "created": now.isoformat(timespec="seconds"), "k": k,
            "golden": {w: [[r["node"], r["core"]] for r in e["order"][:k]] for w, e in ranking.items()},
            "nodes": entries}


def write_golden(path, golden):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(jsonable(golden), indent=1) + "\n")
    return path


def ranking_tables(ranking, k):
    """Per workload: the ranked (node, core) pairs (golden ones marked); one table of the spreads."""
    tables, spread_rows = [], []
    for workload, entry in ranking.items():
        fastest = entry["order"][0]["mean"]
        rows = [[i, r["node"], r["core"], r["n"], r["mean"] * 1e3, r["cv"], (r["mean"] / fastest - 1) * 100,
                 "golden" if i <= k else "", f"noisy (CV z {r['cv_z']:+.1f})" if [r["node"], r["core"]] in entry["noisy"] else ""]
                for i, r in enumerate(entry["order"], start=1)]
        tables.append(Table(title=f"{cores.LABEL.get(workload, workload)}: all cores of the fleet, fastest first",
                            columns=["rank", "node", "CPU", "n", "mean (ms)", "CV", "slower than the fastest (%)",
                                     f"golden sample (k = {k})", f"CV robust z > {THRESHOLD}"],
                            rows=rows,
                            caption="Counted runs (warm-ups and runs that left their core dropped, as in each node's "
                                    "report); order by mean kernel time (self-seconds)."))
        s = entry["slowest_vs_fastest"]
        if s:
            spread_rows.append([workload, f"{s['fastest'][0]} CPU {s['fastest'][1]}", f"{s['slowest'][0]} CPU {s['slowest'][1]}",
                                s["ratio"], s["ci_low"], s["ci_high"], s["method"],
                                ", ".join(f"{n} CPU {c}" for n, c in entry["noisy"]) or "none"])
    tables.insert(0, Table(title="Slowest / fastest core across the fleet",
                           columns=["workload", "fastest", "slowest", "ratio of means", "95 % CI low", "95 % CI high",
                                    "CI method", f"noisy cores (CV robust z > {THRESHOLD})"],
                           rows=spread_rows,
                           caption="Ratio of the mean run times slowest / fastest (node, core) pair."))
    return tables
