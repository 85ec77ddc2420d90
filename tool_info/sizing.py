"""
How large the memory workloads' buffers are: STREAM's arrays (programs/stream.c) and the largest
working set of osbench's latency and bandwidth curves (programs/osbench.c). A pure function of
three recorded facts: the last-level cache (LLC), the run's memory limit and the memory the
machine has available (MemAvailable in /proc/meminfo).

Sizes follow the LLC: STREAM wants each array 4 x the LLC (McCalpin's rule), the curves go up to
4 x the LLC, so that the largest sizes run from memory, not from a cache. They are capped by the
run's *budget*: its memory limit less a reserve for the program itself, and at most half of
MemAvailable, so that a run of the kit's own definitions never ends OUT OF MEMORY because of its
sizes and never pushes the machine into its OOM killer. Where 4 x the LLC does not fit, the run
measures what fits, prints its budget (`budget-bytes`), and the section says "memory level not
reached: LLC reported X, budget Y".

Both ways, decided: the limit follows the size, up to what the machine has, and the size is
capped by the limit. A sweep writes into its copy of the definition the memory limit that 4 x
the LLC needs (`limit_for`; never below the committed one, never above what half of MemAvailable
can use): a VM that reports an LLC of 480 MiB on a 24 GiB machine then measures memory, where a
fixed 2 GB limit would have stopped STREAM at 1.3 x that LLC for no reason but a number chosen on
another machine. At run time the tool-info module passes the budget of the limit the run really
has (`budget`): the committed definitions also run under plain benchexec, and a user's own limit
is a limit, so there the size gives way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

MiB = 2**20
LINE = 64  # sizes are whole cache lines: the programs round down to this, and so does fit()
RESERVE_FIXED = 32 * MiB  # the program, its libraries, numactl, BenchExec's share of the cgroup
RESERVE_SHARE = 32  # and 1/32 of the limit, for page tables (1/512 of the buffers) and slack
AVAILABLE_SHARE = 2  # a run takes at most 1/2 of MemAvailable: the rest stays for everybody else


@dataclass(frozen=True)
class Buffers:
    """What a workload allocates for a largest buffer of B bytes: B x per_byte + slack bytes."""

    name: str  # what the report calls the largest buffer
    per_byte: Fraction  # exact, as in the programs: STREAM 3 arrays; osbench its buffer + chase order (4 B per 64 B line)
    slack: int  # osbench: its 2 MiB alignment
    wanted: float  # the largest buffer follows the LLC: this many times it
    memory_from: float  # from this multiple of the LLC on, the largest size counts as memory

    def need(self, llc):
        """Bytes the buffers take at the wanted size."""
        return math.ceil(_round(self.wanted * llc) * self.per_byte) + self.slack


STREAM = Buffers("array", per_byte=Fraction(3), slack=0, wanted=4, memory_from=4)
CURVES = Buffers("largest working set", per_byte=Fraction(17, 16), slack=2 * MiB, wanted=4, memory_from=2)
# the tool-info modules whose programs take a budget, by BenchExec's tool="..." of a definition
BY_TOOL = {"tool_info.stream": STREAM, "tool_info.osbench": CURVES}


@dataclass(frozen=True)
class Fit:
    """The sizes of one run: the LLC they follow, the budget, the wanted and the chosen size (bytes)."""

    llc: int
    budget: int | None  # None: no limit and no MemAvailable known, nothing caps
    wanted: int
    size: int
    reached: bool  # the largest size reaches memory (>= memory_from x LLC)


def reserve(limit):
    """What a run with this memory limit keeps back from its buffers."""
    return RESERVE_FIXED + limit // RESERVE_SHARE


def budget(memory_limit, mem_available):
    """Bytes the buffers of a run may take: the limit less its reserve, and at most half of
    MemAvailable; None when neither is known; never negative."""
    parts = []
    if memory_limit:
        parts.append(memory_limit - reserve(memory_limit))
    if mem_available:
        parts.append(mem_available // AVAILABLE_SHARE)
    return max(0, min(parts)) if parts else None


def fit(buffers, llc, budget_bytes):
    """The largest buffer of a run: wanted x LLC, or what the budget holds if that is less."""
    wanted = _round(buffers.wanted * llc)
    size = wanted
    if budget_bytes is not None:
        size = min(wanted, _round(max(0, budget_bytes - buffers.slack) / buffers.per_byte))
    return Fit(llc=int(llc), budget=budget_bytes, wanted=wanted, size=size, reached=size >= buffers.memory_from * llc)


def limit_for(buffers, llc, mem_available, committed):
    """The memory limit a sweep writes for `buffers` at this LLC: what the wanted size needs, not
    more than half of MemAvailable can use, never below the `committed` limit (None: the
    definition has no limit, and the sweep sets none)."""
    if committed is None:
        return None
    target = buffers.need(llc)
    if mem_available:
        target = min(target, mem_available // AVAILABLE_SHARE)
    return max(committed, _limit_with_budget(target))


def _limit_with_budget(budget_bytes):
    """The smallest limit whose budget (limit less reserve) holds `budget_bytes`."""
    limit = math.ceil((budget_bytes + RESERVE_FIXED) * RESERVE_SHARE / (RESERVE_SHARE - 1))
    while limit - 1 - reserve(limit - 1) >= budget_bytes:  # reserve() divides in integers: settle on the smallest
        limit -= 1
    while limit - reserve(limit) < budget_bytes:
        limit += 1
    return limit


def _round(nbytes):
    return int(nbytes) // LINE * LINE


def mem_available(meminfo_text):
    """MemAvailable of /proc/meminfo's text in bytes, None if it has none (kernels before 3.14)."""
    for line in meminfo_text.splitlines():
        key, _, value = line.partition(":")
        if key == "MemAvailable":
            number, _, unit = value.strip().partition(" ")
            return int(number) * (1024 if unit.strip() == "kB" else 1)
    return None


def budget_argument(rlimits):
    """What a tool-info module puts before the task's file: `budget-bytes=N` for the run's memory
    limit (BenchExec's rlimits; None in a bare call) and this machine's MemAvailable as the run
    starts, or nothing when neither is known."""
    budget_bytes = budget(getattr(rlimits, "memory", None), read_mem_available())
    return [] if budget_bytes is None else [f"budget-bytes={budget_bytes}"]


def read_mem_available(path="/proc/meminfo"):
    try:
        with open(path) as f:
            return mem_available(f.read())
    except OSError:
        return None
