"""
Calibration of the paired designs (blocks, duet) on real invocations, by resampling.

From a paired A/B directory of K invocations of A against A (and optionally one against a slower
B), each invocation gives every row one log ratio; draws of M invocations give the fixed design's
A/A rate and power, random orders those of `--until-decided` (docs/calibration.md, "Paired
designs"). Target: A/A wrong at most alpha + 1.5 points.
"""

from __future__ import annotations


import numpy as np

from analysis.core import stats
from analysis.tools.calibrate import within as calibration
from analysis.tools.calibrate.between import BetweenError
from analysis.tools.plan import sequential

SIZES = (3, 5, 7, 10)
DRAWS = 2000
TRIALS = 400


def holds_paired(path):
    from analysis.products.plan import paired_plan

    return paired_plan.holds_paired(path)


def log_ratios(directory, columns):
    """(row labels, design, invocations x rows array of log ratios) of a paired A/B directory."""
    from analysis.products.plan import paired_plan

    design, series, _ = paired_plan.series_of(directory, columns)
    sizes = {logs.size for _, logs in series}
    if not series or min(sizes) < 4:
        raise BetweenError(f"{directory}: {min(sizes, default=0)} invocations with timed pairs; calibration needs 4 or more")
    k = min(sizes)
    return [label for label, _ in series], design, np.column_stack([logs[:k] for _, logs in series])


def _fixed_verdicts(x, alpha, threshold):
    """Verdicts (draws x rows: 'slower', 'faster', '~') of compare's paired rule for draws x M x rows."""
    m = x.shape[1]
    p = sequential._one_sample_p(np.moveaxis(x, 1, 2).reshape(-1, m)).reshape(x.shape[0], x.shape[2])
    ratio = np.exp(x.mean(axis=1))
    out = np.full(p.shape, "~", dtype=object)
    for d in range(p.shape[0]):
        for r, q in enumerate(stats.holm(p[d])):
            out[d, r] = stats.verdict(q < alpha, ratio[d, r], threshold)
    return out


def fixed(logs, alpha, threshold, draws=DRAWS, seed=calibration.SEED):
    """{M: verdicts (draws x rows)} of the fixed design at M = SIZES (up to the invocations)."""
    rng = np.random.default_rng([seed, 50])
    out = {}
    for m in [s for s in SIZES if s <= logs.shape[0]]:
        picks = np.array([rng.choice(logs.shape[0], m, replace=False) for _ in range(draws)])
        out[m] = _fixed_verdicts(logs[picks], alpha, threshold)
    return out


def until_decided(logs, alpha, threshold, trials=TRIALS, seed=calibration.SEED):
    """(verdicts trials x rows, M decided trials x rows) of the paired sequential rule."""
    rng = np.random.default_rng([seed, 51])
    k, rows = logs.shape
    verdicts = np.full((trials, rows), "", dtype=object)
    at = np.zeros((trials, rows))
    for t in range(trials):
        order = rng.permutation(k)
        for r in range(rows):
            d = sequential.run_paired_sequence(logs[order, r], alpha / rows, threshold, k, same_alpha=alpha)
            verdicts[t, r], at[t, r] = (d.verdict if d.decided else ""), d.reruns
    return verdicts, at


def _wrong(verdicts):
    return int(np.isin(verdicts, ("slower", "faster")).any(axis=1).sum())


