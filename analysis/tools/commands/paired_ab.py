"""
`timekit ab 'CMD A' 'CMD B'` under a paired design: blocks, interleaved or duet (auto, the
default, picks interleaved or blocks from a pilot pair: choose_design).

Separate invocations for base and new let the machine's drift between invocations (CV 1-3 %
on a shared VM, often more than the change sought) into every comparison. Here each benchexec
invocation runs both: every run of the one definition DIR/paired.xml is a batch of K pairs, cmdrun
timing each execution (blocks: the two back to back, in couples of opposite orders drawn from a
seed that changes per invocation; interleaved: both at once on one core, which cmdrun hands to
each in turn for 1.2 to 2.2 ms, so a slow spell of a shared host falls on both; duet: both at
once on two cores, swapped every other pair). The pair's
log ratio cancels what the machine did to both; analysis.tools.compare.blocks takes the
invocation as the unit. BenchExec's cost per run (about 0.15 s) is paid once per K pairs: K is
chosen so that it stays under a tenth of a run, from one pair timed before the first invocation.

The manifest DIR/paired.json is kept by analysis.sweep.steps_loop (lock, atomic writes, a step
cut short runs again on --resume). With --until-decided the rows are looked at after every
invocation from the third (analysis.tools.plan.sequential.run_paired_sequence) until each is
decided, one is decided slower (the gate's answer cannot change), the budget or --max-reruns.
"""

import json
import math
import os
import sys
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from analysis.core.errors import UserError
from analysis.machine import environment
from analysis.sweep import lint, runner, steps_loop
from analysis.sweep.model import Experiment, Step, StepsRecord, now
from analysis.tools.commands import definition, executions, progress
from analysis.tools.commands.spec import Options

MANIFEST = "paired.json"
DEFINITION = "paired.xml"
DESIGNS = tuple(definition.PAIRED_DESIGNS)
RUN_COST = 0.15          # s BenchExec spends around a run here (benchmarks/README.md: 146 ms idle)
OVERHEAD = 0.10          # K pairs per run keep BenchExec's cost under this share of a run
INVOCATION_SECONDS = 1.0  # pairs per invocation: at least this long, and at least MIN_PAIRS
MIN_PAIRS = 3
INVOCATION_COST = 0.5     # s BenchExec spends once per invocation here, besides its runs
MAX_INVOCATIONS = 200     # M_max that a --budget can ask for
MAX_PAIRS_PER_RUN = 2000
SENTINEL = 8              # under interleaved and duet, one couple of pairs in every SENTINEL runs back to back
SENTINEL_INVOCATIONS = 5  # --until-decided stops a co-located design that no pilot showed harmless no earlier


COLUMNS = ("exec-cputime", "exec-walltime")   # cmdrun's timing of each execution: the cgroup's run holds both sides
ALIASES = {"cputime": "exec-cputime", "walltime": "exec-walltime"}
INTERLEAVED_COLUMNS = ("exec-cputime",)   # a side's wall time there includes the other's turns


def columns_of(requested, design="blocks"):
    """The columns a paired design can compare (cputime and walltime are cmdrun's for each side;
    under interleaved only cputime); raises PairedError with the reason for any other."""
    allowed = INTERLEAVED_COLUMNS if design == "interleaved" else COLUMNS
    out = []
    for column in requested or allowed:
        column = ALIASES.get(column, column)
        if column not in COLUMNS:
            raise PairedError(f"--column {column}: a paired design runs both sides in one BenchExec run, so only "
                              f"each execution's CPU and wall time tell them apart ({', '.join(COLUMNS)}); "
                              "use --design separate for BenchExec's other columns")
        if column not in allowed:
            raise PairedError(f"--column {column}: under --design interleaved each side's wall time includes the "
                              f"other's turns on the core, so only {', '.join(allowed)} compares them; "
                              "use --design blocks for wall time")
        out.append(column)
    return tuple(dict.fromkeys(out))


