"""
The values collected from programs/osbench.c's runs (what it prints: output.py).

Each of the eleven measurements is its own BenchExec run and prints, per variant, median, p10,
p90, min and n (output.COLUMNS, in the benchmark definition's order). ``collect`` combines the runs
into plain values; values stay in the units the program prints (ns, GB/s, bytes): the column
names say which, so loading converts nothing.
"""

from __future__ import annotations

import math

from analysis.core import instruments, validity
from analysis.core.instruments import CORE_CLOCK, Reading
from analysis.core.stats import summarize
from analysis.core.tasks import input_of
from analysis.experiments.os_microbench.output import (
    BW_KEYS, INFO_KEYS, INVOCATION, LAT_KEYS, MAX_POINTS, MEASURES, VARIANTS, variant_keys)

PROBE_KEYS = ("measure", *instruments.CLOCK_KEYS, "tsc-ghz", INVOCATION)


def _runs(tables):
    """(valid runs as (measure, {key: value}), excluded runs as dicts) of all tables."""
    valid_runs, excluded = [], []
    for table in tables:
        valid = table.valid()
        median = validity.of_column(table, "median", valid)
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
                    why = median.reason(i)
                    reason = f"{reason}, median {why}" if why and why != validity.NO_VALUE else f"{reason}, no measurement in its output"
                excluded.append({"measure": measure, "task": str(table.tasks[i]), "status": reason, "file": table.path.name})
                continue
            values[INVOCATION] = table.path.name  # one result file per benchexec invocation (and run definition)
            valid_runs.append((measure, values))
    return valid_runs, excluded


def _combine(rows, keys):
    """Per-run statistics of one variant combined over runs: median of the runs' medians, p10,
    p90; the smallest min; n summed; the runs' medians and their invocations (result files) kept
    for the spread between runs and between invocations."""
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
        "run_quantiles": [[r.get(k, float("nan")) for k in (min_key, p10_key, median_key, p90_key)] for r in rows],
        "invocations": [r[INVOCATION] for r in rows],
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


def _per_run(rows, keys, column, sizes):
    """Per size, each run's value of `column` (a key pattern of the curve ``keys``) and the
    invocation it came from: ([values per size], [invocations per size])."""
    values, invocations = [], []
    for size in sizes:
        found = [(r[column.format(i)], r[INVOCATION]) for r in rows for i in range(MAX_POINTS)
                 if r.get(keys[0].format(i)) == size and column.format(i) in r]
        values.append([v for v, _ in found])
        invocations.append([f for _, f in found])
    return values, invocations


def _info(rows):
    """Calibration and set-up values of one measurement's runs: counts summed, numbers as the
    median over runs, text from the first run."""
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
    return info


def _latency(rows):
    """The latency curve: bytes and median/p10/p90 ns per working-set size, None without points.
    Where the runs come from two or more invocations (result files), ``by_invocation`` also holds
    each invocation's own curve (median over its runs), in the order the runs came: where the
    latency rises is judged on each of them (levels.latency_levels)."""
    curve = _curve(rows, LAT_KEYS)
    if not curve:
        return None
    sizes, (med, p10, p90) = curve
    out = {"bytes": sizes, "median": med, "p10": p10, "p90": p90}
    groups = {}
    for r in rows:
        groups.setdefault(r[INVOCATION], []).append(r)
    if len(groups) > 1:
        out["by_invocation"] = []
        for invocation, group in groups.items():
            own = _curve(group, LAT_KEYS)
            if own:
                out["by_invocation"].append({"invocation": invocation, "bytes": own[0], "median": own[1][0],
                                             "p10": own[1][1], "p90": own[1][2]})
    return out


def _bandwidth(rows):
    """The bandwidth curve: bytes and read/write median/p10/p90 GB/s per buffer size, None
    without points."""
    curve = _curve(rows, BW_KEYS)
    if not curve:
        return None
    sizes, (rm, r10, r90, wm, w10, w90) = curve
    out = {"bytes": sizes, "read": {"median": rm, "p10": r10, "p90": r90}, "write": {"median": wm, "p10": w10, "p90": w90}}
    for kind, column in (("read", BW_KEYS[1]), ("write", BW_KEYS[4])):  # each run's median, for intervals over runs
        out[kind]["run_medians"], out[kind]["invocations"] = _per_run(rows, BW_KEYS, column, sizes)
    return out


def collect(tables):
    """Plain per-measurement values of the os-microbench runs in the given RunTables.

    Returns a dict: ``runs`` and ``excluded`` (valid runs, and those left out with their status),
    ``variants`` (per variant: median, p10, p90, min in ns, n, runs, their medians and invocations),
    ``main``, ``info`` (calibration and set-up values), ``latency`` and ``bandwidth`` (per size, with
    each invocation's or run's values), each None when not measured, and ``probes`` (what each run's
    core-clock probe printed). Every key in full: docs/experiments.md, "What the section reads".
    """
    valid_runs, excluded = _runs(tables)
    data = {"runs": {}, "excluded": excluded, "variants": {}, "main": {}, "info": {}, "latency": None, "bandwidth": None,
            "probes": [{"measure": m, **{k: v[k] for k in PROBE_KEYS if k in v}} for m, v in valid_runs]}
    measures = list(MEASURES) + sorted({m for m, _ in valid_runs} - set(MEASURES))
    for measure in measures:
        rows = [v for m, v in valid_runs if m == measure]
        if not rows:
            continue
        data["runs"][measure] = len(rows)
        data["info"][measure] = _info(rows)
        main = _combine(rows, ("median", "p10", "p90", "min", "n"))
        main["variant"] = str(rows[0].get("variant", ""))
        main["unit"] = str(rows[0].get("unit", ""))
        data["main"][measure] = main
        for variant in VARIANTS.get(measure, ()):
            combined = _combine(rows, variant_keys(variant))
            if combined:
                data["variants"][variant] = {"measure": measure, "unit": "ns", **combined}
        if measure == "mem-latency":
            data["latency"] = _latency(rows)
        if measure == "mem-bandwidth":
            data["bandwidth"] = _bandwidth(rows)
    return data


def clock_reading(data, measure=None):
    """The core clock (instruments.Reading, GHz) of ``measure``'s runs; where they printed none (or
    measure is None), of every run."""
    probes = data.get("probes", [])
    own = [p for p in probes if p.get("measure") == measure]
    reading = instruments.core_clock_of_runs(own)
    if reading.value is not None or reading.problem:
        return reading
    return instruments.core_clock_of_runs(probes)


def core_ghz(data, measure):
    """The core clock (GHz) that turns ns into cycles for ``measure`` (clock_reading), None where it
    was not measured or fails its check: cycles, not TSC ticks, turn the model's and the seed's
    cycles into ns."""
    return instruments.usable(CORE_CLOCK, clock_reading(data, measure))


def clock_check(data, measure=None):
    """'' where the core clock of ``measure`` (None: the section's) passes its check, else why not."""
    return CORE_CLOCK.check({CORE_CLOCK.quantity: clock_reading(data, measure)})


def readings(data, measure=None):
    """What the claims rest on (instruments.Reading by quantity): the core clock, the architecture
    and whether the TSC is invariant, of ``measure``'s runs (None: of all runs)."""
    info = data["info"].get(measure) or next(iter(data["info"].values()), {})
    return {"core clock": clock_reading(data, measure), "architecture": instruments.architecture(info),
            "TSC invariant": Reading(info.get("tsc-invariant"))}
