"""
`timekit calibrate` between invocations as a command: the calibration of
analysis.tools.calibrate.between run over a directory, and what is printed and drawn of it (its
tables, the family's text, the method and the figure).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from analysis.tools.calibrate import within as calibration
from analysis.tools.calibrate import family
from analysis.tools.calibrate.between import (GRID, SEQUENTIAL_TRIALS, SIMULATIONS, SPLITS, TARGET_POWER,
                                                BetweenError, calibrate_between)


def _r(rate):
    return f"{100 * rate['rate']:.1f} % ({100 * rate['ci_low']:.1f} … {100 * rate['ci_high']:.1f})"


def _splits(r):
    """The splits cell: the draws, and how many distinct splits they repeat where fewer exist."""
    distinct = r.get("distinct")
    return f"{r['splits']} ({distinct} distinct)" if distinct and distinct < r["splits"] else str(r["splits"])


def tables(row):
    """[(title, header, rows)] of one row of the family as text cells."""
    c = row["components"]
    out = [("A/A: random splits of the invocations into two sides of M",
            ["M", "splits", "old rule: Holm p < alpha", "old: verdict not ~", "new rule: Holm p < alpha", "new: verdict not ~",
             "new within alpha / k ± 1.5"],
            [[str(r["m"]), _splits(r), _r(r["old"]["significant"]), _r(r["old"]["changed"]),
              _r(r["new"]["significant"]), _r(r["new"]["changed"]), "yes" if r["within_tolerance"] else "NO"]
             for r in row["aa"]])]
    if row["windows"]:
        out.append(("A/A: contiguous windows in date order (M against the next M)",
                    ["M", "windows", "old: p < alpha", "old: verdict not ~", "new: p < alpha", "new: verdict not ~"],
                    [[str(w["m"]), str(w["windows"]), str(w["old_significant"]), str(w["old"]), str(w["new_significant"]),
                      str(w["new"])] for w in row["windows"]]))
    if "power" in row:
        out.append((f"power: M base against M slower invocations (measured change {100 * (row['slower']['ratio'] - 1):+.2f} %)",
                    ["M", "splits", "old rule: 'slower'", "new rule: p < alpha", "new rule: 'slower'"],
                    [[str(r["m"]), str(r["splits"]), _r(r["old"]["slower"]), _r(r["new"]["significant"]), _r(r["new"]["slower"])]
                     for r in row["power"]]))
    sim = row["simulated"]
    out.append((f"simulated, new rule over the family: lognormal at the measured CVs (within {100 * c['cv_within']:.2f} %, "
                f"between {100 * c['cv_between']:.2f} %), n = {sim['n']}, {sim['simulations']} pairs per cell",
                ["M", "A/A: verdict not ~", "measured change: 'slower'", "+5 %: 'slower'"],
                [[str(r["m"]), f"{100 * r['aa']:.1f} %", f"{100 * r['measured']:.1f} %", f"{100 * r['five']:.1f} %"]
                 for r in sim["rows"]]))
    return out


def family_tables(result):
    """The family's own tables: A/A in any row, and the sequential rule."""
    out = [("A/A: splits with a verdict other than ~ in any row of the family (Holm keeps this at alpha or below)",
            ["M", "splits", "old rule", "new rule", "new within alpha ± 1.5"],
            [[str(r["m"]), _splits(r), _r(r["old"]), _r(r["new"]), "yes" if r["within_tolerance"] else "NO"]
             for r in result["aa_any_row"]])]
    if result.get("sequential"):
        first = result["sequential"][0]
        labels = result["family"]["rows"]
        out.append((f"sequential (--until {first['until']:g} %): pairs added from M = {first['start']} until every row's CI "
                    "half-width is below it or a side runs out",
                    ["data", "row", "trials", "largest M", "rate", "reruns: median", "mean", "stopped at the largest"],
                    [["A/A: verdict not ~" if s["same"] else "slower: 'slower'", label, str(s["trials"]), str(s["max"]),
                      _r(r["changed" if s["same"] else "slower"]), f"{s['reruns_median']:g}", f"{s['reruns_mean']:.1f}",
                      str(s["stopped_at_max"])] for s in result["sequential"] for label, r in zip(labels, s["rows"])]))
    return out


def describe(result, row):
    c = row["components"]
    target = row["simulated"]["m_for_target"]
    return (f"{row['label']}: {row['invocations']} invocations of {row['runs_per_invocation']} runs (median), mean "
            f"{row['mean']:.6g}; CV of the invocation means {100 * row['cv_of_invocation_means']:.2f} %; within-rerun CV "
            f"{100 * c['cv_within']:.2f} %, between-rerun CV {100 * c['cv_between']:.2f} % (between share "
            f"{100 * c['between_share']:.0f} %, F test p {c['f_p']:.2g}); alpha {result['alpha']}, threshold "
            f"{100 * result['threshold']:g} %, seed {result['seed']}. Simulated in this family: +5 % is flagged in "
            f"{100 * TARGET_POWER:.0f} %+ from M = {target if target else 'none up to ' + str(GRID[-1])}.")


