"""
The seed's claims about the os-microbench operations, judged on this machine's data by the
report's verdict policy (docs/verdicts.md) on intervals of the medians (estimates.py), widened by
the grid their samples sit on; the seed's figures are in seed.py.

One function per claim (one finding per cache level where a claim is judged per level); each
returns its findings as a list, empty where the data cannot judge it, and each part names its
quantity (Part.quantity) for the contradiction check.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats as scipy_stats

from analysis.core import instruments, regimes, replication, verdicts
from analysis.core.fmt import duration_ns
from analysis.core.instruments import CORE_CLOCK, TSC_INVARIANT, X86_64
from analysis.core.report import Claim, Finding
from analysis.core.verdicts import FAR_FACTOR, ClaimSpec, Estimate, family
from analysis.experiments.os_microbench import estimates
from analysis.experiments.os_microbench.output import INVOCATION
from analysis.experiments.os_microbench.samples import clock_reading, core_ghz, readings
from analysis.experiments.os_microbench.claim_ids import NOT_TESTABLE, _id, _seed
from analysis.experiments.os_microbench.memory_claims import plateaus_mark_cache_sizes, reads_beat_writes
from analysis.experiments.os_microbench.seed import SEED

TSC_MARGIN = 0.05  # "TSC ticks are core cycles": within 5 %
CHEAP_NS = 1000.0  # "cheap" serialisation: under 1 µs per use
CALL_RISE = 2.0  # "grows from 2 to 6 cycles": at least 2 cycles more for 7 arguments (half the seed's rise)
# samples n of the smallest judged variant and invocations M: quick 3, full 5 invocations of one run each
SIZES = {"quick": (51, 3), "full": (51, 5)}

# the TSC claim: one run per measurement (11) in an invocation, its interval over the invocations
# (replication.paired_ratio): three in quick, five in full
RUN_SIZES = {"quick": (11, 3), "full": (11, 5)}

TSC_CYCLES = ClaimSpec("os-microbench: TSC ticks are core cycles (within 5 %)", "no_effect", TSC_MARGIN, RUN_SIZES,
                       confidence=0.90, instruments=(X86_64, TSC_INVARIANT, CORE_CLOCK))
TIMER = ClaimSpec("os-microbench: CPUID;RDTSC adds about 8 ns", "about", SEED["timer"]["measured"], SIZES,
                  instruments=(X86_64,))
CPUID = ClaimSpec("os-microbench: CPUID serialises in under 1 µs", "at_least", CHEAP_NS, SIZES, larger=False,
                  instruments=(X86_64,))
LOOP = ClaimSpec("os-microbench: a loop iteration costs about 2 cycles", "about", 2.0, SIZES, instruments=(CORE_CLOCK,))
CALLS = ClaimSpec("os-microbench: 7 arguments cost at least 2 cycles more than 0", "at_least", CALL_RISE, SIZES,
                  instruments=(CORE_CLOCK,))

CALIBRATION = (
    TSC_CYCLES, TIMER, CPUID, LOOP, CALLS,
    ClaimSpec("os-microbench: getppid costs about 42 ns", "about", SEED["syscall"]["measured"], SIZES),
    ClaimSpec("os-microbench: a kernel entry costs at least 10x a call", "at_least", FAR_FACTOR, SIZES),
    ClaimSpec("os-microbench: a thread is at least 10x cheaper to create than a process", "at_least", FAR_FACTOR, SIZES),
    ClaimSpec("os-microbench: fork+exec about 174 µs (and pthread about 2 µs)", "about", SEED["fork-exec"]["measured"],
              SIZES, confidence=family(0.95, 2)),
    ClaimSpec("os-microbench: a process switch costs at least 10x a thread switch", "at_least", FAR_FACTOR, SIZES),
    ClaimSpec("os-microbench: reads are faster than writes in L1", "direction", 1.0, SIZES),
    ClaimSpec("os-microbench: a page fault costs about 100 ns", "about", SEED["page-fault"]["measured"], SIZES),
)


def _untestable(spec, claim, data, measure=None, id=""):
    """[the finding 'not testable here', with the reason] where an instrument or machine fact the
    claim rests on fails its check (spec.instruments), else []."""
    why = spec.untestable(readings(data, measure))
    return [Finding(claim, NOT_TESTABLE, why, id=id)] if why else []


def _finding(id, claim, v, evidence, label, quantity):
    """The finding of a claim judged on one quantity."""
    return Finding(claim, v.verdict, evidence, id=_id(id), parts=[v.as_part(label, quantity)])


def _v(data, name):
    return data["variants"].get(name)


def _spread(v):
    """'p10 – p90' of a variant, in the report's time form."""
    return f"{duration_ns(v['p10'])} – {duration_ns(v['p90'])}"


