"""
Collecting a fleet: every node's finished sweeps, each with its own report, and the machine each
node recorded (environment probes, host name). Nodes come from fleet folders (fleet.json, one
sweep and report per node and experiment) and from machines given by folder (machines.py: one
report over the machine's sweeps). A report is reused when newer than its sweeps, else made
again (the pipeline's tables_and_report, passed in by the CLI); the fleet sections read only
these reports, the sweeps' manifests and their result files.
"""

import concurrent.futures
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from analysis.sweep.model import MANIFEST as SWEEP_MANIFEST
from analysis.tools.fleet import machines as machines_mod
from analysis.tools.fleet.manifest import Fleet, FleetError, node_dir, node_sweep, report_current, sweep_finished

# probes that describe the moment of the measurement, not the machine
MOMENTARY = ("load average",)


@dataclass
class NodeSweep:
    experiment: str
    directory: Path
    sweep: object  # analysis.sweep.model.Sweep
    report: dict  # the node report's report.json
    report_html: Path


@dataclass
class Node:
    name: str
    sweeps: dict = field(default_factory=dict)  # experiment -> NodeSweep

    @property
    def probes(self):
        """{probe name: value} of the node's recorded environment check (its first sweep's)."""
        for node_sweep_ in self.sweeps.values():
            probes = node_sweep_.sweep.environment.get("probes", [])
            if probes:
                return {p["name"]: str(p["value"]) for p in probes}
        return {}

    @property
    def host(self):
        for node_sweep_ in self.sweeps.values():
            host = node_sweep_.sweep.machine.get("hostname") or node_sweep_.sweep.environment.get("hostname")
            if host:
                return host
        return ""

    def data(self, experiment):
        """The node report's numbers for one experiment ({} when the node did not run it)."""
        entry = self.sweeps.get(experiment)
        return entry.report.get("data", {}).get(experiment, {}) if entry else {}


@dataclass
class ReportJob:
    """One node report: the sweeps it covers, the folder it is (to be) in, the NodeSweeps it serves."""

    paths: list
    outdir: Path
    entries: list
    current: bool
    label: str  # for the terminal


def _make_reports(jobs, node_report, out):
    """Make the node reports that are missing or older than their sweeps, as many at once as there
    are CPUs (each is minutes of figures at fleet scale, and independent of the others)."""
    stale = [job for job in jobs if not job.current]
    for job in stale:
        print(f"  report of {job.label} ...", file=out, flush=True)
    if len(stale) > 1:
        with concurrent.futures.ProcessPoolExecutor(min(len(stale), os.cpu_count() or 1)) as pool:
            list(pool.map(node_report, [job.paths for job in stale], [job.outdir for job in stale]))
    elif stale:
        node_report(stale[0].paths, stale[0].outdir)


def _read_report(folder):
    """report.json in a report folder, and the path of its page."""
    report = Path(folder) / "report.json"
    try:
        return json.loads(report.read_text()), Path(folder) / "report.html"
    except (OSError, ValueError) as e:
        raise FleetError(f"{report}: not a readable report ({e})") from None


def _fleet_nodes(fleets, nodes, left_out):
    """The finished sweeps of every fleet's nodes into `nodes`; one report job per sweep."""
    jobs = []
    for directory, fleet in fleets:
        for name in fleet.nodes:
            sweep = node_sweep(directory, name)
            if not sweep_finished(sweep):
                why = "no sweep" if sweep is None else \
                    f"sweep unfinished ({sum(s.status == 'done' for s in sweep.steps)}/{len(sweep.steps)} steps)"
                left_out.append((name, fleet.experiment, f"{why} (timekit fleet status; --resume runs it again)"))
                continue
            node = nodes.setdefault(name, Node(name))
            if fleet.experiment in node.sweeps:
                raise FleetError(f"node {name} ran {fleet.experiment} in two of the fleets given "
                                 f"({node.sweeps[fleet.experiment].directory.parent} and {directory}); give one")
            entry = NodeSweep(fleet.experiment, node_dir(directory, name), sweep, {}, None)
            node.sweeps[fleet.experiment] = entry
            jobs.append(ReportJob([entry.directory], entry.directory / "report", [entry], report_current(entry.directory),
                                  str(entry.directory)))
    return jobs


