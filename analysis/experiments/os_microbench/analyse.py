"""
The os-microbench experiment (seed 003): lmbench-style OS and memory microbenchmarks.

``programs/osbench.c`` measures eleven operations (clock reads, loop, procedure calls, system
calls, process and thread creation and switches, memory latency and bandwidth, page faults),
each in its own BenchExec run, and prints per variant median, p10, p90, min and n. This module
turns those runs into values (``collect``), finds the plateaus of the latency curve from the
data rather than assuming cache sizes (``plateaus``, ``label_plateaus``), and assembles the
report section; the seed's figures, the published ranges, the model and the verdicts live in
analysis.microbench_claims. Values stay in the units the program prints (ns, GB/s, bytes): the
column names say which, so loading converts nothing.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.experiments.os_microbench import plots as mplots
from analysis.core import plots
from analysis.machine import facts as machine_facts
from analysis.experiments.os_microbench.claims import (MODEL, RANGES, SEED, SEED_GHZ, SOURCES, bandwidth_points, core_ghz, findings, fmt_time,
                                        predictions)
from analysis.core.report import Figure, Section, Table
from analysis.core.stats import summarize
from analysis.core.tasks import input_of

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
# collect


def _runs(tables):
    """(valid runs as (measure, {key: value}), excluded runs as dicts) of all tables."""
    valid_runs, excluded = [], []
    for table in tables:
        valid = table.valid()
        text = {k: v for k, v in table.text_columns.items() if k not in ("status", "category")}
        for i in range(len(table)):
            values = {}
            for key, array in table.columns.items():
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


def _combine(rows, keys):
    """Per-run statistics of one variant combined over runs: median of the runs' medians, p10,
    p90; the smallest min; n summed; the runs' medians kept for between-run spread."""
    median_key, p10_key, p90_key, min_key, n_key = keys
    rows = [r for r in rows if median_key in r]
    if not rows:
        return None
    return {
        "median": summarize([r[median_key] for r in rows]).median,
        "p10": summarize([r.get(p10_key, float("nan")) for r in rows]).median,
        "p90": summarize([r.get(p90_key, float("nan")) for r in rows]).median,
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
    columns = list(zip(*[[summarize(col).median for col in zip(*by_size[s])] for s in sizes]))
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
                info[key] = summarize(present).median
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


def _latency_levels(data, caches):
    """Plateaus of the latency curve, their labels and the per-level matches."""
    lat = data.get("latency")
    if not lat:
        return [], []
    found = plateaus(lat["bytes"], lat["median"], lat["p10"], lat["p90"])
    matches = label_plateaus(found, caches)
    return found, matches


# ---------------------------------------------------------------------------------------------
# tables, figures and the section


def _fmt(value, unit):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    return fmt_time(value) if unit == "ns" else f"{value:.3g} {unit}"


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
    for level, i in bandwidth_points(data, caches).items():
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
        ghz = core_ghz(data, r["measure"])
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


def _latency_table(found, matches, data):
    rows = []
    lat = data["latency"]
    ghz = core_ghz(data, "mem-latency")
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
              caption=f"Neighbouring sizes merge while their medians differ by less than {MERGE_RATIO:g}x or their p10-p90 "
                      f"bands overlap (see plateaus()); {len(lat['bytes'])} sizes, "
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
                         f"{fmt_time(sw['p10'])} – {fmt_time(sw['p90'])}", sw["n"]])
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
                                   core_ghz=core_ghz(data, "mem-latency"))
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
    ghz = core_ghz(data, "call")
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


def section(tables, caches=None):
    """The report section of os-microbench result tables: (Section, data for report.json).

    ``caches`` maps cache level to bytes (data/unified caches) of the measured machine, as its
    sweep recorded them; default: analysis.machine.facts.for_results (this host's only if the
    results were made here).
    """
    data = collect(tables)
    caches = dict(machine_facts.for_results(tables).caches if caches is None else caches)
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
    predicted = predictions(data, caches, found)
    sec.tables.append(_measurement_table(rows, data))
    sec.tables.append(_prediction_table(predicted))
    if data.get("latency"):
        sec.tables += _latency_table(found, matches, data)
    if data["variants"].get("process-switch") or data["variants"].get("thread-switch"):
        sec.tables.append(_switch_table(data))
    if data["variants"].get("anon-write-page"):
        sec.tables.append(_fault_table(data))
    sec.tables.append(_environment_table(data))
    sec.figures += _figures(data, caches, found)
    sec.findings += findings(data, caches, found, matches)

    data["caches"] = {str(k): v for k, v in caches.items()}
    data["measurements"] = rows
    data["plateaus"] = found
    data["cache_matches"] = matches
    data["predictions"] = predicted
    data["model"] = dict(MODEL)
    data["sources"] = dict(SOURCES)
    data["seed"] = SEED
    return sec, data
