"""
Instrument checks: what a measured quantity or a recorded machine fact must satisfy before a
finding may rest on it (docs/verdicts.md, "Instrument checks").

A claim's declaration (verdicts.ClaimSpec.instruments) names a Trust for every quantity it uses:
the plausible range of a number, or the value a machine fact must have. A section reads each
quantity once into a Reading: its value, how it was measured, and the instrument's own complaint
where it gave no trustworthy value. ClaimSpec.untestable(readings) is the reason the finding is
`not testable here` ("instrument check failed: ..."), or "" when every check passed; tables and
plots show a figure only where its check passes (usable).

The core clock is read here once for both experiments that state figures in cycles (os-microbench,
scheduling-noise): programs/kit.h's probe prints it as `core-ghz` only where a chain of dependent
adds, a chain of imul (3 cycles each) and, where there is a hardware PMU, perf's cycle counter
agree; otherwise `core-clock-note` says why, with the figures. Results of older programs carry one
figure from a chain of add-immediate (`core-ghz`, or the tracer's `core-clock` in Hz), which some
CPUs run several per cycle: it is used only as unverified, and only inside the physical range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from analysis.core.fmt import binary_size

# the physical range of a core clock and the agreement of its estimates: the same as KIT_GHZ_MIN,
# KIT_GHZ_MAX and KIT_CLOCK_AGREE in programs/kit.h (tests/test_instruments.py compares them)
GHZ_MIN, GHZ_MAX = 0.1, 7.0
CLOCK_AGREE = 0.05
CHECK_CHAINS = ("imul", "eor", "xor")  # the second chain: x86-64, aarch64, plain C (kit.h)
#: the result columns the probe prints (every one of them optional)
CLOCK_KEYS = ("arch", "core-ghz", "core-clock-note", "core-ghz-add", *(f"core-ghz-{c}" for c in CHECK_CHAINS),
              "core-ghz-perf", "core-ghz-perf-note", "cpufreq-min-ghz", "cpufreq-max-ghz")
LEGACY = "one add-immediate chain, not cross-checked: recorded before the kit's two-chain probe"


@dataclass(frozen=True)
class Reading:
    """One quantity as a section read it: value (number or text; None: not measured), how it was
    measured (said beside the value) and the instrument's complaint, if it made one."""

    value: Any = None
    how: str = ""
    problem: str = ""


@dataclass(frozen=True)
class Trust:
    """Where a quantity can be trusted: a number in [low, high] (and below another reading, named by
    `below`, where given), or a fact whose value is one of `requires` (else `otherwise` is the
    reason). `source` says where the range comes from."""

    quantity: str
    low: float = -math.inf
    high: float = math.inf
    unit: str = ""
    source: str = ""
    below: str = ""
    requires: tuple = ()
    otherwise: str = ""

    def _show(self, value):
        if self.unit == "B":
            return binary_size(value)
        return f"{value:.4g} {self.unit}".strip()

    def check(self, readings: Mapping[str, Reading]) -> str:
        """'' when the reading of this quantity can be trusted, else why not."""
        r = readings.get(self.quantity) or Reading()
        if r.problem:
            return f"instrument check failed: {r.problem}"
        if r.value is None:
            return f"instrument check failed: {self.quantity} not measured"
        if self.requires:
            return "" if r.value in self.requires else (self.otherwise or f"{self.quantity} is {r.value}")
        value, how = float(r.value), f" ({r.how})" if r.how else ""
        if not (self.low <= value <= self.high):
            return (f"instrument check failed: {self.quantity} {self._show(value)}{how} lies outside "
                    f"{self._show(self.low)}–{self._show(self.high)}" + (f" ({self.source})" if self.source else ""))
        bound = readings.get(self.below) if self.below else None
        if bound is not None and bound.value is not None and not value < float(bound.value):
            return (f"instrument check failed: {self.quantity} {self._show(value)}{how} is not below the "
                    f"{self.below}, {self._show(float(bound.value))}" + (f": {self.source}" if self.source else ""))
        return ""


CORE_CLOCK = Trust("core clock", GHZ_MIN, GHZ_MAX, "GHz", "the physical range of a CPU core's clock: stock boost "
                   "clocks reach 6.2 GHz")
X86_64 = Trust("architecture", requires=("x86_64",), otherwise="not x86-64: no time-stamp counter (TSC) to judge")
TSC_INVARIANT = Trust("TSC invariant", requires=(1, 1.0, True),
                      otherwise="TSC not invariant (constant_tsc or nonstop_tsc missing in /proc/cpuinfo)")


def usable(trust, reading):
    """The reading's value where `trust` accepts it, else None (for tables and plots)."""
    return None if trust.check({trust.quantity: reading}) else reading.value


def _number(values, key):
    value = values.get(key)
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def core_clock(values):
    """The core clock in GHz as a Reading, from what the probe printed (`values`: key -> value of a
    run, or of runs combined; numbers may be floats or text). Older results: their one figure,
    `core-ghz` or the tracer's `core-clock` (Hz), marked as not cross-checked."""
    note = values.get("core-clock-note")
    if isinstance(note, str) and note:
        return Reading(problem=note)
    add, ghz = _number(values, "core-ghz-add"), _number(values, "core-ghz")
    if add is None:
        legacy = ghz if ghz is not None else (_number(values, "core-clock") or math.nan) / 1e9
        return Reading(legacy, how=LEGACY) if math.isfinite(legacy) else Reading()
    if ghz is None:
        return Reading(problem="core clock not measured here: the probe printed neither core-ghz nor a note")
    chain = next((c for c in CHECK_CHAINS if _number(values, f"core-ghz-{c}") is not None), None)
    perf, perf_note = _number(values, "core-ghz-perf"), values.get("core-ghz-perf-note")
    how = f"add chain {add:.3f} GHz" + (f", {chain} chain {_number(values, f'core-ghz-{chain}'):.3f} GHz" if chain else "")
    how += f", perf cycles {perf:.3f} GHz" if perf is not None else (
        f"; no perf cycles: {perf_note.split(': ', 1)[-1]}" if isinstance(perf_note, str) and perf_note else "")
    return Reading(ghz, how=how)


def architecture(values):
    """The architecture the program was built for (`arch`); results from before it printed one
    come from x86-64, the only architecture the kit ran on then."""
    arch = values.get("arch")
    if isinstance(arch, str) and arch:
        return Reading(arch)
    return Reading("x86_64", how="not recorded: results from before the programs printed arch=")
