"""Values that are not measurements: no value, NaN, infinite, or a negative time, size or energy.

The one rule of the kit for them: none may enter a statistic, and none may vanish without a word.
``check``/``of_column``/``of_runs`` leave each such value out on its own, run by run and column by
column, and count it under its reason; ``left_out_text`` and ``nothing_left`` say so
(docs/verdicts.md, "Values that are no measurement").
"""

from __future__ import annotations

import dataclasses

import numpy as np

# Quantities that cannot be negative: a negative value is a broken measurement, not a change.
NON_NEGATIVE_UNITS = ("s", "B", "J")

NO_VALUE = "no value"
NAN = "NaN"
NAN_OR_NO_VALUE = "NaN or no value"
INFINITE = "infinite"
NEGATIVE = "negative"
NOT_FINISHED = "not finished normally"   # BenchExec's status: timeout, error, out of memory ...
REASONS = (NOT_FINISHED, NO_VALUE, NAN, NAN_OR_NO_VALUE, INFINITE, NEGATIVE)


@dataclasses.dataclass
class Validity:
    """Which values are usable, and how many of the others were left out for which reason."""

    usable: np.ndarray                                    # bool, one per value
    reasons: dict[str, int] = dataclasses.field(default_factory=dict)  # reason -> count, only > 0
    codes: np.ndarray | None = dataclasses.field(default=None, repr=False)  # per value: 1 + index into names, 0: kept or not counted
    names: tuple = ()

    @property
    def left_out(self) -> int:
        return sum(self.reasons.values())

    def describe(self) -> str:
        """'2 NaN, 1 negative' (empty when nothing was left out)."""
        return describe(self.reasons)

    def reason(self, i) -> str:
        """Why value i was left out ('' when it is usable or was not considered)."""
        code = int(self.codes[i])
        return self.names[code - 1] if code else ""

    def reasons_in(self, mask) -> dict[str, int]:
        """The counts by reason over the values where `mask` is true (one input of a file, say)."""
        counts = np.bincount(self.codes[np.asarray(mask, dtype=bool)], minlength=len(self.names) + 1)
        return {name: int(n) for name, n in zip(self.names, counts[1:]) if n}


def describe(reasons) -> str:
    """Counts by reason as one phrase, in the order of REASONS then any other reason."""
    order = list(REASONS) + sorted(set(reasons) - set(REASONS))
    return ", ".join(f"{reasons[r]} {r}" for r in order if reasons.get(r))


def check(values, unit="s", considered=None, nan_reason=NAN_OR_NO_VALUE, unconsidered_reason=None) -> Validity:
    """Usable values among `considered` (a bool mask; default all): finite, and not negative
    where the unit is one of NON_NEGATIVE_UNITS. Values outside `considered` are not usable; they
    were left out for another reason (e.g. a timeout) and are counted under `unconsidered_reason`
    where one is given, else not at all."""
    values = np.asarray(values, dtype=float)
    considered = np.ones(values.shape, dtype=bool) if considered is None else np.asarray(considered, dtype=bool)
    nan = np.isnan(values) & considered
    infinite = np.isinf(values) & considered
    usable = considered & ~nan & ~infinite
    negative = np.zeros_like(usable)
    if unit in NON_NEGATIVE_UNITS:
        with np.errstate(invalid="ignore"):
            negative = usable & (values < 0)
        usable &= ~negative
    names = (nan_reason, INFINITE, NEGATIVE) + ((unconsidered_reason,) if unconsidered_reason else ())
    codes = np.zeros(values.shape, dtype=np.int8)
    for code, where in enumerate((nan, infinite, negative, ~considered if unconsidered_reason else None), start=1):
        if where is not None:
            codes[where] = code
    counts = np.bincount(codes.ravel(), minlength=len(names) + 1)[1:]
    return Validity(usable, {reason: int(n) for reason, n in zip(names, counts) if n}, codes, names)


def nan_reason(table, column) -> str:
    """What a NaN in this column of the RunTable stands for: NaN as written, no value, or either."""
    values = table.columns.get(column)
    if values is None:
        return NO_VALUE
    written = table.nonfinite.get(column, 0) - int(np.isinf(values).sum())
    nans = int(np.isnan(values).sum())
    if written <= 0:
        return NO_VALUE
    return NAN if written >= nans else NAN_OR_NO_VALUE


def of_column(table, column, considered=None) -> Validity:
    """check() for a RunTable's column (absent column: every considered run has no value)."""
    values = table.columns.get(column)
    if values is None:
        values = np.full(len(table), np.nan)
    return check(values, table.units.get(column, ""), considered, nan_reason(table, column))


def of_runs(table, column, finished=None) -> Validity:
    """of_column() over all runs of a RunTable: the runs that did not finish normally (`finished`,
    default table.valid()) are left out too and counted as NOT_FINISHED."""
    finished = table.valid() if finished is None else finished
    values = table.columns.get(column)
    if values is None:
        values = np.full(len(table), np.nan)
    return check(values, table.units.get(column, ""), finished, nan_reason(table, column), NOT_FINISHED)


def left_out_text(reasons) -> str:
    """'left out: 5 NaN, 2 not finished normally', or '' when nothing was left out."""
    text = describe(reasons)
    return f"left out: {text}" if text else ""


def nothing_left(what, reasons) -> str:
    """The line for a row, point or column that disappears because no valid value is left."""
    text = describe(reasons)
    return f"{what}: no valid value left" + (f" ({text})" if text else "")


def merge(*reason_counts) -> dict[str, int]:
    """Sum of several reason -> count dicts."""
    total: dict[str, int] = {}
    for counts in reason_counts:
        for reason, n in counts.items():
            total[reason] = total.get(reason, 0) + n
    return total
