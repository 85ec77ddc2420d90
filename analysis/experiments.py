"""
The kit's experiments: which benchmark definition, tasks, table config and presets each uses.

A preset fixes the sweep a user gets without choosing: `quick` fits the demo's time budget on a
2-core machine, the others re-create a source document's full design.
"""

import shutil
from dataclasses import dataclass, field
from pathlib import Path

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
    requires: dict = field(default_factory=dict)  # run definition -> program it needs on PATH
    default_reps: int = 30  # what set-up writes, so plain `benchexec` yields this many

    def available_rundefinitions(self):
        """(run definitions whose programs exist, {skipped one: reason})."""
        missing = {r: p for r, p in self.requires.items() if not shutil.which(p)}
        available = tuple(r for r in self.rundefinitions if r not in missing)
        return available, {r: f"'{p}' is not installed" for r, p in missing.items()}

    def runs_per_invocation(self, reps, tasksets, rundefinitions):
        """Runs of one benchexec invocation (a task set here holds one input's repetitions)."""
        return reps * (len(tasksets) or len(self.inputs)) * len(rundefinitions)


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

EXPERIMENTS = {e.name: e for e in (TIME_APIS,)}
