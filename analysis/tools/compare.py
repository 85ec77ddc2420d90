"""
`timekit compare BASE NEW`: did anything get faster or slower, and can a CI job gate on it?

Runs are grouped by run definition and input (repetitions of one input are samples of one
quantity). For every group and column: the change as a ratio of means with a bootstrap CI,
Welch's t-test (it drives the verdict) and Mann-Whitney U (reported beside it), Holm-corrected
over all rows. The verdict is "slower"/"faster" only when Welch's Holm p is below alpha AND the
change exceeds the noise threshold, else "~" (benchstat's convention). Runs that did not finish
normally are counted per group and kept out.
"""

import json
from dataclasses import asdict, dataclass

import numpy as np

from analysis.core import stats, validity
from analysis.core.tasks import input_of

DEFAULT_COLUMNS = ("cputime", "walltime")


@dataclass
class Row:
    rundefinition: str
    input: str
    column: str
    n_base: int
    n_new: int
    excluded_base: int
    excluded_new: int
    mean_base: float
    mean_new: float
    ratio: float
    ci_low: float
    ci_high: float
    welch_p: float
    mannwhitney_p: float
    p_holm: float = float("nan")
    verdict: str = "~"


def groups(tables, conditions, columns):
    """{(run definition, input, column): (finished values, count left out)}; in a sweep the run
    definition is named with its load level (reruns of one level pool)."""
    groups = {}
    for table in tables:
        step = conditions.get(table.path.name)
        where = step and (step.condition or f"load {step.load}")
        rundefinition = f"{table.rundefinition} @ {where}" if step else table.rundefinition
        inputs = np.array([input_of(t) for t in table.tasks], dtype=object)
        valid = table.valid()
        for column in columns:
            values = table.columns.get(column, np.full(len(table), np.nan))
            keep = validity.of_column(table, column, valid).usable  # no NaN, Inf or negative time
            for name in dict.fromkeys(inputs.tolist()):
                mask = inputs == name
                kept, left_out = groups.get((rundefinition, name, column), ([], 0))
                kept.append(values[mask & keep])
                groups[(rundefinition, name, column)] = (kept, left_out + int((mask & ~keep).sum()))
    return {key: (np.concatenate(kept), left_out) for key, (kept, left_out) in groups.items()}


def compare(base, new, columns=DEFAULT_COLUMNS, alpha=0.05, threshold=0.02):
    """Rows for every (run definition, input, column) present on both sides; base and new are
    (RunTables, conditions by file name) as pipeline.load_tables gives them."""
    base_groups, new_groups = groups(*base, columns), groups(*new, columns)
    rows = []
    for key in sorted(base_groups.keys() & new_groups.keys(), key=lambda k: (columns.index(k[2]), k[:2])):
        (a, out_a), (b, out_b) = base_groups[key], new_groups[key]
        if len(a) < 2 or len(b) < 2:
            continue
        tests = {r.test: r for r in stats.two_sample_tests(a, b, "base", "new", alpha=alpha,
                                                              tests=("Welch t", "Mann-Whitney U"))}
        ratio = stats.ratio_of_means(a, b)
        rows.append(Row(*key, len(a), len(b), out_a, out_b, float(a.mean()), float(b.mean()),
                        ratio.ratio, ratio.ci_low, ratio.ci_high, tests["Welch t"].p, tests["Mann-Whitney U"].p))
    for row, p in zip(rows, stats.holm([r.welch_p for r in rows]) if rows else []):
        row.p_holm = float(p)
        row.verdict = stats.verdict(p < alpha, row.ratio, threshold)
    return rows


def regressed(rows):
    """Whether any row is a significant slowdown beyond the threshold (the CI gate)."""
    return any(r.verdict == "slower" for r in rows)


HEADER = ["run definition", "input", "column", "n base", "n new", "left out", "base mean", "new mean",
          "change", "95 % CI", "Welch p (Holm)", "Mann-Whitney p", "verdict"]


def _cells(r):
    return [r.rundefinition, r.input, r.column, str(r.n_base), str(r.n_new), f"{r.excluded_base}/{r.excluded_new}",
            f"{r.mean_base:.6g}", f"{r.mean_new:.6g}", f"{100 * (r.ratio - 1):+.2f} %",
            f"{100 * (r.ci_low - 1):+.2f} … {100 * (r.ci_high - 1):+.2f} %", f"{r.p_holm:.3g}", f"{r.mannwhitney_p:.3g}",
            r.verdict]


def legend(alpha, threshold):
    return (f"verdict: Welch t, Holm over {{n}} rows, alpha {alpha}; slower/faster only when p < alpha and "
            f"|change| > {threshold:.1%}, else ~. Mann-Whitney U shown for comparison. "
            "CI: bootstrap of the ratio of means. left out: runs that did not finish normally or whose value is "
            "no measurement (none, NaN, infinite, negative) (base/new).")


def render(rows, fmt, alpha, threshold):
    note = legend(alpha, threshold).format(n=len(rows))
    if fmt == "json":
        return json.dumps({"alpha": alpha, "threshold": threshold, "rows": [asdict(r) for r in rows],
                           "regression": regressed(rows), "method": note}, indent=2, default=str)
    table = [HEADER] + [_cells(r) for r in rows]
    if fmt == "markdown":
        lines = ["| " + " | ".join(row) + " |" for row in table]
        lines.insert(1, "|" + "---|" * len(HEADER))
        return "\n".join(lines) + f"\n\n{note}"
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    return "\n".join(lines) + f"\n\n{note}"
