"""
`timekit compare BASE NEW` over tasks: one run per task on each side, paired task by task.

Competition-style run sets have no repetitions to pool, so the change is measured per task and
summarised over tasks (and task sets): the geometric mean of the per-task ratios with a bootstrap
CI, the Wilcoxon signed-rank test on the log ratios, Holm over the rows. The filter, the verdict
("mixed" included) and the exit codes: docs/calibration.md, "One run per task, one invocation a
side".
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import scipy.stats

from analysis.core.errors import UserError
from analysis.core import stats, validity
from analysis.tools.compare import pairing
from analysis.tools.compare.pairing import DEFAULT_COLUMNS, MIN_CPUTIME
from analysis.tools.compare.repeated import NOTHING_COMPARED

TIME_COLUMNS = ("cputime", "walltime")
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_MAX_N = 5000     # BCa's jackknife is O(n^2); beyond, the t interval of the mean log ratio
SIZE_VERDICTS = {"slower": "larger", "faster": "smaller"}   # the verdict's words for a memory column
NOT_FINISHED = "not finished normally on a side"
ZERO = "zero on one side (no ratio)"


class PairedError(UserError):
    """Raised for input the paired comparison cannot use (turned into a UserError by the CLI)."""


@dataclasses.dataclass
class Stat:
    """Per-task ratios new/base of one column over one set of tasks."""

    block: str
    n: int
    geomean: float
    ci_low: float
    ci_high: float
    ci_method: str
    wilcoxon_p: float
    wilcoxon_side: int  # +1: the signed ranks point to slower (W+ > W-), -1 to faster, 0 neither
    faster: float      # share of tasks with ratio < 1 - threshold
    slower: float      # share of tasks with ratio > 1 + threshold
    median_base: float
    median_new: float
    p_holm: float = math.nan
    verdict: str = "~"


@dataclasses.dataclass
class ColumnResult:
    column: str
    unit: str
    left_out: dict          # reason -> tasks, in the order they were applied
    overall: Stat
    blocks: list            # Stat per task set, Holm over them


@dataclasses.dataclass
class Comparison:
    """One base run set against one new run set."""

    name: str
    base: dict              # label, run set, date, version
    new: dict
    paired: int
    by_tail: int
    only_base: int
    only_new: int
    only_base_tasks: list   # the first MAX_LISTED
    only_new_tasks: list
    duplicates: dict        # side -> task names repeated (paired in file order)
    transitions: list       # rows base, columns new, in pairing.OUTCOMES order
    newly_wrong: int
    newly_wrong_tasks: list
    newly_correct: int
    score_base: float | None
    score_new: float | None
    score_method: str
    block_source: str
    min_cputime: float
    columns: list
    not_compared: list = dataclasses.field(default_factory=list)   # columns without a valid value on a side, and why
    # for the figures, not written to JSON
    arrays: dict = dataclasses.field(default_factory=dict, repr=False)


@dataclasses.dataclass
class PairedResult:
    comparisons: list
    skipped: list           # run sets that could not be paired, and why
    alpha: float
    threshold: float
    min_cputime: float

    @property
    def regression(self) -> bool:
        """The CI gate: a time column significantly slower beyond the threshold, or newly wrong results."""
        return any(c.newly_wrong for c in self.comparisons) or any(
            col.overall.verdict == "slower" for c in self.comparisons for col in c.columns if col.column in TIME_COLUMNS)

    @property
    def nothing(self) -> bool:
        """No column of any pair of run sets had a task left to compare."""
        return not any(col.overall.n for c in self.comparisons for col in c.columns)

    def nothing_why(self) -> str:
        """Why nothing was compared, as the output's verdict says it."""
        under = under_label(self.min_cputime)
        columns = [col for c in self.comparisons for col in c.columns]
        if columns and all(col.left_out.get(under) for col in columns):
            left_out = max((col.left_out for col in columns), key=lambda d: sum(d.values()))
            total, n_under = sum(left_out.values()), left_out[under]
            if n_under == total:
                return (f"nothing compared: every task under --min-cputime {self.min_cputime:g} s "
                        "(lower it to compare them)")
            others = ", ".join(f"{n} {reason}" for reason, n in left_out.items() if reason != under and n)
            return (f"nothing compared: {n_under} of {total} tasks under --min-cputime {self.min_cputime:g} s "
                    f"(lower it to compare them), the other {total - n_under}: {others}")
        return "nothing compared: no task finished normally with valid values on both sides"

    @property
    def exit_code(self) -> int:
        if self.regression:
            return 1
        return NOTHING_COMPARED if self.nothing else 0

    def method(self) -> str:
        return (f"Per task: ratio new/base over tasks both sides finished normally with valid values and at least "
                f"{self.min_cputime:g} s CPU time (geometric mean of both sides). Geometric mean of the ratios with a 95 % bootstrap CI "
                f"(BCa, {BOOTSTRAP_RESAMPLES} resamples, on the log ratios; Student t beyond {BOOTSTRAP_MAX_N} tasks). "
                f"Wilcoxon signed-rank test on the log ratios, Holm over all run-set x column rows (and, per task set, "
                f"over the task sets), alpha {self.alpha}; slower/faster only when p < alpha and the geometric mean is "
                f"beyond {self.threshold:.1%} on the side the signed ranks point to (mixed where they point the other "
                "way), else ~ (for memory: smaller/larger). lower/higher: share of tasks whose value fell/rose beyond the "
                "threshold (faster/slower for a time, smaller/larger for memory). Exit 1 on a "
                f"slower time column or on a task newly wrong; exit {NOTHING_COMPARED} when no column has a task left "
                "to compare.")


