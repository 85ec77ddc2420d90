"""Sanity of osbench's numbers on modern x86-64 Linux: every measurement lands in a range wide
enough for a noisy shared VM and narrow enough to catch a broken measurement (a loop the
compiler removed gives ~0, a unit mistake 1000x); the latency curve's plateaus sit where the
OS says the L1 and L2 caches end; and the -O2 build still does the work it times (the time
grows with the repetition count).

osbench is run directly on small parameters (tests.test_microbench.SMALL, overridden per test),
so the whole file takes ~7 s on this VM (~12 s with both vCPUs busy). Medians are compared,
never single samples.
"""

import shutil
import subprocess
import time
import uuid

import numpy as np
import pytest

from analysis.experiments.os_microbench import levels
from analysis.experiments.os_microbench import output as printed  # what osbench.c prints
from analysis.machine import topology
from tests.helpers import SCRATCH
from tests.test_microbench import run_osbench

KiB, MiB = 1024, 1024**2
US, MS = 1e3, 1e6  # in ns

# (key printed by osbench, low, high, what it is); ns unless the key says gbs
RANGES = {
    "timer": [("tsc-lfence-median-ns", 3, 500, "timer read: LFENCE;RDTSCP;LFENCE, back to back"),
              ("tsc-lfence-cost-median-ns", 3, 500, "timer read: one whole LFENCE;RDTSCP;LFENCE pair per use"),
              ("clock-gettime-median-ns", 5, 500, "clock_gettime(CLOCK_MONOTONIC) via the vDSO"),
              ("clock-median-ns", 20, 5 * US, "clock(), a system call")],
    "loop": [("loop-median-ns", 0.1, 5, "empty loop iteration")],
    "call": [(f"call{k}-median-ns", 0.2, 20, f"procedure call, {k} arguments") for k in range(8)],
    "syscall": [("getppid-median-ns", 20, 5 * US, "system call (getppid)"),
                ("vdso-median-ns", 5, 500, "vDSO clock_gettime")],
    "process": [("fork-exit-median-ns", 10 * US, 5 * MS, "fork + _exit + waitpid"),
                ("fork-exec-median-ns", 10 * US, 20 * MS, "fork + exec + waitpid")],
    "thread": [("pthread-median-ns", 1 * US, 500 * US, "pthread_create + pthread_join")],
    "ctxsw-process": [("process-switch-median-ns", 0.3 * US, 50 * US, "context switch between processes")],
    "ctxsw-thread": [("thread-switch-median-ns", 0.3 * US, 50 * US, "context switch between threads")],
    "mem-latency": [("lat-median-ns-00", 0.3, 5, "load latency, 1 KiB working set (L1)")],
    "mem-bandwidth": [("bw-read-median-gbs-00", 5, 1000, "read bandwidth, 4 KiB buffer (L1)"),
                      ("bw-write-median-gbs-00", 5, 1000, "write bandwidth, 4 KiB buffer (L1)")],
    "page-fault": [("anon-write-page-median-ns", 0.05 * US, 20 * US, "anonymous page, first write"),
                   ("anon-read-page-median-ns", 0.05 * US, 20 * US, "anonymous page, first read (zero page)"),
                   ("file-read-page-median-ns", 0.05 * US, 20 * US, "page-cache file page, per page (fault-around)"),
                   ("file-read-fault-median-ns", 0.05 * US, 20 * US, "page-cache file page, per fault")],
}
# the range test's own overrides: the L1 point of the latency curve needs no curve beyond 64 KiB
OVERRIDES = {"mem-latency": {"max-bytes": "64K"}}
# latency curve up to 4 x the LLC (the committed default): a few seconds with these loads
LATENCY = {"samples": 7, "loads": 32000}
# an access served by no cache costs more than this many L2 hits: L3 hits cost ~3-7x an L2 hit
# on x86 (AMD Zen 4: ~50 vs 14 cycles; Intel: 40-100 vs 14-16), DRAM 20-100x (here 30-180x)
MEMORY_VS_L2 = 10


def median_of(out, variant):
    return out[f"{variant}-median-ns"]


@pytest.fixture(scope="module")
def osbench(programs):
    assert (programs / "osbench_exit").exists()
    return programs


# ---------------------------------------------------------------------------------------------
# 1. every measurement in its sanity range


def test_ranges_cover_every_measurement():
    assert sorted(RANGES) == sorted(printed.MEASURES)