class PairedError(UserError):
    """A paired A/B run cannot start or continue (one line for the user)."""


@dataclass
class Batch:
    """How the pairs of an invocation are cut into BenchExec runs, and why."""

    pair_seconds: float   # one pair timed by cmdrun before the first invocation (nan: not timed)
    pairs_per_run: int    # K, cmdrun's --repeat
    runs: int             # BenchExec runs per invocation
    why: str

    @property
    def pairs(self):
        return self.pairs_per_run * self.runs


@dataclass
class PairedRun(StepsRecord):
    """What paired.json records: the commands, the design, the batch, every invocation."""

    file, error, kind = MANIFEST, PairedError, "paired A/B"

    design: str              # one of DESIGNS (auto is resolved before the first invocation)
    pairs: list              # ab_input.pairs' run definitions: [{"name", "assignment", "base", "new", "prepare"}]
    options: dict
    batch: dict
    seed: int
    reruns: int
    max_reruns: int = 20
    until: float = None
    until_decided: bool = False
    budget: float = None
    background: int = 0      # busy processes around every invocation (--load)
    container: bool = True
    created: str = ""
    build: str = ""
    environment: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    stopped: str = ""
    tasksets: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)
    design_why: str = ""     # why --design auto chose it ("": given)
    cores: int = 1           # cores a run gets: more where a command runs threads (pilot.Alone)
    pilot: dict = field(default_factory=dict)        # auto's co-location pilot (colocation.Check.to_dict)
    colocation: dict = field(default_factory=dict)   # the sentinel's last Check over the invocations
    switched: int = 0        # the invocation from which a flagged co-located design ran as blocks (0: never)
    flagged: str = ""        # why the co-located pairs give no verdict ("": they do)

    @property
    def rundefinitions(self):
        return [r["name"] for r in self.pairs]

    def plan(self, rerun):
        self.steps.append(Step(load=self.background, rerun=rerun, name=f"rerun{rerun}", condition="pairs"))


def _experiment(outdir, names):
    outdir = Path(outdir)
    return Experiment(name="paired", inputs=(), rundefinitions=tuple(names), benchmark=outdir / DEFINITION,
                      task_dir=outdir / "tasks")


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
    from analysis.tools.commands import choices, pilot

    outdir = Path(outdir)
    if (outdir / MANIFEST).exists():
        raise PairedError(f"{outdir}: already holds a paired A/B run; use --resume or another --output")
    if design == "duet" and len(os.sched_getaffinity(0)) < 2:
        raise PairedError(f"--design duet runs the two sides at once on two cores; this process may use "
                          f"{len(os.sched_getaffinity(0))}: use --design blocks")
    runner.build_programs()
    rundefinition = pair["rundefinitions"][0]
    if design == "auto":
        threshold = plan.get("threshold", 0.02)
        remembered = choices.key(rundefinition, options, threshold)
        choice = pilot.choose(rundefinition, options, columns, threshold, choices.recall(remembered))
        if choice.check is not None and not choice.recorded:
            where = choices.remember(remembered, choice.design, choice.why, choice.check.to_dict())
            choice = pilot.Choice(choice.design, choice.alone, choice.check,
                                  f"{choice.why}; kept in {where} for this pair's later runs here")
    else:
        choice = pilot.Choice(design, pilot.time_alone(rundefinition, options))
        if design in CO_LOCATED and choice.alone.threaded:
            raise PairedError(f"--design {design} pins each side to one core, but a command runs threads (CPU time "
                              f"{choice.alone.cores:.0%} of its wall time alone): use --design blocks, which runs "
                              f"them on {choice.alone.cores_used} cores as they run alone (auto chooses it)")
        if design in CO_LOCATED:
            choice = pilot.checked(choice, rundefinition, options, plan.get("threshold", 0.02))
    batch = choose_batch(choice.alone.seconds, options, given_runs, given_repeat)
    batch_options = Options(**{**options.to_dict(), "runs": batch.runs, "repeat": batch.pairs_per_run})
    outdir.mkdir(parents=True, exist_ok=True)
    definition.write_tasks(outdir, batch_options)
    cores = choice.alone.cores_used if choice.design == "blocks" else 1
    run = PairedRun(choice.design, pair["rundefinitions"], batch_options.to_dict(), asdict(batch), plan["seed"],
                    plan["reruns"], max(plan["max_reruns"], plan["reruns"]), plan["until"], False, None, plan["load"],
                    plan["container"], now(), design_why=f"auto: {choice.why}" if design == "auto" else choice.why,
                    cores=cores,
                    pilot=choice.check.to_dict() if choice.check else {})
    write(run, outdir, command_line)
    for rerun in range(1, run.reruns + 1):
        run.plan(rerun)
    run.save(outdir)
    return run


