"""
What `timekit bench` and `timekit ab 'CMD' 'CMD'` print: hyperfine's blocks per command with the
kit's line on the invocations, the relative speeds with their test, the A/B verdict table, and what
BenchExec costs around each run here (said plainly when a command is shorter than that). A block
names its command in full, once; everything else names it by its label (A, #1, or -n's name), so
that a row stays as wide as its numbers.
"""

import math

import numpy as np

from analysis.core import fmt

UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6))
UNCOMPARED = {"sentinel": "back to back for the sentinel's check",   # Figures.uncompared_why
              "together": "timed together, which the sentinel did not show harmless"}


def unit_for(seconds):
    """hyperfine's choice: the largest of s, ms, µs that keeps the value at 1 or more."""
    return next(((u, f) for u, f in UNITS if math.isfinite(seconds) and seconds >= f), UNITS[-1])


def duration(seconds, unit=None):
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds)):
        return fmt.MISSING
    name, factor = unit or unit_for(seconds)
    return f"{seconds / factor:.{3 if name == 's' else 1}f} {name}"


def block(title, f):
    """hyperfine's lines for one command, and the kit's on its invocations."""
    unit = unit_for(f.mean)
    per = f" per execution ({f.executions_per_run} executions a run)" if f.executions_per_run > 1 else ""
    label = "CPU time (mean ± σ): " if f.column.endswith("cputime") else "Time (mean ± σ):     "   # hyperfine's is wall time
    lines = [f"{title}: {f.command}",
             f"  {label}{duration(f.mean, unit)} ± {duration(f.stddev, unit)}{per}    "
             f"[User: {duration(f.user, unit)}, System: {duration(f.system, unit)}]",
             f"  Range (min … max):   {duration(f.min, unit)} … {duration(f.max, unit)}    "
             f"{f.runs} runs in {f.reruns} invocation{'s' if f.reruns != 1 else ''}{_uncompared(f)}"]
    if f.reruns >= 2:
        lines.append(
            f"  Invocations:         means {duration(min(f.rerun_means), unit)} … {duration(max(f.rerun_means), unit)}; "
            f"95 % CI of the mean {duration(f.rerun_ci[0], unit)} … {duration(f.rerun_ci[1], unit)}; "
            f"CV {_pct(f.cv_within)} within an invocation, {_pct(f.cv_between)} between invocations "
            f"({_pct(f.between_share, 0)} of the variance)")
    else:
        lines.append("  Invocations:         one: how far the mean moves between invocations is not measured")
    failing = sorted({c for c in f.exit_codes if c})
    if f.left_out:
        lines.append(f"  Left out:            {f.left_out} run(s) that did not finish normally"
                     + (f" (exit codes {', '.join(map(str, failing))})" if failing else ""))
    elif failing:   # --ignore-failure: counted, and said so
        lines.append(f"  Exit codes:          {sum(1 for c in f.exit_codes if c)} of {len(f.exit_codes)} run(s) exited "
                     f"non-zero ({', '.join(map(str, failing))}), measured as --ignore-failure asks")
    return "\n".join(lines)


def _uncompared(f):
    """Why the A/B table's n is smaller than the runs counted here ('' where it is not)."""
    return f" ({f.uncompared} of them {UNCOMPARED[f.uncompared_why]}: not in the table)" if f.uncompared else ""


def _pct(fraction, digits=1):
    """'4.2 %' (the output's form: a space before the unit, as in '95 %')."""
    text = fmt.pct(fraction, digits)
    return text[:-1] + " %" if text.endswith("%") else text


def relative(figures, paired=False):
    """[(fastest, other, ratio other/fastest, low, high, test text)] against the fastest mean.
    `paired`: every invocation ran every command (bench), so invocation k of one is paired with
    invocation k of the other: the t interval over the invocations' log ratios of their means,
    which cancels the machine's drift between invocations as ab's blocks design does."""
    from analysis.core import stats
    from analysis.tools.compare import reruns

    fastest = min(figures, key=lambda f: f.mean)
    found = []
    for other in figures:
        if other is fastest:
            continue
        if paired and fastest.reruns == other.reruns >= 2:
            found.append((fastest, other, *_paired_ratio(fastest.rerun_means, other.rerun_means)))
        elif fastest.reruns >= 2 and other.reruns >= 2:
            r = reruns.compare_reruns(fastest.by_rerun(), other.by_rerun())
            test = f"Welch's t on {fastest.reruns} + {other.reruns} invocation means, p = {fmt.p_value(r.welch_p)}"
            found.append((fastest, other, r.ratio, r.ci_low, r.ci_high, test))
        else:
            ratio = stats.ratio_of_means(fastest.times, other.times)
            [welch] = stats.two_sample_tests(np.array(fastest.times), np.array(other.times), "a", "b", tests=("Welch t",))
            test = f"Welch's t on the runs of one invocation, p = {fmt.p_value(welch.p)}: drift between invocations not measured"
            found.append((fastest, other, ratio.ratio, ratio.ci_low, ratio.ci_high, test))
    return found