@pytest.mark.parametrize("measure", sorted(RANGES))
def test_measurement_in_sanity_range(osbench, scratch, measure, record_property):
    out = run_osbench(osbench, scratch, measure, **OVERRIDES.get(measure, {}))
    assert out["measure"] == measure and out["migrations"] == 0
    checked = 0
    for key, low, high, what in RANGES[measure]:
        if key.startswith("tsc-") and out["timer-source"] != "tsc":
            continue  # no invariant TSC: the TSC patterns are not measured
        value = out[key]
        record_property(key, value)
        assert low <= value <= high, f"{what}: {key}={value} outside [{low}, {high}]"
        checked += 1
    assert checked >= 1
    if measure == "process":
        assert out["fork-exec-median-ns"] > out["fork-exit-median-ns"]  # exec loads a program on top
    if measure == "mem-bandwidth":
        n = int(out["bw-points"])
        for kind in ("read", "write"):  # beyond the caches: slower, but not absurdly
            beyond = out[f"bw-{kind}-median-gbs-{n - 1:02d}"]
            assert 0.5 <= beyond < out[f"bw-{kind}-median-gbs-00"], (kind, beyond)


# ---------------------------------------------------------------------------------------------
# 2. the latency curve: L1 < L2 < memory, plateaus where the caches end


def measure_latency(programs):
    """One latency curve from 1 KiB to 4 x the LLC (sysfs): sizes, median, p10 and p90 per size."""
    path = SCRATCH / uuid.uuid4().hex[:12]
    path.mkdir(parents=True)
    try:
        out = run_osbench(programs, path, "mem-latency", **LATENCY)
    finally:
        shutil.rmtree(path, ignore_errors=True)
    n = int(out["lat-points"])
    curve = {k: [out[f"lat-{k}-{i:02d}"] for i in range(n)] for k in ("bytes", "median-ns", "p10-ns", "p90-ns")}
    curve["bytes"] = [int(b) for b in curve["bytes"]]
    curve["llc"] = int(out["llc-bytes"])
    curve["capped"] = out.get("max-capped") == 1
    return curve


def beyond_the_llc(curve):
    """Whether the curve reaches 2 x the LLC, where every load goes to memory. Where it does not,
    the program must have said that it capped the curve (max-capped=1: a reported LLC, such as a
    VM's 480 MiB, too large for the run's buffer limit); then no memory level is asserted."""
    if curve["bytes"][-1] >= 2 * curve["llc"]:
        return True
    assert curve["capped"], ("the curve stops below 2 x the LLC without saying so", curve["bytes"][-1], curve["llc"])
    return False


@pytest.fixture(scope="module")
def latency(osbench):
    """The curve the tests below share."""
    return measure_latency(osbench)


@pytest.fixture(scope="module")
def caches():
    found = topology.data_cache_sizes()
    if not {1, 2} <= set(found) or max(found) < 3:
        pytest.skip(f"the OS does not report L1, L2 and a last-level cache: {found}")
    return found


def level(curve, low, high):
    """Median latency of the points with low <= size <= high."""
    values = [v for b, v in zip(curve["bytes"], curve["median-ns"]) if low <= b <= high]
    assert values, (low, high)
    return float(np.median(values))


