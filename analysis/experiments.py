"""
The kit's experiments: which benchmark definition, tasks, table config and presets each uses.

A preset fixes the sweep a user gets without choosing: `quick` fits the demo's time budget on a
2-core machine, the others re-create a source document's full design.
"""

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Preset:
    reps: int  # distinct runs per (task, run definition) in one benchexec invocation
    loads: tuple  # numbers of background busy processes, one benchexec invocation each
    reruns: int  # benchexec invocations per load level
    tasksets: tuple = ()  # benchexec --tasks selection; empty = all task sets


@dataclass(frozen=True)
class Experiment:
    name: str
    benchmark: Path
    table: Path
    task_dir: Path
    inputs: tuple
    rundefinitions: tuple
    presets: dict = field(default_factory=dict)
    requires: dict = field(default_factory=dict)  # run definition ('*': every one) -> program it needs on PATH
    default_reps: int = 30  # what set-up writes, so plain `benchexec` yields this many
    planner: Callable = None  # (preset, usable CPUs) -> steps; default: every load level x rerun
    one_table: bool = False  # one table-generator page per sweep (conditions side by side), not per step
    adapt: Callable = None  # () -> (this machine's run definitions, rewrite of the definition's XML text)

    def machine_rundefinitions(self):
        return self.adapt()[0] if self.adapt else self.rundefinitions

    def plan(self, preset):
        """The sweep's steps (benchexec invocations) in run order."""
        cpus = sorted(os.sched_getaffinity(0))
        return (self.planner or load_steps)(preset, cpus)

    def available_rundefinitions(self):
        """(run definitions whose programs exist, {skipped one: reason})."""
        rundefinitions = self.machine_rundefinitions()
        missing = {r: p for r in rundefinitions for key, p in self.requires.items() if key in (r, "*") and not shutil.which(p)}
        available = tuple(r for r in rundefinitions if r not in missing)
        return available, {r: f"'{p}' is not installed" for r, p in missing.items()}

    def runs_per_invocation(self, reps, tasksets, rundefinitions):
        """Runs of one benchexec invocation (a task set here holds one input's repetitions)."""
        return reps * (len(tasksets) or len(self.inputs)) * len(rundefinitions)


def load_steps(preset, cpus):
    """Every load level in every rerun; reruns outermost, so drift spreads over the load levels."""
    from analysis.runner import Step  # the runner imports this module

    return [Step(load=load, rerun=rerun, name=f"load{load}-rerun{rerun}")
            for rerun in range(1, preset.reruns + 1) for load in preset.loads]


TIME_APIS = Experiment(
    name="time-apis",
    benchmark=REPO / "benchmark-defs" / "time-apis.xml",
    table=REPO / "table-configs" / "time-apis.xml",
    task_dir=REPO / "programs" / "tasks" / "time-apis" / "reps",
    inputs=(REPO / "programs" / "inputs" / "43434343.txt", REPO / "programs" / "inputs" / "250000000.txt"),
    rundefinitions=("runexec", "bash", "fish", "gnu"),
    requires={"bash": "bash", "fish": "fish", "gnu": "time"},
    presets={
        # loads 0..2 on 2 cores: one level below saturation, one at it; ~2 minutes here
        "quick": Preset(reps=30, loads=(0, 1, 2), reruns=1, tasksets=("thesis-input",)),
        # the thesis: 1000 runs per API and load level 0..6
        "thesis": Preset(reps=1000, loads=tuple(range(7)), reruns=1, tasksets=("thesis-input",)),
    },
)

def discipline_steps(preset, cpus):
    """The talk's run conditions, interleaved in every rerun: the measured runs unpinned and alone,
    then pinned to the first usable CPU alone, with one CPU-bound competitor on another CPU (where
    there is one), and with it on the same CPU (plain and at nice 19)."""
    from analysis.runner import Step

    measured, other = cpus[0], (cpus[1] if len(cpus) > 1 else None)
    pin = ["--allowedCores", str(measured), "--limitCores", "1"]
    # (condition, benchexec arguments, competitors, their CPUs, their niceness)
    conditions = [("unpinned", [], 0, None, 0), ("alone", pin, 0, None, 0)]
    if other is not None:
        conditions.append(("separate-cores", pin, 1, [other], 0))
    conditions += [("same-core", pin, 1, [measured], 0), ("same-core-niced", pin, 1, [measured], 19)]
    return [Step(load=load, rerun=rerun, name=f"{condition}-rerun{rerun}", condition=condition,
                 benchexec_args=args, load_cpus=load_cpus, load_nice=nice)
            for rerun in range(1, preset.reruns + 1) for condition, args, load, load_cpus, nice in conditions]


