"""
Per-command figures from BenchExec's result files: hyperfine's (mean, sd, median, min, max, user,
system, every run's time) and the kit's between invocations (the rerun means, their 95 % CI, the
variance components), and what BenchExec costs around each run on this machine.

Which time: with one execution per run and no --prepare, BenchExec's own walltime and cputime
(cgroup); with --repeat K or --prepare, cmdrun's per-execution means (exec-walltime,
exec-cputime), since BenchExec's then also hold the other executions or the prepare command.
user and system are cmdrun's (wait4's rusage), as BenchExec records only their sum.
"""

import datetime
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from analysis.core import validity
from analysis.core.tasks import input_of
from analysis.tools.commands.definition import EXIT_CODE, RUNS

COLUMNS = {"status", "category", "walltime", "cputime", "exec-walltime", "exec-cputime", "exec-user", "exec-sys",
           "executions", "returnvalue", "starttime", EXIT_CODE}


def time_columns(options):
    """(wall, cpu) column titles that measure one execution of the command."""
    return ("exec-walltime", "exec-cputime") if options.timed_by_cmdrun else ("walltime", "cputime")


@dataclass
class Figures:
    """One command's figures in seconds; `times` and `rerun_means` in run order."""

    command: str
    name: str                      # its run definition
    parameters: dict
    column: str                    # the wall-time column the figures are of
    times: list
    mean: float
    stddev: float
    median: float
    min: float
    max: float
    user: float                    # mean per execution (cmdrun), nan if not recorded
    system: float
    cputime: float                 # mean CPU time per execution (user + system: cgroup or cmdrun)
    exit_codes: list
    runs: int                      # finished runs that count
    left_out: int                  # runs that did not finish normally or have no value (warmups are not counted)
    executions_per_run: int
    reruns: int                    # benchexec invocations
    rerun_means: list = field(default_factory=list)
    rerun_sizes: list = field(default_factory=list)  # runs per invocation: `times` split into invocations
    rerun_ci: list = field(default_factory=list)   # 95 % t interval of the mean over rerun means (2+ reruns)
    cv_within: float = math.nan
    cv_between: float = math.nan
    between_share: float = math.nan  # share of the variance between invocations (one-way random effects)
    between_p: float = math.nan      # F test that the invocations differ
    label: str = ""                  # what tables and summaries call it (spec.Command.label; else the command)
    uncompared: int = 0              # of `runs`, those an A/B table leaves out (a co-located design's), and why:
    uncompared_why: str = ""         # "sentinel" (its back-to-back pairs) or "together" (once the sentinel flagged it)

    def __post_init__(self):
        self.label = self.label or self.command   # unlabelled: the command names itself

    def to_dict(self):
        return asdict(self)

    def by_rerun(self):
        """The times split into invocations."""
        return np.split(np.array(self.times), np.cumsum(self.rerun_sizes)[:-1])


def _mean(values):
    return float(np.mean(values)) if len(values) else math.nan


def _per_invocation(tables, rundefinition, columns):
    """{invocation (benchmark, date): {column: values of the counted runs}} and the runs left out."""
    found, left_out = {}, 0
    wall = columns[0]
    for table in tables:
        if table.rundefinition != rundefinition:
            continue
        counted = np.array([input_of(t) == RUNS for t in table.tasks], dtype=bool)
        usable = validity.of_column(table, wall, table.valid()).usable & counted
        left_out += int((counted & ~usable).sum())
        chosen = found.setdefault((table.benchmark, table.date), {})
        for title in (*columns, "exec-user", "exec-sys", "executions", "returnvalue"):
            values = table.columns.get(title, np.full(len(table), np.nan))
            if title == "returnvalue" and EXIT_CODE in table.columns:   # --ignore-failure: cmdrun exited 0 for it
                values = np.where(np.isfinite(table.columns[EXIT_CODE]), table.columns[EXIT_CODE], values)
            chosen[title] = np.concatenate([chosen.get(title, np.array([])), values[usable]])
    return dict(sorted(found.items(), key=lambda item: (item[0][1], item[0][0]))), left_out


def command_figures(tables, command, options):
    """The Figures of one command (a spec.Command or anything with text, name, assignment); with
    --repeat K every execution is a value of its own (read back from the run logs), not one mean of K."""
    if options.repeat > 1:
        from analysis.tools.commands import executions

        found = side_figures(command, executions.of_tables(tables, command.name), "a")
        if found is not None:
            found.executions_per_run = options.repeat
            return found
    wall, cpu = time_columns(options)
    invocations, left_out = _per_invocation(tables, command.name, (wall, cpu))
    return _from_groups(command, [v for v in invocations.values() if v[wall].size], wall, cpu, left_out)


