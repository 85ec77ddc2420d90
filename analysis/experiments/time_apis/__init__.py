"""time-apis (seed 000): bash, fish, GNU time, RunExec and the program's own clock() under 0..N
background processes."""

from analysis.core.paths import PROGRAMS
from analysis.experiments.time_apis import samples
from analysis.sweep.model import Experiment, Preset, SectionResult


def section(context):
    # analyse (scipy, matplotlib) is imported only when a report is built: the registry stays light
    from analysis.experiments.time_apis import analyse

    collected = samples.collect(context.tables, context.conditions)
    sec, data = analyse.section(collected, context.cpu_count(), context.sweep_notes())
    return SectionResult(sec, data)


EXPERIMENT = Experiment(
    name="time-apis",
    summary="bash/fish/GNU time, RunExec and clock() under background load",
    order=1,
    inputs=(PROGRAMS / "inputs" / "43434343.txt", PROGRAMS / "inputs" / "250000000.txt"),
    rundefinitions=("runexec", "bash", "fish", "gnu"),
    columns=samples.COLUMNS,
    section=section,
    requires={"bash": "bash", "fish": "fish", "gnu": "time"},
    presets={
        # loads 0..2 on 2 cores: one level below saturation, one at it; 30 runs per API and level
        # as M = 3 reruns of 10, so that intervals rest on invocations; ~2.5 minutes here
        "quick": Preset(reps=10, loads=(0, 1, 2), reruns=3, tasksets=("thesis-input",)),
        # the thesis: 1000 runs per API and load level 0..6, as M = 10 reruns of 100
        "thesis": Preset(reps=100, loads=tuple(range(7)), reruns=10, tasksets=("thesis-input",)),
    },
)
