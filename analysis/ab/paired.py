"""
`timekit ab 'CMD A' 'CMD B'` under a paired design (blocks, interleaved, duet): every invocation
runs both sides, each BenchExec run a batch of K pairs that cmdrun times execution by execution,
so a pair's log ratio cancels what the machine did to both. Here: the record DIR/paired.json
(analysis.sweep.steps_loop), the batch (choose_batch), the definition and the invocations; when
to stop is stopping's, the co-located designs' watch sentinel's, auto's choice pilot's.
"""

import math
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from analysis.core.errors import UserError
from analysis.machine import environment
from analysis.sweep import lint, runner, steps_loop
from analysis.sweep.model import Experiment, now
from analysis.tools.commands import definition, executions
from analysis.ab import designs, sentinel, stopping
from analysis.ab import runner as ab_runner
from analysis.ab.record import AbRecord, Sides
from analysis.ab.sentinel import SENTINEL
from analysis.tools.commands.spec import Options

MANIFEST = "paired.json"
DEFINITION = "paired.xml"
DESIGNS = designs.PAIRED
RUN_COST = 0.15          # s BenchExec spends around a run here (benchmarks/README.md)
OVERHEAD = 0.10          # K pairs per run keep BenchExec's cost under this share of a run
INVOCATION_SECONDS = 1.0  # pairs per invocation: at least this long, and at least MIN_PAIRS
MIN_PAIRS = 3
INVOCATION_COST = 0.5     # s BenchExec spends once per invocation here, besides its runs
MAX_INVOCATIONS = 200     # M_max that a --budget can ask for
MAX_PAIRS_PER_RUN = 2000


COLUMNS = designs.CMDRUN_COLUMNS   # cmdrun's timing of each execution: the cgroup's run holds both sides
ALIASES = {"cputime": "exec-cputime", "walltime": "exec-walltime"}


def columns_of(requested, design="blocks", only=None):
    """The columns a paired design can compare (cputime and walltime are cmdrun's for each side;
    its Design says which of them); raises PairedError with the reason for any other. Unless asked
    for, a run whose pilot named one column (PairedRun.only_column) compares that one alone."""
    allowed = designs.get(design).columns
    if not requested and only in allowed:
        allowed = (only,)
    out = []
    for column in requested or allowed:
        column = ALIASES.get(column, column)
        if column not in COLUMNS:
            raise PairedError(f"--column {column}: a paired design runs both sides in one BenchExec run, so only "
                              f"each execution's CPU and wall time tell them apart ({', '.join(COLUMNS)}); "
                              "use --design separate for BenchExec's other columns")
        if column not in allowed:
            raise PairedError(f"--column {column}: under --design {design} each side's wall time includes the "
                              f"other's turns on the core, so only {', '.join(allowed)} compares them; "
                              "use --design blocks for wall time")
        out.append(column)
    return tuple(dict.fromkeys(out))


class PairedError(UserError):
    """A paired A/B run cannot start or continue (one line for the user)."""


@dataclass
class Batch:
    """How the pairs of an invocation are cut into BenchExec runs, and why."""

    pair_seconds: float = math.nan   # one pair timed by cmdrun before the first invocation (nan: not timed)
    pairs_per_run: int = 1           # K, cmdrun's --repeat
    runs: int = 1                    # BenchExec runs per invocation
    why: str = ""

    @property
    def pairs(self):
        return self.pairs_per_run * self.runs


