"""
The budget of `timekit run --until-decided` is wall time, the looks included.

A 15-minute run showed that counting only the benchexec invocations' seconds overruns: judging a
look (building the report's findings: tables, intervals, figures) takes seconds too, and so does
the runner's work around the invocations. Both are counted here from the sweep's record
(`judge_seconds`, `overhead_seconds`, measured with the loop's clock), and both are part of the
forecast of what one more round costs.
"""

from __future__ import annotations

import math

MAX_RERUNS = 30  # never more reruns than this, whatever the budget (share_spending.CAP simulates 40)


def invocation_seconds(sweep):
    """The finished benchexec invocations' seconds (sweep.json's step seconds)."""
    return float(sum(s.seconds for s in sweep.steps if s.status == "done"))


def spent(sweep, record):
    """Wall time spent so far: invocations, the runner's work around them, and the looks."""
    return invocation_seconds(sweep) + record.get("overhead_seconds", 0.0) + record.get("judge_seconds", 0.0)


def share(sweep, record):
    """The share of the budget spent: the time scale of the alpha spending (share_spending)."""
    return round(min(1.0, spent(sweep, record) / record["budget_seconds"]), 4)


def round_seconds(sweep, record):
    """What one more round costs: a rerun of every step at the mean time of the invocations done
    so far, the runner's mean work per round, and the look after it at the looks' mean time."""
    done = [s for s in sweep.steps if s.status == "done"]
    per_round = len(sweep.steps) / max(sweep.reruns, 1)
    invocations = per_round * invocation_seconds(sweep) / max(len(done), 1)
    looks = record.get("looks", [])
    judged = [look["judge_seconds"] for look in looks if "judge_seconds" in look]
    return (invocations + record.get("overhead_seconds", 0.0) / max(record.get("rounds", 0), 1)
            + (sum(judged) / len(judged) if judged else 0.0))


def left(sweep, record):
    return record["budget_seconds"] - spent(sweep, record)


def fits(sweep, record):
    """Whether the budget fits one more round and its look."""
    return sweep.reruns < MAX_RERUNS and round_seconds(sweep, record) <= left(sweep, record)


def allowed_reruns(sweep, record):
    """The M the rest of the budget reaches at the current pace (at most MAX_RERUNS)."""
    more = math.floor(max(0.0, left(sweep, record)) / max(round_seconds(sweep, record), 1e-9))
    return int(min(MAX_RERUNS, sweep.reruns + more))