CO_LOCATED = ("interleaved", "duet")


def write(run, outdir, command_line=""):
    """DIR/paired.xml for the run's design (again when a flagged design goes on as blocks)."""
    outdir = Path(outdir)
    options = Options(**run.options)
    note = (f"Written by `{command_line or 'timekit ab'}` on {now()}: an A/B run of shell commands under the {run.design} "
            f"design, every run {options.repeat} pair(s) of base (--command) and new (--versus). An ordinary BenchExec "
            "definition: from the kit's checkout, `benchexec THIS.xml` reruns it.")
    paired = {"seed": run.seed, "design": run.design, "cores": run.cores,
              "sentinel": SENTINEL if run.design in CO_LOCATED else 0}
    path = definition.write_definition(outdir / DEFINITION, [(r["name"], r["base"], r["prepare"], r["new"])
                                                             for r in run.pairs],
                                       options, outdir / "tasks", note, paired=paired)
    lint.require_valid([path])


def invocations_in(run, budget):
    """How many invocations of this batch a budget (s) holds, from the pair timed beforehand (0 if
    it was not timed): with --budget and no --max-reruns, the sequential rule's M_max, so that a
    budget is spent on looks, not cut off at the default 20."""
    b = run.batch
    seconds = b["pairs_per_run"] * b["runs"] * b["pair_seconds"] + b["runs"] * RUN_COST + INVOCATION_COST
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
        counts = {}

        class Count:
            runs = 0

            def run_finished(self, label=""):
                self.runs += 1

        def invoke(step):
            definition.set_seed(outdir / DEFINITION, invocation_seed(run, step.rerun))
            counts[step.name] = Count()
            return runner.execute(experiment, run, step, outdir, counts[step.name])

        def after(step):
            done = sum(s.status == "done" for s in run.steps)
            aside = f"; disturbed from outside ({step.disturbance.describe()}): set aside" if step.disturbed else ""
            progress.lines(out).invocation(f"  invocation {step.rerun}: {counts[step.name].runs} runs of "
                                           f"{run.batch['pairs_per_run']} pair(s) in {step.seconds:.1f} s{aside}",
                                           done, len(run.steps))

        steps_loop.run_pending(run, outdir, lambda step: (outdir, DEFINITION[:-4]), invoke, PairedError, after, out)


def loaded(outdir, run=None):
    """The run's result tables (analysis.sweep.load.Loaded): invocations that met outside work are
    set aside, unless too many did (`busy`)."""
    from analysis.sweep.load import of_record

    run = run or PairedRun.load(outdir)
    return of_record(Path(outdir), run, {"status", "category", "starttime", "walltime", "cputime"}, unit="invocation")


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
    """Import scipy.stats and draw the sequential boundaries, which take a second or two of one CPU,
    while the first invocation runs instead of after it (not under duet, which uses both cores)."""
    import scipy.stats  # noqa: F401

    from analysis.tools.plan import sequential

    sequential.boundaries(alpha / rows, max_reruns, paired=True)


