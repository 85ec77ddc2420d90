"""
`timekit ab BASE.xml NEW.xml` under the separate design: an invocation a side, back to back in
seeded orders opposite in every other rerun (analysis.core.orders), so that a slow stretch of the
machine hits both and the rerun-level compare sees how far the mean moves between invocations.
DIR/ab.json (analysis.sweep.steps_loop) records the plan and every invocation; --until PCT and
--until-decided add reruns. Definitions that cannot be merged alternate chunk by chunk of their
task set (analysis.ab.task_chunks).
"""

import sys
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from analysis.core.errors import UserError
from analysis.ab import runner as ab_runner
from analysis.ab import task_chunks
from analysis.ab.record import AbRecord, Sides
from analysis.sweep import lint, runner, steps_loop
from analysis.sweep.load import load_tables
from analysis.sweep.model import Experiment, now

MANIFEST = "ab.json"
SIDES = ("base", "new")
OUTSIDE_LOAD = "outside-load"   # a side's folder for the files of invocations that met outside work


class ABError(UserError):
    """An A/B run cannot start or continue (one line for the user)."""


@dataclass
class ABRun(AbRecord):
    """What ab.json records: the two definitions and, as every A/B record, the plan and every
    invocation (analysis.ab.designs.Separate lays a rerun out)."""

    file, error, kind = MANIFEST, ABError, "A/B"

    base: str                  # the original definitions (their copies are in DIR/base, DIR/new)
    new: str
    rundefinitions: list       # shared by both
    chunks: int = 1            # >1: base and new alternate over chunks of the task set (analysis.ab.task_chunks)
    design: str = "separate"   # a design whose invocations hold one side (analysis.ab.designs)

    @property
    def sets_aside_disturbed(self):
        """A chunked rerun's files are merged from several invocations: they are kept whole."""
        return self.chunks <= 1

    # the Run protocol (analysis.ab.record.Run), for a pair of shell commands in invocations of their own
    def measure(self, directory, columns, options, out):
        result = measure(self, directory, columns, options, out=out)
        return result, sequential_verdicts(self, directory, result.rows, columns, options)

    def busy_from_outside(self, directory):
        return busy(self)

    def design_changed(self):
        return ""

    def sides(self, directory, pair, commands, rows, run_options):
        from analysis.tools.commands import report

        base, cost = report.measured(directory / "base", commands[0], run_options)
        new, _ = report.measured(directory / "new", commands[1], run_options)
        why = ("design: separate: base and new in invocations of their own, in seeded orders opposite in every other "
               "rerun; the rerun is the unit, so the drift between invocations is in the comparison (--design blocks "
               "cancels it). ")
        return Sides(base, new, cost, why + summary(self), summary(self, verbose=False), machines_warning(directory))

    def batched(self, run_options):
        return run_options

    def export(self, directory):
        return {}

    def described(self, directory, verbose=True):
        """The design that ran, in a line (verbose: how its orders cancel the drift), and why it stopped."""
        return summary(self, verbose)


def rundefinitions(path):
    """Names of the run definitions of a benchmark definition (each must have one)."""
    tree = etree.parse(str(path), etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False))
    names = [r.get("name") for r in tree.getroot().iter("rundefinition")]
    if not names or not all(names):
        raise ABError(f"{path}: every run definition needs a name (compare lines base and new up by it)")
    return names


def side(run, which, outdir):
    """The sweep runner's view of one side: an Experiment whose definition is the side's copy."""
    original = Path(getattr(run, which))
    return Experiment(name=original.stem, inputs=(), rundefinitions=tuple(run.rundefinitions), benchmark=original,
                      task_dir=Path(outdir) / which / "tasks")


def start(base, new, outdir, reruns, seed, until, max_reruns, load, container, chunks=1, design="separate"):
    """A new A/B directory with its plan (in `chunks` chunks of the task set); returns the ABRun."""
    lint.require_valid([base, new])
    if (Path(outdir) / MANIFEST).exists():
        raise ABError(f"{outdir}: already holds an A/B run; use --resume or another --output")
    names = [n for n in rundefinitions(base) if n in rundefinitions(new)]
    if not names:
        raise ABError(f"{base} and {new} share no run definition name; compare lines base and new up by it")
    run = ABRun(str(Path(base).resolve()), str(Path(new).resolve()), names, chunks, design, seed=seed, reruns=reruns,
                until=until, max_reruns=max(max_reruns, reruns), background=load, container=container, created=now())
    for which in SIDES:
        directory = Path(outdir) / which
        directory.mkdir(parents=True, exist_ok=True)
        copy = runner.write_sweep_benchmark(side(run, which, outdir), 1, directory)  # copy, paths made absolute
        (directory / "tasks").rmdir()  # the copy's repetition tasks: none, the definition brings its own
        if chunks > 1:
            task_chunks.write(copy, chunks, Path(outdir) / "chunks" / which)
    run.plan_reruns(1, run.reruns)
    run.save(outdir)
    return run