# --------------------------------------------------------------------------------------------
# statistics


def _bootstrap_ci(logs, confidence=0.95, seed=0):
    """CI of the mean log ratio: BCa up to BOOTSTRAP_MAX_N values, else Student t."""
    n = logs.size
    if n < 2:
        return math.nan, math.nan, "not computed: fewer than 2 tasks"
    if np.ptp(logs) == 0:
        return float(logs[0]), float(logs[0]), "all tasks have the same ratio"
    if n > BOOTSTRAP_MAX_N:
        half = scipy.stats.t.ppf(0.5 + confidence / 2, n - 1) * logs.std(ddof=1) / math.sqrt(n)
        return float(logs.mean() - half), float(logs.mean() + half), f"Student t (n > {BOOTSTRAP_MAX_N})"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = scipy.stats.bootstrap((logs,), np.mean, vectorized=True, n_resamples=BOOTSTRAP_RESAMPLES,
                                    confidence_level=confidence, method="BCa", batch=200,
                                    random_state=np.random.default_rng(seed))
    ci = res.confidence_interval
    return float(ci.low), float(ci.high), f"bootstrap BCa, {BOOTSTRAP_RESAMPLES} resamples"


def _wilcoxon(logs):
    if logs.size == 0 or not np.any(logs):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(scipy.stats.wilcoxon(logs).pvalue)


def _wilcoxon_side(logs):
    """Which way the signed-rank statistic points: sign of W+ - W- over the non-zero log ratios
    (the side whose one-sided Wilcoxon p is below 0.5)."""
    nonzero = logs[logs != 0]
    ranks = scipy.stats.rankdata(np.abs(nonzero))
    return int(np.sign(ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()))


def verdict(p, stat, alpha, threshold):
    """stats.verdict on the Wilcoxon p and the geometric mean, 'mixed' where the test's direction
    is not the geometric mean's."""
    found = stats.verdict(p < alpha, stat.geomean, threshold)
    if found != "~" and stat.wilcoxon_side != (1 if found == "slower" else -1):
        return "mixed"
    return found


def ratio_stat(base, new, threshold, block="all") -> Stat:
    """Geometric mean, CI, Wilcoxon p and shares for paired positive values base and new."""
    ratios = new / base
    logs = np.log(ratios)
    n = int(logs.size)
    low, high, method = _bootstrap_ci(logs)
    return Stat(
        block=block, n=n,
        geomean=float(np.exp(logs.mean())) if n else math.nan,
        ci_low=math.exp(low) if math.isfinite(low) else math.nan,
        ci_high=math.exp(high) if math.isfinite(high) else math.nan,
        ci_method=method, wilcoxon_p=_wilcoxon(logs), wilcoxon_side=_wilcoxon_side(logs),
        faster=float(np.mean(ratios < 1 - threshold)) if n else math.nan,
        slower=float(np.mean(ratios > 1 + threshold)) if n else math.nan,
        median_base=float(np.median(base)) if n else math.nan,
        median_new=float(np.median(new)) if n else math.nan,
    )


