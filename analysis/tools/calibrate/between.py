"""
Calibration between invocations: how often does compare cry wolf when base and new are separate
benchexec invocations of the same thing, and what does it see with M reruns a side?

Whole invocations are split into sides and judged by the old rule (runs pooled) and compare's
rerun rule, over compare's Holm family: A/A, power against a slower variant, the `--until` rule,
and a simulation at the measured CVs (docs/calibration.md, "Between invocations: the rerun as
the unit").
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import scipy.stats

from analysis.core import stats
from analysis.tools.calibrate import family
from analysis.tools.calibrate import within as calibration
from analysis.tools.compare import reruns

SIZES = (3, 5, 7, 10)                  # reruns per side
GRID = (2, 3, 4, 5, 6, 7, 8, 10, 15, 20)  # reruns per side in the simulation
SPLITS = 2000
SEQUENTIAL_TRIALS = 200
SIMULATIONS = 4000
EFFECT = 0.05
TARGET_POWER = 0.9
START = 3                              # reruns before the sequential rule looks at the CI


class BetweenError(calibration.CalibrationError):
    """The invocations cannot be calibrated (one line for the user)."""


def _stats(arrays):
    """Per invocation: counts, means, variances (ddof 1; 0 for one run)."""
    n = np.array([a.size for a in arrays], dtype=float)
    means = np.array([a.mean() for a in arrays])
    var = np.array([a.var(ddof=1) if a.size > 1 else 0.0 for a in arrays])
    return n, means, var


def _pooled(n, means, var, picks):
    """Count, mean and sd of the runs of the invocations picked per row (picks: splits x M)."""
    count = n[picks].sum(axis=1)
    mean = (n[picks] * means[picks]).sum(axis=1) / count
    ss = ((n[picks] - 1) * var[picks] + n[picks] * (means[picks] - mean[:, None]) ** 2).sum(axis=1)
    return count, mean, np.sqrt(ss / (count - 1))


def p_values(base, new, a, b):
    """{rule: (p, ratio)} of one row for rows of picks a (from base) and b (from new); base and new
    are _stats of the row's invocations."""
    (nb, mb, vb), (nn, mn, vn) = base, new
    count_a, mean_a, sd_a = _pooled(nb, mb, vb, a)
    count_b, mean_b, sd_b = _pooled(nn, mn, vn, b)
    old_p = scipy.stats.ttest_ind_from_stats(mean_a, sd_a, count_a, mean_b, sd_b, count_b, equal_var=False).pvalue
    new_p = scipy.stats.ttest_ind(mb[a], mn[b], axis=1, equal_var=False).pvalue
    return {"old": (old_p, mean_b / mean_a), "new": (new_p, mn[b].mean(axis=1) / mb[a].mean(axis=1))}


def _verdicts(p, ratio, alpha, threshold):
    """(significant, verdict not '~', ratio), p and ratio: splits x rows of one Holm family."""
    significant = family.holm_reject(p, alpha)
    return significant, significant & (np.abs(ratio - 1) > threshold), ratio


def judge(base, new, a, b, alpha, threshold):
    """{rule: (significant, verdict not '~', ratio)} of one row alone (a family of one)."""
    return {rule: tuple(x[:, 0] for x in _verdicts(p[:, None], ratio[:, None], alpha, threshold))
            for rule, (p, ratio) in p_values(base, new, a, b).items()}


def judge_family(base, new, a, b, alpha, threshold):
    """compare's rule over the whole family: base and new are the rows' _stats, a and b their picks
    (splits x M each); {rule: (significant, changed, ratio)}, each splits x rows, Holm over the rows."""
    per_row = [p_values(sb, sn, pa, pb) for sb, sn, pa, pb in zip(base, new, a, b)]
    return {rule: _verdicts(np.column_stack([r[rule][0] for r in per_row]), np.column_stack([r[rule][1] for r in per_row]),
                            alpha, threshold) for rule in ("old", "new")}


