"""
The samples of the time-APIs experiment (seed 000): one entry per run, with its timing API, load,
input, BenchExec's cgroup values (the ground truth) and what the timer and the program reported.
Runs that timed out, failed or lack a value stay; each statistic takes the runs whose value of its
quantity is a measurement (analysis.core.validity). docs/experiments.md, "time-apis".
"""

import re
from dataclasses import dataclass

import numpy as np

from analysis.core import validity
from analysis.core.tasks import input_of

API_ORDER = ("runexec", "bash", "fish", "gnu")
API_LABEL = {"runexec": "RunExec (cgroups)", "bash": "bash time", "fish": "fish time", "gnu": "GNU time"}
# the result columns this analysis reads; the loader skips all others
COLUMNS = ("status", "category", "cputime", "walltime", "timer-user", "timer-sys", "timer-real",
           "self-clock", "self-cputime")
_TIMER_OPTION = re.compile(r"--timer[= ](\S+)")
_NAME_CONDITION = re.compile(r"load(\d+)-rerun(\d+)")


@dataclass
class Samples:
    """One entry per run, as parallel arrays (fast for 100,000 runs)."""

    api: np.ndarray
    load: np.ndarray
    rerun: np.ndarray
    input: np.ndarray
    task: np.ndarray
    status: np.ndarray
    valid: np.ndarray      # finished normally, and both observed times are measurements
    cgroup_cpu: np.ndarray
    cgroup_wall: np.ndarray
    timer_user: np.ndarray
    timer_sys: np.ndarray
    timer_real: np.ndarray
    self_clock: np.ndarray
    self_cputime: np.ndarray
    finished: np.ndarray = None   # BenchExec: finished normally (default: valid)

    def __post_init__(self):
        if self.finished is None:
            self.finished = self.valid

    @property
    def observed_cpu(self):
        timed = self.timer_user + self.timer_sys
        return np.where(self.api == "runexec", self.cgroup_cpu, timed)

    @property
    def observed_wall(self):
        return np.where(self.api == "runexec", self.cgroup_wall, self.timer_real)

    def usable(self, quantity):
        """Runs that finished normally with a measurement of `quantity` (observed_cpu, cgroup_wall ...)."""
        return self.finished & validity.check(getattr(self, quantity), "s").usable

    def left_out(self, quantity, mask=None) -> dict:
        """{reason: runs} left out of `quantity` (among `mask`), by the kit's one rule."""
        check = validity.check(getattr(self, quantity), "s", self.finished, unconsidered_reason=validity.NOT_FINISHED)
        return check.reasons if mask is None else check.reasons_in(mask)

    def select(self, mask):
        return Samples(**{name: getattr(self, name)[mask] for name in self.__dataclass_fields__})


def api_of(table):
    """The timing API of a result file: its `--timer` option, else its run-definition name."""
    match = _TIMER_OPTION.search(table.options or "")
    return match.group(1) if match else table.rundefinition or "runexec"


def condition_of(table, conditions):
    """(load, rerun) from the sweep manifest, else from a `loadK-rerunM` benchexec --name;
    a plain benchexec result had no background load from the kit: load 0."""
    if table.path.name in conditions:
        step = conditions[table.path.name]
        return step.load, step.rerun
    match = _NAME_CONDITION.search(table.benchmark)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 1)


def collect(tables, conditions=None):
    """Samples of all runs in the given RunTables; `conditions` maps file name -> (load, rerun)."""
    conditions = conditions or {}
    parts = []
    for table in tables:
        n = len(table)
        load, rerun = condition_of(table, conditions)
        def column(name, table=table, n=n):
            return table.columns.get(name, np.full(n, np.nan))

        parts.append(dict(
            api=np.full(n, api_of(table), dtype=object),
            load=np.full(n, load),
            rerun=np.full(n, rerun),
            input=np.array([input_of(t) for t in table.tasks], dtype=object),
            task=table.tasks,
            status=table.status,
            finished=table.valid(),
            valid=table.valid(),
            cgroup_cpu=column("cputime"),
            cgroup_wall=column("walltime"),
            timer_user=column("timer-user"),
            timer_sys=column("timer-sys"),
            timer_real=column("timer-real"),
            self_clock=column("self-clock"),
            self_cputime=column("self-cputime"),
        ))
    if not parts:
        return None
    samples = Samples(**{name: np.concatenate([p[name] for p in parts]) for name in parts[0]})
    samples.valid = samples.usable("observed_cpu") & samples.usable("observed_wall")
    return samples


def ordered_apis(samples):
    """The APIs present, in the thesis's order, then any others by name."""
    present = set(samples.api.tolist())
    return [a for a in API_ORDER if a in present] + sorted(present - set(API_ORDER))


def api_label(api):
    """The API's name in the report ('bash time'); an unknown API by its own name."""
    return API_LABEL.get(api, api)