DISCIPLINE = Experiment(
    name="discipline",
    benchmark=REPO / "benchmark-defs" / "discipline.xml",
    table=REPO / "table-configs" / "discipline.xml",
    task_dir=REPO / "programs" / "tasks" / "discipline" / "reps",
    inputs=(REPO / "programs" / "inputs" / "43434343.txt",),
    rundefinitions=("runexec",),
    planner=discipline_steps,
    one_table=True,
    presets={
        # M = 5 reruns (the talk's minimum) of 10 runs per condition: the report warns N < 30
        "quick": Preset(reps=10, loads=(), reruns=5),
        # the talk's rules: N >= 30 runs, M >= 5 reruns
        "talk": Preset(reps=30, loads=(), reruns=5),
    },
)

OS_MICROBENCH = Experiment(
    name="os-microbench",
    benchmark=REPO / "benchmark-defs" / "os-microbench.xml",
    table=REPO / "table-configs" / "os-microbench.xml",
    task_dir=REPO / "programs" / "tasks" / "os-microbench" / "reps",
    inputs=tuple(sorted((REPO / "programs" / "inputs" / "os-microbench").glob("*.txt"))),
    rundefinitions=("osbench",),
    presets={
        # each measurement repeats itself inside the program; one run each, ~15 s
        "quick": Preset(reps=1, loads=(0,), reruns=1),
        "full": Preset(reps=5, loads=(0,), reruns=1),
    },
    default_reps=1,
)

def core_steps(preset, cpus):
    """One invocation per (round, core), every run on that core alone; cores interleaved, each
    round starting one core later (analysis.cores.plan), so drift is not taken for a core difference."""
    from analysis import cores
    from analysis.runner import Step

    return [Step(load=0, rerun=round_, name=cores.step_name(round_, core), condition=f"core{core}",
                 benchexec_args=["--allowedCores", str(core), "--limitCores", "1"])
            for round_, core in cores.plan(cpus, preset.reruns)]


CORE_HETEROGENEITY = Experiment(
    name="core-heterogeneity",
    benchmark=REPO / "benchmark-defs" / "core-heterogeneity.xml",
    table=REPO / "table-configs" / "core-heterogeneity.xml",
    task_dir=REPO / "programs" / "tasks" / "core-heterogeneity" / "reps",
    inputs=tuple(REPO / "programs" / "inputs" / "core-heterogeneity" / f"{w}.txt" for w in ("cachestress", "cg", "isort")),
    rundefinitions=("pinned",),
    planner=core_steps,
    one_table=True,
    default_reps=10,
    presets={
        # reruns = rounds over all cores; reps include the 2 warm-ups dropped per invocation:
        # 3 rounds x 10 counted runs = 30 per workload and core, ~80 s on 2 cores
        "quick": Preset(reps=12, loads=(), reruns=3),
        # the paper: 10 warm-ups dropped (here 2 per invocation) and 1000 counted runs per core
        "paper": Preset(reps=102, loads=(), reruns=10),
    },
)

SCHEDULING_NOISE = Experiment(
    name="scheduling-noise",
    benchmark=REPO / "benchmark-defs" / "scheduling-noise.xml",
    table=REPO / "table-configs" / "scheduling-noise.xml",
    task_dir=REPO / "programs" / "tasks" / "scheduling-noise" / "reps",
    inputs=(REPO / "programs" / "inputs" / "scheduling-noise" / "trace.txt",
            REPO / "programs" / "inputs" / "scheduling-noise" / "context-switch.txt"),
    rundefinitions=("tracer",),
    default_reps=3,
    presets={"quick": Preset(reps=3, loads=(0,), reruns=1)},  # ~10 s
)

def numa_pairs(root="/"):
    """Every (CPU node, memory node) pair of this machine as run definitions cpuC-memM, and the
    rewrite that puts them into the benchmark definition (one node where /sys has none)."""
    from analysis import numa

    hardware = numa.sysfs_hardware(root)
    nodes = list(hardware.nodes) if hardware else [0]
    return tuple(f"cpu{c}-mem{m}" for c in nodes for m in nodes), lambda text: numa.benchmark_for_nodes(text, nodes)


MEMORY_BANDWIDTH = Experiment(
    name="memory-bandwidth",
    benchmark=REPO / "benchmark-defs" / "memory-bandwidth.xml",
    table=REPO / "table-configs" / "memory-bandwidth.xml",
    task_dir=REPO / "programs" / "tasks" / "memory-bandwidth" / "reps",
    inputs=(REPO / "programs" / "inputs" / "memory-bandwidth" / "stream.txt",),
    rundefinitions=("cpu0-mem0",),  # what the committed file has; a sweep runs every pair (numa_pairs)
    requires={"*": "numactl"},
    adapt=numa_pairs,
    default_reps=3,
    presets={"quick": Preset(reps=3, loads=(0,), reruns=1)},  # ~5 s
)

EXPERIMENTS = {e.name: e for e in (TIME_APIS, DISCIPLINE, CORE_HETEROGENEITY, OS_MICROBENCH, SCHEDULING_NOISE, MEMORY_BANDWIDTH)}
