"""
`timekit compare BASE NEW`: did anything get faster or slower, and can a CI job gate on it? Runs
group by run definition, input and benchexec invocation; with 2+ invocations a side the rerun is
the unit (compare/reruns: Welch's t on rerun means, a two-stage bootstrap CI), else the runs are,
and the row says it sees one invocation's noise only. Holm over the rows; "slower"/"faster" only
beyond the threshold too; nothing compared exits NOTHING_COMPARED. docs/calibration.md has the rules.
"""

import json
from dataclasses import asdict, dataclass, field

import numpy as np

from analysis.core import fmt, stats, validity
from analysis.core.tasks import input_of
from analysis.tools.compare import reruns, task_sets

MERGED_INPUTS = "all inputs"   # the input of a row of two definitions merged (analysis.ab.observations)

DEFAULT_COLUMNS = ("cputime", "walltime")
MEMORY_COLUMNS = ("memory", "memUsage")   # BenchExec >= 2.0 and before
NOTHING_COMPARED = 3   # exit code: no row had values to compare (a CI gate must not read it as a pass)
UNDECIDED = "undecided"   # a row whose test and interval disagree (_judged); the sequential rule's open rows too
# a change the test and the interval show, within the threshold: the gate passes it (within_threshold)
SLIGHTLY = {"slower": "slightly slower", "faster": "slightly faster"}
SAME = ("~", *SLIGHTLY.values())   # the verdicts of a row within the threshold
NOTHING_WHY = "nothing compared: no run definition, input and column has 2+ valid values on both sides"
NOTHING = f"{NOTHING_WHY} (exit {NOTHING_COMPARED})"
ONE_INVOCATION = "within one invocation: drift between invocations not measured"


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
    reruns_base: int = 1
    reruns_new: int = 1
    unit: str = "run"                     # what the test counts: "rerun" (2+ invocations a side) or "run"
    between_share: float = float("nan")   # share of the variance between reruns (rerun unit only)
    cv_within: float = float("nan")
    cv_between: float = float("nan")
    between_p: float = float("nan")       # F test that the reruns differ
    note: str = ""
    p_holm: float = float("nan")
    verdict: str = "~"
    left_out_base: dict = field(default_factory=dict)   # reason -> runs (analysis.core.validity)
    left_out_new: dict = field(default_factory=dict)
    tasks: int = 0                        # unit "task set": tasks valid in every invocation of both sides
    pair_ratios: list = field(default_factory=list)   # unit "task set": geometric mean ratio per invocation pair
    interval: str = ""                    # "repeated": the CI is the sequential rule's (ab_looks.apply)


@dataclass
class Result:
    """The rows, and the (run definition, input, column) of both sides that could not be compared."""

    rows: list
    not_compared: list   # one line each: which, and why (too few valid values, and what was left out)

    @property
    def nothing(self) -> bool:
        return not self.rows


def rerun_groups(tables, conditions, columns):
    """{(run definition, input, column): ([valid values per invocation, by date], {reason: runs left out})};
    an invocation is BenchExec's (benchmark name, date); in a sweep the run definition is named with
    its condition or load level, and its reruns are the invocations. A run is left out of a column
    when it did not finish normally or its value there is no measurement (analysis.core.validity)."""
    groups = {}
    for table in tables:
        step = conditions.get(table.path.name)
        where = step and (step.condition or f"load {step.load}")
        rundefinition = f"{table.rundefinition} @ {where}" if step else table.rundefinition
        invocation = (table.benchmark, table.date)
        inputs = np.array([input_of(t) for t in table.tasks], dtype=object)
        finished = table.valid()
        for column in columns:
            values = table.columns.get(column, np.full(len(table), np.nan))
            check = validity.of_runs(table, column, finished)
            for name in dict.fromkeys(inputs.tolist()):
                mask = inputs == name
                kept, left_out = groups.setdefault((rundefinition, name, column), ({}, []))
                kept.setdefault(invocation, []).append(values[mask & check.usable])
                left_out.append(check.reasons_in(mask))
    return {key: ([v for v in (np.concatenate(kept[i]) for i in sorted(kept, key=_date_first)) if v.size],
                  validity.merge(*left_out))
            for key, (kept, left_out) in groups.items()}


def _date_first(invocation):
    benchmark, date = invocation
    return date, benchmark