def measure(run, outdir, columns, alpha, threshold, out=sys.stderr):
    """Run the plan (and, with --until or --until-decided, more invocations); returns (Result, looks)."""
    if run.design != "duet":
        rows = len(columns) * len(run.rundefinitions)
        threading.Thread(target=_prepare_statistics, args=(rows, alpha, run.max_reruns), daemon=True).start()

    def rows_and_series(found):
        from analysis.tools.compare import blocks  # scipy: imported beside the first invocation

        watch(run, found, threshold, outdir, out)
        alone = bool(run.flagged)   # the co-located pairs give no verdict: the back-to-back ones do
        return (blocks.compare(found, run.rundefinitions, columns, alpha, threshold, alone),
                lambda: blocks.log_series(found, run.rundefinitions, columns, alone))

    return measure_loop(run, outdir, lambda: run_pending(run, outdir, out), rows_and_series, alpha, threshold, out)


def watch(run, found, threshold, outdir, out=sys.stderr):
    """The sentinel: after every invocation of a co-located design, the co-location Check of each
    run definition. The first that is flagged ends the co-located pairs' say: the rows come from
    the back-to-back pairs, and with --until-decided the invocations that follow run as blocks."""
    from analysis.tools.commands import colocation

    if run.design not in CO_LOCATED and not run.switched:
        return
    design = run.design if run.design in CO_LOCATED else run.colocation.get("design", "interleaved")
    checks = {name: colocation.check(executions.of_tables(found, name), design, threshold) for name in run.rundefinitions}
    run.colocation = {"design": design, "checks": {name: c.to_dict() for name, c in checks.items()}}
    flagged = [(name, c) for name, c in checks.items() if c.flagged]
    if flagged and not run.flagged:
        name, c = flagged[0]
        run.flagged = colocation.reason(c) + (f" ({name})" if len(run.rundefinitions) > 1 else "")
        if run.until_decided:
            run.switched, run.design = run.reruns + 1, "blocks"
            write(run, outdir)
            print(f"  sentinel: {run.flagged}; from invocation {run.switched} on, both sides run back to back "
                  "(blocks), and the verdict comes from back-to-back pairs only", file=out, flush=True)
        else:
            print(f"  sentinel: {run.flagged}; the verdict comes from back-to-back pairs only", file=out, flush=True)
    run.save(outdir)


def colocation_lines(run, flagged_only=False):
    """The co-location check's lines for the output (none for a run that never was co-located;
    `flagged_only`: only where the check changed where the verdict comes from)."""
    from analysis.tools.commands import colocation

    lines = []
    for name, data in (run.colocation.get("checks") or {}).items():
        check = colocation.Check.from_dict(data)
        if flagged_only and not check.flagged:
            continue
        found = colocation.render(check)
        lines += [f"{name}: {found[0]}", *found[1:]] if len(run.colocation["checks"]) > 1 else found
    if run.switched:
        lines.append(f"  invocations {run.switched} to {run.reruns} ran as blocks (both sides back to back)")
    return lines


def undecided_by_design(run):
    """Why the run ends undecided because its design changes what it measures ("" where it does not):
    flagged, and not gone on as blocks."""
    return run.flagged if run.flagged and not run.switched else ""


def measure_loop(run, outdir, pending, rows_and_series, alpha, threshold, out):
    """The paired designs' loop: run what is planned, compare, look (--until-decided), plan one more
    invocation or stop. `rows_and_series(tables)` -> (compare's Result, a thunk of the rows' log series)."""
    while True:
        pending()
        result, series = rows_and_series(tables(outdir, run))
        looks = decide(series(), run, alpha, threshold) if run.until_decided else []
        stop = _stop(run, result, looks, alpha, threshold)
        if stop is not None:
            run.stopped = stop
            run.save(outdir)
            return result, looks
        run.reruns += 1
        run.plan(run.reruns)
        run.save(outdir)
        print(f"  {run.checks[-1]['why']}: adding invocation {run.reruns}", file=out, flush=True)


