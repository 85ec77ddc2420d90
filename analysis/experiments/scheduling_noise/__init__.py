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
    # three invocations of one trace and one context-switch run each, ~15 s: the claims' intervals are
    # over the invocations, so they carry the drift between them (docs/verdicts.md)
    presets={"quick": Preset(reps=1, loads=(0,), reruns=3)},
)
