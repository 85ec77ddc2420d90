"""
The seed's claims (seed 004, experiment A part 1) and the kit's own checks, with this machine's
verdicts: one function per claim, each returning a Finding or None where it does not apply. Each
claim is judged on one value per run with its interval over the invocations (per_run.py); the
pooled figures of the section's tables are quoted beside it.
"""

from __future__ import annotations

import numpy as np

from analysis.core import regimes, verdicts
from analysis.core.instruments import CORE_CLOCK, TSC_INVARIANT, X86_64, Reading
from analysis.core.report import Claim, Finding
from analysis.core import instruments
from analysis.core.verdicts import ClaimSpec, Estimate
from analysis.experiments.scheduling_noise.gaps import SLICE_MS
from analysis.experiments.scheduling_noise.per_run import estimate, trace_figures
from analysis.experiments.scheduling_noise.period import BIN_MS

# the seed's figures (seed 004, experiment A part 1)
SEED_TICK_MS = 1.0
SEED_INTERRUPT_US = 3.1
SEED_LOST_US_PER_MS = 2.62
TSC_TOLERANCE = 0.01  # the issue: the TSC estimate within 1 % of the kernel's

PERIOD_TOLERANCE = 0.10  # "every 1 ms": the dominant period within 10 % of it
TICK_TOLERANCE = 0.05  # "is the tick": within 5 % of 1/CONFIG_HZ
CYCLES_TOLERANCE = 0.05  # "the TSC counts cycles": core clock within 5 % of the TSC's
# single-tracer runs per invocation n and invocations M of the preset
SIZES = {"quick": (1, 3)}

# the quantities and machine facts the TSC findings rest on (analysis.core.instruments)
TSC_CYCLES = ClaimSpec("scheduling-noise: the TSC counts the CPU's cycles (within 5 %)", "no_effect", CYCLES_TOLERANCE,
                       SIZES, confidence=0.90, instruments=(X86_64, TSC_INVARIANT, CORE_CLOCK))
TSC_FREQUENCY = ClaimSpec("scheduling-noise: the TSC frequency is the kernel's (within 1 %)", "no_effect", TSC_TOLERANCE,
                          SIZES, confidence=0.90, instruments=(X86_64,))

CALIBRATION = (
    ClaimSpec("scheduling-noise: the timer interrupts every 1 ms (within 10 %)", "no_effect", PERIOD_TOLERANCE, SIZES,
              confidence=0.90),
    ClaimSpec("scheduling-noise: the dominant period is the kernel's tick (within 5 %)", "no_effect", TICK_TOLERANCE,
              SIZES, confidence=0.90),
    ClaimSpec("scheduling-noise: handling an interrupt takes about 3.1 µs", "about", SEED_INTERRUPT_US, SIZES),
    ClaimSpec("scheduling-noise: a process alone loses about 2.62 µs per ms", "about", SEED_LOST_US_PER_MS, SIZES),
    TSC_CYCLES,
    TSC_FREQUENCY,
)

TIMER_CLAIM = Claim("The timer interrupts the process every 1 ms", "seed 004, A1.1")
TSC_FREQUENCY_CLAIM = Claim("The TSC frequency measured against CLOCK_MONOTONIC_RAW is the kernel's, within 1 %", "kit check")


def findings(gaps, clocks, tick_ms, hz_source, runs):
    """Every claim that applies, in the report's order; `runs`: every finished tracer run."""
    figures = trace_figures([r for r in runs if r.mode == "trace"])
    found = [timer_every_ms(gaps, figures, tick_ms, hz_source), period_is_the_tick(gaps.period, figures, tick_ms),
             interrupt_cost(gaps, figures), time_lost_per_ms(gaps, figures), tsc_counts_cycles(clocks, runs),
             tsc_frequency_is_the_kernels(clocks, runs)]
    return [f for f in found if f is not None]


def _of_runs(figures, attribute, what, scale="ratio", factor=1.0, grid=0.0, confidence=0.95):
    """One attribute of the runs' TraceFigures (times `factor`) as an Estimate over the invocations."""
    return estimate([getattr(f, attribute) * factor for f in figures], [f.invocation for f in figures], what=what,
                    scale=scale, grid=grid, confidence=confidence)


def _undecided(what):
    return verdicts.Verdict("inconclusive", f"no run gives {what}.", decide=verdicts.never(f"no run gives {what}"))


def _id(slug):
    return f"scheduling-noise/{slug}"


def _judged(claim, id, judged, evidence, label):
    """The finding of a claim judged on one quantity (its id is also the quantity's key)."""
    return Finding(claim, judged.verdict, evidence, id=_id(id), parts=[judged.as_part(label, _id(id))])


def untestable(why):
    """The finding of a section without finished runs."""
    return Finding(TIMER_CLAIM, "not testable here", why, id=_id("timer-every-1ms"))


