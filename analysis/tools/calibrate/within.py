"""
Calibration of `timekit compare` within one invocation: how often does it cry wolf, and what can
it see?

compare's rule for one row (Welch's t at alpha, and a ratio beyond the threshold) is measured as
a row alone: the A/A rate over random splits of one sample and over fresh lognormal pairs at its
CV, and the power against 1, 2 and 5 % slowdowns, simulated and analytic. docs/calibration.md,
"A/A: false positives when nothing changed" and "Power".
"""

from __future__ import annotations

import json
import math
import numbers
from pathlib import Path

import numpy as np
import scipy.stats

from analysis.tools.compare import repeated as compare_mod
from analysis.tools import history
from analysis.core import validity
from analysis.core.errors import UserError

ALPHA = 0.05
THRESHOLD = 0.02
SPLITS = 2000            # random A/A splits of the one sample
DRAWS = 2000             # independent A/A pairs from the fitted lognormal
SIMULATIONS = 5000       # simulated pairs per (slowdown, n) for the power table
SIZES = (10, 30, 100)    # runs per side
EFFECTS = (0.01, 0.02, 0.05)
TOLERANCE = 0.015        # the A/A rate must lie within alpha +- this
SYNTHETIC_N = 30         # size of the synthetic sample when only a CV is given
MIN_N = 10               # smallest measured sample calibrate() accepts (halves of 5)
SEED = 0


class CalibrationError(UserError):
    """Calibration cannot be computed from the given input (one line for the user)."""


def lognormal(mean, cv):
    """(mu, sigma) of the lognormal with this mean and coefficient of variation."""
    sigma = math.sqrt(math.log1p(cv * cv))
    return math.log(mean) - sigma * sigma / 2, sigma


def decide(base, new, alpha=ALPHA, threshold=THRESHOLD):
    """compare's rule on many pairs at once (rows of base against rows of new): Welch p, ratio of
    means, significant (p < alpha) and changed (significant and |ratio - 1| > threshold, i.e.
    stats.verdict is not '~')."""
    p = scipy.stats.ttest_ind(base, new, axis=1, equal_var=False).pvalue
    ratio = new.mean(axis=1) / base.mean(axis=1)
    significant = p < alpha
    return p, ratio, significant, significant & (np.abs(ratio - 1) > threshold)


def _rate(k, trials, confidence=0.95):
    ci = scipy.stats.binomtest(int(k), int(trials)).proportion_ci(confidence_level=confidence, method="exact")
    return {"count": int(k), "trials": int(trials), "rate": k / trials, "ci_low": float(ci.low), "ci_high": float(ci.high)}


def _aa(base, new, alpha, threshold, what):
    _, _, significant, changed = decide(base, new, alpha, threshold)
    sig = _rate(significant.sum(), len(significant))
    return {"what": what, "trials": len(significant), "n_base": base.shape[1], "n_new": new.shape[1],
            "significant": sig, "changed": _rate(changed.sum(), len(changed)),
            "within_tolerance": bool(abs(sig["rate"] - alpha) <= TOLERANCE)}


def aa_splits(values, splits=SPLITS, alpha=ALPHA, threshold=THRESHOLD, seed=SEED):
    """A/A: `splits` random halvings of one sample, each judged by compare's rule."""
    x = np.asarray(values, dtype=float)
    rng = np.random.default_rng([seed, 1])
    order = rng.permuted(np.tile(np.arange(x.size), (splits, 1)), axis=1)
    half = x.size // 2
    distinct = math.comb(x.size, half) // (2 if 2 * half == x.size else 1)   # sides unordered where equal
    repeats = f" (of {distinct} distinct ones)" if distinct < splits else ""
    return _aa(x[order[:, :half]], x[order[:, half:]], alpha, threshold,
               f"{splits} random splits of the one sample of {x.size}{repeats}")


def aa_fresh(mean, cv, n_base, n_new, draws=DRAWS, alpha=ALPHA, threshold=THRESHOLD, seed=SEED):
    """A/A: `draws` independent pairs from the lognormal with this mean and CV."""
    mu, sigma = lognormal(mean, cv)
    rng = np.random.default_rng([seed, 2])
    base = rng.lognormal(mu, sigma, (draws, n_base))
    new = rng.lognormal(mu, sigma, (draws, n_new))
    return _aa(base, new, alpha, threshold, f"{draws} independent pairs from a lognormal at CV {100 * cv:.2f} %")


