"""
The os-microbench experiment (seed 003): lmbench-style OS and memory microbenchmarks.

Seed 003 is a course report, "Performance Measurement" (CSC-501), that measured eleven
operations on an Intel i7-4710HQ at 2.5 GHz after McVoy and Staelin's lmbench: reading the
clock, a loop iteration, a procedure call with 0..7 arguments, a system call, process and
thread creation, process and thread context switches, memory latency over working-set sizes,
memory bandwidth and the page-fault service time, each with a prediction from a model.

Here ``programs/osbench.c`` measures each in its own BenchExec run (one task per measurement,
``programs/inputs/os-microbench/<measure>.txt``) and prints, per variant, median, p10, p90, min
and n of its samples. ``collect`` turns result tables into plain per-measurement values;
``section`` builds the report: each value against a published range, a predicted-vs-measured
table in the seed's form (with the seed's own figures), the plateaus of the latency curve
against the cache sizes the OS reports, figures, and the seed's claims with this machine's
verdict. Values stay in the units the program prints (ns, GB/s, bytes): the column names say
which, so no conversion at load time is needed.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as scipy_stats

from analysis import microbench_plots as mplots
from analysis import plots, topology
from analysis.report import Figure, Finding, Section, Table
from analysis.tasks import input_of

# ---------------------------------------------------------------------------------------------
# what the program prints (and the benchmark definition lists as columns)

MEASURES = ("timer", "loop", "call", "syscall", "process", "thread", "ctxsw-process", "ctxsw-thread",
            "mem-latency", "mem-bandwidth", "page-fault")
# variants per measurement, main one first; every variant V has V-median-ns, ... V-n
VARIANTS = {
    "timer": ("tsc-lfence", "tsc-cpuid", "tsc-lfence-cost", "tsc-cpuid-cost", "clock-gettime", "clock"),
    "loop": ("loop", "add"),
    "call": tuple(f"call{k}" for k in range(8)),
    "syscall": ("getppid", "vdso"),
    "process": ("fork-exec", "fork-exit"),
    "thread": ("pthread",),
    "ctxsw-process": ("process-switch", "process-roundtrip", "process-pipe"),
    "ctxsw-thread": ("thread-switch", "thread-roundtrip", "thread-pipe"),
    "mem-latency": (),
    "mem-bandwidth": (),
    "page-fault": ("anon-write-page", "anon-write-fault", "anon-read-page", "anon-read-fault",
                   "file-read-page", "file-read-fault"),
}
STATS = ("median", "p10", "p90", "min")
MAX_POINTS = 40  # curve points the program prints at most (MAX_POINTS in osbench.c)
MAIN_KEYS = ("variant", "unit", "median", "p10", "p90", "min", "n")
INFO_KEYS = (
    "measure", "cpu", "allowed-cpus", "timer-source", "tsc-invariant", "rdtscp", "tsc-ghz",
    "tsc-calibration-spread-ppm", "core-ghz", "migrations", "regions", "tsc-note", "tsc-cpuid-cost-calls",
    "exec-target", "llc-source", "llc-bytes", "max-capped", "thp-mode", "hugepages-requested", "anon-huge-kib",
    "lat-points", "lat-loads", "lat-n", "bw-points", "bw-kernel", "bw-n", "page-bytes", "pages", "file-fs",
    "anon-write-faults-per-page", "anon-read-faults-per-page", "file-read-faults-per-page",
)
LAT_KEYS = ("lat-bytes-{:02d}", "lat-median-ns-{:02d}", "lat-p10-ns-{:02d}", "lat-p90-ns-{:02d}")
BW_KEYS = ("bw-bytes-{:02d}", "bw-read-median-gbs-{:02d}", "bw-read-p10-gbs-{:02d}", "bw-read-p90-gbs-{:02d}",
           "bw-write-median-gbs-{:02d}", "bw-write-p10-gbs-{:02d}", "bw-write-p90-gbs-{:02d}")


def variant_keys(variant):
    return [f"{variant}-{s}-ns" for s in STATS] + [f"{variant}-n"]


#: every column identifier of benchmark-defs/os-microbench.xml, in its order (a test checks it)
COLUMNS = tuple(
    list(MAIN_KEYS) + list(INFO_KEYS)
    + [key for m in MEASURES for v in VARIANTS[m] for key in variant_keys(v)]
    + [k.format(i) for i in range(MAX_POINTS) for k in LAT_KEYS]
    + [k.format(i) for i in range(MAX_POINTS) for k in BW_KEYS]
)

# ---------------------------------------------------------------------------------------------
# the seed's figures (course report CSC-501, i7-4710HQ 2.5 GHz, 0.4 ns per cycle; memory latency
# on an AMD A10-8700P 1.8 GHz): predicted and measured, ns unless named otherwise

SEED_GHZ = 2.5
SEED = {
    "timer": {"predicted": 2.0, "measured": 8.0, "note": "CPUID;RDTSC..RDTSCP;CPUID, 5 vs 23 cycles"},
    "loop": {"predicted": 3.6, "measured": 0.8, "note": "9 vs 2 cycles"},
    "call": {"predicted_cycles": [9, 10, 11, 12, 13, 14, 15, 16], "measured_cycles": [2, 2, 3, 3, 4, 5, 5, 6]},
    "syscall": {"predicted": 14.0, "measured": 42.0, "note": "getppid, 36 vs 107 cycles"},
    "fork-exec": {"predicted": 200e3, "measured": 174e3},
    "pthread": {"predicted": 2e3, "measured": 2e3},
    "process-switch": {"predicted": None, "measured": 67e3, "note": "predicted: 'difficult to measure exactly'"},
    "thread-switch": {"predicted": 1.34e3, "measured": 1.25e3},
    "latency": {"predicted": "5–50 ns", "measured": "5–40 ns", "edges": "2^18 and 2^22 bytes"},
    "read-bw": {"predicted": 71.0, "measured": 83.0, "note": "GB/s, 4 KB array"},
    "write-bw": {"predicted": 35.0, "measured": 55.0, "note": "GB/s, 4 KB array"},
    "page-fault": {"predicted": 63.0, "measured": 100.0, "note": "per page of a 5 MB file mapping"},
}

# ---------------------------------------------------------------------------------------------
# published ranges: generous orders of magnitude for modern x86-64 Linux, with their sources

SOURCES = {
    "lmbench": "L. McVoy, C. Staelin: lmbench: Portable Tools for Performance Analysis. USENIX ATC 1996; "
               "C. Staelin: lmbench: an extensible micro-benchmark suite. Softw. Pract. Exper. 35(11), 2005 "
               "(null call = getppid, lat_proc fork/exec, lat_ctx, lat_mem_rd, bw_mem, lat_pagefault).",
    "paoloni": "G. Paoloni: How to Benchmark Code Execution Times on Intel IA-32 and IA-64 Instruction Set "
               "Architectures. Intel white paper, 2010 (CPUID;RDTSC..RDTSCP;CPUID; overhead of tens of cycles).",
    "fog": "A. Fog: Instruction tables, and The microarchitecture of Intel, AMD and VIA CPUs (agner.org/optimize): "
           "RDTSC/RDTSCP take tens of cycles, ADD 1 cycle latency, at most one or two taken branches per cycle.",
    "sdm": "Intel 64 and IA-32 Architectures Software Developer's Manual, Vol. 3C: CPUID causes a VM exit "
           "unconditionally in a VMX guest (a round trip to the hypervisor, of the order of a microsecond).",
    "vdso": "Linux man page vdso(7): clock_gettime is answered in user space, without entering the kernel.",
    "gregg": "B. Gregg: KPTI/KAISER Meltdown Initial Performance Regressions, 2018: the Meltdown/Spectre "
             "mitigations raise the cost of every kernel entry.",
    "li": "C. Li, C. Ding, K. Shen: Quantifying the Cost of Context Switch. ExpCS 2007: pipe ping-pong of two "
          "processes on one CPU, direct cost a few microseconds.",
    "memory": "U. Drepper: What Every Programmer Should Know About Memory, 2007; Chips and Cheese: AMD's Zen 4, "
              "Part 2: Memory Subsystem, 2022: L1 ~4-5, L2 ~12-15, L3 ~40-50 cycles, DRAM ~70-120 ns; "
              "per-core bandwidth tens to hundreds of GB/s in L1, 10-40 GB/s from DRAM.",
    "faultaround": "Linux mm/memory.c, fault_around_bytes (default 64 KiB = 16 pages of 4 KiB): a read fault on "
                   "a file mapping maps the neighbouring page-cache pages too.",
    "kit": "kit estimate: no published figure for exactly this operation; an order-of-magnitude bound from "
           "the parts it consists of (see the operation's note).",
}

# key: (low, high, unit, sources, note). Keys are variants, or 'lat-L1'... / 'bw-...' for the curves.
RANGES = {
    "tsc-cpuid": (5, 60, "ns", ("paoloni", "fog"), "RDTSC to RDTSCP with nothing between"),
    "tsc-lfence": (5, 60, "ns", ("fog",), "LFENCE;RDTSCP;LFENCE twice, nothing between"),
    "tsc-cpuid-cost": (50, 5000, "ns", ("fog", "sdm"), "two CPUIDs and two TSC reads; in a VM each CPUID exits"),
    "tsc-lfence-cost": (10, 120, "ns", ("fog",), "two fenced RDTSCP"),
    "clock-gettime": (10, 100, "ns", ("vdso",), "vDSO with a TSC clock source"),
    "clock": (100, 2000, "ns", ("kit", "gregg"), "a system call that sums the process's CPU time"),
    "loop": (0.1, 1, "ns", ("fog",), "1-2 cycles at 1-5 GHz"),
    "add": (0.15, 1, "ns", ("fog",), "1 cycle at 1-5 GHz"),
    **{f"call{k}": (0.4, 5, "ns", ("fog",), "a few cycles: call, ret, argument moves") for k in range(8)},
    "getppid": (40, 1000, "ns", ("lmbench", "gregg"), "lmbench's null call; higher with mitigations and in VMs"),
    "vdso": (10, 100, "ns", ("vdso",), "no kernel entry"),
    "fork-exit": (20e3, 1000e3, "ns", ("lmbench",), "lat_proc fork; grows with the parent's page tables"),
    "fork-exec": (100e3, 3000e3, "ns", ("lmbench",), "lat_proc exec; a dynamically linked target"),
    "pthread": (3e3, 100e3, "ns", ("kit",), "clone, stack set-up, futex wake and wait, two switches"),
    "process-switch": (500, 20e3, "ns", ("li", "lmbench"), "lat_ctx 2 processes, no working set"),
    "thread-switch": (500, 20e3, "ns", ("li",), "as process, same address space"),
    "process-pipe": (200, 5000, "ns", ("kit",), "two system calls on a pipe"),
    "thread-pipe": (200, 5000, "ns", ("kit",), "two system calls on a pipe"),
    "lat-L1": (0.5, 2.5, "ns", ("memory",), "dependent load, L1 hit"),
    "lat-L2": (2, 8, "ns", ("memory",), "dependent load, L2 hit"),
    "lat-L3": (6, 40, "ns", ("memory",), "dependent load, L3 hit"),
    "lat-memory": (50, 250, "ns", ("memory",), "dependent load, DRAM (VMs at the upper end)"),
    "bw-read-L1": (30, 400, "GB/s", ("memory",), "one core, L1-resident buffer"),
    "bw-read-memory": (5, 60, "GB/s", ("memory",), "one core, buffer 4x the last-level cache"),
    "bw-write-L1": (15, 250, "GB/s", ("memory",), "one core, L1-resident buffer"),
    "bw-write-memory": (3, 50, "GB/s", ("memory",), "one core; write-allocate reads every line first"),
    "anon-write-fault": (300, 5000, "ns", ("kit",), "kernel entry, page allocation, zeroing 4 KiB"),
    "anon-read-fault": (200, 3000, "ns", ("kit",), "kernel entry, map the shared zero page"),
    "file-read-fault": (1000, 30e3, "ns", ("faultaround", "kit"), "one fault maps up to 16 cached pages"),
    "file-read-page": (50, 2000, "ns", ("faultaround", "kit"), "per page: a fault's cost spread over its pages"),
}

# ---------------------------------------------------------------------------------------------
# the model behind "predicted": cycles per instruction class and per kernel operation

MODEL = {
    "tsc_read": 35,          # cycles of one RDTSC or RDTSCP (fog: tens of cycles)
    "lfence": 5,             # cycles one LFENCE adds
    "vdso_work": 20,         # cycles of arithmetic in clock_gettime besides the TSC read
    "taken_branch": 1,       # at most one taken branch per cycle (call, ret, loop back)
    "issue_width": 4,        # independent simple instructions per cycle
    "kernel_entry": 250,     # SYSCALL + SYSRET and the entry/exit code with mitigations
    "pipe_op": 250,          # VFS and pipe work of one read or write of one byte
    "switch": 1000,          # scheduler pass, register and FPU state, address-space switch
    "exec_entries": 30,      # kernel entries of exec plus ld.so loading the C library
    "l1": 4, "l2": 14, "l3": 50,  # load-to-use latency in cycles per cache level
    "dram_ns": 100.0,        # DRAM latency in ns
    "load_bytes_per_cycle": 32,   # two 16-byte loads per cycle
    "store_bytes_per_cycle": 16,  # one 16-byte store per cycle
    "outstanding_misses": 20,     # cache misses a core keeps in flight (Little's law for DRAM bandwidth)
    "page_alloc": 500,       # cycles to allocate a page and install its page-table entry
    "pte_per_page": 100,     # cycles to map one more page-cache page in a fault-around
}

ALPHA = 0.05
CLAIM_SEED = "seed report"


# ---------------------------------------------------------------------------------------------
# collect


def _runs(tables):
    """(valid runs as (measure, {key: value}), excluded runs as dicts) of all tables."""
    valid_runs, excluded = [], []
    for table in tables:
        valid = table.valid()
        numeric = {k: v for k, v in table.columns.items()}
        text = {k: v for k, v in table.text_columns.items() if k not in ("status", "category")}
        for i in range(len(table)):
            values = {}
            for key, array in numeric.items():
                value = float(array[i])
                if math.isfinite(value):
                    values[key] = value
            for key, array in text.items():
                if array[i]:
                    values[key] = str(array[i])
            measure = values.get("measure") or input_of(str(table.tasks[i]))
            if not valid[i] or not isinstance(values.get("median"), float):
                reason = table.status[i] or "no status"
                if valid[i]:
                    reason = f"{reason}, no measurement in its output"
                excluded.append({"measure": measure, "task": str(table.tasks[i]), "status": reason, "file": table.path.name})
                continue
            valid_runs.append((measure, values))
    return valid_runs, excluded


def _median(values):
    values = [v for v in values if v is not None and math.isfinite(v)]
    return float(np.median(values)) if values else float("nan")


def _combine(rows, keys):
    """Per-run statistics of one variant combined over runs: median of the runs' medians, p10,
    p90; the smallest min; n summed; the runs' medians kept for between-run spread."""
    median_key, p10_key, p90_key, min_key, n_key = keys
    rows = [r for r in rows if median_key in r]
    if not rows:
        return None
    return {
        "median": _median([r[median_key] for r in rows]),
        "p10": _median([r.get(p10_key, float("nan")) for r in rows]),
        "p90": _median([r.get(p90_key, float("nan")) for r in rows]),
        "min": float(min(r.get(min_key, r[median_key]) for r in rows)),
        "n": int(sum(r.get(n_key, 0) for r in rows)),
        "runs": len(rows),
        "run_medians": [r[median_key] for r in rows],
    }