def groups(tables, conditions, columns):
    """{(run definition, input, column): (valid values of all invocations, {reason: runs left out})}."""
    return {key: (np.concatenate(kept) if kept else np.array([]), left_out)
            for key, (kept, left_out) in rerun_groups(tables, conditions, columns).items()}


def _per_run(key, a, b, out_a, out_b, alpha):
    """Runs as the unit: one invocation on at least one side (a, b: per-invocation arrays)."""
    reruns_a, reruns_b = len(a), len(b)
    a, b = np.concatenate(a or [[]]), np.concatenate(b or [[]])
    if len(a) < 2 or len(b) < 2:
        return None
    tests = {r.test: r for r in stats.two_sample_tests(a, b, "base", "new", alpha=alpha,
                                                          tests=("Welch t", "Mann-Whitney U"))}
    ratio = stats.ratio_of_means(a, b)
    return Row(*key, len(a), len(b), sum(out_a.values()), sum(out_b.values()), float(a.mean()), float(b.mean()),
               ratio.ratio, ratio.ci_low, ratio.ci_high, tests["Welch t"].p, tests["Mann-Whitney U"].p, reruns_a,
               reruns_b, note=ONE_INVOCATION, left_out_base=out_a, left_out_new=out_b)


def _per_rerun(key, a, b, out_a, out_b):
    """Reruns as the unit: 2+ invocations on both sides."""
    r = reruns.compare_reruns(a, b)
    c = r.components
    return Row(*key, sum(x.size for x in a), sum(x.size for x in b), sum(out_a.values()), sum(out_b.values()),
               r.mean_base, r.mean_new, r.ratio, r.ci_low, r.ci_high, r.welch_p, r.mannwhitney_p, len(a), len(b), "rerun",
               c.between_share, c.cv_within, c.cv_between, c.f_p, left_out_base=out_a, left_out_new=out_b)


def _not_compared(key, a, b, out_a, out_b):
    """Why a row has no values to compare: the side(s) with fewer than 2 valid values, and what was left out."""
    sides = [(side, sum(x.size for x in arrays), out) for side, arrays, out in (("base", a, out_a), ("new", b, out_b))]
    why = "; ".join(f"{side} has {n} valid value{'s' * (n != 1)}, 2+ needed" + (f" ({validity.left_out_text(out)})" if out else "")
                    for side, n, out in sides if n < 2)
    return f"{' / '.join(key)}: not compared: {why}"


def _task_set_rows(base, new, columns):
    """Rows of unit "task set" (analysis.tools.compare.task_sets) and the lines of sets with no task left."""
    rows, not_compared = [], []
    for key, c, (out_a, out_b) in task_sets.compare(base, new, columns):
        if c is None:
            not_compared.append(f"{' / '.join(key)}: not compared: no task valid in every invocation of both sides"
                                f" (base {validity.left_out_text(out_a)}; new {validity.left_out_text(out_b)})")
            continue
        rows.append(Row(*key, c.n_base, c.n_new, sum(out_a.values()), sum(out_b.values()), c.mean_base, c.mean_new,
                        c.ratio, c.ci_low, c.ci_high, c.p, float("nan"), c.reruns_base, c.reruns_new, task_sets.UNIT,
                        c.between_share, c.cv_within, c.cv_between, c.between_p, left_out_base=out_a,
                        left_out_new=out_b, tasks=c.tasks, pair_ratios=c.pair_ratios))
    return rows, not_compared


def compare(base, new, columns=DEFAULT_COLUMNS, alpha=0.05, threshold=0.02, per_task=False) -> Result:
    """Rows for every (run definition, input, column) present on both sides with 2+ valid values
    a side, and a line for each one present on both sides without; base and new are (RunTables,
    conditions by file name) as pipeline.load_tables gives them. One-run-per-task definitions
    rerun on both sides give one row per task set instead (task_sets), unless `per_task`."""
    if not per_task and task_sets.applies(base[0], new[0]):
        rows, not_compared = _task_set_rows(base, new, columns)
        return _judged(Result(rows, not_compared), alpha, threshold)
    base_groups, new_groups = rerun_groups(*base, columns), rerun_groups(*new, columns)
    rows, not_compared = [], []
    for key in sorted(base_groups.keys() & new_groups.keys(), key=lambda k: (columns.index(k[2]), k[:2])):
        (a, out_a), (b, out_b) = base_groups[key], new_groups[key]
        row = _per_rerun(key, a, b, out_a, out_b) if len(a) >= 2 and len(b) >= 2 else _per_run(key, a, b, out_a, out_b, alpha)
        if row:
            rows.append(row)
        else:
            not_compared.append(_not_compared(key, a, b, out_a, out_b))
    return _judged(Result(rows, not_compared), alpha, threshold)


