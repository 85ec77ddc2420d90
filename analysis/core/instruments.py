"""
Instrument checks: what a measured quantity or a recorded machine fact must satisfy before a
finding may rest on it.

A claim names a Trust per quantity (verdicts.ClaimSpec.instruments), a section reads each quantity
once into a Reading, and ClaimSpec.untestable(readings) says why the finding is `not testable
here`. The core clock, which turns ns into cycles, is judged here once for os-microbench and
scheduling-noise (docs/verdicts.md, "Instrument checks").
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Mapping

from analysis.core.fmt import binary_size

# the physical range of a core clock, the agreement of its estimates and the margin around cpufreq's
# range: KIT_GHZ_MIN, KIT_GHZ_MAX, KIT_CLOCK_AGREE and KIT_CPUFREQ_MARGIN in programs/kit.h, which
# judges the estimates the same way (tests/test_instruments.py compares both)
GHZ_MIN, GHZ_MAX = 0.1, 7.0
CLOCK_AGREE = 0.05
CPUFREQ_MARGIN = 2.0
CHECK_CHAINS = ("imul", "eor", "xor")  # the second chain: x86-64, aarch64, plain C (kit.h)
#: the result columns the probe prints (every one optional; its notes, which hold blanks, are for the log only)
CLOCK_KEYS = ("arch", "core-ghz", "core-ghz-add", *(f"core-ghz-{c}" for c in CHECK_CHAINS), "core-ghz-perf",
              "cpufreq-min-ghz", "cpufreq-max-ghz")
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
    raw: str = ""   # how a value outside [low, high] is shown, where it cannot be one in `unit` ('{:.4g} steps per ns')

    def _show(self, value):
        if self.unit == "B":
            return binary_size(value)
        return f"{value:.4g} {self.unit}".strip()

    def _show_measured(self, value):
        """The value as a figure of this quantity where it can be one, else as what was measured."""
        return self._show(value) if self.low <= value <= self.high or not self.raw else self.raw.format(value)

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
            return (f"instrument check failed: {self.quantity} {self._show_measured(value)}{how} lies outside "
                    f"{self._show(self.low)}–{self._show(self.high)}" + (f" ({self.source})" if self.source else ""))
        bound = readings.get(self.below) if self.below else None
        if bound is not None and bound.value is not None and not value < float(bound.value):
            return (f"instrument check failed: {self.quantity} {self._show(value)}{how} is not below the "
                    f"{self.below}, {self._show(float(bound.value))}" + (f": {self.source}" if self.source else ""))
        return ""


CORE_CLOCK = Trust("core clock", GHZ_MIN, GHZ_MAX, "GHz", "the physical range of a CPU core's clock: stock boost "
                   "clocks reach 6.2 GHz", raw="{:.4g} chain steps per ns")


def clock_figure(name, ghz):
    """One estimate of the core clock as the reports cite it: in GHz where a core can have that
    clock, else as the rate its chain (or counter) ran at, which is no clock (a CPU that runs
    several steps of a chain per cycle gives 20 steps per ns, never a 20 GHz core)."""
    return f"{name} {ghz:.3f} GHz" if GHZ_MIN <= ghz <= GHZ_MAX else f"{name} {ghz:.4g} steps per ns"
#: the printed values that state a core clock: GHz, and the tracer's `core-clock` in Hz
CLOCK_FIGURES = {**{key: 1.0 for key in CLOCK_KEYS if key.startswith("core-ghz")}, "core-clock": 1e-9}


def named_as_measured(values):
    """A run's printed values as report.json states them: a core-clock figure outside the physical
    range under `<key>-steps-per-ns` (the rate its chain ran at, as clock_figure cites it), never
    under a clock's name: a reader of the data must not find a 20 GHz or 24619 MHz core."""
    out = {}
    for key, value in values.items():
        scale = CLOCK_FIGURES.get(key)
        number = _number(values, key) if scale else None
        if number is not None and not GHZ_MIN <= number * scale <= GHZ_MAX:
            out[f"{key}-steps-per-ns"] = number * scale
        else:
            out[key] = value
    return out


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
    run, or of runs combined). The estimates are judged as kit.h judges them (agreement, and the
    cpufreq range where /sys had one; the physical range is CORE_CLOCK's check). Older results:
    their one figure, `core-ghz` or the tracer's `core-clock` (Hz), marked as not cross-checked."""
    add, ghz = _number(values, "core-ghz-add"), _number(values, "core-ghz")
    if add is None:
        legacy = ghz if ghz is not None else (_number(values, "core-clock") or math.nan) / 1e9
        return Reading(legacy, how=LEGACY) if math.isfinite(legacy) else Reading()
    estimates = {"add chain": add}
    estimates.update({f"{c} chain": _number(values, f"core-ghz-{c}") for c in CHECK_CHAINS
                      if _number(values, f"core-ghz-{c}") is not None})
    perf = _number(values, "core-ghz-perf")
    if perf is not None:
        estimates["perf cycles"] = perf
    figures = ", ".join(clock_figure(name, value) for name, value in estimates.items())
    problem = _disagreement(estimates, figures) or _outside_cpufreq(estimates, figures, values)
    if problem:
        return Reading(problem=f"core clock not measured here: {problem}")
    return Reading(ghz if ghz is not None else add,
                   how=figures + ("" if perf is not None else "; no perf cycles: no hardware PMU exposed, or not permitted"))


def core_clock_of_runs(runs):
    """The core clock of several runs (each one's printed values): the median over the runs whose
    clock passes its check, else the reading of the first run that has one (it says why not)."""
    readings = [core_clock(values) for values in runs]
    good = [r for r in readings if usable(CORE_CLOCK, r) is not None]
    if not good:
        return next((r for r in readings if r.problem or r.value is not None), Reading())
    if len(readings) == 1:
        return good[0]
    return Reading(statistics.median(r.value for r in good), how=f"median of the {len(good)} of {len(readings)} runs whose clock passed its check; "
                               f"one of them: {good[0].how}")


def _disagreement(estimates, figures):
    low, high = min(estimates.values()), max(estimates.values())
    if len(estimates) < 2:
        return f"{figures}: no second chain to check it"
    if (high - low) / low > CLOCK_AGREE:
        return f"{figures} disagree by {100 * (high - low) / low:.0f} % (more than {100 * CLOCK_AGREE:.0f} %)"
    return ""


def _outside_cpufreq(estimates, figures, values):
    low, high = _number(values, "cpufreq-min-ghz"), _number(values, "cpufreq-max-ghz")
    if (low and min(estimates.values()) < low / CPUFREQ_MARGIN) or (high and max(estimates.values()) > high * CPUFREQ_MARGIN):
        return (f"{figures}: outside the kernel's cpufreq range {low or math.nan:.3f}–{high or math.nan:.3f} GHz (with a "
                f"factor {CPUFREQ_MARGIN:g} either side for boost and throttling)")
    return ""


def architecture(values):
    """The architecture the program was built for (`arch`); results from before it printed one
    come from x86-64, the only architecture the kit ran on then."""
    arch = values.get("arch")
    if isinstance(arch, str) and arch:
        return Reading(arch)
    return Reading("x86_64", how="not recorded: results from before the programs printed arch=")