def simulated_power(cv, n, effects=EFFECTS, simulations=SIMULATIONS, alpha=ALPHA, threshold=THRESHOLD, seed=SEED):
    """{effect: (share significant, share 'slower')} for lognormal noise at this CV, n per side.
    The same draws serve every effect (common random numbers), so effects compare like for like."""
    rng = np.random.default_rng([seed, 3, n])
    mu, sigma = lognormal(1.0, cv)
    base = np.exp(mu + sigma * rng.standard_normal((simulations, n)))
    noise = np.exp(mu + sigma * rng.standard_normal((simulations, n)))
    out = {}
    for effect in effects:
        _, ratio, significant, changed = decide(base, noise * (1 + effect), alpha, threshold)
        out[effect] = (float(significant.mean()), float((changed & (ratio > 1)).mean()))
    return out


def _welch(cv, n, effect, alpha):
    """Standard error, Welch-Satterthwaite df and two-sided critical t for multiplicative noise at
    this CV (the slower side's sd grows with its mean)."""
    va, vb = cv ** 2 / n, (cv * (1 + effect)) ** 2 / n
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (n - 1) + vb ** 2 / (n - 1))
    return se, df, float(scipy.stats.t.ppf(1 - alpha / 2, df))


def analytic_power(cv, n, effect, alpha=ALPHA):
    """Power of the two-sided Welch test: noncentral t with df from Welch-Satterthwaite."""
    se, df, critical = _welch(cv, n, effect, alpha)
    delta = effect / se
    power = float(scipy.stats.nct.sf(critical, df, delta) + scipy.stats.nct.cdf(-critical, df, delta))
    if not math.isfinite(power):   # scipy's nct gives up far in the tail (delta of 30+): the normal limit
        power = float(scipy.stats.norm.sf(critical - delta) + scipy.stats.norm.cdf(-critical - delta))
    return power


_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(80)


def analytic_verdict_power(cv, n, effect, alpha=ALPHA, threshold=THRESHOLD):
    """Normal approximation of P(verdict 'slower') = P(mean_new - mean_base > max(t * se, threshold *
    mean_base)), the base mean integrated out by Gauss-Hermite quadrature (se taken as known)."""
    se, _, critical = _welch(cv, n, effect, alpha)
    sd_a, sd_b = cv / math.sqrt(n), cv * (1 + effect) / math.sqrt(n)
    a = 1 + sd_a * _NODES
    need = a + np.maximum(critical * se, threshold * a)
    return float(np.sum(_WEIGHTS * scipy.stats.norm.sf((need - (1 + effect)) / sd_b)) / math.sqrt(2 * math.pi))


def calibrate(source, alpha=ALPHA, threshold=THRESHOLD, splits=SPLITS, draws=DRAWS, simulations=SIMULATIONS,
              sizes=SIZES, effects=EFFECTS, seed=SEED, family_size=1):
    """The A/A rates and the power table, from a sample of run times (array-like) or a CV (number,
    a fraction: 0.012 = 1.2 %; a seeded synthetic lognormal sample of SYNTHETIC_N stands in).
    In a Holm family of `family_size` rows the row is judged at alpha / family_size, Holm's level
    when no other row is significant, so the power is a lower bound where others are
    (docs/calibration.md, "The family")."""
    family_size = max(1, int(family_size))
    row_alpha, alpha_family = alpha / family_size, alpha
    alpha = row_alpha
    if isinstance(source, numbers.Real):
        cv = float(source)
        if not 0 < cv < 1:
            raise CalibrationError(f"CV {cv} is not a fraction between 0 and 1 (0.012 means 1.2 %)")
        mu, sigma = lognormal(1.0, cv)
        values = np.random.default_rng([seed, 0]).lognormal(mu, sigma, SYNTHETIC_N)
        kind = f"synthetic: {SYNTHETIC_N} seeded lognormal values at CV {100 * cv:.2f} %"
    else:
        values = np.asarray(source, dtype=float).ravel()
        values = values[np.isfinite(values)]
        if values.size < MIN_N:
            raise CalibrationError(f"{values.size} values are too few to calibrate on (at least {MIN_N})")
        cv = float(values.std(ddof=1) / values.mean())
        if not cv > 0:
            raise CalibrationError("the sample has no spread (all values equal): nothing to calibrate")
        kind = "measured"
    mean = float(values.mean())
    sample_cv = float(values.std(ddof=1) / mean)
    half = values.size // 2
    power = []
    for n in sizes:
        simulated = simulated_power(cv, n, effects, simulations, alpha, threshold, seed)
        for effect in effects:
            sig, slower = simulated[effect]
            power.append({"effect": effect, "n": n, "significant": sig, "slower": slower,
                          "analytic_significant": analytic_power(cv, n, effect, alpha),
                          "analytic_slower": analytic_verdict_power(cv, n, effect, alpha, threshold)})
    return {
        "alpha": alpha_family, "family_size": family_size, "row_alpha": row_alpha,
        "threshold": threshold, "seed": seed, "tolerance": TOLERANCE, "noise": "lognormal",
        "sample": {"source": kind, "n": int(values.size), "mean": mean, "cv": sample_cv},
        "cv": cv,
        "aa": [aa_splits(values, splits, alpha, threshold, seed),
               aa_fresh(mean, cv, half, values.size - half, draws, alpha, threshold, seed)],
        "simulations": simulations,
        "power": sorted(power, key=lambda r: (r["effect"], r["n"])),
    }


