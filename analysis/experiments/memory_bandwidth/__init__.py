"""memory-bandwidth (seed 004 B): STREAM per (CPU node, memory node) pair with numactl."""

from analysis.core.paths import PROGRAMS
from analysis.experiments.memory_bandwidth import definition, pairs
from analysis.machine import numa
from analysis.sweep.model import Experiment, Preset, SectionResult


def node_pairs(root="/"):
    """Every (CPU node, memory node) pair of this machine as run definitions cpuC-memM, and the
    rewrite that puts them into the benchmark definition (one node where /sys has none)."""
    hardware = numa.sysfs_hardware(root)
    nodes = list(hardware.nodes) if hardware else [0]
    return tuple(f"cpu{c}-mem{m}" for c in nodes for m in nodes), lambda text: definition.benchmark_for_nodes(text, nodes)


def section(context):
    # analyse (scipy, matplotlib) is imported only when a report is built: the registry stays light
    from analysis.experiments.memory_bandwidth import analyse

    return SectionResult(*analyse.section(context.tables, context.machine))


EXPERIMENT = Experiment(
    name="memory-bandwidth",
    summary="STREAM per (CPU node, memory node) pair",
    order=6,
    inputs=(PROGRAMS / "inputs" / "memory-bandwidth" / "stream.txt",),
    rundefinitions=("cpu0-mem0",),  # what the committed file has; a sweep runs every pair (node_pairs)
    columns=pairs.COLUMNS,
    section=section,
    requires={"*": "numactl"},
    adapt=node_pairs,
    default_reps=3,
    # three invocations, as every preset, of one run each: a run is STREAM's 10 trials over arrays of
    # 4 x the LLC, so its time grows with the LLC (benchmarks/README.md: 16 s a run on a 260 MiB one)
    presets={"quick": Preset(reps=1, loads=(0,), reruns=3)},
)