def _stop(run, result, looks, alpha, threshold):
    """Why the run stops now ('' for the planned M, None to go on); records the check."""
    if result.nothing:
        return ""
    if run.until_decided:
        undecided = [r.row for r in looks if not r.decision.decided]
        slower = [r.row for r in looks if r.decision.decided and r.decision.verdict == "slower"]
        nearest = _nearest_decision(run, looks, alpha, threshold)
        if run.design in CO_LOCATED and run.reruns < SENTINEL_INVOCATIONS and not piloted_harmless(run):
            run.checks.append({"reruns": run.reruns, "undecided": undecided,
                               "why": f"the sentinel judges the {run.design} design from {SENTINEL_INVOCATIONS} "
                                      "invocations on, before a verdict is given from its pairs"})
            return _out_of_room(run)
        run.checks.append({"reruns": run.reruns, "undecided": undecided, "nearest_decision": nearest,
                           "why": f"undecided: {', '.join(undecided)}{_forecast(run, nearest)}"})
        if not undecided:
            return f"every row decided after {run.reruns} invocations"
        if slower:
            return f"{'; '.join(slower)} decided slower after {run.reruns} invocations: the gate's answer (exit 1) is known"
    elif run.until is not None:
        width = max(100 * (r.ci_high - r.ci_low) / 2 for r in result.rows)
        run.checks.append({"reruns": run.reruns, "half_width": width, "why": f"CI half-width {width:.2f} % >= {run.until:g} %"})
        if width < run.until:
            return f"CI half-width {width:.2f} % < {run.until:g} % after {run.reruns} invocations"
    else:
        return ""
    return _out_of_room(run)


def piloted_harmless(run):
    """Whether the pilot showed the run's co-located design harmless (auto's condition for it): then
    its verdict may come before the sentinel is judged."""
    from analysis.tools.commands import colocation

    if not run.pilot:
        return False
    check = colocation.Check.from_dict(run.pilot)
    return check.design == run.design and check.shown_harmless(4 * check.tolerance)


def _out_of_room(run):
    """Why no further invocation may run (M_max or the budget), else None."""
    if run.reruns >= run.max_reruns:
        return f"--max-reruns {run.max_reruns} reached"
    from analysis.tools.plan import ab_looks

    if not ab_looks.budget_left_for_a_pair(run, invocations=1):
        return f"the budget ({run.budget / 60:.3g} min) does not fit another invocation"
    return None


def _nearest_decision(run, looks, alpha, threshold):
    """About how many invocations this run would stop at, at the spread met so far: where an
    undecided row leans slower, the fewest that would call one slower (the gate's answer); else
    the most that every undecided row needs. None where that lies beyond
    paired_power.MAX_INVOCATIONS or cannot be told."""
    from analysis.tools.plan import paired_power
    from analysis.tools.plan.ab_looks import seconds_spent

    seconds = seconds_spent(run) / max(1, run.reruns)
    advice = [paired_power.advice(r.sd, r.decision.ratio, r.decision.level or alpha / len(looks), threshold, seconds)
              for r in looks if not r.decision.decided and math.isfinite(r.sd) and r.sd > 0]
    slower = [a.invocations for a in advice if a.goal == "change" and a.change > 0 and a.invocations is not None]
    if slower:
        return min(slower)
    if not advice or any(a.invocations is None for a in advice):
        return None
    return max(a.invocations for a in advice)