def _column(base, new, pairs, column, keep_cpu, min_cputime, threshold, alpha):
    """ColumnResult of one column over the paired tasks; keep_cpu: tasks that pass the min-time filter."""
    b_index, n_index = pairs.base, pairs.new
    finished = base.finished[b_index] & new.finished[n_index]
    left_out = {NOT_FINISHED: int((~finished).sum())}
    b_values, n_values = base.values[column][b_index], new.values[column][n_index]
    usable = finished.copy()
    for side, run_set, index in (("base", base, b_index), ("new", new, n_index)):
        bad = usable & ~run_set.usable[column][index]
        if bad.any():
            left_out[f"{side}: not a valid value ({_reasons_of(run_set, column)})"] = int(bad.sum())
        usable &= ~bad
    under = usable & ~keep_cpu
    left_out[under_label(min_cputime)] = int(under.sum())
    usable &= keep_cpu
    zero = usable & ((b_values <= 0) | (n_values <= 0))
    if zero.any():
        left_out[ZERO] = int(zero.sum())
    usable &= ~zero
    overall = ratio_stat(b_values[usable], n_values[usable], threshold)
    blocks = []
    labels = base.blocks[b_index][usable]
    if len(labels):
        order = np.argsort(labels, kind="stable")
        sorted_labels = labels[order]
        cuts = np.flatnonzero(sorted_labels[1:] != sorted_labels[:-1]) + 1
        b_used, n_used = b_values[usable][order], n_values[usable][order]
        for part in np.split(np.arange(len(order)), cuts):
            blocks.append(ratio_stat(b_used[part], n_used[part], threshold, block=str(sorted_labels[part[0]])))
    if len(blocks) > 1:
        for stat, p in zip(blocks, stats.holm([s.wilcoxon_p for s in blocks])):
            stat.p_holm = float(p)
            stat.verdict = verdict(p, stat, alpha, threshold)
    else:
        blocks = []
    return ColumnResult(column, base.units.get(column, ""), left_out, overall, blocks)


def under_label(min_cputime):
    """The min-time filter's reason, as the output states it (the method says of which mean)."""
    return f"under {min_cputime:g} s CPU time"


def _reasons_of(run_set, column):
    """The run set's reasons for invalid values of a column, with their counts over the run set."""
    from analysis.core import validity

    return validity.describe(run_set.invalid.get(column, {})) or "no value"


def compare_run_sets(base, new, columns, alpha, threshold, min_cputime) -> Comparison:
    """All of one run set pair except the Holm correction across pairs (see compare_paired)."""
    pairs = pairing.pair(base, new)
    if not len(pairs.base):
        raise PairedError(f"{base.label} and {new.label} have no task in common")
    matrix = pairing.transitions(base, new, pairs)
    wrong = pairing.WRONG
    b_out, n_out = base.outcome[pairs.base], new.outcome[pairs.new]
    newly_wrong = np.flatnonzero((n_out == wrong) & (b_out != wrong))
    newly_correct = int(((n_out == pairing.CORRECT) & (b_out != pairing.CORRECT)).sum())
    b_cpu, n_cpu = base.values["cputime"][pairs.base], new.values["cputime"][pairs.new]
    with np.errstate(invalid="ignore"):
        keep_cpu = ~(np.sqrt(b_cpu * n_cpu) < min_cputime)
    present, not_compared = [], []
    for column in columns:
        empty = [(side, s) for side, s in (("base", base), ("new", new)) if not s.usable[column].any()]
        if not empty:
            present.append(column)
        for side, s in empty:
            reasons = {validity.NOT_FINISHED: int((~s.finished).sum()), **s.invalid.get(column, {})}
            not_compared.append(validity.nothing_left(f"{column} on {side}", {k: n for k, n in reasons.items() if n}))
    score = base.score is not None and new.score is not None
    comparison = Comparison(
        name=_name(base, new),
        base=_describe(base), new=_describe(new),
        paired=len(pairs.base), by_tail=pairs.by_tail, only_base=len(pairs.only_base), only_new=len(pairs.only_new),
        only_base_tasks=base.names[pairs.only_base[:pairing.MAX_LISTED]].tolist(),
        only_new_tasks=new.names[pairs.only_new[:pairing.MAX_LISTED]].tolist(),
        duplicates=pairs.repeated,
        transitions=matrix.tolist(),
        newly_wrong=len(newly_wrong), newly_wrong_tasks=new.names[pairs.new[newly_wrong[:pairing.MAX_LISTED]]].tolist(),
        newly_correct=newly_correct,
        score_base=float(base.score[pairs.base].sum()) if score else None,
        score_new=float(new.score[pairs.new].sum()) if score else None,
        score_method=base.score_method if score else (base.score_method if base.score is None else new.score_method),
        block_source=base.block_source, min_cputime=min_cputime,
        columns=[_column(base, new, pairs, c, keep_cpu, min_cputime, threshold, alpha) for c in present],
        not_compared=not_compared,
    )
    comparison.arrays = {"pairs": pairs, "base": base, "new": new}
    return comparison


