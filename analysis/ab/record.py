"""
What every A/B manifest records beside its own fields: the plan (seed, reruns and when to add
more), the conditions around every invocation, and the invocations themselves. The separate
design's ab.json, the merged definitions' blocks.json and the shell commands' paired.json
extend it; the step loop (analysis.sweep.steps_loop) saves it after every change.
"""

import bz2
import re
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import NamedTuple, Protocol

from analysis.ab import designs
from analysis.sweep import steps_loop
from analysis.sweep.model import StepsRecord


@dataclass(frozen=True)
class AbPlan:
    """What a new A/B run is planned with, taken from the AbOptions once: read as fields everywhere,
    and kept in DIR/commands.json so that a resume (which has no --reruns) plans as the run began."""

    reruns: int                 # invocations (separate: per side) to start with
    seed: int = 0
    until: float = None         # --until PCT
    max_reruns: int = 20
    load: int = 0               # --load: busy processes around every invocation
    container: bool = True
    design: str = "separate"    # as given (auto: the pilot chooses); records from before the field ran separate
    threshold: float = 0.02     # what the pilot's and the sentinel's tolerance derive from
    design_why: str = ""        # AbOptions.design_why: a design chosen elsewhere, not piloted again

    @classmethod
    def of(cls, options, reruns):
        return cls(reruns, options.seed, options.until, options.max_reruns_limit, options.load, options.container,
                   options.design, options.threshold, options.design_why)

    @classmethod
    def from_dict(cls, data):
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_dict(self):
        return asdict(self)


@dataclass(kw_only=True)
class AbRecord(StepsRecord):
    """The fields all A/B manifests share; a subclass adds what its sides are and its `design`."""

    stem = ""                    # the benchmark definition's stem in DIR (the runner's default `where`)
    only_column = None           # the one column compared unless --column asks (PairedRun's, from its pilot)
    sets_aside_disturbed = True  # invocations that met outside work are set aside when the rows are read

    seed: int
    reruns: int                  # invocations (separate: per side) planned so far
    max_reruns: int = 20         # the most --until or --until-decided may plan
    until: float = None          # --until PCT: the 95 % CI half-width to reach, in percent
    until_decided: bool = False  # --until-decided: add invocations until every row is decided
    budget: float = None         # --budget: seconds for all invocations
    background: int = 0          # --load: busy processes around every invocation
    container: bool = True
    created: str = ""
    steps: list = field(default_factory=list)
    checks: list = field(default_factory=list)   # what each look found (reruns, half-width or undecided rows)
    stopped: str = ""            # why no more invocations were added
    tasksets: list = field(default_factory=list)  # what runner.benchexec_command reads: all task sets
    skipped: dict = field(default_factory=dict)

    def plan(self, rerun):
        """Append the invocations of rerun `rerun`, as the record's design lays them out."""
        self.steps += designs.get(self.design).plan(self, rerun)

    def ask_until_decided(self, options, outdir, fits=0):
        """--until-decided (also on --resume): add invocations until every row is decided, within
        --budget and --max-reruns (`fits`: the invocations a budget holds where it sets the most)."""
        if options.until_decided:
            self.until_decided = True
            self.budget = options.budget if options.budget is not None else self.budget
            self.max_reruns = max(self.max_reruns, options.max_reruns_limit, fits)
            self.save(outdir)

    def add_rerun(self, outdir, why, out):
        """Plan one more rerun, save, and say why on `out` ("undecided after 3 reruns: ...")."""
        self.reruns += 1
        self.plan(self.reruns)
        self.save(outdir)
        print(f"  {why}: adding {'invocation' if designs.get(self.design).holds_both else 'rerun'} "
              f"{self.reruns}", file=out, flush=True)

    def ending(self):
        """What the design's line ends with: the invocations run again after being cut short, and why
        no more were added."""
        redone = steps_loop.redone(self)
        return ((f"; {redone} invocation(s) run again after being cut short" if redone else "")
                + (f"; {self.stopped}" if self.stopped else ""))

    def place(self, step, folder):
        """Judge the step's outside work on the CPUs its runs used (their cpuCores in its result
        files) apart from the rest of the machine, as its design asks (Design.others_matter)."""
        if step.disturbance is None:
            return
        cpus = run_cores(folder, step.result_files)
        if cpus:
            step.disturbance = step.disturbance.on_cpus(cpus, designs.get(self.design).others_matter)

    def plan_reruns(self, first, last):
        """Plan reruns `first` to `last`, both included."""
        for rerun in range(first, last + 1):
            self.plan(rerun)


class Sides(NamedTuple):
    """What the text and the export say of one measured pair of shell commands."""

    base: list       # base's figures, one per command (analysis.tools.commands.figures)
    new: list
    cost: object     # BenchExec's cost around the runs (figures.benchexec_cost)
    full: str        # the design's lines in full (--verbose, the JSON)
    short: str       # and in short (the text)
    warning: str     # a warning about the machines the sides ran on ('' for none)


class Measured(Protocol):
    """What every A/B record is asked, whatever its kind: the report, the api and the gate call
    these, never the kind."""

    design: str
    reruns: int
    until_decided: bool

    def measure(self, directory, columns, options, out):
        """Run the pending invocations (and, deciding, more); (compare's Result, SequentialReport)."""

    def busy_from_outside(self, directory) -> str:
        """Why no verdict rests on the run for outside work ('' where one does)."""

    def design_changed(self) -> str:
        """Why the design changed what it measures ('' where it did not)."""


class Run(Measured, Protocol):
    """A pair of shell commands' record (separate.ABRun, paired.PairedRun). A new kind of run is
    one class with these methods."""

    def sides(self, directory, pair, commands, rows, run_options) -> Sides:
        """The figures of each side and the design's lines; `commands`: (base's, new's) spec.Commands."""

    def batched(self, run_options):
        """The options every BenchExec run of the pair got (the batch, where the run sets one)."""

    def export(self, directory) -> dict:
        """The run's own fields of the JSON's `ab` entry."""


class DefinitionsRun(Measured, Protocol):
    """Two benchmark definitions' record (separate.ABRun, merged.BlocksRun): analysis.ab.definitions
    calls these, never the kind."""

    def described(self, directory, verbose=True) -> str:
        """The design that ran, in a line (verbose: how it cancels the drift), and why it stopped."""


_CORES = re.compile(rb'<column title="cpuCores" value="([0-9,\s-]+)"')


def run_cores(folder, result_files):
    """The CPUs the runs of these BenchExec result files were given (their cpuCores), as ints."""
    found = set()
    for name in result_files:
        try:
            text = bz2.decompress((Path(folder) / name).read_bytes()) if name.endswith(".bz2") else \
                (Path(folder) / name).read_bytes()
        except (OSError, ValueError):
            continue
        for value in _CORES.findall(text):
            for part in value.decode().replace(" ", "").split(","):
                low, _, high = part.partition("-")
                if low.isdigit():
                    found.update(range(int(low), int(high or low) + 1))
    return tuple(sorted(found))
