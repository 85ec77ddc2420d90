"""
Which invocations of a sweep met outside work, and what the analysis does with them: a few are
set aside and counted; where too many are, no verdict rests on the sweep, and what would decide
it is a rerun on a quiet machine.

Either sign marks an invocation: its record (analysis.machine.disturbance) beyond the level, or
CPU-bound runs that took more than WALL_CPU_FACTOR times the wall time per CPU second of the
condition's other reruns (docs/verdicts.md, "Invocations disturbed from outside").
"""

from dataclasses import dataclass

import numpy as np

from analysis.machine.disturbance import LEVEL

WALL_CPU_FACTOR = 1.25
CPU_BOUND = 1.5  # wall / CPU of the other reruns below which the sign is read (no waiting, no kit load)


@dataclass(frozen=True)
class Mark:
    """One disturbed invocation and what showed it."""

    step: object  # analysis.sweep.model.Step
    outside: bool  # its record shows outside work beyond the level
    wall_cpu: float = float("nan")  # its runs' median wall / CPU, where that sign marked it
    usual: float = float("nan")  # the same condition's other reruns' median wall / CPU

    def describe(self):
        said = [self.step.disturbance.describe()] if self.outside else []
        if np.isfinite(self.wall_cpu):
            said.append(f"wall / CPU {self.wall_cpu:.2f} against {self.usual:.2f} in the others")
        return f"{self.step.name}: {', '.join(said)}"


@dataclass(frozen=True)
class Disturbed:
    marks: tuple  # Marks, in the order the steps ran
    done: int  # done steps of the sweep
    too_many: bool  # a condition lost every rerun, or more than half the invocations are disturbed
    unit: str = "rerun"  # what a step is called in the text: a sweep's rerun, an A/B run's invocation

    def __bool__(self):
        return bool(self.marks)

    @property
    def names(self):
        return {mark.step.name for mark in self.marks}

    def reruns(self):
        """'rerun 2' or 'reruns 1-2' or 'reruns 1, 3': which reruns met outside work."""
        found = sorted({mark.step.rerun for mark in self.marks})
        if len(found) == 1:
            return f"{self.unit} {found[0]}"
        if found == list(range(found[0], found[-1] + 1)):
            return f"{self.unit}s {found[0]}-{found[-1]}"
        return f"{self.unit}s " + ", ".join(map(str, found))

    def each(self, shown=4):
        text = "; ".join(mark.describe() for mark in self.marks[:shown])
        return text + (f"; and {len(self.marks) - shown} more" if len(self.marks) > shown else "")

    def set_aside_line(self):
        return (f"{len(self.marks)} of {self.done} benchexec invocations disturbed from outside, set aside "
                f"(more than {LEVEL:g} CPUs of other work on average, or wall / CPU beyond "
                f"{WALL_CPU_FACTOR:g} times the other {self.unit}s'): {self.each()}.")

    def busy(self):
        """The reason in short: 'the machine was busy from outside during reruns 1-2'."""
        return f"the machine was busy from outside during {self.reruns()}"

    def busy_line(self):
        return f"{self.busy()}: {len(self.marks)} of {self.done} invocations are disturbed ({self.each()})"


def of(sweep, tables=(), conditions=None, unit="rerun"):
    """The Disturbed of a sweep (or another steps manifest); `tables` (RunTables with cputime and
    walltime) and `conditions` (result file name -> step) give the wall / CPU sign."""
    done = [step for step in sweep.steps if step.status == "done"]
    meant = {step.name for step in done if step.disturbance is not None and not step.disturbance.judged}
    slow = {name: found for name, found in _wall_cpu_outliers(tables, conditions or {}).items() if name not in meant}
    marks = tuple(Mark(step, step.disturbed, *slow.get(step.name, (float("nan"), float("nan"))))
                  for step in done if step.disturbed or step.name in slow)
    hit = {mark.step.name for mark in marks}
    groups = {}
    for step in done:
        groups.setdefault((step.condition, step.load), []).append(step.name in hit)
    too_many = bool(marks) and (2 * len(marks) > len(done) or any(all(g) for g in groups.values()))
    return Disturbed(marks, len(done), too_many, unit)


def _wall_cpu_outliers(tables, conditions):
    """{step name: (its median wall / CPU, the other reruns')} of the steps whose CPU-bound runs
    took more than WALL_CPU_FACTOR times the usual wall time per CPU second, judged per run
    definition and task set against the other reruns of the same condition (three reruns or more)."""
    medians = {}  # (condition, load, run definition, file's task set) -> {step name: median}
    for table in tables:
        step = conditions.get(table.path.name)
        if step is None or "cputime" not in table.columns or "walltime" not in table.columns:
            continue
        cpu, wall = np.asarray(table.columns["cputime"], float), np.asarray(table.columns["walltime"], float)
        ok = (cpu > 0) & np.isfinite(wall)
        if ok.sum():
            key = (step.condition, step.load, table.name)  # the run definition and its task set
            medians.setdefault(key, {})[step.name] = float(np.median(wall[ok] / cpu[ok]))
    ratios = {}  # step name -> [(own, usual)]
    for by_step in medians.values():
        if len(by_step) < 3:
            continue
        for name, own in by_step.items():
            usual = float(np.median([v for n, v in by_step.items() if n != name]))
            if usual < CPU_BOUND:
                ratios.setdefault(name, []).append((own, usual))
    found = {}
    for name, pairs in ratios.items():
        own, usual = np.median([p[0] for p in pairs]), np.median([p[1] for p in pairs])
        if own > WALL_CPU_FACTOR * usual:
            found[name] = (float(own), float(usual))
    return found
