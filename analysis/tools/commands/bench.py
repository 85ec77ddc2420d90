"""
`timekit bench 'CMD' ...`: the commands' definition, M benchexec invocations of it, and the record.

Every invocation (a rerun) runs every command, one run definition after another, in an order
rotated per rerun, so that each command runs early and late and a slow stretch of the machine is
not taken for a difference between commands. The manifest DIR/bench.json is kept by
analysis.sweep.steps_loop (lock, atomic writes, a step cut short by any kill runs again on
`--resume`). DIR is an ordinary result directory: `timekit
compare`, `timekit report` and table-generator read it, `benchexec DIR/bench.xml` reruns it.
"""

import sys
from dataclasses import dataclass, field
from pathlib import Path

from analysis.core.errors import UserError
from analysis.machine import environment
from analysis.sweep import lint, runner, steps_loop
from analysis.sweep.model import Experiment, Step, StepsRecord, now, rotated
from analysis.tools.commands import definition

MANIFEST = "bench.json"
DEFINITION = "bench.xml"


class BenchError(UserError):
    """A bench run cannot start or continue (one line for the user)."""


@dataclass
class BenchRun(StepsRecord):
    """What bench.json records: the commands, the options, every invocation and how it ended."""

    file, error, kind = MANIFEST, BenchError, "bench"

    commands: list             # [{"text", "template", "assignment", "prepare", "name"}] (spec.Command)
    options: dict              # spec.Options
    reruns: int
    container: bool = True
    created: str = ""
    build: str = ""
    environment: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)
    tasksets: list = field(default_factory=list)   # what runner.execute reads: all task sets
    skipped: dict = field(default_factory=dict)

    @property
    def rundefinitions(self):
        return [c["name"] for c in self.commands]


def experiment(outdir, names):
    """The sweep runner's view of the commands' definition."""
    outdir = Path(outdir)
    return Experiment(name="bench", inputs=(), rundefinitions=tuple(names), benchmark=outdir / DEFINITION,
                      task_dir=outdir / "tasks")


def note(command_line):
    return (f"Written by `{command_line}` on {now()}. An ordinary BenchExec definition (tool_info.command, one "
            "run definition per command): from the kit's checkout, `benchexec THIS.xml` reruns it; timekit bench "
            "runs it once per rerun with the run definitions' order rotated.")


def start(commands, options, outdir, reruns, container, command_line):
    """A new bench directory: tasks, the definition (checked against BenchExec's DTD), the plan."""
    outdir = Path(outdir)
    if (outdir / MANIFEST).exists():
        raise BenchError(f"{outdir}: already holds a bench run; use --resume or another --output")
    outdir.mkdir(parents=True, exist_ok=True)
    tasks = definition.write_tasks(outdir, options)
    path = definition.write_definition(outdir / DEFINITION, [(c.name, c.text, c.prepare) for c in commands],
                                       options, tasks, note(command_line))
    lint.require_valid([path])
    names = [c.name for c in commands]
    run = BenchRun([vars(c) for c in commands], options.to_dict(), reruns, container, now())
    run.steps = [Step(load=0, rerun=r, name=f"rerun{r}", condition="commands", order=rotated(names, r - 1))
                 for r in range(1, reruns + 1)]
    run.save(outdir)
    return run


def run_pending(run, outdir, out=sys.stderr):
    """Run every unfinished invocation (analysis.sweep.steps_loop); progress with ETA on `out`."""
    outdir = Path(outdir)
    with steps_loop.locked(outdir):
        run.build = runner.build_programs()   # programs/bin/cmdrun
        run.environment = environment.snapshot()
        bench = experiment(outdir, run.rundefinitions)
        pending = [s for s in run.steps if s.status != "done"]
        per_invocation = (run.options["runs"] + run.options["warmup"]) * len(run.commands)
        progress = runner.Progress(per_invocation * len(pending), out)

        def invoke(step):
            runner.order_rundefinitions(outdir / DEFINITION, step.order)
            return runner.execute(bench, run, step, outdir, progress)

        steps_loop.run_pending(run, outdir, lambda step: (outdir, bench.benchmark.stem), invoke, BenchError, out=out)
