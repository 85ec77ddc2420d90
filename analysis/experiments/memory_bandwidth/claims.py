"""
The seed's claims (seed 004, experiment B) with this machine's verdicts, one function per claim:
remote memory is slower than the firmware says, each node has one favoured neighbour, and local
memory is the fastest.
"""

from __future__ import annotations

import numpy as np
import scipy.stats

from analysis.core import verdicts
from analysis.core.report import Claim, Finding
from analysis.core.verdicts import Estimate

SEED_REMOTE_FIRMWARE = 16
SEED_REMOTE_DERIVED = 22
SLOWER_MARGIN = 0.10  # derived remote distances count as 'beyond the firmware's' 10 % above it

REMOTE_CLAIM = Claim(f"Remote memory is slower than the firmware's distance says: about {SEED_REMOTE_DERIVED} from "
                     f"bandwidth where the firmware says {SEED_REMOTE_FIRMWARE}", "seed 004, B")
NEIGHBOUR_CLAIM = Claim("Each node reaches one other node faster than the rest", "seed 004, B")


def findings(nodes, triad, derived, firmware):
    """Every claim's finding; on one node only the two remote claims, not testable."""
    if len(nodes) == 1:
        why = f"one NUMA node ({nodes[0]}): there is no remote memory on this machine; the 1 × 1 matrix holds local access only"
        return untestable(why)
    return [remote_slower_than_firmware(derived, firmware), one_favoured_neighbour(nodes, triad),
            local_is_fastest(triad)]


def untestable(why):
    """Both remote claims, not testable for the same reason."""
    return [remote_untestable(why), Finding(NEIGHBOUR_CLAIM, "not testable here", why,
                                            id="memory-bandwidth/one-favoured-neighbour")]


def remote_untestable(why):
    return Finding(REMOTE_CLAIM, "not testable here", why, id="memory-bandwidth/remote-slower-than-firmware")


def remote_slower_than_firmware(derived, firmware):
    off = ~np.eye(len(derived), dtype=bool)
    remote_derived, remote_firmware = derived[off], firmware[off]
    keep = np.isfinite(remote_derived) & np.isfinite(remote_firmware)
    if not keep.any():
        return remote_untestable("no remote pair has both a bandwidth and a firmware distance")
    ratio = remote_derived[keep] / remote_firmware[keep]
    beyond = ratio > 1 + SLOWER_MARGIN
    mean_ratio = float(np.mean(ratio))
    low, high = (scipy.stats.t.interval(0.95, ratio.size - 1, loc=mean_ratio, scale=scipy.stats.sem(ratio))
                 if ratio.size > 1 and np.ptp(ratio) > 0 else (mean_ratio, mean_ratio))
    judged = verdicts.at_least(Estimate(mean_ratio, float(low), float(high), unit="pooled" if ratio.size < 2 else "runs",
                                        n=int(ratio.size), method="t interval over the remote node pairs of one sweep"),
                               1 + SLOWER_MARGIN)
    return Finding(
        REMOTE_CLAIM,
        judged.verdict, id="memory-bandwidth/remote-slower-than-firmware",
        parts=[judged.as_part("derived / firmware distance", "remote distance derived / firmware")],
        evidence=f"{int(keep.sum())} remote pairs: derived distance {np.nanmin(remote_derived):.1f} – {np.nanmax(remote_derived):.1f} "
        f"(mean {np.mean(remote_derived[keep]):.1f}) against firmware {np.min(remote_firmware[keep]):g} – "
        f"{np.max(remote_firmware[keep]):g}; {int(beyond.sum())} pairs more than {SLOWER_MARGIN:.0%} beyond the firmware's "
        f"value; mean ratio derived/firmware: {judged.evidence}",
    )


def one_favoured_neighbour(nodes, triad):
    n = len(nodes)
    off = ~np.eye(n, dtype=bool)
    favoured = []
    for i, c in enumerate(nodes):
        remote = [(triad[i, j], nodes[j]) for j in range(n) if j != i and np.isfinite(triad[i, j])]
        if len(remote) < 2:
            continue
        remote.sort(reverse=True)
        if remote[0][0] > remote[1][0] * (1 + SLOWER_MARGIN):
            favoured.append((c, remote[0][1], remote[0][0] / remote[1][0]))
    testable = sum(1 for i in range(n) if np.isfinite(triad[i, off[i]]).sum() >= 2)
    return Finding(
        NEIGHBOUR_CLAIM, id="memory-bandwidth/one-favoured-neighbour",
        why=f"{len(favoured)} of {testable} nodes have one remote node over {SLOWER_MARGIN:.0%} faster than the next"
        if testable else "needs 3 or more nodes",
        verdict=("confirmed" if len(favoured) == testable else "refuted") if testable else "not testable here",
        evidence=(f"{len(favoured)} of {testable} CPU nodes have a remote node with more than {SLOWER_MARGIN:.0%} more triad bandwidth "
         "than the next: " + (", ".join(f"{c} → {m} (×{r:.2f})" for c, m, r in favoured) or "none")
         + ". The firmware's table gives every remote node the same distance." if testable else "needs 3 or more nodes"),
    )


def local_is_fastest(triad):
    n = len(triad)
    local_best = [bool(np.isfinite(triad[i, i]) and np.all(triad[i, i] >= triad[i, np.isfinite(triad[i])])) for i in range(n)]
    return Finding(
        id="memory-bandwidth/local-is-fastest",
        claim=Claim("Local memory has the highest bandwidth for every CPU node",
                    "seed 004, B: 'the distance from each node to itself'"),
        verdict="confirmed" if all(local_best) else "refuted",
        evidence=f"{sum(local_best)} of {n} CPU nodes reach their own memory fastest (median triad).",
    )
