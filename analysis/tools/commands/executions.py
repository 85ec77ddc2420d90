"""
Every execution cmdrun timed, read back from the runs' log files.

A BenchExec run of cmdrun holds K executions (--repeat K), or K pairs of two commands; its result
file keeps one mean per column, its log file one line per execution:
`cmdrun-execution K [side=a|b] wall=S user=S sys=S status=N [core=C] [mode=M]`. Under duet or
interleaved, mode says whether the pair ran under the design or back to back (a sentinel pair). Statistics that pair the
two sides execution by execution, or count every execution of a batch, read these lines here.
"""

import functools
import math
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analysis.core.tasks import input_of
from analysis.tools.commands.definition import RUNS

ALONE = "alone"
_LINE = re.compile(r"^cmdrun-execution (\d+)((?: [a-z]+=\S+)+)\s*$", re.MULTILINE)
_FIELD = re.compile(r"([a-z]+)=(\S+)")


@dataclass
class Execution:
    """One timed execution: its index in the run (a pair's two sides share it) and its figures."""

    index: int
    side: str          # "a" (the base, or the only command) or "b"
    wall: float        # seconds, CLOCK_MONOTONIC around it
    user: float        # seconds, from wait4
    sys: float
    status: int
    core: int = -1     # duet: the core it was pinned to
    mode: str = ALONE  # "interleave" or "duet": timed beside the other side; ALONE: back to back

    @property
    def together(self):
        return self.mode != ALONE

    @property
    def cpu(self):
        return self.user + self.sys

    def value(self, column):
        return self.cpu if column.endswith("cputime") else self.wall


@dataclass
class Invocation:
    """The executions of one run definition in one benchexec invocation, run by run."""

    key: tuple                       # (benchmark, date): the invocation
    runs: list = field(default_factory=list)   # [[Execution]] per counted run, in run order

    @property
    def executions(self):
        return [e for run in self.runs for e in run]


def parse(text):
    """The Executions of one run's log text, in the order cmdrun wrote them."""
    found = []
    for match in _LINE.finditer(text):
        values = dict(_FIELD.findall(match.group(2)))
        try:
            found.append(Execution(int(match.group(1)), values.get("side", "a"), float(values["wall"]),
                                   float(values["user"]), float(values["sys"]), int(values["status"]),
                                   int(values.get("core", -1)), values.get("mode", ALONE)))
        except (KeyError, ValueError):
            continue
    return found


def archive_of(table):
    """BenchExec's .logfiles.zip beside a result file."""
    return table.path.parent / (table.path.name.split(".results.")[0] + ".logfiles.zip")


def of_tables(tables, rundefinition):
    """[Invocation] of `rundefinition` over the result tables, oldest first; only runs of the
    measured task set that finished normally count (warmups and failures do not)."""
    found = {}
    for table in tables:
        if table.rundefinition != rundefinition:
            continue
        invocation = found.setdefault((table.benchmark, table.date), Invocation((table.benchmark, table.date)))
        valid = table.valid()
        wanted = tuple(Path(task).name for task, ok in zip(table.tasks.tolist(), valid.tolist()) if ok and input_of(task) == RUNS)
        invocation.runs += _runs(archive_of(table), rundefinition, wanted)
    return [found[k] for k in sorted(found, key=lambda k: (k[1], k[0])) if found[k].runs]


def logs(archive, rundefinition, tasks):
    """(task, log text) of each task's run log in BenchExec's .logfiles.zip that has one."""
    try:
        with zipfile.ZipFile(archive) as z:
            names = {Path(n).name: n for n in z.namelist()}
            for task in tasks:
                member = names.get(f"{rundefinition}.{task}.log")
                if member:
                    yield task, z.read(member).decode(errors="replace")
    except (OSError, zipfile.BadZipFile):
        return


@functools.lru_cache(maxsize=4096)
def _runs(archive, rundefinition, tasks):
    """[[Execution]] of the tasks' logs in one archive (a finished invocation's logs do not change:
    --until-decided reads them once, not at every look). The tasks are runs BenchExec counted as
    done (tool_info.command decides that once): all their executions count, also those that exited
    non-zero under --ignore-failure."""
    runs = []
    for _, text in logs(archive, rundefinition, tasks):
        done = parse(text)
        if done:
            runs.append(done)
    return runs


def pair_log_ratios(invocation, column, together=None):
    """ln(b / a) of every pair of the invocation whose two sides were timed and positive (together:
    only the pairs timed under a co-located design, True, or back to back, False)."""
    return np.array([r for r, _ in _pairs(invocation, column, together)])


def pair_strata(invocation, column, together=None):
    """The same pairs' strata: which side started first (blocks), or a's core (duet). A side that
    starts first in a run, or runs on a faster core, is faster; the order and the cores are
    random or alternate, so the effect cancels over pairs, but it splits the pairs' ratios into
    two groups, and an invocation's median lands in the larger group."""
    return [stratum for _, stratum in _pairs(invocation, column, together)]


def _pairs(invocation, column, together=None):
    out = []
    for run in invocation.runs:
        sides, first = {}, {}
        for e in run:
            if together is not None and e.together != together:
                continue
            sides.setdefault(e.index, {})[e.side] = e
            first.setdefault(e.index, e.side)
        for index, pair in sides.items():
            a, b = pair.get("a"), pair.get("b")
            if a and b and a.value(column) > 0 and b.value(column) > 0:
                stratum = f"a on core {a.core}" if a.core >= 0 else f"{first[index]} first"
                out.append((math.log(b.value(column) / a.value(column)), stratum))
    return out


def side_values(invocation, side, column, together=None):
    return np.array([e.value(column) for e in invocation.executions
                     if e.side == side and (together is None or e.together == together)])


def co_located(invocation):
    """Whether the invocation ran its pairs under a co-located design (duet, interleaved)."""
    return any(e.together for e in invocation.executions)