@dataclass
class PairedRun(AbRecord):
    """What paired.json records: the commands, the design, the batch and, as every A/B record, the
    plan and every invocation (the design lays a rerun out: analysis.ab.designs)."""

    file, error, kind, stem, condition = MANIFEST, PairedError, "paired A/B", "paired", "pairs"

    design: str              # one of DESIGNS (auto is resolved before the first invocation)
    pairs: list              # command_pairs.pairs' run definitions: [{"name", "assignment", "base", "new", "prepare"}]
    options: Options         # what every run gets, the batch's runs and --repeat in it (a dict in paired.json)
    batch: Batch
    build: str = ""
    environment: dict = field(default_factory=dict)
    design_why: str = ""     # why --design auto chose it ("": given)
    cores: int = 1           # cores a run gets: more where a command runs threads (pilot.Alone)
    pilot: dict = field(default_factory=dict)        # auto's co-location pilot (colocation.Check.to_dict)
    colocation: dict = field(default_factory=dict)   # the sentinel's last Check over the invocations
    switched: int = 0        # the invocation from which a flagged co-located design ran as blocks (0: never)
    flagged: str = ""        # why the co-located pairs give no verdict ("": they do)
    cpu_share: float = math.nan   # pilot.Alone's: the lower side's CPU time / wall time alone (nan: not timed)

    def __post_init__(self):
        """paired.json holds options and batch as objects of JSON: typed here, written back as they were."""
        if isinstance(self.options, dict):
            self.options = Options(**self.options)
        if isinstance(self.batch, dict):
            self.batch = Batch(**self.batch)

    @property
    def rundefinitions(self):
        return [r["name"] for r in self.pairs]

    @property
    def only_column(self):
        """The one column this pair is told by unless --column asks for more (None: both). Wall time
        for a command that waits (CPU time under pilot.WAITS of its wall time alone): its CPU time,
        a small part of it, never moves the answer, and its noise kept `ab 'sleep 0.2' 'sleep 0.2'`
        undecided for its whole budget after wall time had said ~ at the fourth invocation. CPU
        time where both sides keep one core busy (pilot.SOLO): their wall time is that CPU time
        plus what the machine adds, and on lz4 the wall-time row alone kept runs going (decided at
        M = 34 where CPU time was at M = 5)."""
        from analysis.ab.pilot import SOLO, WAITS

        if self.cpu_share < WAITS:
            return "exec-walltime"
        if self.cpu_share >= SOLO and self.cores == 1:
            return "exec-cputime"
        return None   # also where not timed (nan)

    def only_column_why(self):
        """The first line's note on the column compared alone ("" for both, and under a design that
        compares one column whatever the commands do: interleaved's wall time holds the other's turns)."""
        if len(designs.get(self.design).columns) < 2:
            return ""
        both = "--column cputime --column walltime compares both"
        if self.only_column == "exec-walltime":
            return f"wall time only: a command waits (CPU time {self.cpu_share:.0%} of its wall time alone); {both}"
        if self.only_column == "exec-cputime":
            return (f"CPU time only: both commands keep one core busy (CPU time at least {self.cpu_share:.0%} of "
                    f"wall time alone); {both}")
        return ""

    def order_within(self, rerun):
        """None: cmdrun draws the pairs' order in each run from the invocation's seed (invocation_seed)."""
        return None

    # the Run protocol (analysis.ab.record.Run)
    def measure(self, directory, columns, options, out):
        result, looks = measure(self, directory, columns, options, out=out)
        return result, stopping.sequential_report(self, result, looks, options, directory)

    def busy_from_outside(self, directory):
        return busy(self, directory)

    def design_changed(self):
        return sentinel.undecided_by_design(self)

    def sides(self, directory, pair, commands, rows, run_options):
        from analysis.ab import paired_summary
        from analysis.tools.commands import figures as figures_mod

        found = tables(directory, self)   # once for both sides and the cost
        base, new = (side_figures(found, directory, which, side, self) for which, side in zip("ab", commands))
        aside = disturbed_line(self, directory)
        full = "\n".join(filter(None, [paired_summary.summary(self), *sentinel.colocation_lines(self),
                                        paired_summary.duet_note(self, pair, rows), aside]))
        short = "\n".join(filter(None, [paired_summary.summary(self, verbose=False),
                                         *sentinel.colocation_lines(self, flagged_only=True), aside]))
        return Sides(base, new, figures_mod.benchexec_cost(found, self.options), full, short, "")

    def batched(self, run_options):
        return self.options

    def export(self, directory):
        return {"cores": self.cores, "pilot": self.pilot, "colocation": self.colocation, "flagged": self.flagged,
                "switched": self.switched, "disturbed": sorted(loaded(directory, self).disturbed.names)}


def _experiment(outdir, names):
    outdir = Path(outdir)
    return Experiment(name="paired", inputs=(), rundefinitions=tuple(names), benchmark=outdir / DEFINITION,
                      task_dir=outdir / "tasks")