def _forecast(run, nearest):
    """What the progress line says of the spread: a decision near, or out of this run's reach."""
    if nearest is None:
        from analysis.tools.plan.paired_power import MAX_INVOCATIONS

        return (f" (at this spread, beyond {MAX_INVOCATIONS} invocations: likely to end undecided)"
                if run.reruns >= 3 else "")
    if nearest > run.max_reruns:
        return f" (at this spread about M = {nearest} would decide it, beyond M_max = {run.max_reruns}: likely to end undecided)"
    return f" (at this spread about M = {max(nearest, run.reruns + 1)} would decide it)"


@dataclass
class Look:
    row: str
    decision: object      # analysis.tools.plan.sequential.Decision
    pairs: int            # pairs up to the look that decided it (or all)
    sd: float = math.nan  # sd of the invocations' log ratios up to that look


def decide(series, run, alpha, threshold):
    """[Look] per row: the paired sequential rule over its invocations' log ratios, alpha / rows each."""
    from analysis.tools.plan import sequential

    series = [s for s in series if s[1].size >= 2]
    out = []
    for label, logs, sizes in series:
        d = sequential.run_paired_sequence(logs, alpha / len(series), threshold, run.max_reruns)
        out.append(Look(label, d, int(sum(sizes[:d.reruns])), float(np.std(logs[:d.reruns], ddof=1))))
    return out


def verdicts(run, looks, alpha, threshold):
    """[RowVerdict] of the looks: the sequential verdict, its cost, and what would decide an undecided row."""
    from analysis.tools.plan import paired_power
    from analysis.tools.plan.ab_looks import seconds_spent
    from analysis.tools.plan.verdict_record import RowVerdict

    out = []
    for r in looks:
        d = r.decision
        would = None
        if not d.decided and math.isfinite(r.sd):
            would = paired_power.advice(r.sd, d.ratio, d.level or alpha / len(looks), threshold,
                                       seconds_spent(run) / max(1, run.reruns))
        out.append(RowVerdict(r.row, d.verdict if d.decided else "inconclusive", d.reruns, "one-sample t", d.p, d.level,
                              d.ratio, d.rci_low, d.rci_high, seconds_spent(run, d.reruns) / 60, pairs=r.pairs or None,
                              would_decide=would, confidence=d.confidence))
    return out


def sequential_report(run, result, looks, alpha, threshold, outdir):
    """The SequentialReport of a paired run (empty without --until-decided); compare's rows take
    the sequential verdicts."""
    from analysis.tools.plan import ab_looks
    from analysis.tools.plan.verdict_record import SequentialReport

    if not looks:
        return SequentialReport()
    ab_looks.apply(result.rows, looks)
    rows = verdicts(run, looks, alpha, threshold)
    return SequentialReport(report(run, rows, alpha, threshold, outdir), rows)


def report(run, rows, alpha, threshold, outdir):
    """The text of the sequential verdicts (`verdicts`)."""
    from analysis.tools.plan import paired_power, sequential
    from analysis.tools.plan.ab_looks import seconds_spent

    lines = [f"Decide, then stop (--until-decided): a look after every invocation from M = {sequential.START}, "
             f"Pocock-type alpha spending up to M_max = {run.max_reruns}, alpha {alpha:g} / {len(rows)} rows; "
             f"{run.stopped}; {seconds_spent(run) / 60:.1f} min in all."]
    for v in rows:
        lines.append(f"  {v.row}: {v.verdict} at M = {v.invocations} invocations (change {100 * (v.ratio - 1):+.2f} %, "
                     f"{v.test} p {v.p:.3g} against {v.level:.3g} at this look, {v.interval}); cost: "
                     f"{f'{v.pairs} pairs, ' if v.pairs else ''}{v.minutes:.1f} min")
        if v.would_decide:
            lines.append(f"    would decide it: {paired_power.render_advice(v.would_decide, threshold, outdir)}")
    return "\n".join(lines)


