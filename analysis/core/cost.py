"""
What a verdict cost, and what deciding an inconclusive one would cost on this machine.

The cost is the benchexec invocations, runs and minutes of the result files a finding rests on;
an inconclusive finding's `decide` (the M or n its own interval needs: analysis.core.verdicts,
analysis.core.deciding) is priced at the sweep's measured seconds per invocation and per run, and
a part that no M decides is said so. docs/verdicts.md, "What each verdict cost".
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass

from analysis.core import verdicts



def when(text):
    """Seconds since the epoch of an ISO timestamp (BenchExec's), NaN when absent or unreadable."""
    try:
        return datetime.datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return float("nan")


@dataclass(frozen=True)
class Cost:
    invocations: int
    runs: int
    benchexec_seconds: float   # sum over invocations of BenchExec's span (first result's start to last one's end)
    process_seconds: float     # sum of the whole benchexec processes' times (sweep.json); NaN when not recorded
    reruns: int                # invocations per condition (the sweep's M), 0 when unknown

    @property
    def seconds(self):
        """The wall time it took: the processes' where recorded, else BenchExec's own span."""
        return self.process_seconds if math.isfinite(self.process_seconds) else self.benchexec_seconds

    def per_invocation(self):
        return self.seconds / self.invocations if self.invocations else float("nan")

    def text(self):
        where = ("benchexec processes, sweep.json; BenchExec's own start-to-end "
                 f"{_minutes(self.benchexec_seconds)}" if math.isfinite(self.process_seconds)
                 else "BenchExec's start-to-end times")
        return f"cost: {_count(self.invocations, 'benchexec invocation')}, {_count(self.runs, 'run')}, {_minutes(self.seconds)} ({where})"


def _minutes(seconds):
    return f"{seconds / 60:.1f} min" if math.isfinite(seconds) else "time not recorded"


def of(tables, process_seconds=None, reruns=0):
    """The Cost of these RunTables; `process_seconds` maps a result file's name to its benchexec
    process's seconds (one entry per file of an invocation is enough)."""
    process_seconds = process_seconds or {}
    spans, processes = {}, {}
    for table in tables:
        start, end = when(table.attributes.get("starttime", "")), when(table.attributes.get("endtime", ""))
        low, high = spans.get(table.benchmark, (math.inf, -math.inf))
        spans[table.benchmark] = (min(low, start), max(high, end)) if math.isfinite(start + end) else (low, high)
        if table.path.name in process_seconds:
            processes[table.benchmark] = process_seconds[table.path.name]
    benchexec = sum(high - low for low, high in spans.values() if high >= low)
    recorded = processes and len(processes) == len(spans)
    return Cost(len(spans), int(sum(len(t.tasks) for t in tables)), float(benchexec),
                float(sum(processes.values())) if recorded else float("nan"), reruns)


def decision_plan(finding, cost, experiment=""):
    """What deciding an inconclusive finding would take here, from its `decide` field: reruns
    priced at this sweep's seconds per invocation, runs at its seconds per run, cases and grids
    named as such, and where no number decides it, why; '' when it names nothing."""
    decide = finding.decide or {}
    if {"never", "grid", "cases", "quiet"} & set(decide):  # no number of reruns prices these
        return verdicts.decide_text(decide)
    if not cost.invocations:
        return ""
    refuting = "; a part that would refute it" if decide.get("refuting") else ""
    command = f"timekit run {experiment}" if experiment else "timekit run EXPERIMENT"
    if "reruns" in decide and cost.reruns:
        m, per_invocation = decide["reruns"], cost.per_invocation()
        # the reruns the open parts rest on: fewer than the sweep's where some were set aside (disturbed)
        have = min((p.m for p in finding.parts if p.verdict == "inconclusive" and p.m), default=cost.reruns)
        more = max(0, m - min(have, cost.reruns)) * cost.invocations / cost.reruns
        return (f"to decide it: about M = {m} reruns per condition (the evidence's own variance{refuting}), "
                f"{more:.0f} more benchexec invocations, about {_minutes(more * per_invocation)} here at "
                f"{per_invocation:.0f} s per invocation ({command} --reruns {m}, or --until-decided --budget "
                f"{math.ceil(more * per_invocation / 60) + 1}m)")
    if "runs" in decide:
        n = decide["runs"]
        now = max((p.n for p in finding.parts if p.verdict == "inconclusive" and p.n), default=0)
        factor = n / now if now else float("nan")
        price = (f", about {_minutes(cost.seconds * factor)} here ({factor:.1f} x this sweep's time)"
                 if math.isfinite(factor) else "")
        return (f"to decide it: about n = {n} runs per invocation (the evidence's own variance{refuting}){price}; more "
                f"reruns would also judge the drift: {command} --reruns 3 or more")
    return ""


def _count(k, noun):
    return f"{k} {noun}{'' if k == 1 else 's'}"