def timer_every_ms(gaps, figures, tick_ms, hz_source):
    p = gaps.period.period_ms
    if not np.isfinite(p):
        return Finding(TIMER_CLAIM, "inconclusive", "no periodic pattern found in the gaps", id=_id("timer-every-1ms"),
                       decide={"runs": 2 * max(len(figures), 1)})
    what = f"dominant period / {SEED_TICK_MS:g} ms on the {BIN_MS:g} ms histogram grid"
    by_invocation = _by_invocation(figures, "period_ms", what, factor=1 / SEED_TICK_MS, grid=BIN_MS / SEED_TICK_MS,
                                   confidence=0.90)
    if len(regimes.regimes({k: e.value for k, e in by_invocation.items()})) >= 2:
        return _per_invocation(gaps, p, tick_ms, hz_source, by_invocation)
    est = _of_runs(figures, "period_ms", what, factor=1 / SEED_TICK_MS, grid=BIN_MS / SEED_TICK_MS, confidence=0.90)
    judged = verdicts.no_effect(est, PERIOD_TOLERANCE) if est else _undecided("a dominant period")
    return _judged(TIMER_CLAIM, "timer-every-1ms", judged, _timer_context(gaps, p, tick_ms, hz_source) + judged.evidence,
                   "dominant period / 1 ms")


def _by_invocation(figures, attribute, what, factor, grid, confidence):
    """{invocation: Estimate} of one attribute, each over its own runs; an invocation of one run gives
    its value known to half its grid step (a dominant period is the peak of thousands of gaps' histogram)."""
    out = {}
    for name in dict.fromkeys(f.invocation for f in figures):
        values = [getattr(f, attribute) * factor for f in figures if f.invocation == name]
        values = [v for v in values if np.isfinite(v) and v > 0]
        if len(values) >= 2:
            out[name] = estimate(values, [name] * len(values), what=what, grid=grid, confidence=confidence)
        elif values:
            out[name] = Estimate(values[0], values[0], values[0], unit="runs", n=1, grid=grid, scale="ratio",
                                 level=confidence, method=f"{what}, one run: known to half its grid step")
    return out


def _per_invocation(gaps, p, tick_ms, hz_source, by_invocation):
    """timer-every-1ms where the invocations fall into separate regimes (analysis.core.regimes)."""
    judged = regimes.per_invocation(by_invocation, lambda est: verdicts.no_effect(est, PERIOD_TOLERANCE),
                                    label="dominant period / 1 ms", quantity=_id("timer-every-1ms"),
                                    scale="ms")  # a period / 1 ms reads as the period in ms
    return Finding(TIMER_CLAIM, judged.verdict, _timer_context(gaps, p, tick_ms, hz_source) + judged.evidence,
                   id=_id("timer-every-1ms"), parts=judged.parts, decide=judged.decide)


def _timer_context(gaps, p, tick_ms, hz_source):
    """What timer-every-1ms's evidence says before its verdict: the pooled period and the tick."""
    evidence = (f"dominant period of the pooled runs {p:.4g} ms; the kernel's tick is {tick_ms:.4g} ms ({hz_source}). "
                if np.isfinite(tick_ms) else f"dominant period of the pooled runs {p:.4g} ms; CONFIG_HZ unknown "
                                             f"({hz_source}). ")
    evidence += (f"Near 1 ms the distance histogram peaks at {gaps.near_1ms:.3g} ms, {gaps.z_1ms:.1f} robust sd above the "
                 "median count" + (" (a periodic source besides the tick, e.g. the host)" if gaps.z_1ms > 5
                                   else " (no clear periodic source there)") + ". ")
    return evidence


def period_is_the_tick(period, figures, tick_ms):
    p = period.period_ms
    if not (np.isfinite(p) and np.isfinite(tick_ms)):
        return None
    est = _of_runs(figures, "period_ms", f"dominant period / tick on the {BIN_MS:g} ms histogram grid",
                   factor=1 / tick_ms, grid=BIN_MS / tick_ms, confidence=0.90)
    judged = verdicts.no_effect(est, TICK_TOLERANCE) if est else _undecided("a dominant period")
    return _judged(
        Claim("The dominant period between interruptions is the kernel's tick, 1/CONFIG_HZ", "kit check"), "period-is-the-tick",
        judged, label="dominant period / tick", evidence=f"pooled runs {p:.4g} ms against {tick_ms:.4g} ms. {judged.evidence}"
        + ("" if judged.verdict == "confirmed" else
           " In a virtual machine the host's interruptions also stop the guest; they need not follow the guest's tick."),
    )


