"""
Calibration of `timekit ab --until-decided` on real invocations, by resampling: a look after every
pair of invocations with the group-sequential rule of analysis.tools.plan.sequential, over the same
Holm family as compare (each row at alpha / k).

A/A rate, power, and the fixed design of the same power, with the same M_max (K/2) in all
(docs/calibration.md, "Decide, then stop: `ab --until-decided`").
"""

from __future__ import annotations

import numpy as np

from analysis.tools.calibrate import between
from analysis.tools.calibrate import within as calibration
from analysis.tools.plan import sequential

TRIALS = 400


def _means(arrays):
    return np.array([a.mean() for a in arrays])


def _trial(base, new, alpha, threshold, max_reruns):
    """Per row (verdict, M decided or max_reruns) for per-row sequences of rerun means."""
    out = []
    for a, b in zip(base, new):
        d = sequential.run_sequence(a, b, alpha, threshold, max_reruns)
        out.append((d.verdict if d.decided else "", d.reruns if d.decided else max_reruns))
    return out


def check(groups, slower, alpha=calibration.ALPHA, threshold=calibration.THRESHOLD, trials=TRIALS, seed=calibration.SEED,
          splits=between.SPLITS):
    rows, slow = between.Rows(groups), between.Rows(slower)
    k = len(rows.keys)
    row_alpha = alpha / k
    max_reruns = rows.invocations // 2
    means = [_means(a) for a in rows.arrays]
    slow_means = [_means(a) for a in slow.arrays]
    rng = np.random.default_rng([seed, 40])
    aa_wrong, aa_stop = 0, []
    for _ in range(trials):
        orders = [o[0] for o in rows.orders(rng, 1)]
        result = _trial([m[o[0::2]] for m, o in zip(means, orders)], [m[o[1::2]] for m, o in zip(means, orders)],
                        row_alpha, threshold, max_reruns)
        aa_wrong += any(v in ("slower", "faster") for v, _ in result)
        aa_stop.append(max(m for _, m in result))
    hits, decided_at = np.zeros((trials, k), dtype=bool), np.zeros((trials, k))
    for t in range(trials):
        a = [m[o[0]] for m, o in zip(means, rows.orders(rng, 1))]
        b = [m[o[0]] for m, o in zip(slow_means, slow.orders(rng, 1))]
        for r, (verdict, m) in enumerate(_trial(a, b, row_alpha, threshold, max_reruns)):
            hits[t, r], decided_at[t, r] = verdict == "slower", m
    fixed = [between.power(rows, slow, m, splits, alpha, threshold, np.random.default_rng([seed, 41, m]))
             for m in range(sequential.START, max_reruns + 1)]
    per_row = []
    for r, label in enumerate(rows.labels):
        power = float(hits[:, r].mean())
        curve = {f["m"]: f["rows"][r]["new"]["slower"]["rate"] for f in fixed}
        same = next((m for m, p in sorted(curve.items()) if p >= power), None)
        per_row.append({"row": label, "power": calibration._rate(hits[:, r].sum(), trials),
                        "mean_reruns": float(decided_at[:, r].mean()), "fixed_power": curve, "fixed_reruns_same_power": same})
    return {"alpha": alpha, "row_alpha": row_alpha, "family_size": k, "threshold": threshold, "max_reruns": max_reruns,
            "trials": trials, "start": sequential.START, "boundaries": sequential.boundaries(row_alpha, max_reruns),
            "aa": {"wrong": calibration._rate(aa_wrong, trials), "mean_stop": float(np.mean(aa_stop)),
                   "within_tolerance": aa_wrong / trials <= alpha + calibration.TOLERANCE},
            "rows": per_row}


def render(result):
    aa = result["aa"]
    lines = [f"--until-decided on real invocations: a look after every pair from M = {result['start']} to M_max = "
             f"{result['max_reruns']}, O'Brien-Fleming-type alpha spending at alpha {result['alpha']:g} / "
             f"{result['family_size']} rows, threshold {100 * result['threshold']:g} %, {result['trials']} resampled trials each.",
             f"A/A: a wrong verdict (slower or faster in any row) in {100 * aa['wrong']['rate']:.1f} % "
             f"({100 * aa['wrong']['ci_low']:.1f} … {100 * aa['wrong']['ci_high']:.1f}) of trials "
             f"({'within' if aa['within_tolerance'] else 'ABOVE'} alpha + 1.5 points); stopped at M = {aa['mean_stop']:.1f} on average."]
    for r in result["rows"]:
        p = r["power"]
        lines.append(f"{r['row']}: 'slower' in {100 * p['rate']:.1f} % ({100 * p['ci_low']:.1f} … {100 * p['ci_high']:.1f}), "
                     f"decided at M = {r['mean_reruns']:.1f} on average; the fixed design reaches that power from M = "
                     f"{r['fixed_reruns_same_power'] or 'beyond ' + str(result['max_reruns'])} (real splits: "
                     + ", ".join(f"M = {m}: {100 * v:.0f} %" for m, v in r["fixed_power"].items()) + ").")
    return "\n".join(lines)