def test_latency_l1_below_l2_below_memory(latency, caches):
    l1, l2, llc = caches[1], caches[2], caches[max(caches)]
    assert latency["llc"] == llc
    in_l1 = level(latency, 0, l1 // 2)
    in_l2 = level(latency, 2 * l1, l2 // 4)
    print(f"latency: L1 {in_l1:.2f} ns, L2 {in_l2:.2f} ns")
    assert 0.3 <= in_l1 <= 5  # 4-5 cycles
    assert 1 <= in_l2 <= 30  # 12-16 cycles
    assert 1.5 * in_l1 < in_l2
    if beyond_the_llc(latency):
        in_memory = level(latency, 2 * llc, latency["bytes"][-1])
        print(f"memory {in_memory:.1f} ns")
        assert 30 <= in_memory <= 3 * US
        assert MEMORY_VS_L2 * in_l2 < in_memory


def l1_l2_mismatches(curve, caches):
    """What is wrong with the L1 and L2 plateaus of one curve (empty: both match), and a summary.

    The analysis' plateaus (plateaus() with the p10/p90 bands, label_plateaus(), as the report
    computes them) must find L1 and L2 first, and each must end within a factor of 2 of the size
    the OS reports: the plateau reaches no further than 2 x size, and the edge, the working set
    from which the latency stays above MERGE_RATIO (2) x the plateau's level (the analysis' own
    criterion for a different level), lies in [size/2, 2 x size].
    """
    sizes, values = curve["bytes"], curve["median-ns"]
    found = levels.plateaus(sizes, values, curve["p10-ns"], curve["p90-ns"])
    matches = {m["level"]: m for m in levels.label_plateaus(found, caches)}
    wrong, notes = [], [str([(p["label"], p["first_bytes"], p["last_bytes"], round(p["ns"], 2)) for p in found])]
    if len(found) < 3:
        return [f"fewer than 3 plateaus: {notes[0]}"], notes
    for k, lv in enumerate((1, 2)):
        size, plateau = caches[lv], found[k]
        edge = next((s for i, s in enumerate(sizes) if all(v > levels.MERGE_RATIO * plateau["ns"] for v in values[i:])), None)
        notes.append(f"L{lv} {size // KiB} KiB: plateau {plateau['first_bytes'] // KiB}-{plateau['last_bytes'] // KiB} KiB at "
                     f"{plateau['ns']:.2f} ns, above {levels.MERGE_RATIO:g}x from {edge and edge // KiB} KiB on, "
                     f"label_plateaus match {matches[lv]['match']}")
        if plateau["label"] != f"L{lv}":
            wrong.append(f"plateau {k + 1} is {plateau['label']}, not L{lv}")
        if plateau["last_bytes"] > 2 * size:
            wrong.append(f"L{lv} plateau reaches {plateau['last_bytes']} > 2 x {size}")
        if edge is None or not size / 2 <= edge <= 2 * size:
            wrong.append(f"L{lv} edge {edge} outside [{size // 2}, {2 * size}]")
    return wrong, notes


def test_plateaus_match_l1_and_l2_sizes(osbench, latency, caches, record_property):
    """L1 and L2 plateaus within a factor of 2 of the reported sizes (l1_l2_mismatches).

    Why the edge is where the latency leaves the level, not the segmentation's last point: here
    the latency rises gradually inside L2 (3.8 ns, then 4.4-6 ns from 384 to 768 KiB, within the
    level), and the agglomerative merge sometimes gives those points to the L3 stretch: the L2
    plateau then ends at 192-384 KiB and label_plateaus' L2 match is False (5-15 % of curves,
    10 of 100 on a loaded VM) while the latency doubles only at 512 KiB - 1.5 MiB. The window is
    the same factor of 2; the upper side is stricter than label_plateaus' match, which leaves
    the start of the next plateau free.

    Up to 3 curves, a second apart: the first that matches passes, each one is printed. On this
    shared host the effective L1 and L2 sometimes halve together (2 of 100 curves: L1 edge at
    24 KiB and L2 edge at 384 KiB in the same curve; most likely another tenant on the core's
    sibling hyperthread, which the guest cannot see; a busy process on the VM's other vCPU does
    not do it). A wrong cache size, a unit mistake or a broken chase fails every curve.
    """
    curve = latency
    for attempt in range(1, 4):
        wrong, notes = l1_l2_mismatches(curve, caches)
        print(f"curve {attempt}:", *notes, *(f"MISMATCH {w}" for w in wrong), sep="\n  ")
        if not wrong or attempt == 3:
            break
        time.sleep(1)
        curve = measure_latency(osbench)
    record_property("l1-l2-curves", attempt)
    record_property("l1-l2-last-curve", notes)
    assert not wrong, (wrong, list(zip(curve["bytes"], curve["median-ns"])))


def test_memory_level_starts_by_twice_the_llc(latency, caches, record_property):
    """The L3 cannot be checked like L1 and L2 on this VM, only bounded.

    /sys reports a 32 MiB L3 shared by both vCPUs (the size of one Zen 4 CCD's L3), but on this VM
    the curve leaves the L3 level long before that. The last size with an L3 hit's latency was
    4-8 MiB while the VM was quiet (memory latency from 6-12 MiB on, mostly 8 MiB) and 1.5-6 MiB
    while other work ran on it (memory latency from 1.5-8 MiB on; 4 of 100 curves showed no L3
    level at all); label_plateaus' L3 match came out False (or None, without an L3 plateau) in
    every curve examined. The guest shares that L3 with the host and with other tenants' vCPUs on
    the same CCD (and its own other vCPU), so its share is a fraction of the reported size that
    varies with the neighbours' load; nested paging may add TLB walks as the working set grows.
    Neither can be seen or controlled from inside the guest, so the L3 edge is not asserted to
    match 32 MiB.
    What must hold on any machine is the other direction: the reported size is an upper bound,
    so from 2 x LLC on every load goes to memory (latency above MEMORY_VS_L2 x an L2 hit at
    every size from there on), and the analysis' last plateau is 'memory' at that latency.
    """
    l1, l2, llc = caches[1], caches[2], caches[max(caches)]
    if not beyond_the_llc(latency):
        pytest.skip(f"the curve stops at {latency['bytes'][-1] // MiB} MiB, below 2 x the reported LLC "
                    f"({llc // MiB} MiB): no memory level to check here")
    in_l2 = level(latency, 2 * l1, l2 // 4)
    threshold = MEMORY_VS_L2 * in_l2
    sizes, values = latency["bytes"], latency["median-ns"]
    # the first size from which every larger working set has memory latency
    start = next((s for i, s in enumerate(sizes) if all(v > threshold for v in values[i:])), None)
    # the last size beyond L2 with a cache hit's latency (at most the memory threshold)
    l3 = [s for s, v in zip(sizes, values) if s > l2 and v <= threshold]
    found = levels.plateaus(sizes, values, latency["p10-ns"], latency["p90-ns"])
    matches = {m["level"]: m for m in levels.label_plateaus(found, caches)}
    record_property("memory-starts-bytes", start)
    record_property("l3-last-bytes", max(l3) if l3 else None)
    print(f"LLC (sysfs) {llc // MiB} MiB; last L3-latency size {max(l3) // KiB if l3 else None} KiB; memory latency "
          f"(> {threshold:.0f} ns) from {start and start // KiB} KiB on; L{max(caches)} match {matches[max(caches)]}")
    assert start is not None and start <= 2 * llc, (start, list(zip(sizes, values)))
    assert found and found[-1]["label"] == "memory" and found[-1]["ns"] > threshold, found


# ---------------------------------------------------------------------------------------------
# 3. the -O2 build still measures the work: time grows with the repetition count


@pytest.mark.benchexec
def test_built_with_o2(osbench):
    done = subprocess.run([str(osbench / "osbench"), "--version"], capture_output=True, text=True, check=True)
    assert "-O2" in done.stdout


@pytest.mark.parametrize("measure,iterations,variants", [
    ("loop", 1000000, ["loop"]),  # 0.27 ms per sample: 100,000 (27 us) was slowed 2x in all of 3 tries once
    ("call", 200000, ["call0", "call3", "call7"]),
    ("syscall", 5000, ["getppid", "vdso"]),
])
def test_time_grows_with_repetitions(osbench, scratch, measure, iterations, variants, record_property):
    """osbench prints time per iteration = region time / iterations; total = per-op x count.
    An optimised-away loop costs the same whatever the count (per-op ~0 and falling as 1/N).

    N and 4N run alternately, five times each, and each count keeps its least disturbed run
    (the smallest median): a run of N lasts well under a millisecond here, and now and then a
    whole run is slowed ~2x by the host (seen in 2 of 20 runs of this file with one run per count:
    the empty loop at 0.45-0.53 instead of 0.27 ns while the same run's dependent-add chain stayed
    at 0.27 ns, so not the clock; most likely a busy sibling hyperthread); code that does no work
    is ~0 in every run.
    """
    per_op = {v: {} for v in variants}
    for _ in range(5):
        for n in (iterations, 4 * iterations):
            out = run_osbench(osbench, scratch, measure, iterations=n)
            for v in variants:
                per_op[v][n] = min(per_op[v].get(n, float("inf")), median_of(out, v))
    for v in variants:
        few, many = per_op[v][iterations], per_op[v][4 * iterations]
        ratio = many * 4 * iterations / (few * iterations)
        record_property(f"{v}-ns-per-op", [few, many])
        print(f"{measure}/{v}: {few:.3f} ns x {iterations}, {many:.3f} ns x {4 * iterations}: total x {ratio:.2f}")
        assert min(few, many) >= 0.1, (v, per_op[v])  # not ~0
        # per-op cost roughly constant: 4N costs 2-8x N. Not tighter: the empty loop is bimodal per
        # process (1.0 or 1.65-1.9 cycles per iteration, e.g. 0.27 vs 0.45 ns), and the slow mode
        # sometimes hit every one of five runs of one count (1 in ~40 CI-like runs at 2.5x).
        # Work optimised away gives ~1x.
        assert 2 <= ratio <= 8, (v, per_op[v], ratio)