METHOD = ("old rule: runs of a side pooled, Welch t (scipy ttest_ind_from_stats); new rule: Welch t on the rerun means "
          "(compare's rule with 2+ reruns a side); both Holm over the family's rows in every split, as compare does; verdict "
          "not '~' when the Holm p < alpha and |ratio - 1| > threshold. Rates: exact binomial 95 % CIs (scipy binomtest); "
          "splits share the invocations, so the CIs describe these invocations.")


def render(result, fmt="text"):
    if fmt == "json":
        return json.dumps(result, indent=2)
    parts = [result["family"]["text"]]
    for title, header, rows in family_tables(result):
        parts.append((f"**{title}**" if fmt == "markdown" else title) + "\n\n" + calibration._table(header, rows, fmt))
    for row in result["rows"]:
        head = describe(result, row)
        parts.append("### " + head if fmt == "markdown" else head)
        for title, header, rows in tables(row):
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


def figure(result, row, title):
    """A/A share of significant tests (left; should be alpha) and power against the measured slowdown
    (right) against reruns per side for one row of the family: old and new rule measured on the real
    invocations, the new rule simulated as a line."""
    from analysis.core import plots

    sim = row["simulated"]["rows"]
    with plots.styled_figure(9.0, 4.0) as fig:
        left, right = fig.subplots(1, 2, sharex=True)
        left.plot([r["m"] for r in sim], [r["aa_significant"] for r in sim], "-", color=NEW, alpha=0.6,
                  label="new rule, simulated")
        _measured(left, row["aa"], "new", "significant", NEW, "o", "new rule (rerun means), measured", -0.15)
        _measured(left, row["aa"], "old", "significant", OLD, "s", "old rule (runs pooled), measured", 0.15)
        left.axhline(result["alpha"], color="0.5", linestyle=":", linewidth=1)
        left.annotate(f"alpha {result['alpha']:g}", xy=(GRID[-1], result["alpha"]), xytext=(0, 3),
                      textcoords="offset points", ha="right", fontsize=7, color="0.4")
        left.set_title(f"A/A: Holm p < {result['alpha']:g} with nothing changed")
        left.set_ylabel("share of splits")
        left.legend(loc="upper right", frameon=False, fontsize=8)
        if "power" in row:
            change = 100 * (row["slower"]["ratio"] - 1)
            right.plot([r["m"] for r in sim], [r["measured"] for r in sim], "-", color=NEW, alpha=0.6)
            _measured(right, row["power"], "new", "slower", NEW, "o", "new rule", -0.15)
            _measured(right, row["power"], "old", "slower", OLD, "s", "old rule", 0.15)
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


def command(source, slower, out, fmt="text", plot_path=None, *, columns=family.DEFAULT_COLUMNS, alpha=calibration.ALPHA,
            threshold=calibration.THRESHOLD, until=None, splits=SPLITS, trials=SEQUENTIAL_TRIALS,
            simulations=SIMULATIONS, seed=calibration.SEED):
    """`timekit calibrate RESULTS [--slower RESULTS]` when RESULTS holds 2+ invocations; returns 0.
    The family is what compare would form on two such directories: every column of every run
    definition and input with 4+ invocations."""
    groups = family.load_groups([source], columns, BetweenError)
    usable = {key: g for key, g in sorted(groups.items()) if len(g.invocations) >= 4}
    if not usable:
        raise BetweenError(f"{source}: no run definition and input with 4+ invocations of finished {', '.join(columns)} runs")
    slow = None
    if slower is not None:
        found = family.load_groups([slower], columns, BetweenError)
        missing = [key for key in usable if key not in found]
        if missing:
            raise BetweenError(f"{slower}: has no runs of {missing[0][0]} / {missing[0][1]} (the slower side needs the same "
                               "run definition and task names)")
        slow = [found[key] for key in usable]
    result = calibrate_between(list(usable.values()), slow, alpha, threshold, splits, until, trials, simulations, seed)
    left_out = sorted(set(groups) - set(usable))
    if left_out:
        result["family"]["left_out"] = [f"{r} / {i}: {len(groups[(r, i)].invocations)} invocations" for r, i in left_out]
        result["family"]["text"] += (f" Left out (fewer than 4 invocations; compare would count them too): "
                                     f"{'; '.join(result['family']['left_out'])}.")
    print(render(result, fmt), file=out)
    if plot_path is not None:
        from analysis.core import plots

        row = result["rows"][0]
        title = (f"{row['label']} in a Holm family of {result['family']['size']}: {row['invocations']} invocations; "
                 "error bars: 95 % binomial CIs; line: simulated")
        try:
            Path(plot_path).write_bytes(plots.to_png(figure(result, row, title)))
        except OSError as e:
            raise BetweenError(f"{plot_path}: cannot write the plot: {e.strerror}") from None
    return 0