def side_figures(command, invocations, side, time_column="exec-walltime"):
    """The Figures of one side of a paired run definition (analysis.tools.commands.executions):
    every execution is a value of its own, timed by cmdrun. `time_column` is what the figures'
    times are: exec-cputime where a side's wall time holds the other's turns (interleaved)."""
    groups = []
    for invocation in invocations:
        done = [e for e in invocation.executions if e.side == side]
        groups.append({"exec-walltime": np.array([e.wall for e in done]), "exec-cputime": np.array([e.cpu for e in done]),
                       "exec-user": np.array([e.user for e in done]), "exec-sys": np.array([e.sys for e in done]),
                       "executions": np.ones(len(done)), "returnvalue": np.array([e.status for e in done], dtype=float)})
    return _from_groups(command, [g for g in groups if g["exec-walltime"].size], time_column, "exec-cputime", 0)


def _from_groups(command, groups, wall, cpu, left_out):
    """Figures from per-invocation {column: values}; None without a value."""
    from analysis.tools.compare import reruns  # scipy: only when figures are computed

    times = np.concatenate([g[wall] for g in groups]) if groups else np.array([])
    if not times.size:
        return None
    allof = {title: np.concatenate([g[title] for g in groups]) for title in groups[0]}
    means = [float(g[wall].mean()) for g in groups]
    executions = allof["executions"][np.isfinite(allof["executions"])]
    result = Figures(
        command=command.text, name=command.name, label=getattr(command, "label", ""),
        parameters=dict(command.assignment), column=wall,
        times=[float(t) for t in times], mean=float(times.mean()),
        stddev=float(times.std(ddof=1)) if times.size > 1 else math.nan, median=float(np.median(times)),
        min=float(times.min()), max=float(times.max()), user=_mean(allof["exec-user"][np.isfinite(allof["exec-user"])]),
        system=_mean(allof["exec-sys"][np.isfinite(allof["exec-sys"])]), cputime=_mean(allof[cpu][np.isfinite(allof[cpu])]),
        exit_codes=[int(c) for c in allof["returnvalue"] if np.isfinite(c)], runs=int(times.size), left_out=left_out,
        executions_per_run=int(executions[0]) if executions.size else 1, reruns=len(groups), rerun_means=means,
        rerun_sizes=[int(g[wall].size) for g in groups])
    if len(groups) >= 2:
        import scipy.stats

        m = np.array(means)
        half = float(scipy.stats.t.ppf(0.975, m.size - 1) * m.std(ddof=1) / math.sqrt(m.size))
        result.rerun_ci = [float(m.mean()) - half, float(m.mean()) + half]
        c = reruns.variance_components([g[wall] for g in groups])
        result.cv_within, result.cv_between, result.between_share, result.between_p = (
            c.cv_within, c.cv_between, c.between_share, c.f_p)
    return result


@dataclass
class Cost:
    """What BenchExec spends around each run here, measured from the results themselves."""

    per_run: float        # median of (next run's start - this run's start - this run's walltime), s
    in_walltime: float    # median of BenchExec's walltime - cmdrun's timing of the one execution, s (nan: not measured)
    gaps: int             # how many gaps between runs the median is over

    def to_dict(self):
        return asdict(self)


def _start(text):
    try:
        return datetime.datetime.fromisoformat(text).timestamp()
    except (TypeError, ValueError):
        return math.nan


def benchexec_cost(tables, options):
    """The Cost over all runs of all invocations (warmups included: BenchExec's work is the same);
    `in_walltime` only where a run is one execution and nothing else."""
    gaps, inside = [], []
    for table in tables:
        starts = np.array([_start(t) for t in table.text_columns.get("starttime", [])], dtype=float)
        wall = table.columns.get("walltime")
        if wall is None or starts.size != len(table):
            continue
        order = np.argsort(starts)
        between = np.diff(starts[order]) - wall[order][:-1]
        gaps += [g for g in between if np.isfinite(g)]
        executions = table.columns.get("executions", np.full(len(table), np.nan))
        own = table.columns.get("exec-walltime", np.full(len(table), np.nan))
        single = (executions == 1) & np.isfinite(own) & np.isfinite(wall)
        if not options.timed_by_cmdrun:
            inside += list(wall[single] - own[single])
    return Cost(float(np.median(gaps)) if gaps else math.nan, float(np.median(inside)) if inside else math.nan, len(gaps))