def _us(est):
    return estimates.scaled(est, 1e-3, "µs")


def _in_cycles(est, ghz):
    """'a–b core cycles' of an estimate in ns: as finely as its interval and grid allow."""
    low, high = est.widened()
    return f"{low * ghz:.3g}–{high * ghz:.3g} core cycles at {ghz:.2f} GHz"


def _clock_text(data, measure):
    """'3.69 GHz (add chain ..., imul chain ...)': the core clock a cycle figure rests on."""
    clock = clock_reading(data, measure)
    return f"{clock.value:.3f} GHz ({clock.how})" if clock.how else f"{clock.value:.3f} GHz"


def tsc_counts_cycles(data):
    """The seed counted cycles with the TSC: TSC ticks are core cycles only at the nominal clock."""
    claim = _seed("cycles are counted with the TSC at the nominal clock (1 cycle = 0.4 ns at 2.5 GHz)")
    untestable = _untestable(TSC_CYCLES, claim, data, id=_id("tsc-counts-cycles"))
    if untestable:
        return untestable
    runs = [(_run_core_ghz(p), p.get("tsc-ghz"), p.get(INVOCATION)) for p in data["probes"]]
    runs = [(core, tsc, file) for core, tsc, file in runs if core and isinstance(tsc, float) and tsc > 0]
    if not runs:
        return [Finding(claim, NOT_TESTABLE, "no run measured both the TSC rate and a core clock that passed its check",
                        id=_id("tsc-counts-cycles"))]
    core, tsc, files = (np.array(x) for x in zip(*runs))
    per_tick = replication.paired_ratio(tsc, core, files, confidence=0.90, what="core clock / TSC rate")
    clock = clock_reading(data)
    about = (f"TSC calibrated against CLOCK_MONOTONIC_RAW: {np.median(tsc):.4f} GHz; core clock {clock.value:.3f} GHz "
             f"({clock.how}). TSC ticks are a constant-rate time base, not cycles; this report counts cycles only with "
             "this core clock.")
    if per_tick is None:
        return [Finding(claim, "inconclusive", f"One run only ({core[0] / tsc[0]:.3f} core cycles per TSC tick): no "
                                               f"interval over runs. {about}", id=_id("tsc-counts-cycles"),
                        why="one run only: no interval", decide={"runs": 2})]
    per_tick = dataclasses.replace(per_tick, scale="ratio")
    v = verdicts.no_effect(per_tick, TSC_MARGIN)
    return [_finding("tsc-counts-cycles", claim, v, f"Equivalence within ±{TSC_MARGIN:.0%} on a 90 % interval of core "
                     f"cycles per TSC tick (each run's core clock / its TSC rate): {v.evidence} {about}",
                     "core cycles per TSC tick", "core cycles per TSC tick")]


def _run_core_ghz(values):
    """One run's core clock (GHz) where it passes its check, else None."""
    return instruments.usable(CORE_CLOCK, instruments.core_clock(values))


def timer_read_cost(data):
    """Reading the time costs about 8 ns (23 cycles)."""
    claim = _seed("reading the time with CPUID;RDTSC … RDTSCP;CPUID adds about 8 ns (23 cycles) to a measurement")
    floor, cost = _v(data, "tsc-cpuid"), _v(data, "tsc-cpuid-cost")
    untestable = _untestable(TIMER, claim, data, "timer", _id("timer-read-cost")) if "timer" in data["runs"] else []
    if untestable or not floor:
        return untestable
    est = estimates.median(floor)
    v = verdicts.about(est, SEED["timer"]["measured"])
    ghz = core_ghz(data, floor["measure"])
    return [Finding(
        claim=claim, id=_id("timer-read-cost"), parts=[v.as_part("RDTSC..RDTSCP floor", "CPUID;RDTSC floor (ns)")],
        verdict=v.verdict,
        evidence=f"Floor (RDTSC to RDTSCP, nothing between): {v.evidence} p10–p90 {_spread(floor)}"
                 + (f"; {_in_cycles(est, ghz)}, as finely as the grid allows" if ghz else "") + "."
                 + (f" Each use of the pattern costs {duration_ns(cost['median'])} of wall time (two CPUIDs), n = "
                    f"{cost['n']} samples: CPUID exits to the hypervisor in a VM." if cost else ""),
    )]


