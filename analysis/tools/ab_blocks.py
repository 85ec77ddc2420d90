"""
`timekit ab BASE.xml NEW.xml` under the blocks design: both definitions in every invocation.

Two benchmark definitions that use the same tool-info module and the same limits can share a
benchexec invocation: the kit merges them into one definition, DIR/blocks.xml, whose run
definitions are `base.NAME` and `new.NAME` for every run definition NAME both have (each carrying
its side's benchmark-level options and task sets, paths made absolute), and runs it M times, the
run definitions in seeded orders that alternate over couples of invocations (analysis.core.orders). Each invocation's ratio of new to
base, per run definition and column, is its observation (analysis.tools.compare.blocks): the
machine's drift between invocations moves both sides of it together. Definitions that cannot
share an invocation (two tools, other limits) run under the separate design, chunk by chunk of
their task set (analysis.tools.ab_chunks), and the output says why. The manifest DIR/blocks.json is kept by analysis.sweep.steps_loop.
"""

import sys
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from analysis.core import orders
from analysis.core.errors import UserError
from analysis.sweep import lint, runner, steps_loop
from analysis.sweep.model import Experiment, Step, StepsRecord, now

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


def merge(copies, names, out):
    """One definition holding both sides: `copies` {side: its copy with absolute paths}."""
    trees = {side: etree.parse(str(path), _PARSER) for side, path in copies.items()}
    base_root = trees["base"].getroot()
    root = etree.Element("benchmark", {k: v for k, v in base_root.attrib.items() if k in SHARED_ATTRIBUTES})
    for element in base_root.findall("require"):
        root.append(_copy(element))
    for side in SIDES:
        side_root = trees[side].getroot()
        shared = [e for e in side_root if e.tag in ("option", "propertyfile", "requiredfiles")]
        tasks = side_root.findall("tasks")
        for rundefinition in side_root.findall("rundefinition"):
            if rundefinition.get("name") not in names:
                continue
            merged = etree.SubElement(root, "rundefinition", name=f"{side}.{rundefinition.get('name')}")
            for element in [*shared, *rundefinition, *tasks]:
                merged.append(_copy(element))
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
class BlocksRun(StepsRecord):
    """What blocks.json records: the definitions, the plan, every invocation."""

    file, error, kind = MANIFEST, BlocksError, "blocks A/B"

    base: str
    new: str
    names: list                # the run definitions both have
    seed: int
    reruns: int
    max_reruns: int = 20
    until: float = None          # --until PCT: add invocations until every row's 95 % CI half-width is below it
    until_decided: bool = False
    budget: float = None
    background: int = 0
    container: bool = True
    created: str = ""
    steps: list = field(default_factory=list)
    checks: list = field(default_factory=list)
    stopped: str = ""
    tasksets: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)
    design: str = "blocks"

    @property
    def rundefinitions(self):
        return [f"{side}.{name}" for name in self.names for side in SIDES]

    def plan(self, rerun):
        order = [self.rundefinitions[i] for i in orders.couple_order(len(self.rundefinitions), self.seed, rerun)]
        self.steps.append(Step(load=self.background, rerun=rerun, name=f"rerun{rerun}", condition="blocks", order=order))


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
    lint.require_valid([merge(copies, names, outdir / DEFINITION)])
    run = BlocksRun(str(Path(base).resolve()), str(Path(new).resolve()), list(names), plan["seed"], plan["reruns"],
                    max(plan["max_reruns"], plan["reruns"]), plan["until"], background=plan["load"],
                    container=plan["container"], created=now())
    for rerun in range(1, run.reruns + 1):
        run.plan(rerun)
    run.save(outdir)
    return run


def run_pending(run, outdir, out=sys.stderr):
    """Run every unfinished invocation, its run definitions in the step's order; a line after each."""
    outdir = Path(outdir)
    bench = experiment(outdir, run.rundefinitions)

    def invoke(step):
        runner.order_rundefinitions(outdir / DEFINITION, step.order)
        return runner.execute(bench, run, step, outdir, _Count())

    def after(step):
        done = sum(s.status == "done" for s in run.steps)
        order = " ".join(name.split(".")[0][0].upper() for name in step.order)
        print(f"  invocation {step.rerun} ({order}) in {step.seconds:.1f} s ({done}/{len(run.steps)} invocations)",
              file=out, flush=True)

    steps_loop.run_pending(run, outdir, lambda step: (outdir, DEFINITION[:-4]), invoke, BlocksError, after, out)


class _Count:
    def run_finished(self, label=""):
        pass


def summary(run):
    drawn = " ".join("".join(n.split(".")[0][0].upper() for n in s.order) for s in run.steps)
    text = (f"design: blocks: {run.reruns} invocations, each holding base's and new's run definitions in seeded orders, "
            f"opposite in every other invocation (seed {run.seed}: {drawn}); an invocation's ratio of new to base cancels what the machine "
            "did to both, and the t interval over the invocations' log ratios keeps the invocation as the unit")
    redone = steps_loop.redone(run)
    text += f"; {redone} invocation(s) run again after being cut short" if redone else ""
    return text + (f"; {run.stopped}" if run.stopped else "")


def measure(run, outdir, columns, alpha, threshold, out=sys.stderr):
    """Run the plan (with --until-decided, more invocations); returns (compare's Result, looks)."""
    from analysis.tools.commands import paired_ab

    def rows_and_series(found):
        from analysis.tools.compare import blocks

        return (blocks.definition_rows(found, run.names, columns, alpha, threshold),
                lambda: blocks.definition_log_series(found, run.names, columns))

    return paired_ab.measure_loop(run, outdir, lambda: run_pending(run, outdir, out), rows_and_series, alpha, threshold, out)
