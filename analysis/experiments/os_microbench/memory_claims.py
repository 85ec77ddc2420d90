"""
The seed's claims about the memory hierarchy, judged on this machine's latency and bandwidth
curves: the latency rises about at each cache size (a finding per level, on the bracket of the
rise), and reads beat writes on a cache-resident array.
"""

from __future__ import annotations

import dataclasses
import math

from analysis.core import verdicts
from analysis.core.fmt import binary_size
from analysis.core.instruments import Reading, Trust
from analysis.core.report import Finding
from analysis.core.verdicts import BracketUnion, ClaimSpec, Estimate
from analysis.experiments.os_microbench import estimates
from analysis.experiments.os_microbench.claim_ids import NOT_TESTABLE, _id, _seed
from analysis.experiments.os_microbench.levels import bandwidth_points, rise_bracket

# a cache level can be judged only where the latency curve reaches beyond it
CACHE_SIZE = Trust("cache size", 1024, 2**32, "B", "the latency curve must reach beyond a level to show where it ends",
                   below="largest working set measured")
# judged per cache level on the rise / the level's size (not simulated by calibrate --claims: the rise sits on a grid)
PLATEAU = ClaimSpec("os-microbench: the latency rises about at each cache size", "about", 1.0, instruments=(CACHE_SIZE,))


def _mismatch_reason(mt, caches):
    """Why a level's latency rise lies away from its reported size."""
    if mt["edge"][1] < mt["bytes"] / 2:
        return (" The latency rises well before the reported size"
                + (": the last-level cache may be shared with other tenants of the host, or TLB misses "
                   "dominate (a VM's huge pages may be backed by 4 KiB host pages, so each miss costs a "
                   "two-dimensional page walk; compare the bandwidth curve, which misses the TLB rarely). "
                   "/sys shows what the hypervisor tells the guest." if mt["level"] == max(caches) else
                   ": associativity conflicts or TLB reach limit what a random cycle can keep in this level."))
    return " The latency rises only well after the reported size (prefetching or a larger effective cache)."


def _bandwidth_past_the_rise(mt, data):
    """Read bandwidth between the last-level latency rise and half the reported size, against the
    largest buffer: shows whether the data still comes from a cache."""
    bw = data["bandwidth"]
    inside = [i for i, b in enumerate(bw["bytes"]) if mt["edge"][1] < b <= mt["bytes"] / 2]
    if not inside:
        return ""
    i = inside[-1]
    return (f" Read bandwidth at {binary_size(bw['bytes'][i])}, past the latency rise but within "
            f"the reported L{mt['level']}: {bw['read']['median'][i]:.1f} GB/s, against "
            f"{bw['read']['median'][-1]:.1f} GB/s at {binary_size(bw['bytes'][-1])}.")


