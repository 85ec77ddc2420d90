"""
The measurements every table, figure and verdict of os-microbench is judged on: one row per
variant and per memory level, each with its published range (seed.RANGES) and whether the
median lies in it.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.core import fmt
from analysis.experiments.os_microbench.levels import bandwidth_points, latency_levels
from analysis.experiments.os_microbench.output import MEASURES, VARIANTS
from analysis.experiments.os_microbench.seed import RANGES

LABELS = {
    "tsc-cpuid": "timer floor: CPUID;RDTSC … RDTSCP;CPUID",
    "tsc-lfence": "timer floor: LFENCE;RDTSCP;LFENCE (used here)",
    "tsc-cpuid-cost": "timer cost per use: CPUID pattern",
    "tsc-lfence-cost": "timer cost per use: LFENCE pattern",
    "clock-gettime": "clock_gettime(CLOCK_MONOTONIC), vDSO",
    "clock": "clock() (system call)",
    "loop": "loop iteration (empty)",
    "add": "dependent add (the core-clock probe's add chain)",
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


def _variant_rows(data):
    rows = []
    for measure in MEASURES:
        for variant in VARIANTS[measure]:
            v = data["variants"].get(variant)
            if not v or variant in ("anon-write-page", "anon-read-page"):  # one fault per page: same as per fault
                continue
            rows.append({"key": variant, "measure": measure, "label": LABELS.get(variant, variant), "unit": "ns", **v})
    return rows


def _latency_rows(data, caches):
    """One row per plateau of the latency curve, its spread the median of its points' p10/p90."""
    found, _ = latency_levels(data, caches)
    lat = data.get("latency")
    rows = []
    for p in found:
        i, j = p["first"], p["last"]
        rows.append({"key": f"lat-{p['label']}", "measure": "mem-latency",
                     "label": f"load latency, {p['label']} ({fmt.binary_size(p['first_bytes'])}–"
                              f"{fmt.binary_size(p['last_bytes'])})",
                     "unit": "ns", "median": p["ns"], "p10": float(np.median(lat["p10"][i:j + 1])),
                     "p90": float(np.median(lat["p90"][i:j + 1])), "min": float(np.min(lat["median"][i:j + 1])),
                     "n": int(data["info"]["mem-latency"].get("lat-n", 0) * p["points"]), "runs": data["runs"]["mem-latency"]})
    return rows


def _bandwidth_rows(data, caches):
    bw = data.get("bandwidth")
    rows = []
    for level, i in bandwidth_points(data, caches).items():
        for kind in ("read", "write"):
            rows.append({"key": f"bw-{kind}-{level}", "measure": "mem-bandwidth",
                         "label": f"{kind} bandwidth, {fmt.binary_size(bw['bytes'][i])} buffer ({level})", "unit": "GB/s",
                         "median": bw[kind]["median"][i], "p10": bw[kind]["p10"][i], "p90": bw[kind]["p90"][i],
                         "min": None, "n": int(data["info"]["mem-bandwidth"].get("bw-n", 0)), "runs": data["runs"]["mem-bandwidth"]})
    return rows


def measurement_rows(data, caches):
    """Rows of the measurements table: one per variant and per memory level, each with its
    published range, sources, note and whether the median lies in the range."""
    rows = _variant_rows(data) + _latency_rows(data, caches) + _bandwidth_rows(data, caches)
    for row in rows:
        low, high, unit, sources, note = RANGES.get(row["key"], (None, None, row["unit"], (), ""))
        row["range"] = (low, high) if low is not None else None
        row["sources"] = list(sources)
        row["range_note"] = note
        row["in_range"] = None if low is None or not math.isfinite(row["median"]) else bool(low <= row["median"] <= high)
    return rows
