"""
`timekit ab BASE.xml NEW.xml` under the blocks design: both definitions in every invocation.

Two definitions of one tool-info module and the same limits merge into DIR/blocks.xml, whose run
definitions are `base.NAME` and `new.NAME` (or `SIDE.NAME.chunkC` where the task sets can be cut:
chunk by chunk, the sides' order alternating), run M times in seeded orders. Each invocation's
ratio of new to base is one observation (analysis.ab.observations), so the machine's drift
between invocations cancels. DIR/blocks.json is kept by analysis.sweep.steps_loop.
"""

import sys
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from analysis.core import orders
from analysis.core.errors import UserError
from analysis.ab import runner as ab_runner
from analysis.ab import task_chunks
from analysis.ab.record import AbRecord
from analysis.sweep import lint, runner
from analysis.sweep.model import Experiment, now

MANIFEST = "blocks.json"
DEFINITION = "blocks.xml"
SIDES = ("base", "new")
SHARED_ATTRIBUTES = ("tool", "timelimit", "hardtimelimit", "walltimelimit", "memlimit", "cpuCores", "threads")
_PARSER = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False, remove_blank_text=True)


class BlocksError(UserError):
    """A blocks A/B run cannot start or continue (one line for the user)."""


def why_not_mergeable(base, new):
    """'' when the two definitions can share an invocation, else the reason."""
    roots = [etree.parse(str(p), _PARSER).getroot() for p in (base, new)]
    for name in SHARED_ATTRIBUTES:
        values = [r.get(name) for r in roots]
        if values[0] != values[1]:
            what = "tool-info modules" if name == "tool" else f"{name} values"
            return f"base and new have different {what} ({values[0]}, {values[1]}), so one invocation cannot hold both"
    requires = [[etree.tostring(e) for e in r.findall("require")] for r in roots]
    if requires[0] != requires[1]:
        return "base and new require different machines (<require>), so one invocation cannot hold both"
    return ""


def chunks_of(copies):
    """How many chunks both sides' task sets take (1: not chunked)."""
    counts = [task_chunks.count(path) for path in copies.values()]
    return min(counts) if min(counts) > 1 else 1


def merge(copies, names, out, chunks=1):
    """One definition holding both sides: `copies` {side: its copy with absolute paths}; with
    chunks > 1 a run definition per side, name and chunk of the task set."""
    trees = {side: etree.parse(str(path), _PARSER) for side, path in copies.items()}
    base_root = trees["base"].getroot()
    root = etree.Element("benchmark", {k: v for k, v in base_root.attrib.items() if k in SHARED_ATTRIBUTES})
    for element in base_root.findall("require"):
        root.append(_copy(element))
    for side in SIDES:
        side_root = trees[side].getroot()
        shared = [e for e in side_root if e.tag in ("option", "propertyfile", "requiredfiles")]
        tasks = side_root.findall("tasks")
        parts = task_chunks.slices(task_chunks.task_files(copies[side]), chunks) if chunks > 1 else [None]
        for rundefinition in side_root.findall("rundefinition"):
            if rundefinition.get("name") not in names:
                continue
            for c, part in enumerate(parts, start=1):
                name = f"{side}.{rundefinition.get('name')}" + (f".chunk{c}" if part is not None else "")
                merged = etree.SubElement(root, "rundefinition", name=name)
                for element in [*shared, *rundefinition]:
                    merged.append(_copy(element))
                for k, element in enumerate(tasks):
                    if part is None:
                        merged.append(_copy(element))
                    elif k in part:
                        merged.append(task_chunks.restricted(element, part[k]))
    columns = etree.SubElement(root, "columns")
    titles = []
    for side in SIDES:
        for column in trees[side].getroot().findall("columns/column"):
            if column.get("title", column.text) not in titles:
                titles.append(column.get("title", column.text))
                columns.append(_copy(column))
    if not len(columns):
        root.remove(columns)
    etree.indent(root, space="  ")
    text = etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8", doctype=trees["base"].docinfo.doctype,
                          pretty_print=True).decode()
    Path(out).write_text(text)
    return Path(out)


def _copy(element):
    return etree.fromstring(etree.tostring(element))