# --------------------------------------------------------------------------------------------
# output


def _pct(x, digits=1):
    return f"{100 * x:.{digits}f} %"


def _rate_text(r):
    return f"{_pct(r['rate'], 2)} ({_pct(r['ci_low'], 2)} … {_pct(r['ci_high'], 2)})"


AA_HEADER = ["A/A sample", "n per side", "Welch p < alpha (95 % CI)", "verdict not ~ (95 % CI)", "within alpha ± 1.5 pp"]
POWER_HEADER = ["slowdown", "n per side", "p < alpha: simulated", "analytic (nct)", "verdict 'slower': simulated",
                "normal approx."]


def tables(result):
    """(A/A rows, power rows) as text cells."""
    aa = [[r["what"], f"{r['n_base']}/{r['n_new']}", _rate_text(r["significant"]), _rate_text(r["changed"]),
           "yes" if r["within_tolerance"] else "NO"] for r in result["aa"]]
    power = [[f"+{100 * r['effect']:g} %", str(r["n"]), _pct(r["significant"]), _pct(r["analytic_significant"]),
              _pct(r["slower"]), _pct(r["analytic_slower"])] for r in result["power"]]
    return aa, power


def _table(header, rows, fmt):
    table = [header] + rows
    if fmt == "markdown":
        lines = ["| " + " | ".join(row) + " |" for row in table]
        lines.insert(1, "|" + "---|" * len(header))
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table)


def describe(result, label=""):
    s = result["sample"]
    k = result.get("family_size", 1)
    family = f" in a Holm family of {k} rows: tested at {result['row_alpha']:.3g}" if k > 1 else ""
    return (f"{label + ': ' if label else ''}{s['n']} runs ({s['source']}), mean {s['mean']:.6g}, CV {_pct(s['cv'], 2)}; "
            f"alpha {result['alpha']}{family}, threshold {_pct(result['threshold'], 0)}, seed {result['seed']}")


def method(result):
    return ("Decision as in compare for one row: Welch t (scipy ttest_ind, equal_var=False), significant when p < alpha; "
            "verdict not '~' when also |ratio of means - 1| > threshold. A/A CIs: exact binomial (scipy binomtest); the "
            "splits share one sample, so their CI covers that sample's permutation rate, not the process's. "
            f"Power: {result['simulations']} simulated pairs per cell, lognormal noise at CV {_pct(result['cv'], 2)}, "
            "the same draws for every slowdown; analytic: noncentral t with Welch-Satterthwaite df; normal approx.: "
            "P(difference of means > max(critical t x se, threshold x base mean)).")


def render(calibrations, fmt="text"):
    """calibrations: [(label, result)]."""
    if fmt == "json":
        return json.dumps([{"group": label, **result} for label, result in calibrations], indent=2)
    parts = []
    for label, result in calibrations:
        aa, power = tables(result)
        head = describe(result, label)
        parts.append(("### " + head if fmt == "markdown" else head) + "\n\n" + _table(AA_HEADER, aa, fmt) + "\n\n"
                     + _table(POWER_HEADER, power, fmt) + "\n\n" + method(result))
    return "\n\n".join(parts)


GRID = (5, 7, 10, 14, 20, 30, 45, 70, 100, 150, 200)


def power_figure(result, title=""):
    """Power against runs per side for each slowdown: the test alone (left) and compare's verdict
    'slower' (right); lines analytic, markers simulated."""
    from analysis.core import plots

    grid = np.array(GRID)
    colours = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3"]
    with plots.styled_figure(9.0, 4.0) as fig:
        left, right = fig.subplots(1, 2, sharey=True)
        cv, alpha, threshold = result["cv"], result.get("row_alpha", result["alpha"]), result["threshold"]
        effects = sorted({r["effect"] for r in result["power"]})
        for colour, effect in zip(colours, effects):
            rows = [r for r in result["power"] if r["effect"] == effect]
            ns = [r["n"] for r in rows]
            label = f"+{100 * effect:g} % slower"
            left.plot(grid, [analytic_power(cv, n, effect, alpha) for n in grid], color=colour, label=label)
            left.plot(ns, [r["significant"] for r in rows], "o", color=colour)
            right.plot(grid, [analytic_verdict_power(cv, n, effect, alpha, threshold) for n in grid], color=colour, label=label)
            right.plot(ns, [r["slower"] for r in rows], "o", color=colour)
        for ax, what in ((left, f"Welch p < {alpha}"), (right, f"verdict 'slower' (p < {alpha} and > +{100 * threshold:g} %)")):
            ax.axhline(0.8, color="0.5", linestyle=":", linewidth=1)
            ax.set_xscale("log")
            ax.set_xticks([5, 10, 30, 100, 200])
            ax.xaxis.set_major_formatter(plots.matplotlib.ticker.ScalarFormatter())
            ax.set_ylim(-0.02, 1.02)
            ax.yaxis.set_major_formatter(plots.matplotlib.ticker.PercentFormatter(1.0))
            ax.set_xlabel("runs per side (n), log scale")
            ax.set_title(what)
        left.set_ylabel("power (share of slowdowns flagged)")
        left.annotate("80 %", xy=(5, 0.8), xytext=(0, 3), textcoords="offset points", fontsize=7, color="0.4")
        right.legend(loc="lower right", bbox_to_anchor=(1.0, 0.1), frameon=False)
        fig.suptitle(title or f"Power at CV {100 * cv:.2f} %: lines analytic, dots simulated ({result['simulations']} pairs each)")
    return fig