def run_pending(run, outdir, out=sys.stderr):
    """Run every unfinished invocation in order (analysis.sweep.steps_loop), a line after each;
    in chunks, merge each finished rerun's chunks into one result file per side."""
    def where(step):
        if step.chunk:
            return Path(outdir) / "chunks" / step.condition, f"{Path(getattr(run, step.condition)).stem}.chunk{step.chunk}"
        return Path(outdir) / step.condition, Path(getattr(run, step.condition)).stem

    def invoke(step, count):
        directory, stem = where(step)
        experiment = side(run, step.condition, outdir)
        if step.chunk:
            experiment = Experiment(name=stem, inputs=(), rundefinitions=experiment.rundefinitions,
                                    benchmark=directory / f"{stem}.xml", task_dir=directory / "tasks")
        return runner.execute(experiment, run, step, directory, count)

    def line(step, count):
        chunk = f" chunk {step.chunk}/{run.chunks}" if step.chunk else ""
        return f"  {step.condition} rerun {step.rerun}{chunk}: {count.runs} runs in {step.seconds:.1f} s"

    def after(step):
        if step.chunk:
            merge_chunks(run, outdir, (step.condition, step.rerun))
        elif step.disturbed:   # out of the side's folder, which compare, the looks and the figures read
            steps_loop.set_aside(*where(step), step.name, into=OUTSIDE_LOAD)

    ab_runner.run_pending(run, outdir, invoke, line, where, after, out)
    if run.chunks > 1:
        merge_chunks(run, outdir)


def disturbed(run):
    """The invocations that met outside work (analysis.sweep.disturbed.Disturbed, by the record's
    outside CPU; the side's runs are read without them)."""
    from analysis.sweep import disturbed as disturbed_mod

    return disturbed_mod.of(run, unit="rerun") if run.sets_aside_disturbed else None


def busy(run):
    """Why the run gives no verdict because the machine was busy from outside ('' where it does)."""
    found = disturbed(run)
    return found.busy_line() if found and found.too_many else ""


def disturbed_line(run):
    """The invocations set aside for outside work, in a line ('' where none were)."""
    found = disturbed(run)
    return found.set_aside_line() if found and not found.too_many else ""


def merge_chunks(run, outdir, only=None):
    """Each side's chunk result files of every finished rerun (or of `only`, a (side, rerun)),
    merged into the files one invocation would have written in DIR/SIDE; at the end of every
    run_pending again, so that a kill between a rerun's last chunk and its merge loses nothing."""
    groups = {}
    for step in run.steps:
        if step.chunk and (only is None or (step.condition, step.rerun) == tuple(only)):
            groups.setdefault((step.condition, step.rerun), []).append(step)
    for (which, rerun), steps in groups.items():
        if all(s.status == "done" for s in steps):
            files = [Path(outdir) / "chunks" / which / name for s in steps for name in s.result_files]
            task_chunks.merge(files, Path(getattr(run, which)).stem, f"{which}-rerun{rerun}", Path(outdir) / which)


def half_width(rows):
    """The widest row's 95 % CI half-width of the ratio, in percent (infinite without rows)."""
    return max((100 * (r.ci_high - r.ci_low) / 2 for r in rows), default=float("inf"))


def compare_sides(outdir, columns, alpha, threshold, per_task=False):
    from analysis.tools.compare import repeated as compare_mod  # scipy: imported when comparing, not for --help

    wanted = {"status", "category", *columns}
    result = compare_mod.compare(load_tables(Path(outdir) / "base", wanted)[:2], load_tables(Path(outdir) / "new", wanted)[:2],
                                 columns, alpha=alpha, threshold=threshold, per_task=per_task)
    if result.nothing and not result.not_compared:
        raise ABError(f"{outdir}: base and new share no run definition, input and column")
    return result


def machines_warning(outdir):
    """compare's line where base and new ran on different machines or limits (a resumed run can), else ''."""
    from analysis.core.results import machines

    return machines.warning(*(machines.of_tables(load_tables(Path(outdir) / side, {"status", "host"})[0])
                              for side in ("base", "new")))