@dataclass
class BlocksRun(AbRecord):
    """What blocks.json records: the two definitions merged into one and, as every A/B record, the
    plan and every invocation (analysis.ab.designs.Blocks lays a rerun out)."""

    file, error, kind, stem, condition = MANIFEST, BlocksError, "blocks A/B", "blocks", "blocks"

    base: str
    new: str
    names: list                # the run definitions both have
    design: str = "blocks"
    chunks: int = 1              # >1: each side's task set in that many chunks, alternating within an invocation

    @property
    def rundefinitions(self):
        if self.chunks > 1:
            return [f"{side}.{name}.chunk{c}" for c in range(1, self.chunks + 1) for name in self.names for side in SIDES]
        return [f"{side}.{name}" for name in self.names for side in SIDES]

    def order_within(self, rerun):
        """The run definitions in the order invocation `rerun` runs them: seeded, opposite in every
        other invocation; in chunks B N | N B | ..., the first side from the seed."""
        if self.chunks > 1:
            first = [SIDES[i] for i in orders.couple_order(len(SIDES), self.seed, rerun)]
            return [f"{side}.{name}.chunk{c}" for c in range(1, self.chunks + 1) for name in self.names
                    for side in (first if c % 2 else first[::-1])]
        return [self.rundefinitions[i] for i in orders.couple_order(len(self.rundefinitions), self.seed, rerun)]

    # what `timekit ab BASE.xml NEW.xml` asks of its record, as of a pair's (analysis.ab.record.Run)
    def measure(self, directory, columns, options, out):
        from analysis.ab import stopping

        result, looks = measure(self, directory, columns, options, out=out)
        return result, stopping.sequential_report(self, result, looks, options, directory)

    def busy_from_outside(self, directory):
        from analysis.ab import paired

        return paired.busy(self, directory)

    def design_changed(self):
        return ""

    def described(self, directory, verbose=True):
        """The design that ran, in a line (verbose: how it cancels the drift), and why it stopped."""
        return summary(self, verbose, directory)


def experiment(outdir, names):
    outdir = Path(outdir)
    return Experiment(name="blocks", inputs=(), rundefinitions=tuple(names), benchmark=outdir / DEFINITION,
                      task_dir=outdir / "tasks")


def start(base, new, outdir, names, plan):
    """A new blocks A/B directory: each side's copy (paths absolute), the merged definition, the plan."""
    outdir = Path(outdir)
    if (outdir / MANIFEST).exists():
        raise BlocksError(f"{outdir}: already holds a blocks A/B run; use --resume or another --output")
    copies = {}
    for side, path in (("base", base), ("new", new)):
        folder = outdir / side
        folder.mkdir(parents=True, exist_ok=True)
        side_experiment = Experiment(name=Path(path).stem, inputs=(), rundefinitions=tuple(names), benchmark=Path(path),
                                     task_dir=folder / "tasks")
        copies[side] = runner.write_sweep_benchmark(side_experiment, 1, folder)
        (folder / "tasks").rmdir()
    chunks = chunks_of(copies)
    lint.require_valid([merge(copies, names, outdir / DEFINITION, chunks)])
    run = BlocksRun(str(Path(base).resolve()), str(Path(new).resolve()), list(names), chunks=chunks, seed=plan.seed,
                    reruns=plan.reruns, max_reruns=max(plan.max_reruns, plan.reruns), until=plan.until,
                    background=plan.load, container=plan.container, created=now())
    run.plan_reruns(1, run.reruns)
    run.save(outdir)
    return run


def run_pending(run, outdir, out=sys.stderr):
    """Run every unfinished invocation, its run definitions in the step's order; a line after each."""
    outdir = Path(outdir)
    bench = experiment(outdir, run.rundefinitions)

    def invoke(step, count):
        runner.order_rundefinitions(outdir / DEFINITION, step.order)
        return runner.execute(bench, run, step, outdir, count)

    def line(step, count):
        order = " ".join(name.split(".")[0][0].upper() for name in step.order)
        return f"  invocation {step.rerun} ({order}) in {step.seconds:.1f} s"

    ab_runner.run_pending(run, outdir, invoke, line, out=out)


def summary(run, verbose=True, outdir=None):
    """The design that ran, in a line (verbose: how it cancels the drift), and why it stopped."""
    drawn = " ".join("".join(n.split(".")[0][0].upper() for n in s.order) for s in run.steps)
    if verbose:
        held = (f"their task sets in {run.chunks} chunks, the sides' order alternating from chunk to chunk and opposite "
                "in every other invocation" if run.chunks > 1 else "in seeded orders, opposite in every other invocation")
        text = (f"design: blocks: {run.reruns} invocations, each holding base's and new's run definitions, {held} "
                f"(seed {run.seed}: {drawn}); an invocation's ratio of new to base cancels what the machine "
                "did to both, and the t interval over the invocations' log ratios keeps the invocation as the unit")
    else:
        held = f", in {run.chunks} chunks of the task sets" if run.chunks > 1 else ""
        text = f"design: blocks: {run.reruns} invocations, each holding base and new{held} (seed {run.seed}: {drawn})"
    from analysis.ab import paired

    text += run.ending()
    aside = paired.disturbed_line(run, outdir) if outdir else ""
    return text + (f"\n{aside}" if aside else "")


def measure(run, outdir, columns, options, out=sys.stderr):
    """Run the plan (with --until-decided, more invocations; alpha and threshold: the AbOptions');
    returns (compare's Result, looks)."""
    from analysis.ab import paired, stopping

    def observe():
        from analysis.ab import observations

        found = paired.tables(outdir, run)
        return (observations.definition_rows(found, run.names, columns, options.alpha, options.threshold),
                lambda: observations.definition_log_series(found, run.names, columns))

    return stopping.measure_loop(run, outdir, lambda: run_pending(run, outdir, out), observe, options, out)