def check(aa_dir, slower_dir=None, alpha=calibration.ALPHA, threshold=calibration.THRESHOLD, columns=None,
          draws=DRAWS, trials=TRIALS):
    labels, design, aa = log_ratios(aa_dir, columns)
    result = {"design": design, "alpha": alpha, "threshold": threshold, "rows": labels, "invocations": int(aa.shape[0]),
              "draws": draws, "trials": trials, "fixed": {}, "until_decided": {}}
    level = fixed(aa, alpha, 0.0, draws)   # the test alone: its A/A rate should be alpha
    for m, v in fixed(aa, alpha, threshold, draws).items():
        result["fixed"][m] = {"aa_wrong": calibration._rate(_wrong(v), draws),
                              "aa_significant": calibration._rate(_wrong(level[m]), draws)}
    v, at = until_decided(aa, alpha, threshold, trials)
    result["until_decided"] = {"aa_wrong": calibration._rate(_wrong(v), trials), "aa_mean_stop": float(at.max(axis=1).mean()),
                               "aa_decided_same": calibration._rate(int((v == "~").all(axis=1).sum()), trials)}
    result["sd_between"] = [float(s) for s in aa.std(axis=0, ddof=1)]
    if slower_dir is not None:
        slabels, _, slow = log_ratios(slower_dir, columns)
        if slabels != labels:
            raise BetweenError(f"{slower_dir}: its rows ({', '.join(slabels)}) are not those of {aa_dir}")
        result["change"] = [float(np.exp(c) - 1) for c in slow.mean(axis=0)]
        for m, v in fixed(slow, alpha, threshold, draws).items():
            result["fixed"][m]["power"] = [calibration._rate(int((v[:, r] == "slower").sum()), draws) for r in range(len(labels))]
        v, at = until_decided(slow, alpha, threshold, trials)
        result["until_decided"]["power"] = [calibration._rate(int((v[:, r] == "slower").sum()), trials) for r in range(len(labels))]
        result["until_decided"]["mean_reruns"] = [float(at[:, r].mean()) for r in range(len(labels))]
    for entry in [*result["fixed"].values(), result["until_decided"]]:
        entry["within_tolerance"] = entry["aa_wrong"]["rate"] <= alpha + calibration.TOLERANCE
    for entry in result["fixed"].values():
        entry["test_within_tolerance"] = abs(entry["aa_significant"]["rate"] - alpha) <= calibration.TOLERANCE
    return result


def _pct(rate):
    return f"{100 * rate['rate']:.1f} % ({100 * rate['ci_low']:.1f} … {100 * rate['ci_high']:.1f})"


def render(result):
    lines = [f"Paired design '{result['design']}' on real invocations: {result['invocations']} A/A invocations, rows "
             f"{', '.join(result['rows'])}; alpha {result['alpha']:g} (Holm over the rows), threshold "
             f"{100 * result['threshold']:g} %; sd of an invocation's log ratio: "
             + ", ".join(f"{100 * s:.2f} %" for s in result["sd_between"]) + "."]
    for m, entry in result["fixed"].items():
        line = (f"  M = {m} (fixed, {result['draws']} draws): A/A wrong {_pct(entry['aa_wrong'])}"
                f" ({'within' if entry['within_tolerance'] else 'ABOVE'} alpha + 1.5 points; the test alone, without the "
                f"threshold: {_pct(entry['aa_significant'])})")
        if "power" in entry:
            line += "; power " + ", ".join(f"{label}: {_pct(p)}" for label, p in zip(result["rows"], entry["power"]))
        lines.append(line)
    u = result["until_decided"]
    line = (f"  --until-decided ({result['trials']} orders, M_max = {result['invocations']}): A/A wrong {_pct(u['aa_wrong'])} "
            f"({'within' if u['within_tolerance'] else 'ABOVE'} alpha + 1.5 points), every row decided '~' in "
            f"{_pct(u['aa_decided_same'])}, stopped at M = {u['aa_mean_stop']:.1f} on average")
    if "power" in u:
        line += "; power " + ", ".join(f"{label}: {_pct(p)} at M = {m:.1f}"
                                       for label, p, m in zip(result["rows"], u["power"], u["mean_reruns"]))
    lines.append(line)
    if "change" in result:
        lines.append("  the slower side's measured change: " + ", ".join(f"{label} {100 * c:+.2f} %"
                                                                          for label, c in zip(result["rows"], result["change"])))
    return "\n".join(lines)
