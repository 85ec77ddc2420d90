"""
The seed's claims (seed 004, experiment A part 1) and the kit's own checks, with this machine's
verdicts: one function per claim, each returning a Finding or None where it does not apply.
"""

from __future__ import annotations

import numpy as np

import scipy.stats

from analysis.core import verdicts
from analysis.core.instruments import CORE_CLOCK, TSC_INVARIANT, X86_64, Reading
from analysis.core.report import Finding
from analysis.core.verdicts import ClaimSpec, Estimate
from analysis.experiments.scheduling_noise.gaps import SLICE_MS
from analysis.experiments.scheduling_noise.period import BIN_MS

# the seed's figures (seed 004, experiment A part 1)
SEED_TICK_MS = 1.0
SEED_INTERRUPT_US = 3.1
SEED_LOST_US_PER_MS = 2.62
TSC_TOLERANCE = 0.01  # the issue: the TSC estimate within 1 % of the kernel's

PERIOD_TOLERANCE = 0.10  # "every 1 ms": the dominant period within 10 % of it
TICK_TOLERANCE = 0.05  # "is the tick": within 5 % of 1/CONFIG_HZ
CYCLES_TOLERANCE = 0.05  # "the TSC counts cycles": core clock within 5 % of the TSC's


def _point(value, what, grid=0.0):
    """A figure the tracer's runs give once, pooled (no interval over invocations): judged as a
    point, widened by its grid, and the evidence says so."""
    return Estimate(value, value, value, unit="pooled", grid=grid, method=what)


# the quantities and machine facts the TSC findings rest on (analysis.core.instruments)
TSC_CYCLES = ClaimSpec("scheduling-noise: the TSC counts core cycles (within 5 %)", "no_effect", CYCLES_TOLERANCE,
                       confidence=0.90, instruments=(X86_64, TSC_INVARIANT, CORE_CLOCK))
TSC_FREQUENCY = ClaimSpec("scheduling-noise: the TSC rate is the kernel's (within 1 %)", "no_effect", TSC_TOLERANCE,
                          confidence=0.90, instruments=(X86_64,))

TIMER_CLAIM = "The timer interrupts the process every 1 ms (seed 004, A1.1)"
TSC_FREQUENCY_CLAIM = "The TSC frequency measured against CLOCK_MONOTONIC_RAW is the kernel's, within 1 % (kit check)"


def findings(gaps, clocks, tick_ms, hz_source):
    """Every claim that applies, in the report's order."""
    found = [timer_every_ms(gaps, tick_ms, hz_source), period_is_the_tick(gaps.period, tick_ms),
             interrupt_cost(gaps), time_lost_per_ms(gaps), tsc_counts_cycles(clocks), tsc_frequency_is_the_kernels(clocks)]
    return [f for f in found if f is not None]


def untestable(why):
    """The finding of a section without finished runs."""
    return Finding(TIMER_CLAIM, "not testable here", why)


def timer_every_ms(gaps, tick_ms, hz_source):
    p = gaps.period.period_ms
    if not np.isfinite(p):
        return Finding(TIMER_CLAIM, "inconclusive", "no periodic pattern found in the gaps")
    judged = verdicts.no_effect(_point(p / SEED_TICK_MS, f"dominant period / {SEED_TICK_MS:g} ms, pooled single-tracer "
                                       f"runs, on the {BIN_MS:g} ms histogram grid", grid=BIN_MS / SEED_TICK_MS),
                                PERIOD_TOLERANCE)
    evidence = (f"dominant period here {p:.4g} ms; the kernel's tick is {tick_ms:.4g} ms ({hz_source}). "
                if np.isfinite(tick_ms) else f"dominant period here {p:.4g} ms; CONFIG_HZ unknown ({hz_source}). ")
    evidence += (f"Near 1 ms the distance histogram peaks at {gaps.near_1ms:.3g} ms, {gaps.z_1ms:.1f} robust sd above the "
                 "median count" + (" (a periodic source besides the tick, e.g. the host)" if gaps.z_1ms > 5
                                   else " (no clear periodic source there)") + ". ")
    return Finding(TIMER_CLAIM, judged.verdict, evidence + judged.evidence)