def check_cpus(design):
    """A design that needs more CPUs than this process may use is refused (auto chooses within them)."""
    allowed = len(os.sched_getaffinity(0))
    if design in designs.names() and allowed < designs.get(design).cpus:
        raise PairedError(f"--design {design} runs the two sides at once on {designs.get(design).cpus} cores; this "
                          f"process may use {allowed}: use --design blocks")


def choose_batch(pair_seconds, options, given_runs, given_repeat):
    """K pairs per run and the runs per invocation: --repeat and --runs where given. Else an
    invocation holds INVOCATION_SECONDS of pairs (at least MIN_PAIRS), in runs of K pairs, K as
    large as it takes to keep BenchExec's RUN_COST under OVERHEAD of a run, but no larger than the
    invocation. Short invocations, not long ones: a decision needs invocations (the t test's
    degrees of freedom, and the ratio moves between invocations too), so beyond about a second of
    pairs an invocation buys less than the next one."""
    if not math.isfinite(pair_seconds) or pair_seconds <= 0:
        pair_seconds = math.nan
    wanted = MIN_PAIRS if math.isnan(pair_seconds) else max(MIN_PAIRS, math.ceil(INVOCATION_SECONDS / pair_seconds))
    if given_repeat:
        k, why = given_repeat, f"--repeat {given_repeat}"
    elif math.isnan(pair_seconds):
        k, why = 1, "a pair could not be timed beforehand: 1 pair a run"
    else:
        amortised = math.ceil(RUN_COST * (1 - OVERHEAD) / OVERHEAD / pair_seconds)
        k = min(MAX_PAIRS_PER_RUN, wanted, max(1, amortised))
        why = (f"a pair takes {pair_seconds * 1000:.0f} ms; {k} pair(s) a run keep BenchExec's ~{RUN_COST * 1000:.0f} ms "
               f"around a run at {RUN_COST / (RUN_COST + k * pair_seconds):.0%} of it")
    runs = given_runs or max(1, math.ceil(wanted / k))
    if not given_runs:
        why += f"; {runs} run(s) an invocation: {runs * k} pairs, at least {MIN_PAIRS} and {INVOCATION_SECONDS:g} s of them"
    return Batch(pair_seconds, k, runs, why)


def start(pair, options, outdir, design, plan, given_runs, given_repeat, command_line, columns=()):
    """A new paired A/B directory: the pair timed, the design (for auto) and the batch chosen,
    tasks and the definition."""
    from analysis.ab import pilot

    outdir = Path(outdir)
    if (outdir / MANIFEST).exists():
        raise PairedError(f"{outdir}: already holds a paired A/B run; use --resume or another --output")
    check_cpus(design)
    runner.build_programs()
    rundefinition = pair["rundefinitions"][0]
    if design == designs.AUTO:
        choice = pilot.choose(rundefinition, options, columns)
    else:
        choice = _given(design, rundefinition, options, plan)
    batch = choose_batch(choice.alone.seconds, options, given_runs, given_repeat)
    batch_options = Options(**{**options.to_dict(), "runs": batch.runs, "repeat": batch.pairs_per_run})
    outdir.mkdir(parents=True, exist_ok=True)
    definition.write_tasks(outdir, batch_options)
    cores = 1 if designs.get(choice.design).co_located else choice.alone.cores_used   # co-located: a core a side
    run = PairedRun(choice.design, pair["rundefinitions"], batch_options, batch, seed=plan.seed,
                    reruns=plan.reruns, max_reruns=max(plan.max_reruns, plan.reruns), until=plan.until,
                    background=plan.load, container=plan.container, created=now(),
                    design_why=f"auto: {choice.why}" if design == designs.AUTO else choice.why, cores=cores,
                    pilot=choice.check.to_dict() if choice.check else {}, cpu_share=choice.alone.cpu_share)
    write(run, outdir, command_line)
    run.plan_reruns(1, run.reruns)
    run.save(outdir)
    return run


