"""discipline (seed 001): one CPU-bound task in the talk's run conditions, M reruns."""

from analysis.core.paths import PROGRAMS
from analysis.experiments.discipline import samples
from analysis.sweep.model import Experiment, Preset, SectionResult, Step, rotated


def plan(preset, cpus):
    """The talk's run conditions, interleaved in every rerun: the measured runs unpinned and alone,
    then pinned to the first usable CPU alone, with one CPU-bound competitor on another CPU (where
    there is one), and with it on the same CPU (plain and at nice 19). Their order rotates per
    rerun (rerun r starts with the r-th condition), so drift over a sweep spreads over all of them
    rather than favouring the condition that always runs first."""
    measured, other = cpus[0], (cpus[1] if len(cpus) > 1 else None)
    pin = ["--allowedCores", str(measured), "--limitCores", "1"]
    # (condition, benchexec arguments, competitors, their CPUs, their niceness)
    conditions = [("unpinned", [], 0, None, 0), ("alone", pin, 0, None, 0)]
    if other is not None:
        conditions.append(("separate-cores", pin, 1, [other], 0))
    conditions += [("same-core", pin, 1, [measured], 0), ("same-core-niced", pin, 1, [measured], 19)]
    return [Step(load=load, rerun=rerun, name=f"{condition}-rerun{rerun}", condition=condition,
                 benchexec_args=args, load_cpus=load_cpus, load_nice=nice)
            for rerun in range(1, preset.reruns + 1)
            for condition, args, load, load_cpus, nice in rotated(conditions, rerun - 1)]


def section(context):
    # analyse (scipy, matplotlib) is imported only when a report is built: the registry stays light
    from analysis.experiments.discipline import analyse

    return SectionResult(*analyse.section(context.tables, context.conditions, context.environment.get("probes", []),
                                          context.cpu_count()))


EXPERIMENT = Experiment(
    name="discipline",
    summary="the talk's run conditions (pinned, competitor, nice) in M reruns",
    order=2,
    inputs=(PROGRAMS / "inputs" / "43434343.txt",),
    rundefinitions=("runexec",),
    columns=samples.COLUMNS,
    section=section,
    planner=plan,
    one_table=True,
    conditions="run conditions",
    presets={
        # M = 5 reruns (the talk's minimum) of 10 runs per condition: the report warns N < 30
        "quick": Preset(reps=10, loads=(), reruns=5),
        # the talk's rules: N >= 30 runs, M >= 5 reruns
        "talk": Preset(reps=30, loads=(), reruns=5),
    },
)
