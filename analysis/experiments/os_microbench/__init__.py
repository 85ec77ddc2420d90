"""os-microbench (seed 003): eleven lmbench-style OS and memory costs, predicted vs measured."""

from analysis.core.paths import PROGRAMS
from analysis.experiments.os_microbench import output
from analysis.sweep.model import Experiment, Preset, SectionResult


def section(context):
    # analyse (scipy, matplotlib) is imported only when a report is built: the registry stays light
    from analysis.experiments.os_microbench import analyse

    return SectionResult(*analyse.section(context.tables, context.machine.caches))


EXPERIMENT = Experiment(
    name="os-microbench",
    summary="timer reads to page faults, lmbench style",
    order=4,
    inputs=tuple(sorted((PROGRAMS / "inputs" / "os-microbench").glob("*.txt"))),
    rundefinitions=("osbench",),
    columns=output.COLUMNS,
    section=section,
    default_reps=1,
    presets={
        # three invocations of one run each, ~10 s apiece: intervals over the invocations' medians, which
        # carry the drift between invocations (docs/verdicts.md: up to 14 % for fork+exec here, where
        # an interval over one run's samples is 1 % wide)
        "quick": Preset(reps=1, loads=(0,), reruns=3),
        # five invocations of one run each: intervals over invocations
        "full": Preset(reps=1, loads=(0,), reruns=5),
    },
)