def _judged(result, alpha, threshold):
    """Holm over the rows; slower/faster only when significant and beyond the threshold; undecided
    where the test and the interval disagree on whether there is a change at all (Holm raises a p
    that the row's unadjusted CI does not follow, or the bootstrap and Welch's t part near the edge):
    a reader must never see an interval above zero beside '~', nor one across it beside 'slower'."""
    for row, p in zip(result.rows, stats.holm([r.welch_p for r in result.rows]) if result.rows else []):
        row.p_holm = float(p)
        row.verdict = stats.verdict(p < alpha, row.ratio, threshold)
        if (p < alpha) != excludes_no_change(row) and (row.verdict != "~" or excludes_no_change(row)):
            row.verdict = UNDECIDED
        within_threshold(row)
        if row.column in MEMORY_COLUMNS:   # memory grows or shrinks; it is not slower or faster
            row.verdict = row.verdict.replace("slower", "larger").replace("faster", "smaller")
    return result


def within_threshold(row):
    """A '~' row whose interval excludes no change becomes 'slightly slower' or 'slightly faster':
    the change is shown, and lies within the threshold, so the gate passes it. '~' is left for rows
    whose interval holds no change (an interval above zero never sits beside '~')."""
    if row.verdict == "~" and excludes_no_change(row):
        row.verdict = SLIGHTLY["slower" if row.ci_low > 1 else "faster"]


def regressed(rows):
    """Whether any row is a significant slowdown (or memory growth) beyond the threshold (the CI gate)."""
    return any(r.verdict in ("slower", "larger") for r in rows)


def excludes_no_change(row):
    return row.ci_low > 1 or row.ci_high < 1


def exit_code(result):
    """1 on a regression, NOTHING_COMPARED when no row had values or a row is undecided, else 0."""
    if regressed(result.rows):
        return 1
    return NOTHING_COMPARED if result.nothing or any(r.verdict == UNDECIDED for r in result.rows) else 0



HEADER = ["run definition", "input", "column", "reruns", "n base", "n new", "left out", "base mean", "new mean",
          "change", "95 % CI", "Welch p (Holm)", "Mann-Whitney p", "between reruns", "verdict"]
PAIRED_P = "t p (Holm)"   # the p column where every row is paired: a one-sample t test, not Welch's


def _left_out_cell(r):
    """'0', or per side its counts by reason: '0 / 5 NaN'."""
    if not r.left_out_base and not r.left_out_new:
        return "0"
    return f"{validity.describe(r.left_out_base) or 0} / {validity.describe(r.left_out_new) or 0}"


def _cells(r, labels=None):
    share = f"{r.between_share:.0%}" if r.unit != "run" and np.isfinite(r.between_share) else "–"
    return [(labels or {}).get(r.rundefinition, r.rundefinition), r.input, r.column, f"{r.reruns_base}/{r.reruns_new}", str(r.n_base), str(r.n_new),
            _left_out_cell(r), f"{r.mean_base:.6g}", f"{r.mean_new:.6g}",
            f"{100 * (r.ratio - 1):+.2f} %", f"{100 * (r.ci_low - 1):+.2f} … {100 * (r.ci_high - 1):+.2f} %",
            fmt.p_value(r.p_holm), fmt.p_value(r.mannwhitney_p), share, r.verdict]