def period_is_the_tick(period, tick_ms):
    p = period.period_ms
    if not (np.isfinite(p) and np.isfinite(tick_ms)):
        return None
    judged = verdicts.no_effect(_point(p / tick_ms, f"dominant period / tick on the {BIN_MS:g} ms histogram grid",
                                       grid=BIN_MS / tick_ms), TICK_TOLERANCE)
    return Finding(
        "The dominant period between interruptions is the kernel's tick, 1/CONFIG_HZ (kit check)", judged.verdict,
        f"{p:.4g} ms against {tick_ms:.4g} ms. {judged.evidence}"
        + ("" if judged.verdict == "confirmed" else
           " In a virtual machine the host's interruptions also stop the guest; they need not follow the guest's tick."),
    )


def interrupt_cost(gaps):
    short, all_us = gaps.short_us, gaps.all_us
    if not short.size:
        return None
    mean, median = float(short.mean()), float(np.median(short))
    low, high = (scipy.stats.t.interval(0.95, short.size - 1, loc=mean, scale=scipy.stats.sem(short))
                 if short.size > 1 else (mean, mean))
    judged = verdicts.about(Estimate(mean, float(low), float(high), unit="runs", n=int(short.size), scale="µs",
                                     method="t interval of the mean over the inactive periods of one invocation"),
                            SEED_INTERRUPT_US)
    return Finding(
        f"Handling an interrupt takes about {SEED_INTERRUPT_US:g} µs: the mean inactive period of a process alone on "
        "a CPU (seed 004, A1.2)", judged.verdict,
        f"median {median:.3g} µs; the n = {short.size} inactive periods shorter than {SLICE_MS:g} ms are counted "
        f"({all_us.size - short.size} longer ones, another task's or the host's turn, left out; with them the mean is "
        f"{all_us.mean():.3g} µs); {100 * np.mean(short > 20):.1f} % of the short ones exceed 20 µs. {judged.evidence}",
    )


def time_lost_per_ms(gaps):
    if not gaps.short_us.size:
        return None
    lost = gaps.lost_short_us_per_ms
    judged = verdicts.about(_point(lost, "µs lost per ms of the pooled trace"), SEED_LOST_US_PER_MS)
    return Finding(
        f"A process alone on a CPU loses about {SEED_LOST_US_PER_MS:g} µs per ms (0.26 %) to interrupts (seed 004, A1.4)",
        judged.verdict,
        f"{lost:.3g} µs per ms ({lost / 10:.3g} %) in gaps shorter than {SLICE_MS:g} ms; "
        f"{gaps.lost_us_per_ms:.3g} µs per ms with all gaps. {judged.evidence}",
    )


def _readings(clocks):
    return {"architecture": clocks.arch, "TSC invariant": Reading(clocks.invariant), "core clock": clocks.core_reading}


def tsc_counts_cycles(clocks):
    claim = "The TSC counts the CPU's cycles (seed 004, A1 introduction)"
    why = TSC_CYCLES.untestable(_readings(clocks))
    if why:
        return Finding(claim, "not testable here", why)
    core, tsc = clocks.core, clocks.tsc
    if not np.isfinite(tsc):
        return Finding(claim, "not testable here", "no run measured the TSC rate")
    ratio = core / tsc
    judged = verdicts.no_effect(_point(ratio, "core clock / TSC rate, medians over the runs"), CYCLES_TOLERANCE)
    return Finding(
        claim, judged.verdict,
        f"core clock {core / 1e6:.0f} MHz ({clocks.core_reading.how}), TSC {tsc / 1e6:.1f} MHz; the TSC is invariant "
        "(constant_tsc, nonstop_tsc): it ticks at a fixed rate whatever the core clock does. "
        f"{judged.evidence}",
    )


def tsc_frequency_is_the_kernels(clocks):
    deviation, (label, hz) = clocks.deviation, clocks.reference
    why = TSC_FREQUENCY.untestable(_readings(clocks))
    if why:
        return Finding(TSC_FREQUENCY_CLAIM, "not testable here", why)
    if not np.isfinite(deviation):
        return Finding(TSC_FREQUENCY_CLAIM, "not testable here", "no kernel value of the TSC frequency was readable")
    judged = verdicts.no_effect(_point(1 + deviation, "measured TSC rate / the kernel's, medians over the runs"),
                                TSC_TOLERANCE)
    return Finding(
        TSC_FREQUENCY_CLAIM, judged.verdict,
        f"{clocks.tsc / 1e6:.4f} MHz against {hz / 1e6:.4f} MHz ({label}): {100 * deviation:+.5f} %. "
        f"Clock source {', '.join(clocks.clocksources)}"
        + (": the kernel derives CLOCK_MONOTONIC_RAW from the TSC with this frequency, so this checks the measurement. "
           if clocks.clocksources == ["tsc"] else ". ") + judged.evidence,
    )