def _source_kind(source):
    """A CV (number, or text like '0.012' or '1.2%') or a path."""
    if isinstance(source, numbers.Real):
        return float(source)
    text = str(source).strip()
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        return Path(text)


def calibration_command(source, out=None, format="text", plot_path=None, *, columns=compare_mod.DEFAULT_COLUMNS, alpha=ALPHA,
                        threshold=THRESHOLD, splits=SPLITS, draws=DRAWS, simulations=SIMULATIONS, seed=SEED):
    """`timekit calibrate`: source is a CV or a result set (result file, directory, sweep); for a
    result set, one calibration per run definition, input and column at its measured CV, all of them
    one Holm family as compare forms it (a CV alone stands for one input measured in `columns`).
    Prints the tables, writes the power figure of the first one to plot_path; returns 0 (bad input
    raises CalibrationError, a PipelineError: one line and exit 2 in the CLI)."""
    import sys

    from analysis.core import plots

    kind = _source_kind(source)
    calibrations, skipped = [], []
    if isinstance(kind, float):
        calibrations.append((f"CV {100 * kind:g} %", calibrate(kind, alpha, threshold, splits, draws, simulations, seed=seed,
                                                               family_size=len(columns))))
    else:
        if not kind.exists():
            raise CalibrationError(f"{kind}: no such file or directory (give a result set or a CV such as 0.012)")
        try:
            sets = history.load_result_sets([kind], list(columns))
        except history.HistoryError as e:
            raise CalibrationError(str(e)) from None
        if len(sets) != 1:
            # pooling invocations would mix their drift into the CV; calibration_between is for that drift
            raise CalibrationError(f"{kind} holds {len(sets)} benchexec invocations ({sets[0].date_text} … {sets[-1].date_text}); "
                                   "this calibration takes one (give one of its result files); between invocations: "
                                   "a directory with 4+ invocations of one run definition and input")
        tables, conditions = sets[0].tables, sets[0].conditions
        missing = [c for c in columns if not any(c in t.columns for t in tables)]
        if missing:
            raise CalibrationError(f"{kind}: no result file has a column '{missing[0]}' (choose columns with --column)")
        groups = compare_mod.groups(tables, conditions, tuple(columns))
        rows = sorted(groups.items(), key=lambda item: (columns.index(item[0][2]), item[0][:2]))  # compare's order
        for (rundefinition, name, column), (values, left_out) in rows:
            label = f"{rundefinition} / {name} ({column})" + (f", {validity.left_out_text(left_out)}" if left_out else "")
            if values.size < MIN_N or not np.ptp(values) > 0:
                skipped.append(f"{label}: {values.size} valid runs{' without spread' if values.size >= MIN_N else ''}, "
                               f"not calibrated (needs {MIN_N}+)")
                continue
            calibrations.append((label, calibrate(values, alpha, threshold, splits, draws, simulations, seed=seed,
                                                  family_size=len(rows))))
        if not calibrations:
            raise CalibrationError(f"{kind}: no run definition and input with {MIN_N}+ valid runs of "
                                   f"{', '.join(columns)} ({'; '.join(skipped)})")
    stream = out or sys.stdout
    print(render(calibrations, format), file=stream)
    if skipped and format != "json":
        print("\n" + "\n".join(f"Skipped {s}." for s in skipped), file=stream)
    if plot_path is not None:
        label, result = calibrations[0]
        try:
            Path(plot_path).write_bytes(plots.to_png(power_figure(
                result, f"{label}: power at CV {100 * result['cv']:.2f} % (lines analytic, dots {result['simulations']} simulations)")))
        except OSError as e:
            raise CalibrationError(f"{plot_path}: cannot write the plot: {e.strerror}") from None
    return 0
