"""
`timekit fleet report DIR...`: each node's report, and one fleet report over them (DIR: a fleet
folder, or one machine's sweeps recorded anywhere, see machines.py): the nodes and
how their recorded environments differ, every claim per node and across the fleet, the cores of
all nodes in one ranking with the fleet's golden sample, a node x measurement table per
experiment with outliers flagged, and the nodes ranked by noise.
"""

import datetime
import os
import sys
import warnings
from collections import Counter
from pathlib import Path

from analysis.core.paths import RESULTS
from analysis.core.plots import to_png
from analysis.core.report import Figure, Report, Section, Table, write_report
from analysis.experiments.core_heterogeneity.analyse import LABEL
from analysis.tools.fleet import claims, cores, outliers
from analysis.tools.fleet import plots as fleet_plots
from analysis.tools.fleet.collect import collect, environment_differences
from analysis.tools.fleet.machines import is_fleet

GOLDEN_FILE = "golden-cores.json"


def _overview(nodes, fleets, given_machines, left_out, differences, outdir):
    reports = [[n.name, e, os.path.relpath(s.report_html, outdir)] for n in nodes for e, s in sorted(n.sweeps.items())]
    parts = [f"{len(fleets)} fleet director{'y' if len(fleets) == 1 else 'ies'}"] if fleets else []
    if given_machines:
        parts.append(f"{len(given_machines)} machine folder{'s' if len(given_machines) != 1 else ''}")
    section = Section(
        id="fleet", title="The fleet",
        paragraphs=[f"{len(nodes)} node(s) with finished sweeps, from {' and '.join(parts)}. "
                    "Each node's own report states that machine's facts; the sections below compare "
                    "the nodes. Numbers come from the node reports and the sweeps' result files, facts from what each "
                    "sweep recorded on its node."])
    if fleets:
        rows = [[str(d), f.experiment, f.preset, len(f.nodes), f.kit_commit[:12], f.created] for d, f in fleets]
        section.tables.append(Table("Fleets", ["directory", "experiment", "preset", "nodes", "kit commit", "submitted"], rows))
    if given_machines:
        rows = [[m.name, ", ".join(map(str, m.folders)), ", ".join(sorted({s.experiment for _, s in m.sweeps}))]
                for m in given_machines]
        section.tables.append(Table(
            "Machines given by folder", ["node", "folder(s)", "sweeps"], rows,
            caption="Each folder given is one machine (NAME=DIR names it; the same NAME joins folders). Unnamed, a "
                    "machine is called by the host name its sweeps recorded, or by its folder where two share one."))
    section.tables += [claims.environment_table(nodes, differences),
                       Table("Node reports", ["node", "experiment", "report (relative to this page)"], reports)]
    for directory, fleet in fleets:
        commits = sorted({job.get("kit_commit") or fleet.kit_commit for jobs in fleet.jobs.values() for job in jobs})
        if len(commits) > 1:
            section.warnings.append(f"{directory}: its jobs ran different kit commits ({', '.join(c[:12] for c in commits)}).")
    for node, experiment, why in left_out:
        section.warnings.append(f"{node}: {experiment} left out: {why}.")
    if len(nodes) < outliers.MIN_NODES:
        section.warnings.append(f"Only {len(nodes)} node(s): outliers and noisy nodes need at least {outliers.MIN_NODES}.")
    return section


def _cores_section(nodes, golden_k, outdir):
    groups, skipped = cores.pairs(nodes)
    left_out = [f"{node}: left out of the core ranking: {why}" for node, why in skipped]
    if not groups:
        if not skipped:
            return None, {}
        return Section(id="fleet-cores", title="Core heterogeneity across the fleet", warnings=left_out), {"skipped": skipped}
    ranking = cores.fleet_ranking(groups)
    workload = cores.pin_workload(ranking)
    k = golden_k or min(Counter(r["node"] for r in ranking[workload]["order"]).values())  # one node's worth
    golden = cores.golden_file(ranking, nodes, k)
    path = cores.write_golden(Path(outdir) / GOLDEN_FILE, golden)
    section = Section(
        id="fleet-cores", title="Core heterogeneity across the fleet",
        paragraphs=[f"All {len(ranking[workload]['order'])} (node, CPU) pairs of {workload} ranked together. The golden "
                    f"sample is the {k} fastest pairs of each workload, written to {path.name}: on a node, "
                    f"'timekit cores run --ranking {path.name} -k K -- COMMAND' pins to that node's golden cores."],
        tables=cores.ranking_tables(ranking, k),
        figures=[Figure(f"{LABEL.get(workload, workload)} across the fleet",
                        to_png(fleet_plots.core_ranking(ranking[workload], LABEL.get(workload, workload), k)),
                        "Mean run time with its 95 % CI per (node, CPU); the dashed line closes the golden sample.")],
        warnings=left_out)
    return section, {"ranking": ranking, "golden": golden["golden"], "golden_file": str(path), "k": k, "skipped": skipped}


