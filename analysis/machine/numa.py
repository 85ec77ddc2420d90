"""
The machine's NUMA nodes and the firmware's distances between them, from `numactl --hardware`
output or /sys/devices/system/node below a root directory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from analysis.core.errors import UserError
from analysis.machine.reader import Machine
from analysis.machine.topology import parse_cpu_list


class NumaError(UserError):
    """Input this module cannot read; str(e) is one line: what, where, why."""


@dataclass
class Hardware:
    """What `numactl --hardware` (or /sys) says about the nodes."""

    nodes: list  # node ids, ascending
    distance: np.ndarray  # len(nodes) x len(nodes), firmware distances
    cpus: dict  # node -> [cpu ids]
    size_mb: dict  # node -> MB (numactl only)
    source: str

    def index(self, node):
        return self.nodes.index(node)


def parse_hardware(text, source="numactl --hardware"):
    """Parse `numactl --hardware` output (numactl 2.0 layout)."""
    nodes, cpus, size = None, {}, {}
    distance_rows, header = {}, None
    in_distances = False
    for number, line in enumerate((text or "").splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        match = re.match(r"available: (\d+) nodes? \(([^)]*)\)", stripped)
        if match:
            nodes = parse_cpu_list(match.group(2))
            if len(nodes) != int(match.group(1)):
                raise NumaError(f"{source}, line {number}: says {match.group(1)} nodes but lists {match.group(2)}")
            continue
        match = re.match(r"node (\d+) cpus:(.*)$", stripped)
        if match:
            cpus[int(match.group(1))] = [int(c) for c in match.group(2).split()]
            continue
        match = re.match(r"node (\d+) size: (\d+) MB", stripped)
        if match:
            size[int(match.group(1))] = int(match.group(2))
            continue
        if stripped == "node distances:":
            in_distances = True
            continue
        if in_distances and stripped.startswith("node"):
            header = [int(x) for x in stripped.split()[1:]]
            continue
        match = re.match(r"(\d+):((?:\s+\d+)+)$", stripped)
        if in_distances and match:
            distance_rows[int(match.group(1))] = [int(x) for x in match.group(2).split()]
    if nodes is None:
        raise NumaError(f"{source}: no 'available: N nodes (...)' line; is this `numactl --hardware` output?")
    if header is None or sorted(distance_rows) != sorted(nodes) or header != sorted(nodes):
        raise NumaError(f"{source}: the distance table does not cover the nodes {nodes}")
    matrix = np.array([distance_rows[n] for n in header], dtype=float)
    if matrix.shape != (len(nodes), len(nodes)):
        raise NumaError(f"{source}: the distance table is not {len(nodes)} x {len(nodes)}")
    return Hardware(nodes=header, distance=matrix, cpus=cpus, size_mb=size, source=source)


def sysfs_hardware(root="/"):
    """Nodes and firmware distances from /sys/devices/system/node below root, None if absent."""
    machine = Machine(root)
    online = machine.read("/sys/devices/system/node/online")
    if online is None:
        return None
    nodes = parse_cpu_list(online)
    rows = []
    for node in nodes:
        text = machine.read(f"/sys/devices/system/node/node{node}/distance")
        if text is None:
            return None
        rows.append([float(x) for x in text.split()])
    if any(len(r) != len(nodes) for r in rows):
        raise NumaError(f"{root}/sys/devices/system/node: distance rows do not match the {len(nodes)} online nodes")
    cpus = {n: parse_cpu_list(machine.read(f"/sys/devices/system/node/node{n}/cpulist") or "") for n in nodes}
    return Hardware(nodes=nodes, distance=np.array(rows), cpus=cpus, size_mb={}, source=f"/sys below {root}")