def _curve(rows, keys):
    """Points present in any run, combined per size (median over runs of each statistic)."""
    by_size = {}
    for r in rows:
        for i in range(MAX_POINTS):
            size = r.get(keys[0].format(i))
            if size is None:
                continue
            point = [r.get(k.format(i), float("nan")) for k in keys[1:]]
            by_size.setdefault(int(size), []).append(point)
    if not by_size:
        return None
    sizes = sorted(by_size)
    columns = list(zip(*[[_median(col) for col in zip(*by_size[s])] for s in sizes]))
    return sizes, [list(c) for c in columns]


def collect(tables):
    """Plain per-measurement values of the os-microbench runs in the given RunTables.

    Returns a dict: ``runs`` (valid runs per measurement), ``excluded`` (runs left out, with
    their status), ``variants`` (variant -> median, p10, p90, min in ns, n, runs, run_medians,
    measure), ``main`` (measurement -> its main variant's values with unit), ``info``
    (measurement -> calibration and set-up values: tsc-ghz, core-ghz, migrations summed, ...),
    ``latency`` (bytes, median/p10/p90 ns per working-set size) and ``bandwidth`` (bytes, read
    and write median/p10/p90 GB/s), each None when not measured.
    """
    valid_runs, excluded = _runs(tables)
    data = {"runs": {}, "excluded": excluded, "variants": {}, "main": {}, "info": {}, "latency": None, "bandwidth": None}
    measures = list(MEASURES) + sorted({m for m, _ in valid_runs} - set(MEASURES))
    for measure in measures:
        rows = [v for m, v in valid_runs if m == measure]
        if not rows:
            continue
        data["runs"][measure] = len(rows)
        info = {}
        for key in INFO_KEYS:
            present = [r[key] for r in rows if key in r]
            if not present:
                continue
            if key in ("migrations", "regions"):
                info[key] = int(sum(present))
            elif all(isinstance(p, float) for p in present):
                info[key] = _median(present)
            else:
                info[key] = str(present[0])
        data["info"][measure] = info
        main = _combine(rows, ("median", "p10", "p90", "min", "n"))
        main["variant"] = str(rows[0].get("variant", ""))
        main["unit"] = str(rows[0].get("unit", ""))
        data["main"][measure] = main
        for variant in VARIANTS.get(measure, ()):
            combined = _combine(rows, variant_keys(variant))
            if combined:
                data["variants"][variant] = {"measure": measure, "unit": "ns", **combined}
        if measure == "mem-latency":
            curve = _curve(rows, LAT_KEYS)
            if curve:
                sizes, (med, p10, p90) = curve
                data["latency"] = {"bytes": sizes, "median": med, "p10": p10, "p90": p90}
        if measure == "mem-bandwidth":
            curve = _curve(rows, BW_KEYS)
            if curve:
                sizes, (rm, r10, r90, wm, w10, w90) = curve
                data["bandwidth"] = {"bytes": sizes, "read": {"median": rm, "p10": r10, "p90": r90},
                                     "write": {"median": wm, "p10": w10, "p90": w90}}
    return data


