"""
The runs of core-heterogeneity: which invocation ran on which core (the plan), and which runs
count for the core they ran on (Samples).

`plan` visits the cores interleaved over rounds, so drift over time is spread over all cores. A
run counts only if it finished, started and ended on the core BenchExec was told to use; the
first WARMUPS runs of each workload in an invocation are dropped (docs/experiments.md, "Which run
counts for which core").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from analysis.core import results, validity
from analysis.core.errors import UserError
from analysis.core.tasks import input_of

WORKLOADS = ("cachestress", "cg", "isort")
LABEL = {"cachestress": "cache-stress (clflush)", "cg": "CG kernel", "isort": "integer sort (control)"}
WARMUPS = 2  # quick preset; the paper dropped 10 per core
TOOL_MODULE = "tool_info.cores"
# the result columns this analysis reads; the loader skips all others
COLUMNS = ("status", "category", "self-seconds", "self-cputime", "cpu-start", "cpu-end", "cputime", "walltime", "cpuCores",
           "cpuenergy")
_NAME = re.compile(r"core(\d+)-round(\d+)")
_REP = re.compile(r"\.r(\d+)\.yml$")


class CoresError(UserError):
    """A user error of the cores commands (one line)."""


# ---------------------------------------------------------------------------------------------
# the plan: which core in which order


def plan(cores, rounds):
    """The interleaved order of benchexec invocations: [(round, core), ...].

    Every round visits every core once; round r starts at the (r-1)-th core and wraps around, so
    over k rounds each core takes each position once and slow drift (temperature, other tenants)
    lands on all cores alike instead of on whichever came last.
    """
    cores = [int(c) for c in cores]
    if not cores:
        raise CoresError("plan: no cores given")
    if len(set(cores)) != len(cores) or min(cores) < 0:
        raise CoresError(f"plan: cores must be distinct CPU numbers >= 0, got {cores}")
    if int(rounds) < 1:
        raise CoresError(f"plan: rounds must be at least 1, got {rounds}")
    order = []
    for r in range(1, int(rounds) + 1):
        start = (r - 1) % len(cores)
        order += [(r, c) for c in cores[start:] + cores[:start]]
    return order


def step_name(round_, core):
    """benchexec --name of one invocation."""
    return f"core{core}-round{round_}"


def benchexec_arguments(round_, core):
    """What to add to a benchexec command line so that every run of it uses exactly `core`."""
    return ["--allowedCores", str(core), "--limitCores", "1", "--name", step_name(round_, core)]


# ---------------------------------------------------------------------------------------------
# samples


@dataclass
class Samples:
    """One entry per run, as parallel arrays. `core` is the CPU the run started on (-1 unknown),
    `assigned` the core BenchExec was told to use (-1 unknown)."""

    workload: np.ndarray
    core: np.ndarray
    cpu_end: np.ndarray
    assigned: np.ndarray
    round: np.ndarray
    invocation: np.ndarray
    rep: np.ndarray
    seconds: np.ndarray
    self_cputime: np.ndarray
    cputime: np.ndarray
    walltime: np.ndarray
    energy: np.ndarray
    status: np.ndarray
    reason: np.ndarray  # '' for a counted run, else why it is not counted
    warmup: np.ndarray

    @property
    def counted(self):
        return (self.reason == "") & ~self.warmup

    def select(self, mask):
        return Samples(**{name: getattr(self, name)[mask] for name in self.__dataclass_fields__})

    def workloads(self):
        present = set(self.workload.tolist())
        return [w for w in WORKLOADS if w in present] + sorted(present - set(WORKLOADS))

    def cores(self):
        return sorted({int(c) for c in self.core[self.counted].tolist()})

    def groups(self, quantity="seconds"):
        """{workload: {core: values}} of the counted runs."""
        counted = self.select(self.counted)
        values = getattr(counted, quantity)
        return {w: {c: values[(counted.workload == w) & (counted.core == c)] for c in counted.cores()
                    if np.any((counted.workload == w) & (counted.core == c))}
                for w in counted.workloads()}


def samples_from_groups(groups, warmup=None):
    """Samples from {workload: {core: values in seconds}}, every run counted (synthetic data, other tools)."""
    rows = [(w, int(c), float(v), i) for w, by_core in groups.items() for c, values in by_core.items()
            for i, v in enumerate(np.asarray(values, dtype=float))]
    n = len(rows)
    workload, core, seconds, rep = (np.array(x) for x in zip(*rows)) if rows else (np.empty(0),) * 4
    nan = np.full(n, np.nan)
    return Samples(workload=workload.astype(object), core=core.astype(int), cpu_end=core.astype(int),
                   assigned=core.astype(int), round=np.ones(n, dtype=int), invocation=np.zeros(n, dtype=int),
                   rep=rep.astype(int), seconds=seconds.astype(float), self_cputime=nan.copy(), cputime=nan.copy(),
                   walltime=nan.copy(), energy=nan.copy(), status=np.full(n, "done", dtype=object),
                   reason=np.full(n, "", dtype=object),
                   warmup=np.zeros(n, dtype=bool) if warmup is None else np.asarray(warmup, dtype=bool))


def _assigned_core(table, n):
    """The core BenchExec assigned per run: its cpuCores column, else coreK of the name."""
    values = table.columns.get("cpuCores")
    if values is not None:
        return np.where(np.isfinite(values), values, -1).astype(int)
    match = _NAME.search(table.benchmark)
    return np.full(n, int(match.group(1)) if match else -1)


def _exclusion_reasons(valid, status, seconds, start, end, assigned):
    """Per run '' when it counts for its core, else why not (a self-seconds that is no measurement
    by the kit's one rule, analysis.core.validity, names its reason)."""
    reason = np.full(len(valid), "", dtype=object)
    timed = validity.check(seconds, "s")
    for i in range(len(valid)):
        if not valid[i]:
            reason[i] = f"failed: {status[i] or 'no status'}"
        elif not timed.usable[i]:
            reason[i] = f"self-seconds: {timed.reason(i)}"
        elif not (np.isfinite(start[i]) and np.isfinite(end[i])):
            reason[i] = "no cpu-start/cpu-end value"
        elif start[i] != end[i]:
            reason[i] = "moved to another CPU during the run"
        elif assigned[i] >= 0 and start[i] != assigned[i]:
            reason[i] = "ran on another CPU than BenchExec assigned"
    return reason


def _warmup_mask(workload, reps, warmups):
    """The first `warmups` runs of each workload in one invocation, by repetition number."""
    warmup = np.zeros(len(workload), dtype=bool)
    for w in set(workload.tolist()):
        idx = np.flatnonzero(workload == w)
        warmup[idx[np.argsort(reps[idx], kind="stable")[:warmups]]] = True
    return warmup


def _invocation(index, table, warmups):
    """The Samples fields of one benchexec invocation (one RunTable), as a dict of arrays."""
    n = len(table)
    match = _NAME.search(table.benchmark)

    def column(name):
        return table.columns.get(name, np.full(n, np.nan))

    workload = np.array([input_of(t) for t in table.tasks], dtype=object)
    reps = np.array([int(m.group(1)) if (m := _REP.search(t)) else i for i, t in enumerate(table.tasks)])
    start, end, seconds = column("cpu-start"), column("cpu-end"), column("self-seconds")
    assigned = _assigned_core(table, n)
    return dict(
        workload=workload,
        core=np.where(np.isfinite(start), start, -1).astype(int),
        cpu_end=np.where(np.isfinite(end), end, -1).astype(int),
        assigned=assigned,
        round=np.full(n, int(match.group(2)) if match else 1),
        invocation=np.full(n, index),
        rep=reps,
        seconds=seconds,
        self_cputime=column("self-cputime"),
        cputime=column("cputime"),
        walltime=column("walltime"),
        energy=column("cpuenergy"),
        status=table.status,
        reason=_exclusion_reasons(table.valid(), table.status, seconds, start, end, assigned),
        warmup=_warmup_mask(workload, reps, warmups),
    )


def _own_tables(tables):
    """The RunTables of this experiment's tool, each block once."""
    return [t for t in results.without_duplicate_blocks(tables) if t.toolmodule == TOOL_MODULE]


def collect(tables, warmups=WARMUPS):
    """Samples of the runs of the core-heterogeneity workloads in the given RunTables."""
    if warmups < 0:
        raise CoresError(f"warm-ups must be >= 0, got {warmups}")
    parts = [_invocation(index, table, warmups) for index, table in enumerate(_own_tables(tables))]
    if not parts:
        return None
    return Samples(**{name: np.concatenate([p[name] for p in parts]) for name in parts[0]})


def load(paths, warmups=WARMUPS):
    """(Samples, RunTables) of result files or directories of them."""
    try:
        tables = results.load_results(list(paths), COLUMNS)
    except results.ResultFileError as e:
        raise CoresError(str(e)) from None
    samples = collect(tables, warmups)
    if samples is None or not samples.counted.any():
        raise CoresError(f"no counted runs of {TOOL_MODULE} in {', '.join(map(str, paths))}; "
                         "run benchexec benchmark-defs/core-heterogeneity.xml first")
    return samples, _own_tables(tables)