def measure(run, outdir, columns, options, out=sys.stderr):
    """Run the plan; with --until add pairs until the CI is narrow enough, with --until-decided until
    every row is decided (alpha, threshold, per_task: the AbOptions). Returns compare's Result."""
    while True:
        run_pending(run, outdir, out)
        result = compare_sides(outdir, columns, options.alpha, options.threshold, options.per_task)
        if run.until_decided and not result.nothing:
            if _decided_or_spent(run, outdir, columns, options, out):
                return result
            continue
        if run.until is None or result.nothing:
            return result
        rows = result.rows
        width = half_width(rows)
        run.checks.append({"reruns": run.reruns, "half_width": width})
        if width < run.until or run.reruns >= run.max_reruns:
            run.stopped = (f"CI half-width {width:.2f} % < {run.until:g} % after {run.reruns} reruns per side"
                           if width < run.until else
                           f"--max-reruns {run.max_reruns} reached; CI half-width still {width:.2f} % (target {run.until:g} %)")
            run.save(outdir)
            return result
        run.add_rerun(outdir, f"CI half-width {width:.2f} % >= {run.until:g} %", out)


def _decided_or_spent(run, outdir, columns, options, out):
    """--until-decided: look; stop (True) when every row is decided or the budget or --max-reruns is reached,
    else plan one more rerun."""
    from analysis.tools.plan import ab_looks

    looks = ab_looks.look(outdir, columns, options.alpha, options.threshold, run.max_reruns, options.per_task)
    undecided = [r.row for r in looks if not r.decision.decided]
    run.checks.append({"reruns": run.reruns, "undecided": undecided})
    stop = ("every row decided after {} reruns per side".format(run.reruns) if not undecided else
            f"--max-reruns {run.max_reruns} reached" if run.reruns >= run.max_reruns else
            f"the budget ({run.budget / 60:.3g} min) does not fit another pair" if not ab_looks.budget_left_for_a_pair(run) else "")
    if stop:
        run.stopped = stop
        run.save(outdir)
        return True
    run.add_rerun(outdir, f"undecided after {run.reruns} reruns: {', '.join(undecided)}", out)
    return False


def summary(run, verbose=True):
    """The design that ran, in a line (verbose: how its orders cancel the drift), and why it stopped."""
    drawn = {}
    for step in run.steps:
        drawn.setdefault(step.rerun, []).append(step.condition[0].upper())
    orders_drawn = f"seed {run.seed}: {' '.join(''.join(o) for _, o in sorted(drawn.items()))}"
    if verbose:
        chunked = (f", in {run.chunks} chunks of the task set: both sides' chunk 1, then chunk 2 in the opposite order, "
                   "..., so a task of base and the same task of new run seconds apart" if run.chunks > 1 else "")
        text = (f"A/B: {run.reruns} reruns per side, base and new alternating in seeded orders, opposite in every other "
                f"rerun{chunked} ({orders_drawn})")
    else:
        chunked = f", chunk by chunk of {run.chunks}" if run.chunks > 1 else ""
        text = f"design: separate: {run.reruns} reruns per side, an invocation each{chunked} ({orders_drawn})"
    text += run.ending()
    aside = disturbed_line(run)
    return text + (f"\n{aside}" if aside else "")


# --------------------------------------------------------------------------------------------
# what the options ask (analysis.tools.options.AbOptions, built by analysis.ab.cli)


def reruns_to_start(options):
    """--reruns, else 5 (--until-decided: the sequential rule's first look); checked with --load."""
    if options.reruns_to_start < 2 or options.load < 0:
        raise ABError("--reruns must be 2 or more (one rerun cannot show drift) and --load 0 or more")
    return options.reruns_to_start


def check_sequential(options):
    """The rules to stop by, one at a time and each with what it needs."""
    if options.until is not None and options.until_decided:
        raise ABError("--until PCT and --until-decided are two rules to stop by: give one of them")
    if options.budget is not None and not options.until_decided:
        raise ABError("--budget bounds the run until decided, which --reruns N (a fixed count) or --until PCT "
                      "replaces: drop them, or add --until-decided to start from --reruns N")
    if options.max_reruns is not None and options.until is None and not options.until_decided and not options.resume:
        raise ABError("--max-reruns bounds the run until decided (or --until PCT), which --reruns N (a fixed count) "
                      "replaces: drop --reruns, or add --until-decided to start from it")


def sequential_verdicts(run, outdir, rows, columns, options):
    """With --until-decided the verdicts are the sequential rule's (compare's fixed rule does not hold
    after many looks): rows are rewritten in place; returns the rule's SequentialReport (empty without it)."""
    from analysis.tools.plan import ab_looks
    from analysis.tools.plan.verdict_record import SequentialReport

    if not run.until_decided:
        return SequentialReport()
    alpha, threshold = options.alpha, options.threshold
    looks = ab_looks.look(outdir, columns, alpha, threshold, run.max_reruns, options.per_task)
    ab_looks.apply(rows, looks)
    rows = ab_looks.verdicts(run, outdir, looks, columns, alpha, threshold)
    return SequentialReport(ab_looks.report(run, outdir, rows, alpha, threshold), rows)