def _name(base, new):
    """What the comparison is called: the run set, with the two dates where only they differ."""
    if base.name != new.name:
        return f"{base.name} -> {new.name}"
    if base.date[:10] != new.date[:10]:
        return f"{base.name} {base.date[:10]} -> {new.date[:10]}"
    return base.name


def _describe(run_set):
    return {"label": run_set.label, "run set": run_set.name, "date": run_set.date, "version": run_set.version,
            "tasks": len(run_set), "time_limit_s": run_set.time_limit}


def match_run_sets(base_sets, new_sets):
    """[(base, new)] pairs of run sets and [skipped reasons]: one each side pair whatever their
    names; otherwise run sets pair by run-definition name."""
    if len(base_sets) == 1 and len(new_sets) == 1:
        return [(base_sets[0], new_sets[0])], []
    new_by_name = {}
    for rs in new_sets:
        new_by_name.setdefault(rs.name, []).append(rs)
    matched, skipped = [], []
    for rs in base_sets:
        candidates = new_by_name.pop(rs.name, [])
        if len(candidates) == 1:
            matched.append((rs, candidates[0]))
        else:
            skipped.append(f"base run set {rs.name} ({rs.label}): {'no' if not candidates else 'more than one'} "
                           "new run set of that name")
    skipped += [f"new run set {rs.name} ({rs.label}): no base run set of that name" for v in new_by_name.values() for rs in v]
    return matched, skipped


def compare_paired(base_sets, new_sets, columns=DEFAULT_COLUMNS, alpha=0.05, threshold=0.02,
                   min_cputime=MIN_CPUTIME) -> PairedResult:
    """Paired comparison of every matching pair of run sets; Holm over all overall rows."""
    matched, skipped = match_run_sets(base_sets, new_sets)
    return compare_pairs(matched, columns, alpha, threshold, min_cputime, skipped)


def compare_pairs(matched, columns=DEFAULT_COLUMNS, alpha=0.05, threshold=0.02, min_cputime=MIN_CPUTIME,
                  skipped=()) -> PairedResult:
    """Paired comparison of the given (base, new) run sets; Holm over all overall rows."""
    columns = tuple(dict.fromkeys(("cputime", *columns)))   # the min-time filter needs cputime
    comparisons, skipped = [], list(skipped)
    for base, new in matched:
        try:
            comparisons.append(compare_run_sets(base, new, columns, alpha, threshold, min_cputime))
        except PairedError as e:
            skipped.append(str(e))
    rows = [(col, col.overall) for c in comparisons for col in c.columns]
    for (col, row), p in zip(rows, stats.holm([r.wilcoxon_p for _, r in rows]) if rows else []):
        row.p_holm = float(p)
        row.verdict = verdict(p, row, alpha, threshold)
        if col.unit == "B":
            row.verdict = SIZE_VERDICTS.get(row.verdict, row.verdict)
            for block in col.blocks:
                block.verdict = SIZE_VERDICTS.get(block.verdict, block.verdict)
    return PairedResult(comparisons, skipped, alpha, threshold, min_cputime)


def jsonable(result: PairedResult) -> dict:
    """Everything but the figures' arrays, for --format json and the report's data."""
    comparisons = []
    for c in result.comparisons:
        d = {f.name: getattr(c, f.name) for f in dataclasses.fields(c) if f.name not in ("arrays", "columns")}
        d["outcomes"] = list(pairing.OUTCOMES)
        d["columns"] = [dataclasses.asdict(col) for col in c.columns]
        comparisons.append(d)
    return {"mode": "paired over tasks", "alpha": result.alpha, "threshold": result.threshold,
            "min_cputime": result.min_cputime, "method": result.method(), "regression": result.regression,
            "nothing_compared": result.nothing_why() if result.nothing else "", "exit_code": result.exit_code,
            "comparisons": comparisons, "skipped": result.skipped}