def interrupt_cost(gaps, figures):
    short, all_us = gaps.short_us, gaps.all_us
    if not short.size:
        return None
    median = float(np.median(short))
    est = _of_runs(figures, "short_mean_us", "mean inactive period", scale="µs")
    judged = verdicts.about(est, SEED_INTERRUPT_US) if est else _undecided("an inactive period")
    return _judged(
        Claim(f"Handling an interrupt takes about {SEED_INTERRUPT_US:g} µs: the mean inactive period of a process alone "
              "on a CPU", "seed 004, A1.2"), "interrupt-cost", judged, label="mean inactive period",
        evidence=f"pooled over the runs: median {median:.3g} µs; the n = {short.size} inactive periods shorter than "
        f"{SLICE_MS:g} ms are counted "
        f"({all_us.size - short.size} longer ones, another task's or the host's turn, left out; with them the mean is "
        f"{all_us.mean():.3g} µs); {100 * np.mean(short > 20):.1f} % of the short ones exceed 20 µs. {judged.evidence}",
    )


def time_lost_per_ms(gaps, figures):
    if not gaps.short_us.size:
        return None
    lost = gaps.lost_short_us_per_ms
    est = _of_runs(figures, "lost_short_us_per_ms", f"µs lost per ms in gaps shorter than {SLICE_MS:g} ms",
                   scale="µs/ms")
    judged = verdicts.about(est, SEED_LOST_US_PER_MS) if est else _undecided("a traced time")
    return _judged(
        Claim(f"A process alone on a CPU loses about {SEED_LOST_US_PER_MS:g} µs per ms (0.26 %) to interrupts", "seed 004, A1.4"),
        "time-lost-per-ms", judged, label="µs lost per ms",
        evidence=f"pooled over the runs: {lost:.3g} µs per ms ({lost / 10:.3g} %) in gaps shorter than {SLICE_MS:g} ms; "
        f"{gaps.lost_us_per_ms:.3g} µs per ms with all gaps. {judged.evidence}",
    )


def _readings(clocks):
    return {"architecture": clocks.arch, "TSC invariant": Reading(clocks.invariant), "core clock": clocks.core_reading}


def _core_hz(run):
    """One run's core clock in Hz where it passes its check (analysis.core.instruments), else NaN."""
    ghz = instruments.usable(CORE_CLOCK, instruments.core_clock(run.printed()))
    return ghz * 1e9 if ghz else np.nan


def tsc_counts_cycles(clocks, runs):
    claim = Claim("The TSC counts the CPU's cycles", "seed 004, A1 introduction")
    why = TSC_CYCLES.untestable(_readings(clocks))
    if why:
        return Finding(claim, "not testable here", why, id=_id("tsc-counts-cycles"))
    core, tsc = clocks.core, clocks.tsc
    if not np.isfinite(tsc):
        return Finding(claim, "not testable here", "no run measured the TSC rate", id=_id("tsc-counts-cycles"))
    ratios = [(_core_hz(r) / r.value("tsc-frequency"), r.invocation) for r in runs]
    ratios = [(v, i) for v, i in ratios if np.isfinite(v)]
    est = estimate([v for v, _ in ratios], [i for _, i in ratios], what="core clock / TSC rate", confidence=0.90)
    judged = verdicts.no_effect(est, CYCLES_TOLERANCE) if est else _undecided("both clocks")
    return _judged(
        claim, "tsc-counts-cycles", judged, label="core clock / TSC rate",
        evidence=f"core clock {core / 1e6:.0f} MHz ({clocks.core_reading.how}), TSC {tsc / 1e6:.1f} MHz; the TSC is invariant "
        "(constant_tsc, nonstop_tsc): it ticks at a fixed rate whatever the core clock does. "
        f"{judged.evidence}",
    )


def tsc_frequency_is_the_kernels(clocks, runs):
    deviation, (label, hz) = clocks.deviation, clocks.reference
    why = TSC_FREQUENCY.untestable(_readings(clocks))
    if why:
        return Finding(TSC_FREQUENCY_CLAIM, "not testable here", why, id=_id("tsc-frequency-is-the-kernels"))
    if not np.isfinite(deviation):
        return Finding(TSC_FREQUENCY_CLAIM, "not testable here", "no kernel value of the TSC frequency was readable",
                       id=_id("tsc-frequency-is-the-kernels"))
    est = estimate([r.value("tsc-frequency") / hz for r in runs], [r.invocation for r in runs],
                   what="TSC rate / the kernel's", confidence=0.90)
    judged = verdicts.no_effect(est, TSC_TOLERANCE) if est else _undecided("a TSC rate")
    return _judged(
        TSC_FREQUENCY_CLAIM, "tsc-frequency-is-the-kernels", judged, label="TSC rate / the kernel's",
        evidence=f"{clocks.tsc / 1e6:.4f} MHz against {hz / 1e6:.4f} MHz ({label}): {100 * deviation:+.5f} %. "
        f"Clock source {', '.join(clocks.clocksources)}"
        + (": the kernel derives CLOCK_MONOTONIC_RAW from the TSC with this frequency, so this checks the measurement. "
           if clocks.clocksources == ["tsc"] else ". ") + judged.evidence,
    )
