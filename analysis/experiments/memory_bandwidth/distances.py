"""
The firmware's NUMA distances and the distances the bandwidths imply.

The firmware's table comes from `numactl --hardware` output when given, else from what each
STREAM run recorded (`numa-nodes`, `node-distances` of its CPU node, read from /sys inside the
run), else from what the sweep recorded of the machine. As the seed did, a bandwidth becomes a
distance relative to local access:
    derived[c][m] = 10 x bandwidth[c][c] / bandwidth[c][m]
so local access is 10 (the firmware's convention) and half the bandwidth is 20. The difference
derived - firmware says where the firmware's table misleads.
"""

from __future__ import annotations

import numpy as np

from analysis.machine import facts as machine_facts
from analysis.machine.numa import Hardware, parse_hardware
from analysis.machine.topology import parse_cpu_list

LOCAL = 10.0  # the firmware's distance of a node to itself (ACPI SLIT)


def recorded_hardware(rows):
    """Hardware from what the STREAM runs recorded: [(numa-nodes text, cpu node, distance row text)].
    None unless every node's row was recorded by some run."""
    nodes, found = None, {}
    for online, cpu_node, distances in rows:
        if not online or not distances or cpu_node is None:
            continue
        nodes = parse_cpu_list(online)
        found[int(cpu_node)] = [float(x) for x in distances.split(",")]
    if not nodes or sorted(found) != nodes or any(len(r) != len(nodes) for r in found.values()):
        return None
    return Hardware(nodes=nodes, distance=np.array([found[n] for n in nodes]), cpus={}, size_mb={},
                    source="/sys as recorded by the STREAM runs")


def firmware_table(hardware, recorded, facts, tables):
    """(Hardware or None, [note]): `numactl --hardware` output (text or Hardware) if given, else the
    distances the runs recorded, else the sweep's facts (this host's /sys without a sweep)."""
    firmware = None
    if hardware is not None:
        firmware = parse_hardware(hardware) if isinstance(hardware, str) else hardware
    if firmware is None:
        firmware = recorded_hardware(recorded)
    if firmware is not None:
        return firmware, []
    facts = facts if facts is not None else machine_facts.for_results(tables)
    firmware = facts.numa_hardware()
    if firmware is None:
        return None, []
    return firmware, [f"The runs did not record every node's distances; the firmware's table is {firmware.source}."]


def derived_distance(bandwidth):
    """10 x local bandwidth of the row's CPU node / bandwidth, as the seed derived it."""
    local = np.diag(bandwidth)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        return LOCAL * local / bandwidth