def cpuid_serialises_cheaply(data):
    """Paoloni's CPUID pattern, used by the seed, is cheap."""
    claim = Claim("CPUID is a cheap way to serialise before reading the TSC", label="Paoloni (2010), used by the seed")
    cost = _v(data, "tsc-cpuid-cost")
    untestable = _untestable(CPUID, claim, data, "timer", _id("cpuid-is-cheap")) if "timer" in data["runs"] else []
    if untestable or not cost:
        return untestable
    lf = _v(data, "tsc-lfence-cost")
    v = verdicts.at_least(_us(estimates.median(cost)), CHEAP_NS / 1e3, larger=False)
    return [Finding(
        claim=claim, id=_id("cpuid-is-cheap"), parts=[v.as_part("one use of the pattern", "CPUID;RDTSC use (µs)")],
        verdict=v.verdict,
        evidence=f"'Cheap' = under {CHEAP_NS / 1e3:g} µs per use of CPUID;RDTSC … RDTSCP;CPUID: {v.evidence} p10–p90 "
                 f"{_spread(cost)}" + (f"; LFENCE;RDTSCP;LFENCE twice costs {duration_ns(lf['median'])}" if lf else "")
                 + ". In a VM CPUID traps to the hypervisor [sdm]; on bare metal it takes ~100-200 cycles [fog].",
    )]


def loop_cost(data):
    """Loop overhead is about 2 cycles."""
    claim = _seed("one loop iteration costs about 2 cycles (0.8 ns), far below its instruction count (9)")
    loop, add, ghz = _v(data, "loop"), _v(data, "add"), core_ghz(data, "loop")
    untestable = _untestable(LOOP, claim, data, "loop", _id("loop-iteration-cost")) if loop else []
    if untestable or not loop:
        return untestable
    per = _cycles_by_invocation(loop, add) if add else {}
    if len(regimes.regimes({k: e.value for k, e in per.items()})) >= 2:  # judged one by one, never averaged
        judged = regimes.per_invocation(per, lambda e: verdicts.about(e, 2.0), label="loop iteration (cycles)",
                                        quantity="loop iteration (cycles)", scale="cycles")
        return [Finding(claim=claim, id=_id("loop-iteration-cost"), verdict=judged.verdict, parts=judged.parts,
                        decide=judged.decide, evidence=f"Empty counted loop, per iteration, in cycles of the "
                        f"dependent-add chain of the same invocation: {judged.evidence}")]
    # cycles = loop time / the time of one dependent add (one cycle): both medians' uncertainty counts
    cycles = (dataclasses.replace(estimates.ratio(loop, add, what="loop iteration / dependent add"), scale="cycles")
              if add else estimates.scaled(estimates.median(loop), ghz, "cycles"))
    v = verdicts.about(cycles, 2.0)
    return [Finding(
        claim=claim, id=_id("loop-iteration-cost"), parts=[v.as_part("loop iteration", "loop iteration (cycles)")],
        verdict=v.verdict,
        evidence=f"Empty counted loop, per iteration (samples of {int(1e6)} iterations by default), in cycles of the "
                 f"dependent-add chain (core clock {_clock_text(data, 'loop')}): {v.evidence} Median "
                 f"{duration_ns(loop['median'])}, p10–p90 {_spread(loop)}.",
    )]


