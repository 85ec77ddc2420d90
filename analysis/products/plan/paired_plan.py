"""
`timekit plan DIR` where DIR is a paired A/B run (blocks or duet of commands, blocks of two
definitions): how many invocations its design needs.

An invocation gives each row one log ratio, so M is the smallest number of invocations at which
the one-sample t test at alpha / rows calls a slowdown of --effect with --power (noncentral t);
with --budget, the smallest slowdown the budget can show (docs/calibration.md, "Planning:
`timekit plan`").
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from analysis.tools.plan.paired_power import MAX_INVOCATIONS, invocations_needed, smallest_effect


def holds_paired(path):
    from analysis.ab import merged
    from analysis.ab import paired

    return any((Path(str(path)) / m).is_file() for m in (paired.MANIFEST, merged.MANIFEST))


def series_of(path, columns):
    """(design, [(row label, log ratios per invocation)], seconds per invocation) of a paired directory."""
    from analysis.ab import merged
    from analysis.ab import paired
    from analysis.ab import observations

    path = Path(path)
    found = paired.tables(path)
    if (path / paired.MANIFEST).is_file():
        run = paired.PairedRun.load(path)
        series = observations.log_series(found, run.rundefinitions, paired.columns_of(columns, run.design))
    else:
        run = merged.BlocksRun.load(path)
        series = observations.definition_log_series(found, run.names, columns or ("cputime", "walltime"), run.chunks)
    done = [s.seconds for s in run.steps if s.status == "done"]
    return run.design, [(label, logs) for label, logs, _ in series], float(np.mean(done)) if done else math.nan


def plan(path, columns, effect, wanted, alpha, budget=None):
    design, series, seconds = series_of(path, columns)
    usable = [(label, logs) for label, logs in series if logs.size >= 2]
    k = max(1, len(usable))
    rows = []
    for label, logs in usable:
        sd = float(logs.std(ddof=1))
        m = invocations_needed(sd, effect, alpha / k, wanted)
        row = {"row": label, "invocations": int(logs.size), "sd_log_ratio": sd, "reruns": m,
               "minutes": m * seconds / 60 if m else math.nan}
        if budget is not None and seconds > 0:
            affordable = int(budget // seconds)
            row["budget_reruns"] = affordable
            row["detectable"] = smallest_effect(affordable, sd, alpha / k, wanted)
        rows.append(row)
    return {"design": design, "effect": effect, "power": wanted, "alpha": alpha, "row_alpha": alpha / k,
            "invocation_seconds": seconds, "budget_seconds": budget, "rows": rows}


def render(result):
    lines = [f"Plan for the {result['design']} design: one log ratio per invocation and row; one-sample t at alpha "
             f"{result['alpha']:g} / {len(result['rows'])} rows = {result['row_alpha']:.3g}, power "
             f"{100 * result['power']:.0f} % against a {100 * result['effect']:g} % slowdown; an invocation took "
             f"{result['invocation_seconds']:.1f} s here."]
    for r in result["rows"]:
        m = r["reruns"]
        need = (f"M = {m} invocations, about {r['minutes']:.1f} min" if m else f"more than {MAX_INVOCATIONS} invocations")
        line = f"  {r['row']}: sd of an invocation's log ratio {100 * r['sd_log_ratio']:.2f} % (over {r['invocations']}): {need}"
        if "detectable" in r:
            line += (f"; the budget buys M = {r['budget_reruns']}, which shows "
                     + (f"{100 * r['detectable']:.2f} %" if math.isfinite(r["detectable"]) else "no slowdown below 100 %"))
        lines.append(line)
    lines.append("  (--until-decided looks after every invocation and stops once decided: "
                 "about as many on average for this power, fewer for a larger change)")
    return "\n".join(lines)
