"""
The cores ordered fastest to slowest, and how far apart the extremes are: what pinning.py saves
and pins a command by (the paper's golden-suite idea), and what the report's ranking table shows.
"""

from __future__ import annotations

import datetime
import platform

import numpy as np

from analysis.core import stats
from analysis.experiments.core_heterogeneity.samples import Samples
from analysis.experiments.core_heterogeneity.similarity import ALPHA
from analysis.machine.kernel import read_boot_time


def slowest_vs_fastest(groups):
    """(fastest core, slowest core, Ratio of their means slow/fast with a bootstrap CI) by mean."""
    means = {c: float(np.mean(v)) for c, v in groups.items() if len(v)}
    if len(means) < 2:
        return None
    fast, slow = min(means, key=means.get), max(means, key=means.get)
    return fast, slow, stats.ratio_of_means(groups[fast], groups[slow])


LIVE = object()  # read from the machine running this: right for `cores rank`, wrong for a report of a recorded sweep


def rank(samples, alpha=ALPHA, *, sources=(), measured_from=None, boot_time=LIVE, host=LIVE):
    """Cores ordered fastest to slowest (by mean) per workload, with which adjacent differences
    are significant: Welch t (two-sided) on each adjacent pair, Holm over the k-1 pairs of a
    workload, alpha as given; the ratio of means with a bootstrap CI says how much.

    `samples` is a Samples or {workload: {core: values in seconds}}. The result is plain data for
    JSON, stamped with the date, host and the machine's boot time (pin_command refuses rankings
    older than the boot); a report passes the host and boot time its sweep recorded.
    """
    groups = samples.groups() if isinstance(samples, Samples) else samples
    now = datetime.datetime.now().astimezone()
    ranking = {
        "kind": "timekit core ranking",
        "created": now.isoformat(timespec="seconds"),
        "created_epoch": now.timestamp(),
        "boot_time": read_boot_time() if boot_time is LIVE else boot_time and int(boot_time),
        "measured_from": measured_from,
        "host": platform.node() if host is LIVE else host,
        "alpha": alpha,
        "test": f"Welch t (two-sided) on adjacent cores of the order by mean; Holm over the k-1 adjacent pairs; alpha {alpha}",
        "sources": [str(s) for s in sources],
        "workloads": {workload: _rank_workload(by_core, alpha) for workload, by_core in groups.items()},
    }
    present = list(ranking["workloads"])
    ranking["pin_workload"] = "cachestress" if "cachestress" in present else (present[0] if present else None)
    return ranking


def _rank_workload(by_core, alpha):
    """The order of one workload's cores, each adjacent pair tested, and slowest against fastest."""
    by_core = {int(c): np.asarray(v, dtype=float) for c, v in by_core.items() if len(v)}
    summaries = {c: stats.summarize(v) for c, v in by_core.items()}
    order = sorted(by_core, key=lambda c: (summaries[c].mean, c))
    raw = []
    for faster, slower in zip(order, order[1:]):
        welch = stats.two_sample_tests(by_core[faster], by_core[slower], str(faster), str(slower), alpha,
                                       tests=(stats.WELCH,))[0]
        raw.append((faster, slower, welch))
    adjusted = stats.adjust([w for *_, w in raw])
    adjacent = []
    for (faster, slower, _), welch in zip(raw, adjusted):
        ratio = stats.ratio_of_means(by_core[faster], by_core[slower])
        adjacent.append({"faster": faster, "slower": slower, "n_faster": welch.n_a, "n_slower": welch.n_b,
                         "ratio": ratio.ratio, "ci_low": ratio.ci_low, "ci_high": ratio.ci_high,
                         "p": welch.p, "p_adjusted": welch.p_adjusted, "significant": welch.significant})
    spread = slowest_vs_fastest(by_core)
    return {
        "order": order,
        "cores": [{"core": c, **summaries[c].as_dict()} for c in order],
        "adjacent": adjacent,
        "slowest_vs_fastest": None if spread is None else {"fastest": spread[0], "slowest": spread[1],
                                                           **spread[2].as_dict()},
    }
