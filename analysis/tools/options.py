"""
Typed options of `timekit ab`, `bench` and `compare`: each command's cli module builds one from
argv once (analysis.ab.cli.options, commands.cli.bench_options, compare.cli.options), and everything below
reads that object; nothing below a cli takes argparse's namespace or changes it. A tool that runs
ab in-process (analysis.ab.api) builds an AbOptions itself. Light: no numpy.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Optional

from analysis.tools.plan.args import FIRST_LOOK

MAX_RERUNS = 20        # --max-reruns by default
DEFAULT_RERUNS = 5     # invocations of a fixed count (bench; ab with --until PCT)
DEFAULT_BUDGET = 120.0  # seconds of invocations `timekit ab` decides in, where --budget is not given


@dataclass(frozen=True)
class CommandOptions:
    """hyperfine's options for shell commands, None where not given (ab refuses them with two
    benchmark definitions; spec.Options holds what every run gets, defaults filled in)."""

    runs: Optional[int] = None
    warmup: Optional[int] = None
    prepare: Optional[str] = None
    parameter_list: Optional[tuple] = None      # ((NAME, "a,b,c"), ...) as -L gives them
    shell: Optional[str] = None
    repeat: Optional[int] = None
    ignore_failure: Optional[bool] = None
    command_output: Optional[str] = None        # hyperfine's --output: null, pipe, inherit or a FILE
    command_name: Optional[tuple] = None        # hyperfine's -n NAME, one per command in order
    export_json: Optional[Path] = None
    export_markdown: Optional[Path] = None
    export_csv: Optional[Path] = None


COMMAND_ONLY = tuple(f.name for f in fields(CommandOptions))
EXPORTS = ("export_json", "export_markdown", "export_csv")


@dataclass(frozen=True)
class AbOptions(CommandOptions):
    """`timekit ab`: what to compare, how to run it, when to stop, and how to judge and print it."""

    base: Optional[str] = None          # a benchmark definition or a shell command (None with --resume)
    new: Optional[str] = None
    more: tuple = ()                    # further shell commands, each compared with the base
    reruns: Optional[int] = None        # invocations (a side) to start with; None: reruns_to_start
    until: Optional[float] = None       # --until PCT: a CI half-width in percent
    max_reruns: Optional[int] = None    # None: MAX_RERUNS, and a --budget may set it (budget_sets_max)
    until_decided: bool = True          # add invocations until decided (False: --reruns N, --until PCT)
    budget: Optional[float] = DEFAULT_BUDGET   # seconds for all invocations while deciding
    design: str = "auto"                # auto, blocks, interleaved, duet, separate
    design_why: str = ""                # where a design given by name was chosen (a bisect's first step):
                                        # then it is not piloted again, and the sentinel judges it
    seed: int = 0
    load: int = 0                       # background busy processes around every invocation
    output: Optional[Path] = None
    resume: bool = False
    container: bool = True
    columns: tuple = ()                 # () : the design's default columns
    alpha: float = 0.05
    threshold: float = 0.02
    format: str = "text"                # text, markdown, json
    per_task: bool = False
    verbose: bool = False
    command_line: str = ""              # the command as typed, for the notes in generated definitions

    @property
    def arguments(self):
        """The positional arguments given: base, new and the further commands."""
        return [a for a in (self.base, self.new, *self.more) if a is not None]

    @property
    def reruns_to_start(self):
        """--reruns, else 5 (--until-decided: the sequential rule's first look)."""
        return self.reruns or (FIRST_LOOK if self.until_decided else DEFAULT_RERUNS)

    @property
    def max_reruns_limit(self):
        return self.max_reruns or MAX_RERUNS

    @property
    def budget_sets_max(self):
        """Whether --budget may set M_max under a paired design (no --max-reruns given)."""
        return self.max_reruns is None


@dataclass(frozen=True)
class BenchOptions(CommandOptions):
    """`timekit bench`."""

    commands: tuple = ()
    reruns: int = DEFAULT_RERUNS
    output: Optional[Path] = None
    resume: bool = False
    container: bool = True
    verbose: bool = False
    command_line: str = ""


@dataclass(frozen=True)
class CompareOptions:
    """`timekit compare` (its paired mode's options too)."""

    base: Path
    new: Path
    columns: tuple = ()                 # () : the mode's default columns
    alpha: float = 0.05
    threshold: float = 0.02
    format: str = "text"
    per_task: bool = False
    paired: bool = False
    min_cputime: Optional[float] = None   # None: pairing.MIN_CPUTIME
    report: Optional[Path] = None