def _cycles_by_invocation(loop, add):
    """{invocation: Estimate} of loop / dependent-add medians within each invocation (result file),
    each known to half the loop's grid step in cycles: an invocation's cycles per iteration."""
    def medians(v):
        found = {}
        for value, invocation in zip(v.get("run_medians", []), v.get("invocations", [])):
            found.setdefault(invocation, []).append(value)
        return {invocation: float(np.median(values)) for invocation, values in found.items()}

    loops, adds = medians(loop), medians(add)
    grid = estimates.grid_of(loop) or estimates.printing_step(loop)
    out = {}
    for invocation, value in loops.items():
        if adds.get(invocation, 0) > 0:
            cycles = value / adds[invocation]
            out[invocation] = Estimate(cycles, cycles, cycles, unit="runs", n=1, grid=grid / adds[invocation],
                                       scale="cycles", level=0.95,
                                       method="loop / dependent-add medians of one invocation, known to half its grid step")
    return out


def call_cost_grows(data):
    """The cost of a procedure call grows with its arguments: at least 2 cycles more for 7."""
    claim = _seed("the cost of a procedure call grows with its arguments, from 2 cycles (0 args) to 6 (7 args)")
    calls = [_v(data, f"call{k}") for k in range(8)]
    if not all(calls):
        return []
    untestable = _untestable(CALLS, claim, data, "call", _id("call-cost-grows"))
    if untestable:
        return untestable
    ghz = core_ghz(data, "call")
    rise = estimates.difference(calls[7], calls[0], factor=ghz, scale="cycles", what="call with 7 args - with 0 args")
    v = verdicts.at_least(rise, CALL_RISE)
    med = np.array([c["median"] for c in calls]) * ghz
    slope = scipy_stats.theilslopes(med, np.arange(8))
    return [Finding(
        claim=claim, id=_id("call-cost-grows"),
        parts=[v.as_part("7 args - 0 args", "call 7 args - 0 args (cycles)")],
        verdict=v.verdict,
        evidence=f"'Grows' = at least {CALL_RISE:g} cycles more for 7 arguments than for none (half the seed's rise): "
                 f"{v.evidence} Medians {', '.join(f'{x:.2f}' for x in med)} core cycles for 0..7 args; Theil-Sen slope "
                 f"{slope.slope:.3f} cycles per argument at {_clock_text(data, 'call')}. Arguments 1-6 travel in "
                 "registers (SysV ABI), the 7th on the stack.",
    )]


def syscall_cost(data):
    """A null system call costs about 42 ns."""
    sysc = _v(data, "getppid")
    if not sysc:
        return []
    est = estimates.median(sysc)
    v = verdicts.about(est, SEED["syscall"]["measured"])
    vd, ghz = _v(data, "vdso"), core_ghz(data, "syscall")
    return [Finding(
        claim=_seed("a null system call (getppid) costs about 42 ns (107 cycles)"),
        verdict=v.verdict, id=_id("syscall-cost"), parts=[v.as_part("getppid", "getppid (ns)")],
        evidence=f"syscall(SYS_getppid): {v.evidence} p10–p90 {_spread(sysc)}"
                 + (f"; {_in_cycles(est, ghz)}" if ghz else "") + "."
                 + (f" A vDSO clock_gettime, which stays in user space, costs {duration_ns(vd['median'])}." if vd else "")
                 + " Kernel entries cost more since the Meltdown/Spectre mitigations [gregg] and in a VM.",
    )]


def _times(id, claim, key, a, b, what, detail=""):
    """A claim that variant a costs at least FAR_FACTOR times variant b."""
    v = verdicts.at_least(estimates.ratio(a, b, what=what), FAR_FACTOR)
    return [_finding(id, claim, v, f"'Far' = at least {FAR_FACTOR:g}x: {v.evidence} {what}: "
                                   f"{duration_ns(a['median'])} / {duration_ns(b['median'])}.{detail}", what, key)]


def kernel_entry_beats_call(data):
    """Entering the kernel costs over 10x a procedure call."""
    sysc, call0 = _v(data, "getppid"), _v(data, "call0")
    if not (sysc and call0):
        return []
    return _times("kernel-entry-beats-call", _seed("entering the kernel costs far more (over 10x) than a procedure call"),
                  "getppid / call with 0 args", sysc, call0, "getppid / call with 0 args")