def _rise(mt, latency_runs):
    """Where the latency rises after a level's plateau, as an Estimate in KiB or MiB: somewhere
    between the plateau's last working-set size and the next plateau's first (the curve's sizes
    are the grid; the curve is the median over the runs, per size). With two or more invocations
    (``invocation_edges``) the bracket is the union of each invocation's own and the median
    curve's (levels.rise_bracket), a BracketUnion that says where they differ."""
    unit, factor = ("MiB", 2**20) if mt["bytes"] >= 2**20 else ("KiB", 2**10)
    invocations = len(set(latency_runs.get("invocations", []))) if latency_runs else 1
    runs = latency_runs.get("runs", 1) if latency_runs else 1
    sizes = {"unit": "bracket", "n": runs // max(invocations, 1), "m": invocations, "scale": unit}
    if not mt.get("invocation_edges"):
        low, high = mt["edge"][0] / factor, mt["edge"][1] / factor
        return Estimate(math.sqrt(low * high), low, high, **sizes,
                        method="the latency rises between these two measured working-set sizes"), factor, unit
    low, high, _ = rise_bracket(mt)
    low, high = low / factor, high / factor
    brackets = tuple((e[0] / factor, e[1] / factor) if e else None for e in mt["invocation_edges"])
    return BracketUnion(math.sqrt(low * high), low, high, **sizes, brackets=brackets,
                        method="the union of the invocations' brackets: each one's latency rises between two measured "
                               "working-set sizes"), factor, unit


def _plateau_verdict(mt, caches, data):
    """(verdict, evidence, parts) for one cache level: does the latency rise about at its size?"""
    why = PLATEAU.untestable({"cache size": Reading(mt["bytes"], how=f"L{mt['level']}, as /sys reports it"),
                              "largest working set measured": Reading(max(data["latency"]["bytes"]))})
    if why:
        return NOT_TESTABLE, why + ".", ()
    if mt["match"] is None:
        return "inconclusive", "no plateau of this level followed by a higher one was found in the data.", ()
    if mt.get("invocation_edges"):  # the rise as the invocations put it, for the text on a mismatch as well
        low, high, _ = rise_bracket(mt)
        mt = {**mt, "edge": (low, high), "match": bool(low <= 2 * mt["bytes"] and high >= mt["bytes"] / 2)}
    rise, factor, unit = _rise(mt, data["main"].get("mem-latency"))
    v = verdicts.about(rise, mt["bytes"] / factor)
    part = v.as_part(f"latency rise / L{mt['level']} size", f"latency rise after L{mt['level']} ({unit})")
    ev = f"/sys reports L{mt['level']} = {binary_size(mt['bytes'])}; 'about' its size = within a factor 2: {v.evidence}"
    if v.verdict != "confirmed" and not mt["match"]:
        ev += _mismatch_reason(mt, caches)
        if mt["level"] == max(caches) and data.get("bandwidth"):
            ev += _bandwidth_past_the_rise(mt, data)
    flat = [k + 1 for k, edge in enumerate(mt.get("invocation_edges") or []) if not edge]
    if flat and v.verdict != "inconclusive":  # a curve without the rise leaves open whether there is one here
        why = (f"invocation {', '.join(map(str, flat))} shows no rise after this level's plateau, the others do: "
               "more runs count how often each happens, they do not decide where the rise lies")
        part = dataclasses.replace(part, verdict="inconclusive", why=why, decide=verdicts.never(why))
        return "inconclusive", ev + f" Not judged: {why}.", (part,)
    return v.verdict, ev, (part,)


def plateaus_mark_cache_sizes(data, caches, found, matches):
    """The latency curve's plateaus end at the cache sizes: one finding per cache level."""
    if not data.get("latency"):
        return []
    plateau_text = ", ".join("{} {:.3g} ns".format(p["label"], p["ns"]) for p in found) or "none"
    out = []
    for mt in matches:
        verdict, ev, parts = _plateau_verdict(mt, caches, data)
        out.append(Finding(
            id=_id(f"latency-plateau-L{mt['level']}"), parts=parts,
            decide={"grid": "a latency curve that shows this level's plateau"} if verdict == "inconclusive" and not parts
            else None,
            claim=_seed("the latency curve has plateaus whose ends mark the cache sizes "
                        f"(here L{mt['level']}, {binary_size(mt['bytes'])})"),
            verdict=verdict, evidence=ev + f" Plateaus found: {plateau_text}.",
        ))
    return out


def _point(bw, kind, i, n):
    """One bandwidth point as a variant (median, p10, p90, n samples, each run's median and
    invocation) for estimates.median."""
    b = bw[kind]
    return {"median": b["median"][i], "p10": b["p10"][i], "p90": b["p90"][i], "n": n,
            "run_medians": b.get("run_medians", [[b["median"][i]]] * (i + 1))[i], "invocations": b.get("invocations", [[]] * (i + 1))[i]}


def reads_beat_writes(data, caches):
    """Read bandwidth exceeds write bandwidth on a cache-resident array."""
    points = bandwidth_points(data, caches)
    bw = data.get("bandwidth")
    if not (bw and "L1" in points):
        return []
    r, w = bw["read"], bw["write"]
    parts = [f"{level} ({binary_size(bw['bytes'][i])}): read {r['median'][i]:.1f} GB/s (p10 {r['p10'][i]:.1f}), "
             f"write {w['median'][i]:.1f} GB/s (p90 {w['p90'][i]:.1f})" for level, i in points.items()]
    i, n = points["L1"], int(data["info"].get("mem-bandwidth", {}).get("bw-n", 1))
    v = verdicts.direction(estimates.ratio(_point(bw, "read", i, n), _point(bw, "write", i, n),
                                           what="read / write bandwidth"))
    return [Finding(
        claim=_seed("reads are faster than writes on a cache-resident array (83 vs 55 GB/s on 4 KB)"),
        id=_id("reads-beat-writes"), parts=[v.as_part("read / write bandwidth in L1", "read / write bandwidth in L1")],
        verdict=v.verdict,
        evidence=f"Judged on the L1-resident buffer, the seed's setting: {v.evidence} " + "; ".join(parts)
                 + ". Beyond the caches both are bound by DRAM (and a write first reads its line).",
    )]