def summary(run, verbose=True):
    """One line: the design that ran (verbose: and why its verdict holds), and why it stopped."""
    b = run.batch
    if not verbose:
        how = {"duet": "both sides at once on two cores", "interleaved": "both sides at once on one core"}.get(
            run.design, "back to back" + (f" on {run.cores} cores" if run.cores > 1 else ""))
        chosen = " (auto)" if run.design_why.startswith("auto: ") else f" ({run.design_why})" if run.design_why else ""
        redone = steps_loop.redone(run)
        return (f"design: {run.design}{chosen}: {run.reruns} invocations, each {b['runs']} BenchExec run(s) of "
                f"{b['pairs_per_run']} pair(s), {how}" + (f"; {redone} invocation(s) run again after being cut short"
                                                           if redone else "") + (f"; {run.stopped}" if run.stopped else ""))
    how = {"duet": "both sides at once on two cores, swapped every other pair",
           "interleaved": "both sides at once on one core, handed to each in turn for 1.2 to 2.2 ms, each side "
                          "first in half the pairs; their CPU times compared"}.get(run.design) or (
        f"the two back to back, each side first in half the pairs, in an order drawn from seed {run.seed}, another "
        "per invocation" + (f", on {run.cores} cores: a command runs threads, and runs on the cores it uses alone"
                            if run.cores > 1 else ""))
    chosen = f" ({run.design_why})" if run.design_why else ""
    text = (f"design: {run.design}{chosen}: {run.reruns} invocations, each {b['runs']} BenchExec run(s) of {b['pairs_per_run']} "
            f"pair(s) of base and new ({how}); a pair's log ratio cancels what the machine did to both, and the t "
            f"interval over the invocations' median log ratios keeps the invocation as the unit. Batch: {b['why']}")
    redone = steps_loop.redone(run)
    text += f"; {redone} invocation(s) run again after being cut short" if redone else ""
    return text + (f"; {run.stopped}" if run.stopped else "")


DUET_AA = "duet-aa.json"   # under results/: this machine's last duet of a command against itself


def duet_note(run, pair, rows, root=None):
    """Under duet, how far this machine's duet A/A ratio lies from 1: recorded by a duet of a
    command against itself (this run, when it is one), quoted by every other duet run here."""
    if run.design != "duet":
        return ""
    import socket

    from analysis.core import paths

    path = Path(root or paths.user_results().root) / DUET_AA
    if pair["base"] == pair["new"] and rows:
        record = {"date": now(), "host": socket.gethostname(), "command": pair["base"],
                  "rows": [{"column": r.column, "ratio": r.ratio, "ci_low": r.ci_low, "ci_high": r.ci_high,
                            "invocations": r.reruns_base} for r in rows]}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2))
        what = "this run is a duet A/A: recorded in " + str(path) + " for later duet runs here"
    else:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            record = None
        if not record or record.get("host") != socket.gethostname():
            return (f"duet A/A: none recorded on this machine; `timekit ab '{pair['base']}' '{pair['base']}' --duet` "
                    "measures how far a duet of a command against itself lies from 1 here, and whether duet helps "
                    "(compare it with --design blocks)")
        what = f"recorded {record['date']} with {record['command']}"
    ratios = "; ".join(f"{r['column']} {r['ratio']:.4f} (95 % CI {r['ci_low']:.4f} … {r['ci_high']:.4f}, "
                       f"{r['invocations']} invocations)" for r in record["rows"])
    return f"duet A/A on this machine: {ratios}; {what}"


def side_figures(found, outdir, which, commands, design="blocks"):
    """Figures of one side (a or b) of each run definition in the result tables `found`, every
    execution a value: of its wall time, or of its CPU time under interleaved (columns_of)."""
    from analysis.tools.commands import failures
    from analysis.tools.commands import figures as figures_mod

    out = []
    for command in commands:
        f = figures_mod.side_figures(command, executions.of_tables(found, command.name), which,
                                     "exec-cputime" if design == "interleaved" else "exec-walltime")
        if f is None:
            raise PairedError(failures.explain(found, command, outdir).line())
        out.append(f)
    return out