class Rows:
    """The family's rows (every column of every group), with each row's invocations as arrays and
    their _stats. Groups measured in the same invocations share a split: a split takes whole
    invocations, with all their columns and inputs, as compare would get them."""

    def __init__(self, groups):
        self.groups = groups
        self.columns = list(groups[0].columns)
        self.keys = [(g, column) for column in self.columns for g in range(len(groups))]  # compare's row order
        self.labels = [groups[g].label(column) for g, column in self.keys]
        self.arrays = [groups[g].columns[column] for g, column in self.keys]
        self.stats = [_stats(arrays) for arrays in self.arrays]

    def orders(self, rng, splits):
        """Per row a (splits x K) array of random orders of its invocations, shared by the rows of
        groups measured in the same invocations."""
        shared, per_group = {}, []
        for g in self.groups:
            key = tuple(g.invocations)
            if key not in shared:
                shared[key] = rng.permuted(np.tile(np.arange(len(key)), (splits, 1)), axis=1)
            per_group.append(shared[key])
        return [per_group[g] for g, _ in self.keys]

    @property
    def invocations(self):
        return min(len(g.invocations) for g in self.groups)


def _rates(judged, trials, slower=False):
    """Per row {rule: {significant, changed or slower}} with binomial CIs."""
    rows = len(next(iter(judged.values()))[0][0])
    return [{rule: {"significant": calibration._rate(sig[:, r].sum(), trials),
                    ("slower" if slower else "changed"):
                        calibration._rate((changed[:, r] & (ratio[:, r] > 1) if slower else changed[:, r]).sum(), trials)}
             for rule, (sig, changed, ratio) in judged.items()} for r in range(rows)]


def distinct_splits(k, m):
    """How many different A/A splits of k invocations into two sides of m exist (sides unordered:
    swapping them gives the same verdict). 10 invocations into 5 + 5 have 126, so 2000 draws
    repeat them: the rate's resolution is 1/126, not 1/2000."""
    return math.comb(k, m) * math.comb(k - m, m) // 2