def _machine_report(machine, sweeps, outdir):
    """(folder, current) of a machine's one report over its sweeps: the report its own folder
    already holds (a demo's, a sweep's) when newer than every sweep and made over all of them, else
    one in the fleet report's folder: a recorded machine's folder is never written into."""
    wanted = {Path(d).resolve() for d, _ in sweeps}
    candidates = [Path(machine.folders[0]) / "report"] if len(machine.folders) == 1 else []
    for folder in [*candidates, Path(outdir) / "machines" / machine.name]:
        try:
            report = json.loads((folder / "report.json").read_text())
            newer = (folder / "report.json").stat().st_mtime >= max((d / SWEEP_MANIFEST).stat().st_mtime for d, _ in sweeps)
        except (OSError, ValueError):
            continue
        covered = {Path(s.get("directory", "")).resolve() for s in report.get("data", {}).get("sweeps", [])}
        if newer and wanted <= covered:  # a report made elsewhere (other paths) is made again, not trusted
            return folder, True
    return Path(outdir) / "machines" / machine.name, False


def _machine_nodes(given_machines, nodes, left_out, outdir):
    """Every machine given by folder as one node with one report over its finished sweeps."""
    jobs = []
    for machine in given_machines:
        node = nodes.setdefault(machine.name, Node(machine.name))
        finished = []
        for directory, sweep in machine.sweeps:
            if not sweep_finished(sweep):
                left_out.append((machine.name, sweep.experiment,
                                 f"sweep unfinished ({sum(s.status == 'done' for s in sweep.steps)}/{len(sweep.steps)} "
                                 f"steps; timekit run {sweep.experiment} --resume --output {directory} finishes it)"))
                continue
            if sweep.experiment in node.sweeps:
                raise FleetError(f"machine {machine.name} has two sweeps of {sweep.experiment} "
                                 f"({node.sweeps[sweep.experiment].directory} and {directory}); give one")
            node.sweeps[sweep.experiment] = NodeSweep(sweep.experiment, Path(directory), sweep, {}, None)
            finished.append((Path(directory), sweep))
        if finished:
            folder, current = _machine_report(machine, finished, outdir)
            jobs.append(ReportJob([d for d, _ in finished], folder, [node.sweeps[s.experiment] for _, s in finished],
                                  current, f"{machine.name} ({len(finished)} sweeps) in {folder}"))
        else:
            del nodes[machine.name]
    return jobs


def collect(directories, node_report, outdir, out=sys.stderr):
    """(nodes in name order, fleets as (directory, Fleet), machines given by folder, [(node,
    experiment, why left out)]). `directories`: fleet folders and machines' folders (Paths, or
    machines.Given with a name). A node's report is made now by node_report unless a current one exists."""
    givens = [g if isinstance(g, machines_mod.Given) else machines_mod.Given(Path(g)) for g in directories]
    for g in givens:
        if g.name and machines_mod.is_fleet(g.path):
            raise FleetError(f"{g.name}={g.path}: a fleet's nodes are named by the fleet; give the fleet folder alone")
    fleets = [(g.path.resolve(), Fleet.load(g.path)) for g in givens if machines_mod.is_fleet(g.path)]
    taken = {n for _, fleet in fleets for n in fleet.nodes}
    given_machines = machines_mod.machines([g for g in givens if not machines_mod.is_fleet(g.path)], taken)
    nodes, left_out = {}, []
    jobs = _fleet_nodes(fleets, nodes, left_out) + _machine_nodes(given_machines, nodes, left_out, outdir)
    if not nodes:
        why = f" ({left_out[0][0]}: {left_out[0][1]}: {left_out[0][2]})" if left_out else ""
        raise FleetError(f"no node of {', '.join(str(g.path) for g in givens)} has a finished sweep{why}")
    _make_reports(jobs, node_report, out)
    for job in jobs:
        report, page = _read_report(job.outdir)
        for entry in job.entries:
            entry.report, entry.report_html = report, page
    return [nodes[n] for n in sorted(nodes, key=_natural)], fleets, given_machines, left_out


def _natural(name):
    """n2 before n10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def environment_differences(nodes):
    """{node: [(probe, its value, the other nodes' most common value)]} for every recorded probe in
    which a node differs from the rest of the fleet (momentary ones such as the load average left out)."""
    probes = {n.name: n.probes for n in nodes}
    names = sorted({p for values in probes.values() for p in values if p not in MOMENTARY})
    differences = {}
    for node, values in probes.items():
        others = [v for other, v in probes.items() if other != node]
        differences[node] = []
        for probe in names:
            rest = Counter(v.get(probe, "not recorded") for v in others).most_common(1)
            mine = values.get(probe, "not recorded")
            if rest and mine != rest[0][0]:
                differences[node].append((probe, mine, rest[0][0]))
    return differences