def _measurement_section(nodes):
    section = Section(id="fleet-outliers", title="Which node stands out: node x measurement")
    data = {}
    for experiment in outliers.MEASUREMENTS:
        made = outliers.measurement_table(nodes, experiment)
        if made is None:
            continue
        table, data[experiment] = made
        section.tables.append(table)
        if data[experiment]["judged"]:
            section.figures.append(Figure(f"{experiment}: robust z per node and measurement",
                                          to_png(fleet_plots.outlier_heatmap(data[experiment], experiment)),
                                          "Red: above the fleet's median, blue: below."))
        flagged = data[experiment]["outlier_nodes"]
        section.paragraphs.append(f"{experiment}: " + (f"outlier node(s) {', '.join(flagged)}." if flagged else
                                                       "no node stands out." if data[experiment]["judged"] else
                                                       "too few nodes to judge."))
    return (section if data else None), data


def _noise_section(nodes):
    made = outliers.noise_ranking(nodes)
    if made is None:
        return None, {}
    table, data = made
    section = Section(id="fleet-noise", title="Nodes ranked by noise", tables=[table],
                      paragraphs=[f"Noisy node(s): {', '.join(data['noisy_nodes'])}." if data["noisy_nodes"]
                                  else "No node's repeated workloads vary beyond the fleet's."])
    if len(data["ranking"]) >= outliers.MIN_NODES:  # fewer are not compared
        section.figures.append(Figure("Noise per node", to_png(fleet_plots.noise(data)),
                                      "Dots: the node's repeated workloads; red: flagged; bar: the node's relative noise."))
    return section, data


def build(directories, node_report, outdir, golden=None, out=sys.stderr):
    nodes, fleets, given_machines, left_out = collect(directories, node_report, outdir, out)
    differences = environment_differences(nodes)
    report = Report(title=f"timekit fleet report: {len(nodes)} node(s)")
    report.sections.append(_overview(nodes, fleets, given_machines, left_out, differences, outdir))
    claims_tables, claims_data = claims.claims_tables(nodes, differences)
    report.sections.append(Section(id="fleet-claims", title="Claims across the fleet", tables=claims_tables))
    report.data = {"nodes": [n.name for n in nodes], "environment_differences": differences, "claims": claims_data,
                   "left_out": [list(x) for x in left_out],
                   "machines": [{"node": m.name, "folders": [str(f) for f in m.folders],
                                 "sweeps": [str(d) for d, _ in m.sweeps]} for m in given_machines]}
    for key, (section, data) in (("cores", _cores_section(nodes, golden, outdir)),
                                 ("measurements", _measurement_section(nodes)), ("noise", _noise_section(nodes))):
        if section is not None:
            report.sections.append(section)
            report.data[key] = data
    return report


def default_outdir(directories):
    """FLEET/fleet-report beside the first fleet given, else results/fleet/report-DATE: a machine's
    folder (perhaps a recording kept read-only) is not written into."""
    first = getattr(directories[0], "path", directories[0])
    if is_fleet(first):
        return Path(first) / "fleet-report"
    return RESULTS / "fleet" / f"report-{datetime.datetime.now().strftime('%Y-%m-%d_%H-%M-%S')}"


def fleet_report(directories, node_report, outdir=None, golden=None, out=sys.stderr):
    """Node reports where missing or stale, then the fleet report in `outdir`; its paths.
    `directories`: fleet folders and machines' folders (Paths, or machines.Given)."""
    outdir = Path(outdir or default_outdir(directories)).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # degenerate samples: the tables say so
        report = build(directories, node_report, outdir, golden, out)
    return write_report(report, outdir)