def _given(design, rundefinition, options, plan):
    """The Choice of a design given by name. A co-located one is piloted as auto's is
    (pilot.checked), unless it was chosen elsewhere (plan.design_why: a bisect's first step
    piloted the same program); then the sentinel alone judges it, from
    sentinel.SENTINEL_INVOCATIONS on. One that would pin a threaded command to a core is refused,
    or, chosen elsewhere, runs as blocks."""
    from analysis.ab import pilot

    alone = pilot.time_alone(rundefinition, options)
    co_located = designs.get(design).co_located
    if co_located and alone.threaded:
        threads = f"a command runs threads (CPU time {alone.cores:.0%} of its wall time alone)"
        if plan.design_why:
            return pilot.Choice("blocks", alone, why=f"{plan.design_why}; but here {threads}: blocks")
        raise PairedError(f"--design {design} pins each side to one core, but {threads}: use --design blocks, which "
                          f"runs them on {alone.cores_used} cores as they run alone (auto chooses it)")
    if co_located and not plan.design_why:
        return pilot.checked(pilot.Choice(design, alone), rundefinition, options, plan.threshold)
    return pilot.Choice(design, alone, why=plan.design_why)


def write(run, outdir, command_line=""):
    """DIR/paired.xml for the run's design (again when a flagged design goes on as blocks)."""
    outdir = Path(outdir)
    options = run.options
    note = (f"Written by `{command_line or 'timekit ab'}` on {now()}: an A/B run of shell commands under the {run.design} "
            f"design, every run {options.repeat} pair(s) of base (--command) and new (--versus). An ordinary BenchExec "
            "definition: from the kit's checkout, `benchexec THIS.xml` reruns it.")
    paired = cmdrun_settings(run.design, run.seed, run.cores)
    path = definition.write_definition(outdir / DEFINITION, [(r["name"], r["base"], r["prepare"], r["new"])
                                                             for r in run.pairs],
                                       options, outdir / "tasks", note, paired=paired)
    lint.require_valid([path])


def cmdrun_settings(design, seed, cores=1):
    """What the generated definition tells tool_info.command (and cmdrun) of the design: the seed,
    the cores (blocks: what the commands use alone; interleaved one; duet one a side), cmdrun's
    option for it, and the sentinel's share of back-to-back pairs where the sides are co-located."""
    chosen = designs.get(design)
    return {"seed": seed, "design": design, "cores": max(chosen.cpus, cores), "option": chosen.cmdrun_option,
            "sentinel": SENTINEL if chosen.co_located else 0}


