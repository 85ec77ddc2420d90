"""
The A/B designs: how base and new share the machine, and so what one observation is. A `Design`
says what an invocation holds (one side or both), how a rerun's invocations are laid out, which
columns tell the sides apart, and whether the sides run at once (co-located: the sentinel checks
that the verdict still speaks of each program alone). The record, runner, looks, verdict and text
are shared and read these fields; adding a design is one class here and its test
(docs/architecture.md, "The package, and adding a design").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Protocol

from analysis.core import orders
from analysis.sweep.model import Step

SIDES = ("base", "new")
CMDRUN_COLUMNS = ("exec-cputime", "exec-walltime")   # cmdrun's timing of each execution of a pair


class Design(Protocol):
    name: str
    holds_both: bool              # an invocation runs both sides (its pairs give one observation)
    co_located: bool              # both sides run at the same time (the sentinel watches)
    columns: Optional[tuple]      # what compares shell commands under it (None: BenchExec's columns)
    cmdrun_option: Optional[str]  # how cmdrun runs a pair under it (None: one after the other)
    cpus: int                     # CPUs this process must be allowed
    others_matter: bool           # work on CPUs its runs do not use disturbs its answer (measured: benchmarks/)
    quotes_machine_aa: bool       # its A/A ratio here lies off 1 by the machine's cores: quoted beside its rows
    doing: str                    # what a co-located design does, as a clause's subject ("interleaving")

    def plan(self, record, rerun: int) -> list: ...

    def how(self, run, verbose: bool) -> str: ...   # how a paired run held the two sides, in words


@dataclass(frozen=True)
class Separate:
    """An invocation a side, back to back in seeded orders opposite in every other rerun, so that a
    slow stretch of the machine hits both; the observation is a rerun's mean of each side. In
    chunks (record.chunks > 1), both sides' chunk 1, then chunk 2, ..., orders alternating."""

    name: str = "separate"
    holds_both: bool = False
    co_located: bool = False
    columns: Optional[tuple] = None
    cmdrun_option: Optional[str] = None
    cpus: int = 1
    others_matter: bool = True
    quotes_machine_aa: bool = False
    doing: str = ""

    def plan(self, record, rerun):
        if record.chunks <= 1:
            return [Step(load=record.background, rerun=rerun, name=f"{SIDES[i]}-rerun{rerun}", condition=SIDES[i])
                    for i in orders.couple_order(len(SIDES), record.seed, rerun)]
        return [Step(load=record.background, rerun=rerun, name=f"{SIDES[i]}-rerun{rerun}-chunk{chunk}",
                     condition=SIDES[i], chunk=chunk, benchexec_args=["--results-per-taskset"])
                for chunk in range(1, record.chunks + 1)
                for i in orders.couple_order(len(SIDES), record.seed, chunk, rerun)]   # merged one to one

    def how(self, run, verbose):
        return "an invocation a side, in orders opposite in every other rerun"


@dataclass(frozen=True)
class Blocks:
    """Every invocation holds both sides, pair by pair back to back in a seeded order; the
    observation is one invocation's log ratio of new to base, which cancels what the machine did
    to both. Wall and CPU time compare; each side gets the cores it uses alone."""

    name: str = "blocks"
    holds_both: bool = True
    co_located: bool = False
    columns: Optional[tuple] = CMDRUN_COLUMNS
    cmdrun_option: Optional[str] = None
    cpus: int = 1
    # a loop or a compressor on another CPU left its verdicts and CIs as on the quiet machine (and
    # interleaved's): benchmarks/README.md, "A busy runner"; so such invocations are kept
    others_matter: bool = False
    quotes_machine_aa: bool = False
    doing: str = ""

    def plan(self, record, rerun):
        return [Step(load=record.background, rerun=rerun, name=f"rerun{rerun}", condition=record.condition,
                     order=record.order_within(rerun))]

    def how(self, run, verbose):
        cores = run.cores > 1
        if not verbose:
            return "back to back" + (f" on {run.cores} cores" if cores else "")
        return (f"the two back to back, each side first in half the pairs, in an order drawn from seed {run.seed}, "
                "another per invocation" + (f", on {run.cores} cores: a command runs threads, and runs on the cores it "
                                            "uses alone" if cores else ""))


@dataclass(frozen=True)
class Interleaved(Blocks):
    """Both sides at once on one core, handed to each in turn every 1-2 ms: each side's CPU time
    only (its wall time holds the other's turns); the steadiest on a shared host, where the
    pilot and the sentinel show that sharing the core leaves each side's cost alone."""

    name: str = "interleaved"
    co_located: bool = True
    columns: Optional[tuple] = ("exec-cputime",)
    cmdrun_option: Optional[str] = "--interleave"
    doing: str = "interleaving"

    def how(self, run, verbose):
        if not verbose:
            return "both sides at once on one core"
        return ("both sides at once on one core, handed to each in turn for 1.2 to 2.2 ms, each side first in half "
                "the pairs; their CPU times compared")


@dataclass(frozen=True)
class Duet(Blocks):
    """Both sides at once, each on a core of its own: wall and CPU time; co-located, so checked
    as interleaved is."""

    name: str = "duet"
    co_located: bool = True
    cmdrun_option: Optional[str] = "--duet"
    cpus: int = 2
    others_matter: bool = True    # not measured beside other work: set aside as before
    quotes_machine_aa: bool = True   # two cores are never quite alike: its A/A recorded (paired_summary.duet_note)
    doing: str = "running them at once"

    def how(self, run, verbose):
        return "both sides at once on two cores" + (", swapped every other pair" if verbose else "")


ALL = (Separate(), Blocks(), Interleaved(), Duet())
_BY_NAME = {d.name: d for d in ALL}
PAIRED = tuple(d.name for d in ALL if d.holds_both)       # the designs whose invocations hold pairs
CO_LOCATED = tuple(d.name for d in ALL if d.co_located)


def get(name: str) -> Design:
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"no design {name!r}; the designs are {', '.join(_BY_NAME)}") from None


def names() -> tuple:
    return tuple(_BY_NAME)


AUTO = "auto"   # the default: the pilot chooses a design for the commands (analysis.ab.pilot)


def before_choice(name: str) -> Design:
    """The Design that options are checked against before auto's pilot has chosen: blocks for auto
    (it chooses among the paired designs, and blocks compares the most columns), else the one named."""
    return get("blocks" if name == AUTO else name)
