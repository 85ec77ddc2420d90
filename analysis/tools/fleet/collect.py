"""
Collecting a fleet: every node's finished sweeps, each with its own report, and the machine each
node recorded (environment probes, host name). A node's report is the one its job wrote when it
is newer than the sweep's manifest, else it is made again (the pipeline's tables_and_report,
passed in by the CLI); the fleet sections read only these reports, the sweeps' manifests and
their result files.
"""

import concurrent.futures
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

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


def _make_reports(directories, node_report, out):
    """Make the node reports that are missing or older than their sweep, as many at once as there
    are CPUs (each is minutes of figures at fleet scale, and independent of the others)."""
    stale = [d for d in directories if not report_current(d)]
    for directory in stale:
        print(f"  report of {directory} ...", file=out, flush=True)
    if len(stale) > 1:
        with concurrent.futures.ProcessPoolExecutor(min(len(stale), os.cpu_count() or 1)) as pool:
            list(pool.map(node_report, [[d] for d in stale], [d / "report" for d in stale]))
    elif stale:
        node_report([stale[0]], stale[0] / "report")


def _read_report(directory):
    """report.json of a node's sweep, and the path of its page."""
    report = directory / "report" / "report.json"
    try:
        return json.loads(report.read_text()), directory / "report" / "report.html"
    except (OSError, ValueError) as e:
        raise FleetError(f"{report}: not a readable report ({e})") from None


def collect(directories, node_report, out=sys.stderr):
    """(nodes in name order, fleets as (directory, Fleet), [(node, experiment, why left out)]).
    A node's report is the one its job wrote when current, else made now by node_report."""
    fleets = [(Path(d).resolve(), Fleet.load(d)) for d in directories]
    nodes, left_out, finished = {}, [], []
    for directory, fleet in fleets:
        for name in fleet.nodes:
            sweep = node_sweep(directory, name)
            if not sweep_finished(sweep):
                why = "no sweep" if sweep is None else \
                    f"sweep unfinished ({sum(s.status == 'done' for s in sweep.steps)}/{len(sweep.steps)} steps)"
                left_out.append((name, fleet.experiment, why))
                continue
            node = nodes.setdefault(name, Node(name))
            if fleet.experiment in node.sweeps:
                raise FleetError(f"node {name} ran {fleet.experiment} in two of the fleets given "
                                 f"({node.sweeps[fleet.experiment].directory.parent} and {directory}); give one")
            node.sweeps[fleet.experiment] = NodeSweep(fleet.experiment, node_dir(directory, name), sweep, {}, None)
            finished.append(node.sweeps[fleet.experiment])
    if not nodes:
        raise FleetError(f"no node of {', '.join(map(str, directories))} has finished its sweep; see 'timekit fleet status'")
    _make_reports([entry.directory for entry in finished], node_report, out)
    for entry in finished:
        entry.report, entry.report_html = _read_report(entry.directory)
    return [nodes[n] for n in sorted(nodes, key=_natural)], fleets, left_out


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