def sizes(k, wanted=None):
    """The M of SIZES that k invocations can split into two sides of; at least k // 2 (2 for 4 or 5),
    so that no table is left with a header and no row."""
    return [m for m in (wanted or SIZES) if 2 * m <= k] or [k // 2]


def aa(rows, m, splits, alpha, threshold, rng):
    """A/A over random disjoint splits into two sides of m invocations: per row, and the family's
    rate of splits with a verdict in any row."""
    orders = rows.orders(rng, splits)
    judged = judge_family(rows.stats, rows.stats, [o[:, :m] for o in orders], [o[:, m:2 * m] for o in orders], alpha, threshold)
    per_row = _rates(judged, splits)
    for row in per_row:  # with nothing changed, Holm tests a row at alpha / k
        row["within_tolerance"] = bool(abs(row["new"]["significant"]["rate"] - alpha / len(per_row)) <= calibration.TOLERANCE)
    any_row = {rule: calibration._rate(changed.any(axis=1).sum(), splits) for rule, (_, changed, _) in judged.items()}
    any_row["within_tolerance"] = bool(abs(any_row["new"]["rate"] - alpha) <= calibration.TOLERANCE)
    return {"m": m, "splits": splits, "distinct": distinct_splits(rows.invocations, m), "rows": per_row, "any_row": any_row}


def windows(rows, m, alpha, threshold):
    """Contiguous windows in date order: invocations i..i+m-1 against the next m (counts per row)."""
    starts = np.arange(rows.invocations - 2 * m + 1)
    if not starts.size:
        return None
    a, b = starts[:, None] + np.arange(m), starts[:, None] + m + np.arange(m)
    judged = judge_family(rows.stats, rows.stats, [a] * len(rows.keys), [b] * len(rows.keys), alpha, threshold)
    return {"m": m, "windows": int(starts.size),
            "rows": [{**{rule: int(changed[:, r].sum()) for rule, (_, changed, _) in judged.items()},
                      **{f"{rule}_significant": int(sig[:, r].sum()) for rule, (sig, _, _) in judged.items()}}
                     for r in range(len(rows.keys))]}


def power(rows, slower, m, splits, alpha, threshold, rng):
    """m random base invocations against m random slower ones, per row 'slower' under the family."""
    a, b = rows.orders(rng, splits), slower.orders(rng, splits)
    judged = judge_family(rows.stats, slower.stats, [o[:, :m] for o in a], [o[:, :m] for o in b], alpha, threshold)
    return {"m": m, "splits": splits, "rows": _rates(judged, splits, slower=True)}


def _sequential_trial(a, b, until, alpha, threshold, seed):
    """One trial of --until on per-row invocation lists a and b: pairs added from START until every
    row's CI half-width is below `until` or a side runs out; (verdicts per row, reruns used)."""
    top = min(min(len(x) for x in a), min(len(x) for x in b))
    for m in range(min(START, top), top + 1):
        compared = [reruns.compare_reruns(x[:m], y[:m], resamples=1000, seed=seed) for x, y in zip(a, b)]
        widest = max(100 * (r.ci_high - r.ci_low) / 2 for r in compared)
        if widest < until or m == top:
            break
    significant = stats.holm([r.welch_p for r in compared]) < alpha
    return [stats.verdict(s, r.ratio, threshold) for s, r in zip(significant, compared)], m, top


def sequential(rows, slower, until, alpha, threshold, trials, seed):
    """--until on real invocations (as `timekit ab --until`, the widest row decides when to stop):
    per row the share of verdicts other than '~' (or 'slower'), and how many reruns it took."""
    rng = np.random.default_rng([seed, 21])
    same = slower is None
    hits, needed = np.zeros((trials, len(rows.keys)), dtype=bool), []
    for trial in range(trials):
        orders = [o[0] for o in rows.orders(rng, 1)]
        if same:
            a = [[arrays[i] for i in order[0::2]] for arrays, order in zip(rows.arrays, orders)]
            b = [[arrays[i] for i in order[1::2]] for arrays, order in zip(rows.arrays, orders)]
        else:
            a = [[arrays[i] for i in order] for arrays, order in zip(rows.arrays, orders)]
            b = [[arrays[i] for i in o[0]] for arrays, o in zip(slower.arrays, slower.orders(rng, 1))]
        verdicts, m, top = _sequential_trial(a, b, until, alpha, threshold, trial)
        hits[trial] = [v != "~" if same else v == "slower" for v in verdicts]
        needed.append(m)
    key = "changed" if same else "slower"
    return {"until": until, "trials": trials, "start": START, "max": top, "same": same,
            "rows": [{key: calibration._rate(hits[:, r].sum(), trials)} for r in range(len(rows.keys))],
            "any_row": calibration._rate(hits.any(axis=1).sum(), trials),
            "reruns_median": float(np.median(needed)), "reruns_mean": float(np.mean(needed)),
            "stopped_at_max": int(sum(m == top for m in needed))}


def simulate(components, runs, ratios, alpha, threshold, simulations, seed):
    """compare's rerun rule over the family on lognormal rerun levels and runs at each row's measured
    CVs (rows independent): per row the A/A rate and the power against its measured change and 5 %."""
    rng = np.random.default_rng([seed, 22])

    def side(c, n, m, effect):
        sb, sw = (math.sqrt(math.log1p(cv * cv)) for cv in (c.cv_between, c.cv_within))
        level = rng.lognormal(-sb * sb / 2, sb, (simulations, m))
        if n <= 100:
            means = rng.lognormal(-sw * sw / 2, sw, (simulations, m, n)).mean(axis=2)
        else:  # the mean of n > 100 runs: its normal limit (memory)
            means = rng.normal(1.0, c.cv_within / math.sqrt(n), (simulations, m))
        return (1 + effect) * level * means

    out = [[] for _ in components]
    for m in GRID:
        base = [side(c, n, m, 0.0) for c, n in zip(components, runs)]
        cells = {}
        for name, effects in (("aa", [0.0] * len(runs)), ("measured", [r - 1 for r in ratios]), ("five", [EFFECT] * len(runs))):
            new = [side(c, n, m, e) for c, n, e in zip(components, runs, effects)]
            p = np.column_stack([scipy.stats.ttest_ind(x, y, axis=1, equal_var=False).pvalue for x, y in zip(base, new)])
            ratio = np.column_stack([y.mean(axis=1) / x.mean(axis=1) for x, y in zip(base, new)])
            cells[name] = _verdicts(p, ratio, alpha, threshold)
        for r, row in enumerate(out):
            sig, changed, ratio = (x[:, r] for x in cells["aa"])
            row.append({"m": m, "aa": float(changed.mean()), "aa_significant": float(sig.mean()),
                        **{name: float((cells[name][1][:, r] & (cells[name][2][:, r] > 1)).mean()) for name in ("measured", "five")}})
    return [{"simulations": simulations, "n": n, "rows": row,
             "m_for_target": next((r["m"] for r in row if r["five"] >= TARGET_POWER), None)} for n, row in zip(runs, out)]


def calibrate_between(groups, slower=None, alpha=calibration.ALPHA, threshold=calibration.THRESHOLD, splits=SPLITS,
                      until=None, trials=SEQUENTIAL_TRIALS, simulations=SIMULATIONS, seed=calibration.SEED):
    """Everything above for one Holm family: groups (family.Group, 4+ invocations each, the same
    columns) and optionally their slower counterparts in the same order. One result per row, each
    computed under the whole family."""
    rows = Rows(groups)
    if rows.invocations < 4:
        raise BetweenError(f"{rows.invocations} invocations are too few for A/A between invocations (at least 4: 2 a side)")
    rng = np.random.default_rng([seed, 20])
    slow = Rows(slower) if slower else None
    out = {"alpha": alpha, "threshold": threshold, "seed": seed, "tolerance": calibration.TOLERANCE,
           "family": {"rows": rows.labels, "columns": rows.columns, "size": len(rows.keys),
                      "text": family.describe(rows.labels, rows.columns, alpha)}, "rows": []}
    for label, arrays in zip(rows.labels, rows.arrays):
        components = reruns.variance_components(arrays)
        means = np.array([a.mean() for a in arrays])
        out["rows"].append({"label": label, "invocations": len(arrays), "runs_per_invocation": int(np.median([a.size for a in arrays])),
                            "mean": float(means.mean()), "cv_of_invocation_means": float(means.std(ddof=1) / means.mean()),
                            "components": {"cv_within": components.cv_within, "cv_between": components.cv_between,
                                           "between_share": components.between_share, "f_p": components.f_p}})
    checks = [aa(rows, m, splits, alpha, threshold, rng) for m in sizes(rows.invocations)]
    out["aa_any_row"] = [{"m": c["m"], "splits": c["splits"], "distinct": c["distinct"], **c["any_row"]} for c in checks]
    for r, row in enumerate(out["rows"]):
        row["aa"] = [{"m": c["m"], "splits": c["splits"], "distinct": c["distinct"], **c["rows"][r]} for c in checks]
        row["windows"] = [{"m": w["m"], "windows": w["windows"], **w["rows"][r]}
                          for w in (windows(rows, m, alpha, threshold) for m in SIZES) if w]
    ratios = [1.0 + EFFECT] * len(rows.keys)
    if slow:
        ratios = [float(np.mean([a.mean() for a in s]) / np.mean([a.mean() for a in b])) for b, s in zip(rows.arrays, slow.arrays)]
        checks = [power(rows, slow, m, splits, alpha, threshold, rng)
                  for m in [m for m in SIZES if m <= min(rows.invocations, slow.invocations)] or [min(rows.invocations, slow.invocations)]]
        for r, row in enumerate(out["rows"]):
            row["slower"] = {"invocations": len(slow.arrays[r]), "ratio": ratios[r]}
            row["power"] = [{"m": c["m"], "splits": c["splits"], **c["rows"][r]} for c in checks]
    if until is not None:
        out["sequential"] = [sequential(rows, None, until, alpha, threshold, trials, seed)]
        if slow:
            out["sequential"].append(sequential(rows, slow, until, alpha, threshold, trials, seed))
    components = [reruns.variance_components(arrays) for arrays in rows.arrays]
    for row, simulated in zip(out["rows"], simulate(components, [r["runs_per_invocation"] for r in out["rows"]], ratios,
                                                     alpha, threshold, simulations, seed)):
        row["simulated"] = simulated
    return out


# --------------------------------------------------------------------------------------------
# output


def holds_invocations(source, columns=family.DEFAULT_COLUMNS):
    """Whether a path holds 2+ invocations of some run definition and input (between mode)."""
    path = Path(str(source))
    if not path.exists():
        return False
    return any(len(g.invocations) >= 2 for g in family.load_groups([path], columns, BetweenError).values())
