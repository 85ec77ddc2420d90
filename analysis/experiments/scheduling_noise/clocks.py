"""
The TSC frequency the tracer measured against the kernel's value, and the core clock beside it
(analysis.core.instruments: kit.h's probe, checked). The kernel's value comes from what the runs
read (kernel log, else /proc/cpuinfo), else from the kernel log a sweep of the same boot recorded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from analysis.core import instruments
from analysis.core.instruments import CORE_CLOCK, Reading
from analysis.experiments.scheduling_noise.gaps import finite_median
from analysis.machine.kernel import kernel_log_tsc

_SOURCES = {"kernel-log-refined": "kernel log, refined calibration (read by the tracer)",
            "kernel-log-detected": "kernel log, detected (read by the tracer)",
            "proc-cpuinfo": "/proc/cpuinfo 'cpu MHz' (read by the tracer; approximate where cpufreq changes it)"}


@dataclass
class Clocks:
    tsc: float  # Hz, median over the runs
    core: float  # Hz, median over the runs, NaN where the core clock fails its check (core_reading says why)
    core_reading: Reading  # GHz, as instruments.core_clock read the runs
    arch: Reading  # the architecture the tracer was built for
    invariant: bool
    clocksources: list
    references: list  # [(label, Hz, exact)]: the kernel's TSC frequency per source
    reference: tuple  # (label, Hz) the TSC is judged against
    deviation: float  # (tsc - reference) / reference
    warnings: list


def clocks(runs, facts):
    """The clocks of the runs; `facts`: the measured machine (its kernel log) when no run read one."""
    tsc = finite_median(r.value("tsc-frequency") for r in runs)
    references, warnings = _references(runs), []
    if not any(exact for *_, exact in references):
        mhz, line = kernel_log_tsc(facts.kernel_log) if facts.kernel_log else (None, None)
        if mhz:
            references.insert(0, (f"{line} ({facts.kernel_log_origin or facts.origin})", mhz * 1e6, True))
        else:
            warnings.append("no sweep recorded the kernel log's TSC line (reading the log needs root) and the tracer "
                            "could not read it inside BenchExec's container either: the TSC is compared with "
                            "/proc/cpuinfo only")
    reference = next(((label, value) for label, value, exact in references if exact),
                     references[0][:2] if references else (None, math.nan))
    deviation = (tsc - reference[1]) / reference[1] if np.isfinite(reference[1]) and np.isfinite(tsc) else math.nan
    core = instruments.core_clock_of_runs([r.printed() for r in runs])
    usable = instruments.usable(CORE_CLOCK, core)
    return Clocks(tsc=tsc, core=usable * 1e9 if usable else math.nan, core_reading=core,
                  arch=instruments.architecture(runs[0].printed() if runs else {}), invariant=all(r.value("tsc-invariant") == 1 for r in runs),
                  clocksources=sorted({r.texts.get("clocksource", "unknown") for r in runs}),
                  references=references, reference=reference, deviation=deviation, warnings=warnings)


def _references(runs):
    """[(label, median Hz, exact)] per kernel-tsc-source the runs reported."""
    references = []
    for source in sorted({r.texts.get("kernel-tsc-source", "") for r in runs}):
        values = [r.value("kernel-tsc") for r in runs if r.texts.get("kernel-tsc-source", "") == source]
        references.append((_SOURCES.get(source, source or "unknown"), finite_median(values), source.startswith("kernel-log")))
    return references