def invocations_in(run, budget):
    """How many invocations of this batch a budget (s) holds, from the pair timed beforehand (0 if
    it was not timed): with --budget and no --max-reruns, the sequential rule's M_max, so that a
    budget is spent on looks, not cut off at the default 20."""
    b = run.batch
    seconds = b.pairs * b.pair_seconds + b.runs * RUN_COST + INVOCATION_COST
    if not math.isfinite(seconds) or seconds <= 0:
        return 0
    return min(MAX_INVOCATIONS, int(budget // seconds))


def invocation_seed(run, rerun):
    return run.seed * 1000 + rerun


def run_pending(run, outdir, out=sys.stderr):
    """Run every unfinished invocation; a line after each."""
    outdir = Path(outdir)
    with steps_loop.locked(outdir):
        run.build = runner.build_programs()
        run.environment = run.environment or environment.snapshot()
        experiment = _experiment(outdir, run.rundefinitions)

        def invoke(step, count):
            definition.set_seed(outdir / DEFINITION, invocation_seed(run, step.rerun))
            return runner.execute(experiment, run, step, outdir, count)

        def line(step, count):
            return f"  invocation {step.rerun}: {count.runs} runs of {run.batch.pairs_per_run} pair(s) in {step.seconds:.1f} s"

        ab_runner.run_pending(run, outdir, invoke, line, out=out)


_LOADED = {}  # (directory, finished result files) -> Loaded: the report asks several times, the files do not change


def loaded(outdir, run=None):
    """The run's result tables (analysis.sweep.load.Loaded): invocations that met outside work are
    set aside, unless too many did (`busy`). Read once per set of finished invocations."""
    from analysis.sweep.load import of_record

    run = run or PairedRun.load(outdir)
    key = (str(Path(outdir).resolve()), tuple(f for s in run.steps if s.status == "done" for f in s.result_files))
    if key not in _LOADED:
        if len(_LOADED) >= 8:  # one entry per pair (-L) and look; older looks are not asked for again
            _LOADED.clear()
        _LOADED[key] = of_record(Path(outdir), run, {"status", "category", "starttime", "walltime", "cputime"},
                                 unit="invocation")
    return _LOADED[key]


def tables(outdir, run=None):
    return loaded(outdir, run).tables


def busy(run, outdir):
    """Why the run gives no verdict because the machine was busy from outside ('' where it does)."""
    found = loaded(outdir, run).disturbed
    return found.busy_line() if found and found.too_many else ""


def disturbed_line(run, outdir):
    """The invocations set aside for outside work, in a line ('' where none were)."""
    found = loaded(outdir, run).disturbed
    return found.set_aside_line() if found and not found.too_many else ""


def _prepare_statistics(rows, alpha, max_reruns):
    """Import scipy.stats and statsmodels' Holm and draw the sequential boundaries, which take a
    second or two of one CPU, while the first invocation runs instead of after it (not under duet,
    which uses both cores)."""
    import scipy.stats  # noqa: F401
    import statsmodels.stats.multitest  # noqa: F401

    from analysis.tools.plan import sequential

    sequential.boundaries(alpha / rows, max_reruns, paired=True)
    sequential.boundaries(alpha, max_reruns, paired=True)   # "~": stopping.decide


def measure(run, outdir, columns, options, out=sys.stderr):
    """Run the plan (and, with --until or --until-decided, more invocations: stopping), the
    sentinel watching a co-located design; returns (compare's Result, looks)."""
    if designs.get(run.design).cpus < 2:   # not beside a design that uses both cores
        rows = len(columns) * len(run.rundefinitions)
        threading.Thread(target=_prepare_statistics, args=(rows, options.alpha, run.max_reruns), daemon=True).start()

    def observe():
        from analysis.ab import observations  # scipy: imported beside the first invocation

        found = tables(outdir, run)
        if sentinel.watch(run, found, options.threshold, options.alpha, out):
            write(run, outdir)   # their say ended under --until-decided: the next invocations run as blocks
        run.save(outdir)
        alone = not sentinel.pairs_under_design_count(run)   # then the back-to-back pairs give the verdict
        return (observations.compare(found, run.rundefinitions, columns, options.alpha, options.threshold, alone),
                lambda: observations.log_series(found, run.rundefinitions, columns, alone))

    return stopping.measure_loop(run, outdir, lambda: run_pending(run, outdir, out), observe, options, out)


def side_figures(found, outdir, which, commands, run):
    """Figures of one side (a or b) of each run definition in the result tables `found`, every
    execution a value: of its wall time, or of its CPU time under interleaved (columns_of); with
    the executions the rows leave out counted, so that the block can say why its runs outnumber
    the table's n."""
    from analysis.tools.commands import failures
    from analysis.tools.commands import figures as figures_mod

    out = []
    for command in commands:
        invocations = executions.of_tables(found, command.name)
        f = figures_mod.side_figures(command, invocations, which,
                                     "exec-walltime" if "exec-walltime" in designs.get(run.design).columns else "exec-cputime")
        if f is None:
            raise PairedError(failures.explain(found, command, outdir).line())
        f.uncompared, f.uncompared_why = uncompared(invocations, which, not sentinel.pairs_under_design_count(run))
        out.append(f)
    return out


def uncompared(invocations, side, alone):
    """(executions of `side` the rows leave out, why): a co-located design's sentinel pairs, timed
    back to back ("sentinel"), or, where the sentinel has not shown the design harmless (`alone`),
    the pairs timed together ("together"); (0, "") under blocks."""
    from analysis.ab.observations import chosen_pairs

    left = 0
    for invocation in invocations:
        chosen = chosen_pairs(invocation, alone)   # None: every pair counts
        if chosen is not None:
            left += sum(1 for e in invocation.executions if e.side == side and e.together != chosen)
    return left, ("together" if alone else "sentinel") if left else ""