# ---------------------------------------------------------------------------------------------
# plateaus of the latency curve


MERGE_RATIO = 2.0  # neighbouring stretches closer than this in latency are one level


def plateaus(sizes, latency_ns, p10=None, p90=None, merge_ratio=MERGE_RATIO, min_points=2):
    """Flat stretches of a latency curve, found from the data.

    Agglomerative segmentation: every point starts as its own stretch; the two neighbouring
    stretches whose median latencies are closest (as a ratio) merge, again and again, while
    they differ by less than ``merge_ratio`` or their p10-p90 bands (medians of the points'
    p10 and p90, when given) overlap. Cache levels differ by 2.5x or more (L1 ~4, L2 ~14, L3
    ~50 cycles, DRAM hundreds), while noise and the slow rise within a level (first-level TLB
    misses, conflicts as the working set nears the capacity) stay below 2x.
    Stretches of at least ``min_points`` points are plateaus; single points left between them
    are the rise from one level to the next. Returns dicts in order of size: first_bytes,
    last_bytes, ns (median of the stretch), points, first and last (indices).
    """
    sizes = [int(s) for s in sizes]
    values = np.asarray(latency_ns, dtype=float)
    low = np.asarray(p10 if p10 is not None else values, dtype=float)
    high = np.asarray(p90 if p90 is not None else values, dtype=float)
    idx = [i for i in range(len(values)) if math.isfinite(values[i]) and values[i] > 0]
    stretches = [[i] for i in idx]

    def level(stretch):
        return float(np.median(values[stretch]))

    def apart(a, b):
        """How far apart two stretches are (log ratio of levels); 0 when their bands overlap."""
        la, lb = level(a), level(b)
        ha, hb = float(np.nanmedian(high[a])), float(np.nanmedian(high[b]))
        lo_a, lo_b = float(np.nanmedian(low[a])), float(np.nanmedian(low[b]))
        if p10 is not None and p90 is not None and lo_a <= hb and lo_b <= ha:
            return 0.0
        return abs(math.log(la / lb))

    limit = math.log(merge_ratio)
    while len(stretches) > 1:
        gaps = [apart(a, b) for a, b in zip(stretches, stretches[1:])]
        k = int(np.argmin(gaps))
        if gaps[k] >= limit:
            break
        stretches[k:k + 2] = [stretches[k] + stretches[k + 1]]
    found = []
    for s in stretches:
        if len(s) < min_points:
            continue
        found.append({"first": s[0], "last": s[-1], "first_bytes": sizes[s[0]], "last_bytes": sizes[s[-1]],
                      "ns": level(s), "points": len(s)})
    return found


def label_plateaus(found, caches):
    """Name the plateaus in order L1, L2, ... by the data caches the OS reports; the last one
    'memory' when it lies beyond the last-level cache. Each cache level gets a match: whether
    the rise after its plateau (between the plateau's last size and the next plateau's first)
    overlaps [size/2, 2 x size]."""
    levels = sorted(caches)
    llc = caches[levels[-1]] if levels else None
    for k, p in enumerate(found):
        if k == len(found) - 1 and llc and p["last_bytes"] > llc and k > 0:
            p["label"] = "memory"
        elif k < len(levels):
            p["label"] = f"L{levels[k]}"
        else:
            p["label"] = f"plateau {k + 1}"
    matches = []
    for k, level in enumerate(levels):
        size = caches[level]
        p = found[k] if k < len(found) else None
        nxt = found[k + 1] if k + 1 < len(found) else None
        if p is None or nxt is None or p["label"] != f"L{level}":
            matches.append({"level": level, "bytes": size, "edge": None, "match": None})
            continue
        edge = (p["last_bytes"], nxt["first_bytes"])
        matches.append({"level": level, "bytes": size, "edge": edge,
                        "match": bool(edge[0] <= 2 * size and edge[1] >= size / 2)})
    return matches


# ---------------------------------------------------------------------------------------------
# the section


