"""`timekit plan PILOT... --effect 2%`: how many invocations and runs a comparison needs (analysis/cli.py lists it)."""

from __future__ import annotations

import argparse
import json
import textwrap
from dataclasses import asdict
from pathlib import Path

from analysis.core.argtypes import duration, probability
from analysis.tools.plan.args import effect_size


def add_parser(commands):
    paragraphs = (
        "From a pilot with 2+ benchexec invocations per condition (a timekit ab directory, a sweep with --reruns, "
        "or directories of result files, each PILOT one condition), per row (run definition, input, column): the "
        "variance between and within invocations, what an invocation and a run cost here (BenchExec's timestamps), "
        "and the cheapest design, M invocations a side of n runs each, with which compare's rerun rule calls a "
        "slowdown of --effect 'slower' with --power (Kalibera & Jones's optimal n; M from the t-test's power, "
        "checked by simulating compare's rule). With --budget: the smallest slowdown that budget can show.",
        "The plan is for the family compare will form: all rows of --column (default cputime and walltime), "
        "Holm-corrected, so each row is planned at alpha / rows (a lower bound on Holm's power).",
        "A paired A/B directory (timekit ab under the blocks or duet design) is planned by its own rule: M "
        "invocations, from the sd of an invocation's log ratio (docs/designs.md).",
    )
    plan = commands.add_parser(
        "plan", help="how many invocations and runs a comparison needs, from a pilot",
        description="\n\n".join(textwrap.fill(p, 78, break_on_hyphens=False) for p in paragraphs),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    plan.add_argument("pilots", nargs="+", type=Path, metavar="PILOT", help="A/B directory, sweep, or result directory")
    plan.add_argument("--effect", type=effect_size, default=0.05, help="slowdown to detect, e.g. 2%% or 0.02 (default 5%%)")
    plan.add_argument("--power", type=probability, default=0.9, help="share of such slowdowns to call 'slower' (default 0.9)")
    plan.add_argument("--alpha", type=probability, default=0.05, help="compare's significance level (default 0.05)")
    plan.add_argument("--threshold", type=probability, default=0.02, help="compare's noise threshold (default 0.02)")
    plan.add_argument("--column", action="append", dest="columns",
                      help="column compare will judge (repeatable; default: cputime and walltime, as compare and ab)")
    plan.add_argument("--budget", type=duration, help="time for both sides, e.g. 30m: the smallest detectable slowdown instead")
    plan.add_argument("--format", choices=["text", "json"], default="text")


def plan(paths, columns, effect, power, alpha, threshold, budget=None):
    """The plan as a dict (what --format json prints)."""
    from analysis.tools.calibrate import family
    from analysis.tools.plan import design, pilot

    rows, costs = pilot.load(paths, columns)
    spread = [r for r in rows if r.cv_between + r.cv_within > 0]
    k = max(1, len(spread))
    row_alpha = alpha / k
    run_seconds = costs.run_seconds()
    out = {"effect": effect, "power": power, "alpha": alpha, "threshold": threshold, "budget_seconds": budget,
           "family": {"rows": [r.label for r in spread], "size": k, "row_alpha": row_alpha,
                      "text": family.describe([r.label for r in spread], columns, alpha)},
           "costs": {"invocation_seconds": costs.invocation, "run_seconds": run_seconds,
                     "per_run": {f"{g[0]} / {g[1]}": s for g, s in costs.per_run.items()},
                     "invocations_timed": costs.invocations, "process_time_from_manifest": costs.outside},
           "rows": [], "unit": rows[0].unit if rows else "input"}
    if out["unit"] != "input":
        out["unit_text"] = (
            "Rows are task sets (a one-run-per-task definition rerun: compare's task-set rows): a row's rerun mean is an "
            "invocation's geometric mean over the set's tasks valid in every invocation, its CV between invocations "
            "holds the tasks' noise too (CV within 0), and a run is one pass over the definition's tasks.")
    for row in rows:
        entry = {"row": row.label, "cv_between": row.cv_between, "cv_within": row.cv_within, "pilot_invocations": row.invocations,
                 "pilot_runs": row.runs, "mean": row.mean}
        out["rows"].append(entry)
        if row not in spread:
            entry.update(reruns=design.MIN_RERUNS, runs=design.MIN_RUNS, power=1.0, minutes=0.0,
                         note="no spread in the pilot: every change is seen; not in the family")
            continue
        if budget is not None:
            found, d = design.detectable(row, budget, row_alpha, power, threshold, costs.invocation, run_seconds)
            entry.update(_design(d), detectable_effect=found)
            if d is None:
                entry["note"] = f"{budget / 60:g} min do not buy {design.MIN_RERUNS} invocations a side"
            continue
        best, at_pilot, kj = design.cheapest(row, effect, row_alpha, power, threshold, costs.invocation, run_seconds)
        alone = design.design_at(row, best.runs if best else row.runs, effect, alpha, power, threshold, costs.invocation,
                                 run_seconds)
        entry.update(_design(best), kj_runs=kj, at_pilot_runs=_design(at_pilot), family_of_one=_design(alone))
        if best is None:
            entry["note"] = (f"a {100 * effect:g} % slowdown is not beyond compare's threshold ({100 * threshold:g} %): "
                             "at most half of them are called 'slower' at any M; lower --threshold" if effect <= threshold else
                             f"not reachable within {design.MAX_RERUNS} invocations a side")
    if budget is None:
        planned = [(entry, row) for entry, row in zip(out["rows"], rows) if row in spread and entry["reruns"]]
        out["every_row"] = _every_row(planned, effect, row_alpha, power, threshold, costs)
    return out


def _design(d):
    if d is None:
        return {"reruns": None, "runs": None, "power": None, "minutes": None}
    values = asdict(d)
    values["minutes"] = d.minutes
    return values


def _every_row(planned, effect, alpha, power, threshold, costs):
    """One design for the whole definition: the n of the costliest row, M the largest any row needs at it."""
    from analysis.tools.plan import design

    if not planned:
        return None
    n = max(planned, key=lambda er: er[0]["seconds"])[0]["runs"]
    designs = [design.design_at(r, n, effect, alpha, power, threshold, costs.invocation, costs.run_seconds()) for _, r in planned]
    if not all(designs):
        return None
    m = max(d.reruns for d in designs)
    driven_by = max(zip(designs, planned), key=lambda dp: dp[0].reruns)[1][1].label
    return {"reruns": m, "runs": n, "minutes": 2 * m * (costs.invocation + n * costs.run_seconds()) / 60, "driven_by": driven_by}


def _pct(x, digits=2):
    return "–" if x is None else f"{100 * x:.{digits}f} %"


def _minutes(x):
    return "–" if x is None else f"{x:.1f}"


def render(result):
    c = result["costs"]
    lines = [
        (f"Plan: {'the smallest slowdown' if result['budget_seconds'] else 'a ' + _pct(result['effect'], 1) + ' slowdown'} "
         f"called 'slower' with {100 * result['power']:.0f} % power by compare's rerun rule (Welch t on rerun means, "
         f"alpha {result['alpha']:g}, threshold {100 * result['threshold']:g} %)"
         + (f" within {result['budget_seconds'] / 60:g} min for both sides." if result["budget_seconds"] else ".")),
        result.get("unit_text", "") + (" " if result.get("unit_text") else "") +
        result["family"]["text"] + f" Planned at alpha {result['family']['row_alpha']:.3g} per row: a lower bound on Holm's power.",
        (f"Costs here ({c['invocations_timed']} invocations, BenchExec's timestamps"
         f"{' and the manifest' if c['process_time_from_manifest'] else ''}): {c['invocation_seconds']:.2f} s per invocation "
         f"besides its runs, {c['run_seconds']:.3f} s per run of every input ("
         + ", ".join(f"{g} {s:.3f} s" for g, s in c["per_run"].items()) + ")."),
        "",
    ]
    if result["budget_seconds"]:
        header = ["row", "CV between", "CV within", "n runs", "M a side", "smallest slowdown", "power (sim.)", "minutes"]
        table = [[e["row"], _pct(e["cv_between"]), _pct(e["cv_within"]), str(e["runs"] or "–"), str(e["reruns"] or "–"),
                  _pct(e.get("detectable_effect"), 1), _pct(e["power"], 0), _minutes(e["minutes"])] for e in result["rows"]]
    else:
        header = ["row", "CV between", "CV within", "n runs (K&J n*)", "M a side", "power: sim. / t-test", "95 % CI ±",
                  "minutes", "at the pilot's n: M, minutes", "family of one: M"]
        table = []
        for e in result["rows"]:
            p, one = e.get("at_pilot_runs") or {}, e.get("family_of_one") or {}
            table.append([e["row"], _pct(e["cv_between"]), _pct(e["cv_within"]),
                          f"{e['runs'] or '–'}" + (f" ({e['kj_runs']:.1f})" if "kj_runs" in e else ""),
                          str(e["reruns"] or "–"),
                          f"{_pct(e['power'], 0)} / {_pct(e.get('power_analytic'), 0)}" if e.get("power_analytic") else "–",
                          _pct(e.get("half_width"), 1), _minutes(e["minutes"]),
                          f"n = {e['pilot_runs']}: {p.get('reruns') or '–'}, {_minutes(p.get('minutes'))}" if p else "–",
                          str(one.get("reruns") or "–")])
    lines.append(_table(header, table))
    notes = [f"{e['row']}: {e['note']}." for e in result["rows"] if e.get("note")]
    if notes:
        lines += [""] + notes
    every = result.get("every_row")
    if every:
        lines += ["", f"To decide every row in one design: M = {every['reruns']} invocations a side of n = {every['runs']} runs, "
                      f"{every['minutes']:.1f} min here (timekit ab --reruns {every['reruns']}, {every['runs']} runs of each input in the "
                      "definitions)" + (f"; the largest M is {every['driven_by']}'s: compare only the columns you gate on "
                                        "(--column)." if result["family"]["size"] > 1 else ".")]
    lines += ["", ("Method: variance components from a one-way random-effects ANOVA per row, pooled over conditions; "
                   "n* = sqrt(c_invocation CV_within^2 / (c_run CV_between^2)) (Kalibera & Jones 2013), both integer neighbours "
                   "and the pilot's n priced; M from statsmodels' TTestIndPower (two-sample t on rerun means), then "
                   "compare's rule simulated (Welch t, lognormal rerun levels, the threshold; 4000 pairs) and M raised "
                   "until it reaches the power; CI half-width t(2M-2) x CV x sqrt(2/M); minutes: both sides, M (c_invocation "
                   "+ n c_run) each.")]
    return "\n".join(lines)


def _table(header, rows):
    table = [header] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in table)


def run(args):
    from analysis.tools.calibrate import family  # numpy, scipy: once the arguments are good
    from analysis.products.plan import paired_plan

    if len(args.pilots) == 1 and paired_plan.holds_paired(args.pilots[0]):
        result = paired_plan.plan(args.pilots[0], args.columns, args.effect, args.power, args.alpha, args.budget)
        print(json.dumps(result, indent=2) if args.format == "json" else paired_plan.render(result))
        return 0
    columns = tuple(args.columns or family.DEFAULT_COLUMNS)
    result = plan(args.pilots, columns, args.effect, args.power, args.alpha, args.threshold, args.budget)
    print(json.dumps(result, indent=2) if args.format == "json" else render(result))
    return 0
