"""
Calibration between invocations: how often does compare cry wolf when base and new are separate
benchexec invocations of the same thing, and what does it see with M reruns a side?

Input: K real invocations of one definition (result files or directories; one group per run
definition and input), and optionally K' invocations of a slower variant (same run definition and
task names). Two rules judge the same splits:

* old: every side's runs pooled, Welch's t-test on the runs (compare's rule within one invocation,
  what compare did with reruns before they became the unit);
* new: compare's rerun rule, Welch's t-test on the rerun means (analysis.tools.compare.reruns).

Both need p < alpha for "significant" and also |ratio - 1| > threshold for a verdict other than
"~" (one row: Holm p = p). Vectorized over splits with scipy.stats.ttest_ind (axis=1) and
ttest_ind_from_stats (pooled sides from per-invocation counts, means and variances).

* A/A: `splits` random splits of the K invocations into two disjoint sides of M; rates with exact
  binomial CIs (scipy.stats.binomtest). The splits share the K invocations, so the CI is that of
  these K invocations' split distribution, narrower than the uncertainty about the machine.
  Beside it the contiguous windows: invocations i..i+M-1 against i+M..i+2M-1 in date order
  (yesterday against today), few and overlapping, so counts only.
* power: M random base invocations against M random slower ones (M = 3, 5, 7, 10), share "slower".
* sequential (--until PCT, as `timekit ab --until`): pairs of invocations added from M = 3 on
  until the two-stage bootstrap CI's half-width is below PCT or K/2 is reached; the verdict's A/A
  rate and power, and how many reruns it took.
* simulated: the new rule on lognormal data at the measured within- and between-rerun CVs and
  runs per invocation, for M = 2..20: A/A rate and power against the measured slowdown and 5 %,
  to say which M reaches a target that the K real invocations cannot show.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import scipy.stats

from analysis.core import results, stats, validity
from analysis.sweep.load import load_tables
from analysis.tools.calibrate import within as calibration
from analysis.tools.compare import repeated as compare_mod
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


def invocations(paths, column):
    """{(run definition, input): ([valid values per invocation, in date order], {reason: runs left out})}
    of all paths."""
    tables, conditions = [], {}
    for path in map(Path, paths):
        if not path.exists():
            raise BetweenError(f"{path}: no such file or directory")
        try:
            found, steps, _ = load_tables(path, {"status", "category", column})
        except results.ResultFileError as e:
            raise BetweenError(str(e)) from None
        tables += found
        conditions.update(steps)
    unique = list({t.path.resolve(): t for t in tables}.values())
    return {key[:2]: found for key, found in compare_mod.rerun_groups(unique, conditions, (column,)).items()}


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


def judge(base, new, a, b, alpha, threshold):
    """{rule: (significant, verdict not '~', ratio)} for rows of picks a (from base) and b (from new)."""
    (nb, mb, vb), (nn, mn, vn) = base, new
    count_a, mean_a, sd_a = _pooled(nb, mb, vb, a)
    count_b, mean_b, sd_b = _pooled(nn, mn, vn, b)
    old_p = scipy.stats.ttest_ind_from_stats(mean_a, sd_a, count_a, mean_b, sd_b, count_b, equal_var=False).pvalue
    new_p = scipy.stats.ttest_ind(mb[a], mn[b], axis=1, equal_var=False).pvalue
    out = {}
    for rule, p, ratio in (("old", old_p, mean_b / mean_a), ("new", new_p, mn[b].mean(axis=1) / mb[a].mean(axis=1))):
        significant = p < alpha
        out[rule] = (significant, significant & (np.abs(ratio - 1) > threshold), ratio)
    return out


def _rates(judged, trials, slower=False):
    return {rule: {"significant": calibration._rate(sig.sum(), trials),
                   ("slower" if slower else "changed"): calibration._rate((changed & (ratio > 1) if slower else changed).sum(), trials)}
            for rule, (sig, changed, ratio) in judged.items()}


def aa(arrays, m, splits, alpha, threshold, rng):
    """A/A over random disjoint splits into two sides of m invocations."""
    order = rng.permuted(np.tile(np.arange(len(arrays)), (splits, 1)), axis=1)
    s = _stats(arrays)
    judged = judge(s, s, order[:, :m], order[:, m:2 * m], alpha, threshold)
    row = {"m": m, "splits": splits, **_rates(judged, splits)}
    row["within_tolerance"] = bool(abs(row["new"]["significant"]["rate"] - alpha) <= calibration.TOLERANCE)
    return row


def windows(arrays, m, alpha, threshold):
    """Contiguous windows in date order: invocations i..i+m-1 against the next m."""
    starts = np.arange(len(arrays) - 2 * m + 1)
    if not starts.size:
        return None
    s = _stats(arrays)
    judged = judge(s, s, starts[:, None] + np.arange(m), starts[:, None] + m + np.arange(m), alpha, threshold)
    return {"m": m, "windows": int(starts.size), **{rule: int(changed.sum()) for rule, (_, changed, _) in judged.items()},
            **{f"{rule}_significant": int(sig.sum()) for rule, (sig, _, _) in judged.items()}}


def power(base, slower, m, splits, alpha, threshold, rng):
    """m random base invocations against m random slower ones."""
    a = rng.permuted(np.tile(np.arange(len(base)), (splits, 1)), axis=1)[:, :m]
    b = rng.permuted(np.tile(np.arange(len(slower)), (splits, 1)), axis=1)[:, :m]
    return {"m": m, "splits": splits, **_rates(judge(_stats(base), _stats(slower), a, b, alpha, threshold), splits, slower=True)}


def sequential(base, new, until, alpha, threshold, trials, seed):
    """--until on real invocations: pairs added from START until the CI half-width < until (percent)
    or a side runs out; share of verdicts other than '~' (or 'slower') and reruns needed."""
    rng = np.random.default_rng([seed, 21])
    same = new is None
    verdicts, needed = [], []
    for trial in range(trials):
        if same:
            order = rng.permutation(len(base))
            a, b = [base[i] for i in order[0::2]], [base[i] for i in order[1::2]]
        else:
            a, b = [base[i] for i in rng.permutation(len(base))], [new[i] for i in rng.permutation(len(new))]
        top = min(len(a), len(b))
        for m in range(min(START, top), top + 1):
            r = reruns.compare_reruns(a[:m], b[:m], resamples=1000, seed=trial)
            if 100 * (r.ci_high - r.ci_low) / 2 < until or m == top:
                break
        verdicts.append(stats.verdict(r.welch_p < alpha, r.ratio, threshold))
        needed.append(m)
    hit = [v != "~" for v in verdicts] if same else [v == "slower" for v in verdicts]
    return {"until": until, "trials": trials, "start": START, "max": top, "same": same,
            ("changed" if same else "slower"): calibration._rate(sum(hit), trials),
            "reruns_median": float(np.median(needed)), "reruns_mean": float(np.mean(needed)),
            "stopped_at_max": int(sum(m == top for m in needed))}


def simulate(components, n, mean_ratio, alpha, threshold, simulations, seed):
    """The new rule on lognormal rerun levels and runs at the measured CVs: A/A rate and power."""
    rng = np.random.default_rng([seed, 22])
    sb, sw = (math.sqrt(math.log1p(cv * cv)) for cv in (components.cv_between, components.cv_within))

    def side(m, effect):
        level = rng.lognormal(-sb * sb / 2, sb, (simulations, m))
        if n <= 100:
            runs = rng.lognormal(-sw * sw / 2, sw, (simulations, m, n)).mean(axis=2)
        else:  # the mean of n > 100 runs: its normal limit (memory)
            runs = rng.normal(1.0, components.cv_within / math.sqrt(n), (simulations, m))
        return (1 + effect) * level * runs

    rows = []
    for m in GRID:
        base = side(m, 0.0)
        row = {"m": m}
        for name, effect in (("aa", 0.0), ("measured", mean_ratio - 1), ("five", EFFECT)):
            new = side(m, effect)
            p = scipy.stats.ttest_ind(base, new, axis=1, equal_var=False).pvalue
            ratio = new.mean(axis=1) / base.mean(axis=1)
            verdict = (p < alpha) & (np.abs(ratio - 1) > threshold)
            row[name] = float((verdict if name == "aa" else verdict & (ratio > 1)).mean())
            if name == "aa":
                row["aa_significant"] = float((p < alpha).mean())
        rows.append(row)
    return {"simulations": simulations, "n": n, "rows": rows,
            "m_for_target": next((r["m"] for r in rows if r["five"] >= TARGET_POWER), None)}


def calibrate_between(arrays, slower=None, alpha=calibration.ALPHA, threshold=calibration.THRESHOLD, splits=SPLITS,
                      until=None, trials=SEQUENTIAL_TRIALS, simulations=SIMULATIONS, seed=calibration.SEED):
    """Everything above for one group: arrays (and slower) are per-invocation value arrays."""
    if len(arrays) < 4:
        raise BetweenError(f"{len(arrays)} invocations are too few for A/A between invocations (at least 4: 2 a side)")
    rng = np.random.default_rng([seed, 20])
    components = reruns.variance_components(arrays)
    n = int(np.median([a.size for a in arrays]))
    means = np.array([a.mean() for a in arrays])
    out = {"alpha": alpha, "threshold": threshold, "seed": seed, "tolerance": calibration.TOLERANCE,
           "invocations": len(arrays), "runs_per_invocation": n, "mean": float(means.mean()),
           "cv_of_invocation_means": float(means.std(ddof=1) / means.mean()),
           "components": {"cv_within": components.cv_within, "cv_between": components.cv_between,
                          "between_share": components.between_share, "f_p": components.f_p},
           "aa": [aa(arrays, m, splits, alpha, threshold, rng) for m in SIZES if 2 * m <= len(arrays)],
           "windows": [w for w in (windows(arrays, m, alpha, threshold) for m in SIZES) if w]}
    ratio = 1.0 + EFFECT
    if slower:
        ratio = float(np.mean([a.mean() for a in slower]) / means.mean())
        out["slower"] = {"invocations": len(slower), "ratio": ratio}
        out["power"] = [power(arrays, slower, m, splits, alpha, threshold, rng) for m in SIZES
                        if m <= min(len(arrays), len(slower))]
    if until is not None:
        out["sequential"] = [sequential(arrays, None, until, alpha, threshold, trials, seed)]
        if slower:
            out["sequential"].append(sequential(arrays, slower, until, alpha, threshold, trials, seed))
    out["simulated"] = simulate(components, n, ratio, alpha, threshold, simulations, seed)
    return out


# --------------------------------------------------------------------------------------------
# output


def _r(rate):
    return f"{100 * rate['rate']:.1f} % ({100 * rate['ci_low']:.1f} … {100 * rate['ci_high']:.1f})"


def tables(result):
    """[(title, header, rows)] as text cells."""
    c = result["components"]
    out = [("A/A: random splits of the invocations into two sides of M",
            ["M", "splits", "old rule: p < alpha", "old: verdict not ~", "new rule: p < alpha", "new: verdict not ~",
             "new within alpha ± 1.5"],
            [[str(r["m"]), str(r["splits"]), _r(r["old"]["significant"]), _r(r["old"]["changed"]),
              _r(r["new"]["significant"]), _r(r["new"]["changed"]), "yes" if r["within_tolerance"] else "NO"]
             for r in result["aa"]])]
    if result["windows"]:
        out.append(("A/A: contiguous windows in date order (M against the next M)",
                    ["M", "windows", "old: p < alpha", "old: verdict not ~", "new: p < alpha", "new: verdict not ~"],
                    [[str(w["m"]), str(w["windows"]), str(w["old_significant"]), str(w["old"]), str(w["new_significant"]),
                      str(w["new"])] for w in result["windows"]]))
    if "power" in result:
        out.append((f"power: M base against M slower invocations (measured change {100 * (result['slower']['ratio'] - 1):+.2f} %)",
                    ["M", "splits", "old rule: 'slower'", "new rule: p < alpha", "new rule: 'slower'"],
                    [[str(r["m"]), str(r["splits"]), _r(r["old"]["slower"]), _r(r["new"]["significant"]), _r(r["new"]["slower"])]
                     for r in result["power"]]))
    if result.get("sequential"):
        first = result["sequential"][0]
        out.append((f"sequential (--until {first['until']:g} %): pairs added from M = {first['start']} until the CI "
                    "half-width is below it or a side runs out",
                    ["data", "trials", "largest M", "rate", "reruns: median", "mean", "stopped at the largest"],
                    [["A/A: verdict not ~" if s["same"] else "slower: 'slower'", str(s["trials"]), str(s["max"]),
                      _r(s["changed" if s["same"] else "slower"]), f"{s['reruns_median']:g}", f"{s['reruns_mean']:.1f}",
                      str(s["stopped_at_max"])] for s in result["sequential"]]))
    sim = result["simulated"]
    out.append((f"simulated, new rule: lognormal at the measured CVs (within {100 * c['cv_within']:.2f} %, between "
                f"{100 * c['cv_between']:.2f} %), n = {sim['n']}, {sim['simulations']} pairs per cell",
                ["M", "A/A: verdict not ~", "measured change: 'slower'", "+5 %: 'slower'"],
                [[str(r["m"]), f"{100 * r['aa']:.1f} %", f"{100 * r['measured']:.1f} %", f"{100 * r['five']:.1f} %"]
                 for r in sim["rows"]]))
    return out


def describe(result, label):
    c = result["components"]
    target = result["simulated"]["m_for_target"]
    return (f"{label}: {result['invocations']} invocations of {result['runs_per_invocation']} runs (median), mean "
            f"{result['mean']:.6g}; CV of the invocation means {100 * result['cv_of_invocation_means']:.2f} %; within-rerun CV "
            f"{100 * c['cv_within']:.2f} %, between-rerun CV {100 * c['cv_between']:.2f} % (between share "
            f"{100 * c['between_share']:.0f} %, F test p {c['f_p']:.2g}); alpha {result['alpha']}, threshold "
            f"{100 * result['threshold']:g} %, seed {result['seed']}. Simulated: +5 % is flagged in "
            f"{100 * TARGET_POWER:.0f} %+ from M = {target if target else 'none up to ' + str(GRID[-1])}.")


METHOD = ("old rule: runs of a side pooled, Welch t (scipy ttest_ind_from_stats); new rule: Welch t on the rerun means "
          "(compare's rule with 2+ reruns a side); verdict not '~' when p < alpha and |ratio - 1| > threshold. Rates: exact "
          "binomial 95 % CIs (scipy binomtest); splits share the invocations, so the CIs describe these invocations.")


def render(calibrations, fmt="text"):
    if fmt == "json":
        return json.dumps([{"group": label, **result} for label, result in calibrations], indent=2)
    parts = []
    for label, result in calibrations:
        head = describe(result, label)
        parts.append("### " + head if fmt == "markdown" else head)
        for title, header, rows in tables(result):
            parts.append((f"**{title}**" if fmt == "markdown" else title) + "\n\n" + calibration._table(header, rows, fmt))
        parts.append(METHOD)
    return "\n\n".join(parts)


NEW, OLD = "#4c72b0", "#c44e52"


def _measured(ax, rows, rule, key, colour, marker, label, shift):
    """Measured rates with their binomial CIs as error bars (shifted sideways so both rules show)."""
    rates = [r[rule][key] for r in rows]
    y = np.array([x["rate"] for x in rates])
    err = np.array([[x["rate"] - x["ci_low"], x["ci_high"] - x["rate"]] for x in rates]).T
    ax.errorbar([r["m"] + shift for r in rows], y, yerr=err, fmt=marker, color=colour, capsize=3, label=label)


def figure(result, title):
    """A/A share of significant tests (left; should be alpha) and power against the measured slowdown
    (right) against reruns per side: old and new rule measured on the real invocations, the new
    rule simulated as a line."""
    from analysis.core import plots

    sim = result["simulated"]["rows"]
    with plots.styled_figure(9.0, 4.0) as fig:
        left, right = fig.subplots(1, 2, sharex=True)
        left.plot([r["m"] for r in sim], [r["aa_significant"] for r in sim], "-", color=NEW, alpha=0.6,
                  label="new rule, simulated")
        _measured(left, result["aa"], "new", "significant", NEW, "o", "new rule (rerun means), measured", -0.15)
        _measured(left, result["aa"], "old", "significant", OLD, "s", "old rule (runs pooled), measured", 0.15)
        left.axhline(result["alpha"], color="0.5", linestyle=":", linewidth=1)
        left.annotate(f"alpha {result['alpha']:g}", xy=(GRID[-1], result["alpha"]), xytext=(0, 3),
                      textcoords="offset points", ha="right", fontsize=7, color="0.4")
        left.set_title(f"A/A: Welch p < {result['alpha']:g} with nothing changed")
        left.set_ylabel("share of splits")
        left.legend(loc="upper right", frameon=False, fontsize=8)
        if "power" in result:
            change = 100 * (result["slower"]["ratio"] - 1)
            right.plot([r["m"] for r in sim], [r["measured"] for r in sim], "-", color=NEW, alpha=0.6)
            _measured(right, result["power"], "new", "slower", NEW, "o", "new rule", -0.15)
            _measured(right, result["power"], "old", "slower", OLD, "s", "old rule", 0.15)
            right.axhline(TARGET_POWER, color="0.5", linestyle=":", linewidth=1)
            right.legend(loc="lower right", frameon=False, fontsize=8)
            right.set_title(f"power: a real {change:+.1f} % change called 'slower'")
        else:
            plots.panel_message(right, "no slower invocations given (--slower)")
        for ax in (left, right):
            ax.set_xlabel("reruns (invocations) per side, M")
            ax.set_xticks(GRID)
            ax.set_ylim(-0.02, 1.02)
            ax.yaxis.set_major_formatter(plots.matplotlib.ticker.PercentFormatter(1.0))
        fig.suptitle(title)
    return fig


def command(source, slower, out, fmt="text", plot_path=None, *, column=calibration.DEFAULT_COLUMN, alpha=calibration.ALPHA,
            threshold=calibration.THRESHOLD, until=None, splits=SPLITS, trials=SEQUENTIAL_TRIALS,
            simulations=SIMULATIONS, seed=calibration.SEED):
    """`timekit calibrate RESULTS [--slower RESULTS]` when RESULTS holds 2+ invocations; returns 0."""
    groups = invocations([source], column)
    slow = invocations([slower], column) if slower is not None else {}
    calibrations = []
    for key, (arrays, left_out) in sorted(groups.items()):
        if len(arrays) < 4:
            continue
        if slower is not None and key not in slow:
            raise BetweenError(f"{slower}: has no runs of {key[0]} / {key[1]} (the slower side needs the same run "
                               "definition and task names)")
        slow_arrays, slow_left_out = slow.get(key, (None, {}))
        label = f"{key[0]} / {key[1]} ({column})" + "".join(
            f", {side}{validity.left_out_text(out)}" for side, out in (("", left_out), ("slower side ", slow_left_out)) if out)
        calibrations.append((label, calibrate_between(arrays, slow_arrays, alpha, threshold, splits, until, trials,
                                                      simulations, seed)))
    if not calibrations:
        raise BetweenError(f"{source}: no run definition and input with 4+ invocations of finished '{column}' runs")
    print(render(calibrations, fmt), file=out)
    if plot_path is not None:
        from analysis.core import plots

        label, result = calibrations[0]
        title = f"{label}: {result['invocations']} invocations; error bars: 95 % binomial CIs; line: simulated"
        try:
            Path(plot_path).write_bytes(plots.to_png(figure(result, title)))
        except OSError as e:
            raise BetweenError(f"{plot_path}: cannot write the plot: {e.strerror}") from None
    return 0


def holds_invocations(source, column=calibration.DEFAULT_COLUMN):
    """Whether a path holds 2+ invocations of some run definition and input (between mode)."""
    path = Path(str(source))
    if not path.exists():
        return False
    return any(len(arrays) >= 2 for arrays, _ in invocations([path], column).values())