def _fmt_time(ns):
    if ns is None or not math.isfinite(ns):
        return "–"
    for unit, factor in (("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= factor:
            return f"{ns / factor:.3g} {unit}"
    return f"{ns:.3g} ns"


def _fmt(value, unit):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return _fmt_time(value) if unit == "ns" else f"{value:.3g} {unit}"


LABELS = {
    "tsc-cpuid": "timer floor: CPUID;RDTSC … RDTSCP;CPUID",
    "tsc-lfence": "timer floor: LFENCE;RDTSCP;LFENCE (used here)",
    "tsc-cpuid-cost": "timer cost per use: CPUID pattern",
    "tsc-lfence-cost": "timer cost per use: LFENCE pattern",
    "clock-gettime": "clock_gettime(CLOCK_MONOTONIC), vDSO",
    "clock": "clock() (system call)",
    "loop": "loop iteration (empty)",
    "add": "dependent add (1 core cycle)",
    **{f"call{k}": f"procedure call, {k} int args" for k in range(8)},
    "getppid": "system call: getppid",
    "vdso": "vDSO call: clock_gettime",
    "fork-exit": "fork + exit (+ waitpid)",
    "fork-exec": "fork + exec + exit (+ waitpid)",
    "pthread": "pthread_create + join",
    "process-switch": "context switch, processes",
    "process-roundtrip": "pipe round trip, 2 processes",
    "process-pipe": "pipe write+read, 1 process",
    "thread-switch": "context switch, threads",
    "thread-roundtrip": "pipe round trip, 2 threads",
    "thread-pipe": "pipe write+read, 1 thread",
    "anon-write-page": "page fault, anonymous, write (per page)",
    "anon-write-fault": "page fault, anonymous, write (per fault)",
    "anon-read-page": "page fault, anonymous, read: zero page (per page)",
    "anon-read-fault": "page fault, anonymous, read (per fault)",
    "file-read-page": "page fault, file mapping, read (per page)",
    "file-read-fault": "page fault, file mapping, read (per fault)",
}


def _core_ghz(data, measure):
    value = data["info"].get(measure, {}).get("core-ghz")
    if value is None:
        values = [i.get("core-ghz") for i in data["info"].values() if i.get("core-ghz")]
        value = _median(values) if values else None
    return value if value and math.isfinite(value) else None


def _latency_levels(data, caches):
    """Plateaus of the latency curve, their labels and the per-level matches."""
    lat = data.get("latency")
    if not lat:
        return [], []
    found = plateaus(lat["bytes"], lat["median"], lat["p10"], lat["p90"])
    matches = label_plateaus(found, caches)
    return found, matches


def _bandwidth_points(data, caches):
    """{'L1': (bytes, read, write), 'memory': (...)}: the largest size within half the L1d, and
    the largest size measured if it is at least twice the last-level cache."""
    bw = data.get("bandwidth")
    if not bw:
        return {}
    sizes = bw["bytes"]
    out = {}
    l1 = caches.get(1)
    if l1:
        inside = [i for i, s in enumerate(sizes) if s <= l1 / 2]
        if inside:
            i = inside[-1]
            out["L1"] = i
    llc = caches[max(caches)] if caches else None
    if llc and sizes[-1] >= 2 * llc:
        out["memory"] = len(sizes) - 1
    return out


def measurement_rows(data, caches):
    """Rows of the measurements table: one per variant and per memory level."""
    rows = []
    for measure in MEASURES:
        for variant in VARIANTS[measure]:
            v = data["variants"].get(variant)
            if not v or variant in ("anon-write-page", "anon-read-page"):  # one fault per page: same as per fault
                continue
            rows.append({"key": variant, "measure": measure, "label": LABELS.get(variant, variant), "unit": "ns", **v})
    found, _ = _latency_levels(data, caches)
    lat = data.get("latency")
    for p in found:
        i, j = p["first"], p["last"]
        rows.append({"key": f"lat-{p['label']}", "measure": "mem-latency",
                     "label": f"load latency, {p['label']} ({mplots.size_label(p['first_bytes'])}–"
                              f"{mplots.size_label(p['last_bytes'])})",
                     "unit": "ns", "median": p["ns"], "p10": float(np.median(lat["p10"][i:j + 1])),
                     "p90": float(np.median(lat["p90"][i:j + 1])), "min": float(np.min(lat["median"][i:j + 1])),
                     "n": int(data["info"]["mem-latency"].get("lat-n", 0) * p["points"]), "runs": data["runs"]["mem-latency"]})
    bw = data.get("bandwidth")
    for level, i in _bandwidth_points(data, caches).items():
        for kind in ("read", "write"):
            rows.append({"key": f"bw-{kind}-{level}", "measure": "mem-bandwidth",
                         "label": f"{kind} bandwidth, {mplots.size_label(bw['bytes'][i])} buffer ({level})", "unit": "GB/s",
                         "median": bw[kind]["median"][i], "p10": bw[kind]["p10"][i], "p90": bw[kind]["p90"][i],
                         "min": None, "n": int(data["info"]["mem-bandwidth"].get("bw-n", 0)), "runs": data["runs"]["mem-bandwidth"]})
    for row in rows:
        low, high, unit, sources, note = RANGES.get(row["key"], (None, None, row["unit"], (), ""))
        row["range"] = (low, high) if low is not None else None
        row["sources"] = list(sources)
        row["range_note"] = note
        row["in_range"] = None if low is None or not math.isfinite(row["median"]) else bool(low <= row["median"] <= high)
    return rows


def _measurement_table(rows, data):
    out = []
    for r in rows:
        rng = f"{_fmt(r['range'][0], r['unit'])} – {_fmt(r['range'][1], r['unit'])}" if r["range"] else "–"
        ghz = _core_ghz(data, r["measure"])
        cycles = r["median"] * ghz if ghz and r["unit"] == "ns" else None
        out.append([r["label"], _fmt(r["median"], r["unit"]), cycles,
                    f"{_fmt(r['p10'], r['unit'])} – {_fmt(r['p90'], r['unit'])}", r["n"], r["runs"], rng,
                    r["in_range"], ", ".join(r["sources"]) or "–"])
    return Table(
        title="Every measurement: median, spread, n, and whether it lies in a published range",
        columns=["operation", "median", "core cycles", "p10 – p90", "n", "runs", "published range", "in range", "source"],
        rows=out,
        caption="n counts samples (a sample is one operation, or the mean of a batch of `iterations` operations; see "
                "programs/inputs/os-microbench/). With several runs per measurement the median, p10 and p90 are medians "
                "over the runs. Core cycles = ns x the run's core clock from a dependent-add chain (1 add per cycle); "
                "TSC ticks are not core cycles. Ranges are deliberately wide orders of magnitude for modern x86-64 Linux "
                "from the sources below, not expectations for this CPU: " + " ".join(f"[{k}] {v}" for k, v in SOURCES.items()),
    )


def predictions(data, caches):
    """The predicted-vs-measured rows in the seed's form: operation, base performance, model,
    predicted (ns or GB/s), measured, seed predicted, seed measured."""
    rows = []
    m = MODEL

    def add(op, model_text, predicted, variant_or_value, unit="ns", seed_key=None, measure=None, ghz=None):
        if isinstance(variant_or_value, str):
            v = data["variants"].get(variant_or_value)
            measured = v["median"] if v else None
        else:
            measured = variant_or_value
        seed = SEED.get(seed_key, {}) if seed_key else {}
        rows.append({"operation": op, "base": f"1 cycle = {1 / ghz:.3f} ns ({ghz:.2f} GHz)" if ghz else "–",
                     "model": model_text, "predicted": predicted, "measured": measured, "unit": unit,
                     "seed_predicted": seed.get("predicted"), "seed_measured": seed.get("measured")})

    ghz = _core_ghz(data, "timer")
    if ghz:
        c = 1 / ghz
        add("timer read (CPUID pattern, floor)", f"one TSC read: {m['tsc_read']} cycles", m["tsc_read"] * c, "tsc-cpuid",
            seed_key="timer", ghz=ghz)
        add("timer read (LFENCE pattern, floor)", f"TSC read + 2 LFENCE: {m['tsc_read'] + 2 * m['lfence']} cycles",
            (m["tsc_read"] + 2 * m["lfence"]) * c, "tsc-lfence", ghz=ghz)
        add("clock_gettime (vDSO)", f"TSC read + {m['vdso_work']} cycles of arithmetic", (m["tsc_read"] + m["vdso_work"]) * c,
            "clock-gettime", ghz=ghz)
    ghz = _core_ghz(data, "loop")
    if ghz:
        add("loop iteration", "1 taken branch per cycle: 1 cycle", m["taken_branch"] / ghz, "loop", seed_key="loop", ghz=ghz)
    ghz = _core_ghz(data, "call")
    if ghz:
        for k in (0, 3, 6, 7):
            cycles = 3 * m["taken_branch"] + k / m["issue_width"] + (1 if k > 6 else 0)
            seed_call = SEED["call"]
            rows_before = len(rows)
            add(f"procedure call, {k} args", f"call, ret, loop branch (3 cycles) + {k} moves at {m['issue_width']}/cycle"
                + (" + 1 stack store" if k > 6 else "") + f" = {cycles:g} cycles", cycles / ghz, f"call{k}", ghz=ghz)
            rows[rows_before]["seed_predicted"] = seed_call["predicted_cycles"][k] / SEED_GHZ
            rows[rows_before]["seed_measured"] = seed_call["measured_cycles"][k] / SEED_GHZ
    ghz = _core_ghz(data, "syscall")
    if ghz:
        add("system call (getppid)", f"kernel entry+exit: {m['kernel_entry']} cycles", m["kernel_entry"] / ghz, "getppid",
            seed_key="syscall", ghz=ghz)
    ghz = _core_ghz(data, "process")
    if ghz:
        fork_cycles = 3 * m["kernel_entry"] + 2 * m["switch"]
        add("fork + exit", f"3 kernel entries + 2 switches = {fork_cycles} cycles; page-table copy not modelled",
            fork_cycles / ghz, "fork-exit", ghz=ghz)
        exec_cycles = fork_cycles + m["exec_entries"] * m["kernel_entry"]
        add("fork + exec", f"fork + exit + {m['exec_entries']} kernel entries of exec and ld.so = {exec_cycles} cycles",
            exec_cycles / ghz, "fork-exec", seed_key="fork-exec", ghz=ghz)
    ghz = _core_ghz(data, "thread")
    if ghz:
        cycles = 4 * m["kernel_entry"] + 2 * m["switch"]
        add("pthread_create + join", f"4 kernel entries + 2 switches = {cycles} cycles", cycles / ghz, "pthread",
            seed_key="pthread", ghz=ghz)
    for kind in ("process", "thread"):
        ghz = _core_ghz(data, f"ctxsw-{kind}")
        if ghz:
            add(f"context switch, {kind}es" if kind == "process" else "context switch, threads",
                f"scheduler + state save/restore: {m['switch']} cycles", m["switch"] / ghz, f"{kind}-switch",
                seed_key=f"{kind}-switch", ghz=ghz)
    ghz = _core_ghz(data, "mem-latency")
    found, _ = _latency_levels(data, caches)
    if ghz and found:
        for p in found:
            level = p["label"]
            cycles = {"L1": m["l1"], "L2": m["l2"], "L3": m["l3"]}.get(level)
            predicted = cycles / ghz if cycles else (m["dram_ns"] if level == "memory" else None)
            text = f"{cycles} cycles" if cycles else (f"DRAM {m['dram_ns']:g} ns" if level == "memory" else "not modelled")
            rows.append({"operation": f"memory latency, {level}", "base": f"1 cycle = {1 / ghz:.3f} ns ({ghz:.2f} GHz)",
                         "model": text, "predicted": predicted, "measured": p["ns"], "unit": "ns",
                         "seed_predicted": SEED["latency"]["predicted"], "seed_measured": SEED["latency"]["measured"]})
    ghz = _core_ghz(data, "mem-bandwidth")
    points = _bandwidth_points(data, caches)
    bw = data.get("bandwidth")
    if ghz and points:
        for level, i in points.items():
            for kind in ("read", "write"):
                if level == "L1":
                    per_cycle = m["load_bytes_per_cycle"] if kind == "read" else m["store_bytes_per_cycle"]
                    predicted, text = per_cycle * ghz, f"{per_cycle} B per cycle"
                else:
                    predicted = m["outstanding_misses"] * 64 / m["dram_ns"] / (1 if kind == "read" else 2)
                    text = (f"{m['outstanding_misses']} misses in flight x 64 B / {m['dram_ns']:g} ns"
                            + (" / 2 (write-allocate)" if kind == "write" else ""))
                seed = SEED["read-bw" if kind == "read" else "write-bw"] if level == "L1" else {}
                rows.append({"operation": f"{kind} bandwidth, {level} ({mplots.size_label(bw['bytes'][i])})",
                             "base": f"1 cycle = {1 / ghz:.3f} ns ({ghz:.2f} GHz)", "model": text, "predicted": predicted,
                             "measured": bw[kind]["median"][i], "unit": "GB/s", "seed_predicted": seed.get("predicted"),
                             "seed_measured": seed.get("measured")})
    ghz = _core_ghz(data, "page-fault")
    if ghz:
        cycles = m["kernel_entry"] + m["page_alloc"] + 4096 / m["store_bytes_per_cycle"]
        add("page fault, anonymous write", f"kernel entry + page allocation + zeroing 4 KiB at {m['store_bytes_per_cycle']} B/cycle"
            f" = {cycles:g} cycles", cycles / ghz, "anon-write-fault", ghz=ghz)
        cycles = (m["kernel_entry"] + 16 * m["pte_per_page"]) / 16
        add("page fault, file read (per page)", f"(kernel entry + 16 pages x {m['pte_per_page']} cycles) / 16 pages = {cycles:g} cycles",
            cycles / ghz, "file-read-page", seed_key="page-fault", ghz=ghz)
    return rows


def _prediction_table(rows):
    def cell(value, unit):
        if isinstance(value, str):
            return value
        return _fmt(value, unit)

    return Table(
        title="Predicted vs measured, in the seed's form (base hardware performance, model, prediction)",
        columns=["operation", "base hardware performance", "model (software overhead estimate)", "predicted", "measured",
                 "measured / predicted", "seed predicted", "seed measured"],
        rows=[[r["operation"], r["base"], r["model"], cell(r["predicted"], r["unit"]), cell(r["measured"], r["unit"]),
               (r["measured"] / r["predicted"]) if isinstance(r["predicted"], float) and r["predicted"] and r["measured"] else None,
               cell(r["seed_predicted"], r["unit"]) if r["seed_predicted"] is not None else "–",
               cell(r["seed_measured"], r["unit"]) if r["seed_measured"] is not None else "–"] for r in rows],
        caption="The model, stated once: " + ", ".join(f"{k} = {v}" for k, v in MODEL.items())
                + " (cycles unless named; sources: [fog], [memory], [sdm] in the table above). Cycles become ns with this "
                "machine's core clock from the dependent-add chain. Seed: i7-4710HQ at 2.5 GHz (0.4 ns per cycle; memory "
                "latency on an AMD A10-8700P), its figures as printed in its tables; procedure-call figures converted from "
                "its cycles at 2.5 GHz.",
    )


def _latency_table(found, matches, caches, data):
    rows = []
    lat = data["latency"]
    ghz = _core_ghz(data, "mem-latency")
    for p in found:
        rows.append([p["label"], f"{mplots.size_label(p['first_bytes'])} – {mplots.size_label(p['last_bytes'])}", p["points"],
                     p["ns"], p["ns"] * ghz if ghz else None])
    level_rows = []
    for mt in matches:
        edge = f"{mplots.size_label(mt['edge'][0])} – {mplots.size_label(mt['edge'][1])}" if mt["edge"] else "no rise found"
        level_rows.append([f"L{mt['level']}", mplots.size_label(mt["bytes"]), edge,
                           "–" if mt["match"] is None else ("yes" if mt["match"] else "no")])
    info = data["info"].get("mem-latency", {})
    return [
        Table(title="Plateaus of the latency curve, found from the data", columns=["plateau", "working sets", "points",
              "latency (ns)", "core cycles"], rows=rows,
              caption=f"Optimal segmentation of log latency (penalty per segment); {len(lat['bytes'])} sizes, "
                      f"{int(info.get('lat-loads', 0))} dependent loads per sample, {int(info.get('lat-n', 0))} samples per size; "
                      f"transparent huge pages: mode '{info.get('thp-mode', '?')}', {int(info.get('anon-huge-kib', 0) or 0)} KiB "
                      "of the buffer backed by huge pages (so TLB misses do not mask the caches)."),
        Table(title="Cache sizes the OS reports against where the latency rises",
              columns=["level", "size (/sys)", "rise between", "within a factor 2"], rows=level_rows,
              caption="A level matches when the sizes between its plateau's last point and the next plateau's first point "
                      "overlap [size/2, 2 x size]."),
    ]


def _fault_table(data):
    info = data["info"].get("page-fault", {})
    rows = []
    for kind, label in (("anon-write", "anonymous, written (MADV_NOHUGEPAGE)"), ("anon-read", "anonymous, read (zero page)"),
                        ("file-read", "private file mapping, read")):
        page, fault = data["variants"].get(f"{kind}-page"), data["variants"].get(f"{kind}-fault")
        if not page:
            continue
        rows.append([label, info.get(f"{kind}-faults-per-page"), page["median"], fault["median"] if fault else None, page["n"]])
    return Table(title="Page faults: faults per page (getrusage ru_minflt) and service time",
                 columns=["mapping", "minor faults per page", "ns per page", "ns per fault", "n"], rows=rows,
                 caption=f"{int(info.get('pages', 0))} pages of {int(info.get('page-bytes', 0))} B per mapping; file on "
                         f"{info.get('file-fs', '?')}, in the page cache (minor faults only; disk reads are not measured); "
                         f"THP mode '{info.get('thp-mode', '?')}'. A file read fault maps up to 16 cached pages at once "
                         "(fault-around), so per page it looks cheap.")


def _switch_table(data):
    rows = []
    for kind in ("process", "thread"):
        rt, own, sw = (data["variants"].get(f"{kind}-{x}") for x in ("roundtrip", "pipe", "switch"))
        if rt and own and sw:
            rows.append([kind + "es" if kind == "process" else "threads", rt["median"], own["median"], sw["median"],
                         f"{_fmt_time(sw['p10'])} – {_fmt_time(sw['p90'])}", sw["n"]])
    return Table(title="Context switch: pipe round trip minus the pipe cost without switching",
                 columns=["between", "round trip (ns)", "own pipe write+read (ns)", "switch (ns)", "switch p10 – p90", "n"],
                 rows=rows,
                 caption="Both partners pinned to the same CPU. A round trip is two switches, two writes and two reads: "
                         "switch = (round trip - 2 x own pipe) / 2, per sample, with the median own-pipe cost.")


def _environment_table(data):
    rows = []
    for measure in MEASURES:
        info = data["info"].get(measure)
        if not info:
            continue
        rows.append([measure, data["runs"][measure], info.get("cpu"), info.get("timer-source"), info.get("tsc-ghz"),
                     info.get("tsc-calibration-spread-ppm"), info.get("core-ghz"), info.get("migrations"), info.get("regions")])
    return Table(title="Calibration and placement per measurement",
                 columns=["measurement", "runs", "pinned CPU", "timer", "TSC GHz (vs CLOCK_MONOTONIC_RAW)",
                          "TSC calibration spread (ppm)", "core GHz (dependent adds)", "migrations", "timed regions"],
                 rows=rows,
                 caption="Migrations: timed regions whose RDTSCP TSC_AUX (CPU number) differed at start and end.")


def _figures(data, caches, found):
    figures = []
    lat = data.get("latency")
    if lat:
        fig = mplots.latency_curve(lat["bytes"], lat["median"], lat["p10"], lat["p90"], caches, found,
                                   core_ghz=_core_ghz(data, "mem-latency"))
        figures.append(Figure("Memory latency vs working-set size", plots.to_png(fig),
                              "Median latency of a dependent load per working-set size (band: p10–p90 of the samples); "
                              "dashed: the data caches /sys reports; thick segments: plateaus found in the data."))
    bw = data.get("bandwidth")
    if bw:
        fig = mplots.bandwidth_curve(bw["bytes"], [bw["read"][k] for k in ("median", "p10", "p90")],
                                     [bw["write"][k] for k in ("median", "p10", "p90")], caches)
        figures.append(Figure("Memory bandwidth vs buffer size", plots.to_png(fig),
                              "One core, repeated passes over the buffer; write counts bytes stored (DRAM traffic is "
                              "larger: each line is read before it is written)."))
    calls = [data["variants"].get(f"call{k}") for k in range(8)]
    ghz = _core_ghz(data, "call")
    if all(calls) and ghz:
        fig = mplots.call_cost(range(8), [c["median"] for c in calls], [c["p10"] for c in calls], [c["p90"] for c in calls],
                               ghz, SEED["call"]["measured_cycles"])
        figures.append(Figure("Procedure-call cost vs argument count", plots.to_png(fig),
                              "Per iteration of a counted loop calling a noinline function whose result is summed."))
    rows = []
    for r in measurement_rows(data, caches):
        if r["unit"] != "ns" or r["key"].startswith(("call1", "call2", "call3", "call4", "call5", "call6")) \
                or r["key"].endswith("roundtrip"):
            continue
        seed = {"tsc-cpuid": SEED["timer"]["measured"], "loop": SEED["loop"]["measured"], "getppid": SEED["syscall"]["measured"],
                "fork-exec": SEED["fork-exec"]["measured"], "pthread": SEED["pthread"]["measured"],
                "process-switch": SEED["process-switch"]["measured"], "thread-switch": SEED["thread-switch"]["measured"],
                "file-read-page": SEED["page-fault"]["measured"], "call0": SEED["call"]["measured_cycles"][0] / SEED_GHZ,
                "call7": SEED["call"]["measured_cycles"][7] / SEED_GHZ}.get(r["key"])
        rows.append({"label": r["label"], "median": r["median"], "p10": r["p10"], "p90": r["p90"],
                     "low": r["range"][0] if r["range"] else None, "high": r["range"][1] if r["range"] else None, "seed": seed})
    if rows:
        figures.append(Figure("All operations on one time axis", plots.to_png(mplots.overview(rows)),
                              "Each operation's median and p10–p90 on a log axis, its published range (grey) and the seed's "
                              "measured value (cross)."))
    return figures


# ---------------------------------------------------------------------------------------------
# findings


def _v(data, name):
    return data["variants"].get(name)


def _cycles(data, variant):
    v = _v(data, variant)
    ghz = _core_ghz(data, v["measure"]) if v else None
    return v["median"] * ghz if v and ghz else None


def _findings(data, caches, found, matches):
    f = []
    nt = "not testable here"

    # the clock: TSC ticks are not core cycles
    info = data["info"].get("timer") or next(iter(data["info"].values()), {})
    tsc, core = info.get("tsc-ghz"), info.get("core-ghz")
    if tsc and core:
        ratio = core / tsc
        f.append(Finding(
            claim=f"{CLAIM_SEED}: cycles are counted with the TSC at the nominal clock (1 cycle = 0.4 ns at 2.5 GHz)",
            verdict="refuted" if abs(ratio - 1) > 0.05 else "confirmed",
            evidence=f"TSC calibrated against CLOCK_MONOTONIC_RAW: {tsc:.4f} GHz; core clock from a dependent-add chain: "
                     f"{core:.3f} GHz, {ratio:.2f} core cycles per TSC tick. 'Agreement' = within 5 %. TSC ticks are a "
                     "constant-rate time base, not cycles; this report counts cycles only from the add chain.",
        ))
    else:
        f.append(Finding(f"{CLAIM_SEED}: cycles are counted with the TSC at the nominal clock", nt,
                         "no invariant TSC (constant_tsc and nonstop_tsc) or no timer run: clock_gettime only"))

    # 1. reading the time costs ~8 ns (23 cycles)
    floor, cost = _v(data, "tsc-cpuid"), _v(data, "tsc-cpuid-cost")
    if floor:
        cyc = _cycles(data, "tsc-cpuid")
        within = 0.5 <= floor["median"] / SEED["timer"]["measured"] <= 2
        f.append(Finding(
            claim=f"{CLAIM_SEED}: reading the time with CPUID;RDTSC … RDTSCP;CPUID adds about 8 ns (23 cycles) to a measurement",
            verdict="confirmed" if within else "refuted",
            evidence=f"floor (RDTSC to RDTSCP, nothing between): median {_fmt_time(floor['median'])} = {cyc:.0f} core cycles, "
                     f"p10–p90 {_fmt_time(floor['p10'])} – {_fmt_time(floor['p90'])}, n = {floor['n']}; 'about' = within a "
                     "factor 2 of 8 ns."
                     + (f" Each use of the pattern costs {_fmt_time(cost['median'])} of wall time (two CPUIDs), n = {cost['n']}"
                        " samples: CPUID exits to the hypervisor in a VM." if cost else ""),
        ))
    if cost:
        lf = _v(data, "tsc-lfence-cost")
        f.append(Finding(
            claim="Paoloni (2010), used by the seed: CPUID is a cheap way to serialise before reading the TSC",
            verdict="refuted" if cost["median"] > 1000 else "confirmed",
            evidence=f"one CPUID;RDTSC … RDTSCP;CPUID use costs {_fmt_time(cost['median'])} (p10–p90 "
                     f"{_fmt_time(cost['p10'])} – {_fmt_time(cost['p90'])})"
                     + (f" against {_fmt_time(lf['median'])} for LFENCE;RDTSCP;LFENCE twice" if lf else "")
                     + "; 'cheap' = under 1 µs per use. In a VM CPUID traps to the hypervisor [sdm]; on bare metal it takes "
                       "~100-200 cycles [fog].",
        ))

    # 2. loop overhead ~2 cycles
    loop = _v(data, "loop")
    if loop and _cycles(data, "loop"):
        cyc = _cycles(data, "loop")
        f.append(Finding(
            claim=f"{CLAIM_SEED}: one loop iteration costs about 2 cycles (0.8 ns), far below its instruction count (9)",
            verdict="confirmed" if cyc <= 2.5 else "refuted",
            evidence=f"empty counted loop: median {_fmt_time(loop['median'])} = {cyc:.2f} core cycles per iteration "
                     f"(p10–p90 {_fmt_time(loop['p10'])} – {_fmt_time(loop['p90'])}, n = {loop['n']} samples of "
                     f"{int(1e6)} iterations by default); confirmed when at most 2.5 cycles.",
        ))

    # 3. call cost grows with the number of arguments
    calls = [_v(data, f"call{k}") for k in range(8)]
    if all(calls):
        ghz = _core_ghz(data, "call")
        med = np.array([c["median"] for c in calls]) * ghz
        rho = scipy_stats.spearmanr(np.arange(8), med)
        slope = scipy_stats.theilslopes(med, np.arange(8))
        rise = med[7] - med[0]
        grows = rho.statistic > 0 and rho.pvalue < ALPHA and rise >= 2.0
        f.append(Finding(
            claim=f"{CLAIM_SEED}: the cost of a procedure call grows with its arguments, from 2 cycles (0 args) to 6 (7 args)",
            verdict="confirmed" if grows else "refuted",
            evidence=f"medians {', '.join(f'{x:.2f}' for x in med)} core cycles for 0..7 args; Spearman rho = "
                     f"{rho.statistic:.2f}, p = {rho.pvalue:.3g} (alpha {ALPHA}); Theil-Sen slope {slope.slope:.3f} cycles per "
                     f"argument; 7 args - 0 args = {rise:.2f} cycles. 'Grows' = significant positive rank correlation and at "
                     "least 2 cycles more for 7 args (half the seed's rise). Arguments 1-6 travel in registers (SysV ABI), "
                     "the 7th on the stack.",
        ))

    # 4. a system call costs ~42 ns and far more than a call
    sysc, call0 = _v(data, "getppid"), _v(data, "call0")
    if sysc:
        within = 0.5 <= sysc["median"] / SEED["syscall"]["measured"] <= 2
        vd = _v(data, "vdso")
        f.append(Finding(
            claim=f"{CLAIM_SEED}: a null system call (getppid) costs about 42 ns (107 cycles)",
            verdict="confirmed" if within else "refuted",
            evidence=f"syscall(SYS_getppid): median {_fmt_time(sysc['median'])} = {_cycles(data, 'getppid'):.0f} core cycles, "
                     f"p10–p90 {_fmt_time(sysc['p10'])} – {_fmt_time(sysc['p90'])}, n = {sysc['n']}; 'about' = within a factor 2."
                     + (f" A vDSO clock_gettime, which stays in user space, costs {_fmt_time(vd['median'])}." if vd else "")
                     + " Kernel entries cost more since the Meltdown/Spectre mitigations [gregg] and in a VM.",
        ))
        if call0:
            ratio = sysc["median"] / call0["median"]
            f.append(Finding(
                claim=f"{CLAIM_SEED}: entering the kernel costs far more (over 10x) than a procedure call",
                verdict="confirmed" if ratio >= 10 else "refuted",
                evidence=f"getppid {_fmt_time(sysc['median'])} / call with 0 args {_fmt_time(call0['median'])} = {ratio:.0f}x.",
            ))

    # 5. process vs thread creation
    fx, fe, pt = _v(data, "fork-exec"), _v(data, "fork-exit"), _v(data, "pthread")
    if fx and pt:
        ratio = fx["median"] / pt["median"]
        f.append(Finding(
            claim=f"{CLAIM_SEED}: creating a kernel thread is far cheaper than creating a process (174 µs vs 2 µs)",
            verdict="confirmed" if ratio >= 10 and not _overlap(fx, pt) else "refuted",
            evidence=f"fork+exec {_fmt_time(fx['median'])} (p10–p90 {_fmt_time(fx['p10'])} – {_fmt_time(fx['p90'])}, n = {fx['n']}) "
                     f"vs pthread_create+join {_fmt_time(pt['median'])} (p10–p90 {_fmt_time(pt['p10'])} – {_fmt_time(pt['p90'])}, "
                     f"n = {pt['n']}): {ratio:.0f}x"
                     + (f"; fork+exit alone {_fmt_time(fe['median'])}, {fe['median'] / pt['median']:.0f}x a thread" if fe else "")
                     + ". 'Far cheaper' = at least 10x with p10–p90 ranges apart.",
        ))
        f.append(Finding(
            claim=f"{CLAIM_SEED}: fork+exec takes about 174 µs and pthread_create about 2 µs",
            verdict="confirmed" if 0.5 <= fx["median"] / 174e3 <= 2 and 0.5 <= pt["median"] / 2e3 <= 2 else "refuted",
            evidence=f"fork+exec {_fmt_time(fx['median'])} ({fx['median'] / 174e3:.2f}x the seed), pthread_create+join "
                     f"{_fmt_time(pt['median'])} ({pt['median'] / 2e3:.2f}x); 'about' = within a factor 2 each. The seed timed "
                     "from the parent's fork to the child's first instruction; here fork to waitpid (lmbench's lat_proc), "
                     "which includes exit and reaping.",
        ))

    # 6. process switch ~50x thread switch
    ps, ts = _v(data, "process-switch"), _v(data, "thread-switch")
    if ps and ts:
        ratio = ps["median"] / ts["median"]
        f.append(Finding(
            claim=f"{CLAIM_SEED}: a process context switch (67 µs) costs tens of times a thread context switch (1.25 µs)",
            verdict="confirmed" if ratio >= 10 else "refuted",
            evidence=f"process switch {_fmt_time(ps['median'])} (p10–p90 {_fmt_time(ps['p10'])} – {_fmt_time(ps['p90'])}), thread "
                     f"switch {_fmt_time(ts['median'])} (p10–p90 {_fmt_time(ts['p10'])} – {_fmt_time(ts['p90'])}), n = {ps['n']} "
                     f"each: {ratio:.2f}x; 'tens of times' = at least 10x. Both pinned to one CPU, pipe cost without a switch "
                     "subtracted. The seed's 67 µs included fork and process exit.",
        ))

    # 7. plateaus mark the cache sizes
    if data.get("latency"):
        plateau_text = ", ".join("{} {:.3g} ns".format(p["label"], p["ns"]) for p in found) or "none"
        for mt in matches:
            size = mplots.size_label(mt["bytes"])
            if mt["match"] is None:
                verdict, ev = "inconclusive", "no plateau of this level followed by a higher one was found in the data"
            else:
                verdict = "confirmed" if mt["match"] else "refuted"
                ev = (f"latency rises between {mplots.size_label(mt['edge'][0])} and {mplots.size_label(mt['edge'][1])}; "
                      f"/sys reports L{mt['level']} = {size}; a match needs the rise to overlap [{mplots.size_label(mt['bytes'] / 2)}, "
                      f"{mplots.size_label(mt['bytes'] * 2)}].")
                if not mt["match"] and mt["edge"][1] < mt["bytes"] / 2:
                    ev += (" The latency rises well before the reported size"
                           + (": the last-level cache may be shared with other tenants of the host, or TLB misses "
                              "dominate (a VM's huge pages may be backed by 4 KiB host pages, so each miss costs a "
                              "two-dimensional page walk; compare the bandwidth curve, which misses the TLB rarely). "
                              "/sys shows what the hypervisor tells the guest." if mt["level"] == max(caches) else
                              ": associativity conflicts or TLB reach limit what a random cycle can keep in this level."))
                elif not mt["match"]:
                    ev += " The latency rises only well after the reported size (prefetching or a larger effective cache)."
                if not mt["match"] and mt["level"] == max(caches) and data.get("bandwidth"):
                    bw = data["bandwidth"]
                    inside = [i for i, b in enumerate(bw["bytes"]) if mt["edge"][1] < b <= mt["bytes"] / 2]
                    if inside:
                        i = inside[-1]
                        ev += (f" Read bandwidth at {mplots.size_label(bw['bytes'][i])}, past the latency rise but within "
                               f"the reported L{mt['level']}: {bw['read']['median'][i]:.1f} GB/s, against "
                               f"{bw['read']['median'][-1]:.1f} GB/s at {mplots.size_label(bw['bytes'][-1])}.")
            f.append(Finding(
                claim=f"{CLAIM_SEED}: the latency curve has plateaus whose ends mark the cache sizes (here L{mt['level']}, {size})",
                verdict=verdict, evidence=ev + f" Plateaus found: {plateau_text}.",
            ))

    # 8. read bandwidth exceeds write bandwidth
    points = _bandwidth_points(data, caches)
    bw = data.get("bandwidth")
    if bw and "L1" in points:
        parts = []
        r, w = bw["read"], bw["write"]
        for level, i in points.items():
            parts.append(f"{level} ({mplots.size_label(bw['bytes'][i])}): read {r['median'][i]:.1f} GB/s "
                         f"(p10 {r['p10'][i]:.1f}), write {w['median'][i]:.1f} GB/s (p90 {w['p90'][i]:.1f})")
        i = points["L1"]
        f.append(Finding(
            claim=f"{CLAIM_SEED}: reads are faster than writes on a cache-resident array (83 vs 55 GB/s on 4 KB)",
            verdict="confirmed" if r["p10"][i] > w["p90"][i] else "refuted",
            evidence="; ".join(parts) + ". Judged on the L1-resident buffer, the seed's setting: confirmed when read's "
                     "p10 lies above write's p90. Beyond the caches both are bound by DRAM (and a write first reads its line).",
        ))

    # 9. page fault ~100 ns
    aw, fr, frp = _v(data, "anon-write-fault"), _v(data, "file-read-fault"), _v(data, "file-read-page")
    if aw or fr:
        pf = data["info"].get("page-fault", {})
        per_fault = min(x["median"] for x in (aw, fr) if x)
        f.append(Finding(
            claim=f"{CLAIM_SEED}: servicing a page fault takes about 100 ns (250 cycles)",
            verdict="confirmed" if 0.5 <= per_fault / 100 <= 2 else "refuted",
            evidence=(f"anonymous write fault {_fmt_time(aw['median'])} per fault "
                      f"({pf.get('anon-write-faults-per-page', float('nan')):.3f} faults per page); " if aw else "")
            + (f"file read fault {_fmt_time(fr['median'])} per fault, but {pf.get('file-read-faults-per-page', float('nan')):.4f} "
               f"faults per page, so {_fmt_time(frp['median'])} per page. " if fr and frp else "")
            + "'About' = within a factor 2 per fault. The seed divided by pages, not faults: with fault-around "
              "[faultaround] one fault maps 16 pages, which makes a per-page figure near 100 ns plausible.",
        ))
    return f


def _overlap(a, b):
    return not (a["p10"] > b["p90"] or b["p10"] > a["p90"])


def section(tables, caches=None):
    """The report section of os-microbench result tables: (Section, data for report.json).

    ``caches`` maps cache level to bytes (data/unified caches); default: this machine's, from
    analysis.topology.data_cache_sizes().
    """
    data = collect(tables)
    caches = dict(topology.data_cache_sizes() if caches is None else caches)
    sec = Section(id="os-microbench", title="OS and memory microbenchmarks (lmbench-style, seed 003)")
    sec.paragraphs += [
        "Seed 003 (course report 'Performance Measurement', CSC-501) measured eleven operations after lmbench on an "
        "Intel i7-4710HQ at 2.5 GHz and compared each with a prediction. Here each operation is one BenchExec run of "
        "programs/osbench.c pinned to one CPU; every variant reports median, p10, p90, min and n over its own samples "
        "after a warm-up. Timed regions use LFENCE;RDTSCP;LFENCE with the TSC calibrated against CLOCK_MONOTONIC_RAW "
        "(clock_gettime where the TSC is not invariant); cycle counts come only from a dependent-add chain.",
        "Cache sizes used here: " + (", ".join(f"L{k} {mplots.size_label(v)}" for k, v in sorted(caches.items())) or "unknown")
        + " (/sys/devices/system/cpu/cpu0/cache).",
    ]
    if data["excluded"]:
        counts = {}
        for e in data["excluded"]:
            counts[e["status"]] = counts.get(e["status"], 0) + 1
        sec.warnings.append(f"{len(data['excluded'])} run(s) left out of every statistic: "
                            + ", ".join(f"{k}: {v}" for k, v in counts.items()) + " ("
                            + ", ".join(sorted({e['measure'] for e in data['excluded']})) + ")")
    if not data["runs"]:
        sec.warnings.append("no valid os-microbench run in the given result files")
        return sec, data
    missing = [m for m in MEASURES if m not in data["runs"]]
    if missing:
        sec.warnings.append("not measured: " + ", ".join(missing))
    migrations = sum(i.get("migrations", 0) for i in data["info"].values())
    if migrations:
        sec.warnings.append(f"{migrations} timed region(s) started and ended on different CPUs despite pinning")
    if any(i.get("timer-source") == "clock_gettime" for i in data["info"].values()):
        sec.warnings.append("the TSC is not invariant here (constant_tsc/nonstop_tsc missing) or not usable: "
                            "regions were timed with clock_gettime(CLOCK_MONOTONIC)")

    rows = measurement_rows(data, caches)
    found, matches = _latency_levels(data, caches)
    predicted = predictions(data, caches)
    sec.tables.append(_measurement_table(rows, data))
    sec.tables.append(_prediction_table(predicted))
    if data.get("latency"):
        sec.tables += _latency_table(found, matches, caches, data)
    if data["variants"].get("process-switch") or data["variants"].get("thread-switch"):
        sec.tables.append(_switch_table(data))
    if data["variants"].get("anon-write-page"):
        sec.tables.append(_fault_table(data))
    sec.tables.append(_environment_table(data))
    sec.figures += _figures(data, caches, found)
    sec.findings += _findings(data, caches, found, matches)

    data["caches"] = {str(k): v for k, v in caches.items()}
    data["measurements"] = rows
    data["plateaus"] = found
    data["cache_matches"] = matches
    data["predictions"] = predicted
    data["model"] = dict(MODEL)
    data["sources"] = dict(SOURCES)
    data["seed"] = SEED
    return sec, data
