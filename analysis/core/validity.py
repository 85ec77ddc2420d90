"""Values that are not measurements: no value, NaN, infinite, or a negative time, size or energy.

BenchExec files can hold all of them (a tool-info module that parses "NaN", a clock that went
backwards, a value the run never wrote). None of them may enter a statistic, and none may vanish
without a word: every analysis takes its usable values through ``check``/``of_column``, which
count each left-out value under its reason, and shows those counts where it says what it left out.

NaN written in the file and a missing value are both NaN in a RunTable; the table's ``nonfinite``
count per column (NaN and Inf as written) tells them apart for a whole column, so the reason says
"NaN" or "no value" when the column allows it, else "NaN or no value".
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
REASONS = (NO_VALUE, NAN, NAN_OR_NO_VALUE, INFINITE, NEGATIVE)


@dataclasses.dataclass
class Validity:
    """Which values are usable, and how many of the others were left out for which reason."""

    usable: np.ndarray                                    # bool, one per value
    reasons: dict[str, int] = dataclasses.field(default_factory=dict)  # reason -> count, only > 0

    @property
    def left_out(self) -> int:
        return sum(self.reasons.values())

    def describe(self) -> str:
        """'2 NaN, 1 negative' (empty when nothing was left out)."""
        return describe(self.reasons)


def describe(reasons) -> str:
    """Counts by reason as one phrase, in the order of REASONS then any other reason."""
    order = list(REASONS) + sorted(set(reasons) - set(REASONS))
    return ", ".join(f"{reasons[r]} {r}" for r in order if reasons.get(r))


def check(values, unit="s", considered=None, nan_reason=NAN_OR_NO_VALUE) -> Validity:
    """Usable values among `considered` (a bool mask; default all): finite, and not negative
    where the unit is one of NON_NEGATIVE_UNITS. Values outside `considered` are not usable and not
    counted (they were left out for another reason, e.g. a timeout)."""
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
    counts = {nan_reason: int(nan.sum()), INFINITE: int(infinite.sum()), NEGATIVE: int(negative.sum())}
    return Validity(usable, {reason: n for reason, n in counts.items() if n})


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


def merge(*reason_counts) -> dict[str, int]:
    """Sum of several reason -> count dicts."""
    total: dict[str, int] = {}
    for counts in reason_counts:
        for reason, n in counts.items():
            total[reason] = total.get(reason, 0) + n
    return total
