"""
The figures of the os-microbench section, one function per figure: the data each needs picked
from the collected values, drawn by plots.py, with its caption.
"""

from __future__ import annotations

from analysis.core import plots
from analysis.core.report import Figure
from analysis.experiments.os_microbench import plots as mplots
from analysis.experiments.os_microbench.samples import core_ghz
from analysis.experiments.os_microbench.seed import SEED, SEED_GHZ

#: the seed's measured value (ns) of the operations the overview marks
_SEED_NS = {"tsc-cpuid": SEED["timer"]["measured"], "loop": SEED["loop"]["measured"], "getppid": SEED["syscall"]["measured"],
            "fork-exec": SEED["fork-exec"]["measured"], "pthread": SEED["pthread"]["measured"],
            "process-switch": SEED["process-switch"]["measured"], "thread-switch": SEED["thread-switch"]["measured"],
            "file-read-page": SEED["page-fault"]["measured"], "call0": SEED["call"]["measured_cycles"][0] / SEED_GHZ,
            "call7": SEED["call"]["measured_cycles"][7] / SEED_GHZ}


def _latency(data, caches, found):
    lat = data.get("latency")
    if not lat:
        return []
    fig = mplots.latency_curve(lat["bytes"], lat["median"], lat["p10"], lat["p90"], caches, found,
                               core_ghz=core_ghz(data, "mem-latency"))
    return [Figure("Memory latency vs working-set size", plots.to_png(fig),
                   "Median latency of a dependent load per working-set size (band: p10–p90 of the samples); "
                   "dashed: the data caches /sys reports; thick segments: plateaus found in the data.")]


def _bandwidth(data, caches):
    bw = data.get("bandwidth")
    if not bw:
        return []
    fig = mplots.bandwidth_curve(bw["bytes"], [bw["read"][k] for k in ("median", "p10", "p90")],
                                 [bw["write"][k] for k in ("median", "p10", "p90")], caches)
    return [Figure("Memory bandwidth vs buffer size", plots.to_png(fig),
                   "One core, repeated passes over the buffer; write counts bytes stored (DRAM traffic is "
                   "larger: each line is read before it is written).")]


def _calls(data):
    calls = [data["variants"].get(f"call{k}") for k in range(8)]
    if not all(calls):
        return []
    fig = mplots.call_cost(range(8), [c["median"] for c in calls], [c["p10"] for c in calls], [c["p90"] for c in calls],
                           core_ghz(data, "call"), SEED["call"]["measured_cycles"], SEED_GHZ)
    return [Figure("Procedure-call cost vs argument count", plots.to_png(fig),
                   "Per iteration of a counted loop calling a noinline function whose result is summed.")]


def _overview(measurements):
    """Every operation timed in ns but the middle call counts and the round trips."""
    rows = []
    for r in measurements:
        if r["unit"] != "ns" or r["key"].startswith(("call1", "call2", "call3", "call4", "call5", "call6")) \
                or r["key"].endswith("roundtrip"):
            continue
        rows.append({"label": r["label"], "median": r["median"], "p10": r["p10"], "p90": r["p90"],
                     "low": r["range"][0] if r["range"] else None, "high": r["range"][1] if r["range"] else None,
                     "seed": _SEED_NS.get(r["key"])})
    if not rows:
        return []
    return [Figure("All operations on one time axis", plots.to_png(mplots.overview(rows)),
                   "Each operation's median and p10–p90 on a log axis, its published range (grey) and the seed's "
                   "measured value (cross).")]


def figures(data, caches, found, measurements):
    """The section's figures; ``found``: the labelled latency plateaus, ``measurements``: the rows
    of measurements.measurement_rows."""
    return _latency(data, caches, found) + _bandwidth(data, caches) + _calls(data) + _overview(measurements)