def legend(rows, alpha, threshold):
    units = {r.unit for r in rows}
    test = "one-sample t on the invocations' log ratios" if units == {"pair"} else "Welch t"
    text = (f"method: {test}, Holm over {len(rows)} rows, alpha {alpha}; slower/faster only when p < alpha and "
            f"|change| > {threshold:.1%}, else slightly slower/faster where the CI excludes no change, else ~; undecided "
            "where the test and the 95 % CI disagree on whether there is a change (the CI is not Holm-adjusted). left "
            "out (base / new): runs that did not finish normally or whose value is no measurement (none, NaN, infinite, "
            "negative), counted by reason.")
    if "rerun" in units:
        text += (" Rows with 2+ reruns (benchexec invocations) a side: the rerun is the unit (Kalibera & Jones 2013): "
                 "Welch t and Mann-Whitney U on the rerun means, change = ratio of the means of rerun means, CI: "
                 "two-stage bootstrap (reruns, then runs within); 'between reruns': share of the variance between "
                 "reruns (one-way random-effects ANOVA), the rest is within reruns.")
    if task_sets.UNIT in units:
        text += (" Rows of unit 'task set' (a one-run-per-task definition rerun on both sides; input = the task set: "
                 "BenchExec's block, else the task directory): the tasks whose runs finished normally with a valid "
                 "value in every invocation of both sides; change = geometric mean over the invocation pairs (rerun k "
                 "of base with rerun k of new, date order) of the geometric mean of the per-task ratios new/base; "
                 "Welch t on the per-invocation log geometric means (M a side) with its t interval as the 95 % CI; "
                 "'between reruns': share of the invocation level in a two-way ANOVA of the log values (invocations "
                 "x tasks, crossed). --per-task gives a row per task instead.")
    paired = [r for r in rows if r.unit == "pair"]
    interval = ("95 % CI: t interval over the M invocations (df M - 1); p: one-sample t test of those M log ratios "
                "against 0 (the invocation is the unit), Holm over the rows.")
    if any(r.input != MERGED_INPUTS for r in paired):
        text += (" Rows of unit 'pair' (a paired design: base and new in every invocation, timed execution by execution "
                 "by cmdrun): change = exp of the mean over invocations of each invocation's median ln(new / base) over its "
                 "pairs; " + interval)
    if any(r.input == MERGED_INPUTS for r in paired):
        text += (f" Rows of unit 'pair' over '{MERGED_INPUTS}' (two definitions merged into every invocation): change = "
                 "exp of the mean over invocations of each invocation's mean over the inputs both sides measured of "
                 "ln(mean new / mean base); " + interval)
    if "run" in units:
        text += (" Rows with 1 rerun on a side: runs are the unit (Welch t and Mann-Whitney U on the runs, "
                 f"bootstrap CI of the ratio of means): {ONE_INVOCATION}.")
    if any(r.interval == "repeated" for r in rows):
        text += (" Rows decided sequentially (ab's default, --until-decided): verdict and CI are the sequential rule's, "
                 "the CI its repeated interval at the look where it stopped (at that look's boundary level), which "
                 "keeps 95 % over all looks wherever the rule stops (a row decided '~' was decided by two one-sided tests, "
                 "on the narrower interval at 1 - 2 x that level, which lies inside ±threshold); the p column stays the "
                 "fixed-sample test's.")
    return text


def as_data(result, alpha, threshold, labels=None):
    """What `--format json` prints, as data (`timekit ab` adds its own fields before rendering it)."""
    rows = result.rows
    return {"alpha": alpha, "threshold": threshold, "rows": [asdict(r) for r in rows],
            "not_compared": result.not_compared, "nothing_compared": result.nothing,
            "regression": regressed(rows), "method": legend(rows, alpha, threshold),
            **({"labels": labels} if labels else {})}


def render(result, fmt, alpha, threshold, labels=None, method=True):
    """`labels`: what to print for a run definition (an ab folder's commands, 'base → new');
    `method`: the text ends with the paragraph on how the rows were computed (JSON always has it)."""
    rows = result.rows
    note = legend(rows, alpha, threshold)
    if fmt == "json":
        return json.dumps(as_data(result, alpha, threshold, labels), indent=2, default=str)
    tail = "".join(f"\n{line}" for line in result.not_compared)
    if result.nothing:
        return NOTHING + tail
    single = sum(r.unit == "run" for r in rows)
    # the limitation first, where a reader of a CI log sees it
    first = (f"{single} of {len(rows)} rows have one invocation on a side ({ONE_INVOCATION}); run 2+ reruns "
             "per side (timekit ab) to have it measured.\n\n") if single else ""
    header = HEADER if any(r.unit != "pair" for r in rows) else [PAIRED_P if h == HEADER[11] else h for h in HEADER]
    table = [header] + [_cells(r, labels) for r in rows]
    if fmt == "markdown":
        lines = ["| " + " | ".join(row) + " |" for row in table]
        lines.insert(1, "|" + "---|" * len(HEADER))
    else:
        widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    return first + "\n".join(lines) + (f"\n{tail}" if tail else "") + (f"\n\n{note}" if method else "")
