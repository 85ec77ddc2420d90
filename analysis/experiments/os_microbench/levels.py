"""
Where the memory curves meet the cache levels, found from the data rather than assumed.

``plateaus`` segments the latency curve into flat stretches, ``label_plateaus`` names them by
the data caches the measured machine reported and judges whether each level's rise lies near
its size; ``bandwidth_points`` picks the points of the bandwidth curve inside L1 and beyond
the last-level cache.
"""

from __future__ import annotations

import math

import numpy as np

MERGE_RATIO = 2.0  # neighbouring stretches closer than this in latency are one level


def plateaus(sizes, latency_ns, p10=None, p90=None, merge_ratio=MERGE_RATIO, min_points=2):
    """Flat stretches of a latency curve, found from the data.

    Agglomerative segmentation: neighbouring stretches with the closest median latencies merge while
    they differ by less than ``merge_ratio`` or their p10-p90 bands overlap (cache levels differ by
    2.5x or more, noise within a level stays below 2x). Stretches of at least ``min_points`` points
    are plateaus. Returns dicts in order of size: first_bytes, last_bytes, ns (median of the
    stretch), points, first and last (indices). Why these thresholds: docs/experiments.md, "Cache
    levels from the data".
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


def latency_levels(data, caches):
    """Plateaus of the latency curve, their labels and the per-level matches. Where the curve has
    one per invocation (samples: ``by_invocation``), each match also holds ``invocation_edges``:
    the rise after its level in each invocation's own curve (None where that curve shows none)."""
    lat = data.get("latency")
    if not lat:
        return [], []
    found = plateaus(lat["bytes"], lat["median"], lat["p10"], lat["p90"])
    matches = label_plateaus(found, caches)
    own = lat.get("by_invocation") or []
    if len(own) > 1:
        per_curve = [label_plateaus(plateaus(c["bytes"], c["median"], c["p10"], c["p90"]), caches) for c in own]
        for k, mt in enumerate(matches):
            mt["invocation_edges"] = [curve[k]["edge"] for curve in per_curve]
    return found, matches


def rise_bracket(mt):
    """(low, high, agree) where the latency rises after a level (a label_plateaus match with an
    edge): the union of the invocations' brackets (``invocation_edges``) and the median curve's,
    and whether every invocation put the rise in the same bracket (one invocation: it does)."""
    edges = mt.get("invocation_edges") or [mt["edge"]]
    found = [tuple(e) for e in edges if e] + [tuple(mt["edge"])]
    agree = all(edges) and len({tuple(e) for e in edges}) == 1
    return min(e[0] for e in found), max(e[1] for e in found), agree


def bandwidth_points(data, caches):
    """{'L1': index, 'memory': index} into the bandwidth curve: the largest size within half the
    L1d, and the largest size measured if it is at least twice the last-level cache; the two
    points the ranges, the model and the seed are compared at."""
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
