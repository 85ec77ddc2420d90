"""scheduling-noise (seed 004 A): a TSC activity tracer, the tick, context switches."""

from analysis.core.paths import PROGRAMS
from analysis.experiments.scheduling_noise import periods
from analysis.sweep.model import Experiment, Preset, SectionResult


def section(context):
    # analyse (scipy, matplotlib) is imported only when a report is built: the registry stays light
    from analysis.experiments.scheduling_noise import analyse

    return SectionResult(*analyse.section(context.tables, context.machine))


EXPERIMENT = Experiment(
    name="scheduling-noise",
    summary="TSC activity tracer: interruptions, tick, context switches",
    order=5,
    inputs=(PROGRAMS / "inputs" / "scheduling-noise" / "trace.txt",
            PROGRAMS / "inputs" / "scheduling-noise" / "context-switch.txt"),
    rundefinitions=("tracer",),
    columns=periods.COLUMNS,
    section=section,
    default_reps=3,
    presets={"quick": Preset(reps=3, loads=(0,), reruns=1)},  # ~10 s
)
