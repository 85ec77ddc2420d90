"""How the report names a CPU (Linux number, physical core, package) and which CPUs are SMT
siblings, from the measured machine's topology (analysis.machine.topology Cpu records)."""

from __future__ import annotations

import itertools


def sibling_pairs(topology_cpus):
    """The set of SMT sibling pairs (a < b)."""
    return {(a, b) for c in topology_cpus or () for a, b in itertools.combinations(sorted(c.siblings), 2)}


def core_label(cpu, topology_cpus):
    for c in topology_cpus or ():
        if c.id == cpu:
            core = "?" if c.core is None else c.core
            package = "" if c.package in (None, 0) else f" pkg {c.package}"
            return f"CPU {cpu} (core {core}{package})"
    return f"CPU {cpu}"