def _paired_ratio(base_means, other_means):
    """(ratio, low, high, test text) from invocation-paired means: exp of the mean log ratio, its 95 % t interval."""
    from analysis.core import stats

    logs = np.log(np.asarray(other_means) / np.asarray(base_means))
    mean, half, p = stats.log_ratio_t(logs)
    return (math.exp(mean), math.exp(mean - half), math.exp(mean + half),
            f"paired t on the {logs.size} invocations' log ratios (every invocation ran both), p = {fmt.p_value(p)}")


def summary(figures, paired=False):
    found = relative(figures, paired)
    if not found:
        return ""
    lines = ["Summary", f"  {found[0][0].label} ran"]
    for _, other, ratio, low, high, test in found:
        lines.append(f"    {ratio:.3f} times faster than {other.label} (95 % CI {low:.3f} … {high:.3f}; {test})")
    return "\n".join(lines)


def cost_lines(cost, figures, options, here=True, verbose=True):
    """BenchExec's cost per run here (`here`), and plain words where a command is shorter than
    that (in full with `verbose`, else its advice in one sentence)."""
    if not math.isfinite(cost.per_run):
        return []
    inside = (f"; its walltime holds {duration(cost.in_walltime)} more than cmdrun's timing of the command "
              "(cmdrun's fork and the start inside the container)" if math.isfinite(cost.in_walltime) else "")
    lines = [f"BenchExec here: {duration(cost.per_run)} around each run (median gap between one run's end and the "
             f"next one's start, over {cost.gaps} gaps){inside}."] if here else []
    for f in figures:
        if options.repeat > 1 or f.mean >= cost.per_run:
            continue
        k = max(2, math.ceil(cost.per_run / max(f.mean, 1e-6)))
        if not verbose:
            lines.append(f"note: {f.label} takes {duration(f.mean)} a run, less than BenchExec's {duration(cost.per_run)} "
                         f"around each run; --repeat {k} runs it {k} times inside one run (--verbose: the trade-off)")
            continue
        lines.append(
            f"note: {f.label} takes {duration(f.mean)} a run, less than BenchExec's {duration(cost.per_run)} around "
            "each run: most of the time goes to BenchExec" + (
                f", and BenchExec's walltime of it holds {duration(cost.in_walltime)} besides the command"
                if math.isfinite(cost.in_walltime) else "")
            + f". --repeat {k} runs it {k} times inside one BenchExec run, each execution timed by cmdrun and "
            "kept as a value of its own (without the container's start). The trade-off: the executions of a run "
            "share its process tree, caches and container, and whatever one execution leaves behind (files, page "
            "cache) the next one finds; invocations are measured and tested as before.")
    return lines


def verdict_table(rows, labels, markdown=False):
    """compare's rows with the commands' labels ({run definition: 'A → B'}) in place of run
    definition and input; the blocks above name each command in full once."""
    header = ["base → new", "column", "reruns", "n base", "n new", "base mean", "new mean", "change", "95 % CI",
              "p (Holm)", "between reruns", "verdict"]
    table = [header]
    for r in rows:
        unit = unit_for(r.mean_base)
        share = f"{r.between_share:.0%}" if r.unit == "rerun" and np.isfinite(r.between_share) else fmt.MISSING
        table.append([labels.get(r.rundefinition, r.rundefinition), r.column, f"{r.reruns_base}/{r.reruns_new}",
                      str(r.n_base), str(r.n_new), duration(r.mean_base, unit), duration(r.mean_new, unit),
                      f"{100 * (r.ratio - 1):+.2f} %", f"{100 * (r.ci_low - 1):+.2f} … {100 * (r.ci_high - 1):+.2f} %",
                      fmt.p_value(r.p_holm), share, r.verdict])
    if markdown:
        lines = ["| " + " | ".join(row) + " |" for row in table]
        lines.insert(1, "|" + "---|" * len(header))
        return "\n".join(lines)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table)
