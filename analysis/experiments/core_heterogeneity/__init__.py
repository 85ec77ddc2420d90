"""core-heterogeneity (seed 002): cache-stress, CG and integer sort on one core at a time."""

from analysis.core.paths import PROGRAMS
from analysis.experiments.core_heterogeneity import samples
from analysis.sweep.model import Experiment, Preset, SectionResult, Step


def plan(preset, cpus):
    """One invocation per (round, core), every run on that core alone; cores interleaved, each
    round starting one core later (samples.plan), so drift is not taken for a core difference."""
    return [Step(load=0, rerun=round_, name=samples.step_name(round_, core), condition=f"core{core}",
                 benchexec_args=["--allowedCores", str(core), "--limitCores", "1"])
            for round_, core in samples.plan(cpus, preset.reruns)]


def section(context):
    # analyse (scipy, matplotlib) is imported only when a report is built: the registry stays light
    from analysis.experiments.core_heterogeneity import analyse

    return SectionResult(*analyse.section(context.tables, context.machine, notes=context.sweep_notes()))


EXPERIMENT = Experiment(
    name="core-heterogeneity",
    summary="per-core distributions, similarity matrix, ranking of cores",
    order=3,
    inputs=tuple(PROGRAMS / "inputs" / "core-heterogeneity" / f"{w}.txt" for w in ("cachestress", "cg", "isort")),
    rundefinitions=("pinned",),
    columns=samples.COLUMNS,
    section=section,
    planner=plan,
    one_table=True,
    default_reps=10,
    conditions="rounds over all cores",
    presets={
        # reruns = rounds over all cores; reps include the 2 warm-ups dropped per invocation:
        # 3 rounds x 10 counted runs = 30 per workload and core, ~80 s on 2 cores
        "quick": Preset(reps=12, loads=(), reruns=3),
        # the paper: 10 warm-ups dropped (here 2 per invocation) and 1000 counted runs per core
        "paper": Preset(reps=102, loads=(), reruns=10),
    },
)