def thread_cheaper_than_process(data):
    """Creating a thread is far cheaper than creating a process."""
    fx, fe, pt = _v(data, "fork-exec"), _v(data, "fork-exit"), _v(data, "pthread")
    if not (fx and pt):
        return []
    return _times("thread-cheaper-than-process", _seed("creating a kernel thread is far cheaper than creating a process "
                                                               "(174 µs vs 2 µs)"), "fork+exec / pthread_create+join", fx, pt,
                  "fork+exec / pthread_create+join",
                  f" p10–p90 {_spread(fx)} and {_spread(pt)}"
                  + (f"; fork+exit alone {duration_ns(fe['median'])}, {fe['median'] / pt['median']:.0f}x a thread"
                     if fe else "") + ".")


def creation_costs(data):
    """fork+exec takes about 174 µs and pthread_create about 2 µs."""
    fx, pt = _v(data, "fork-exec"), _v(data, "pthread")
    if not (fx and pt):
        return []
    level = family(0.95, 2)
    fork = verdicts.about(_us(estimates.median(fx, level)), SEED["fork-exec"]["measured"] / 1e3)
    thread = verdicts.about(_us(estimates.median(pt, level)), SEED["pthread"]["measured"] / 1e3)
    return [Finding(
        claim=_seed("fork+exec takes about 174 µs and pthread_create about 2 µs"), id=_id("creation-costs"),
        parts=[fork.as_part("fork+exec", "fork+exec (µs)"), thread.as_part("pthread_create", "pthread_create+join (µs)")],
        verdict=verdicts.all_of([fork, thread]),
        evidence=f"Two parts, each on a {level:.1%} interval (Bonferroni over 2). fork+exec: {fork.evidence} "
                 f"pthread_create+join: {thread.evidence} The seed timed from the parent's fork to the child's first "
                 "instruction; here fork to waitpid (lmbench's lat_proc), which includes exit and reaping.",
    )]


def process_switch_costs_tens_of_thread_switches(data):
    """A process context switch costs tens of times a thread context switch."""
    ps, ts = _v(data, "process-switch"), _v(data, "thread-switch")
    if not (ps and ts):
        return []
    return _times("process-switch-beats-thread-switch", _seed("a process context switch (67 µs) costs tens of times a thread context "
                                                                      "switch (1.25 µs)"), "process switch / thread switch", ps, ts,
                  "process switch / thread switch",
                  " Both pinned to one CPU, pipe cost without a switch subtracted. The seed's 67 µs included fork and "
                  "process exit.")


def page_fault_cost(data):
    """Servicing a page fault takes about 100 ns."""
    aw, fr, frp = _v(data, "anon-write-fault"), _v(data, "file-read-fault"), _v(data, "file-read-page")
    if not (aw or fr):
        return []
    pf = data["info"].get("page-fault", {})
    cheaper = min((x for x in (aw, fr) if x), key=lambda x: x["median"])
    v = verdicts.about(estimates.median(cheaper), SEED["page-fault"]["measured"])
    return [Finding(
        claim=_seed("servicing a page fault takes about 100 ns (250 cycles)"), id=_id("page-fault-cost"),
        parts=[v.as_part("the cheaper fault", "page fault (ns)")],
        verdict=v.verdict,
        evidence=f"The cheaper kind of fault, per fault: {v.evidence} "
        + (f"Anonymous write fault {duration_ns(aw['median'])} per fault "
           f"({pf.get('anon-write-faults-per-page', float('nan')):.3f} faults per page); " if aw else "")
        + (f"file read fault {duration_ns(fr['median'])} per fault, but {pf.get('file-read-faults-per-page', float('nan')):.4f} "
           f"faults per page, so {duration_ns(frp['median'])} per page. " if fr and frp else "")
        + "The seed divided by pages, not faults: with fault-around [faultaround] one fault maps 16 pages, which makes "
          "a per-page figure near 100 ns plausible.",
    )]


def findings(data, caches, found, matches):
    """The seed's claims, each with this machine's verdict and the evidence behind it."""
    return [*tsc_counts_cycles(data), *timer_read_cost(data), *cpuid_serialises_cheaply(data), *loop_cost(data),
            *call_cost_grows(data), *syscall_cost(data), *kernel_entry_beats_call(data),
            *thread_cheaper_than_process(data), *creation_costs(data), *process_switch_costs_tens_of_thread_switches(data),
            *plateaus_mark_cache_sizes(data, caches, found, matches), *reads_beat_writes(data, caches),
            *page_fault_cost(data)]
