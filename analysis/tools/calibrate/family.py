"""
The Holm family of `timekit compare` (and `ab`), as calibrate and plan must apply it.

compare Holm-corrects over every row (run definition, input, column) of a comparison, so a
calibration of one column alone states a power the default command does not have. Here: the
invocations of every row loaded aligned by invocation (a split takes all columns of an invocation
with it), and Holm's step-down on many splits at once (docs/calibration.md, "The family").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.core import results, stats, validity
from analysis.core.errors import UserError
from analysis.sweep.load import load_tables
from analysis.tools.compare import repeated as compare_mod

DEFAULT_COLUMNS = compare_mod.DEFAULT_COLUMNS


@dataclass
class Group:
    """One run definition and input: per column, its finished values per invocation, the
    invocations aligned (index i is the same benchexec invocation in every column)."""

    rundefinition: str
    input: str
    invocations: list          # (benchmark, date) of each kept invocation, in date order
    columns: dict              # column -> [array of valid values per invocation]
    left_out: dict = None      # column -> {reason: runs left out} (analysis.core.validity), kept invocations only

    def label(self, column):
        text = validity.left_out_text((self.left_out or {}).get(column, {}))
        return f"{self.rundefinition} / {self.input} ({column})" + (f", {text}" if text else "")


def load_invocations(paths, columns, error=UserError):
    """({(benchmark, date): [RunTable]}, conditions by file name) of all paths, `columns` kept."""
    by_invocation, conditions = {}, {}
    for path in map(Path, paths):
        if not path.exists():
            raise error(f"{path}: no such file or directory")
        try:
            found, steps, _ = load_tables(path, {"status", "category", *columns})
        except results.ResultFileError as e:
            raise error(str(e)) from None
        conditions.update(steps)
        for table in found:
            by_invocation.setdefault((table.benchmark, table.date), {})[table.path.resolve()] = table
    return {key: list(tables.values()) for key, tables in by_invocation.items()}, conditions


def groups_of(by_invocation, conditions, columns):
    """{(run definition, input): Group}, with compare's grouping and validity rule
    (compare_mod.rerun_groups, applied one invocation at a time so that the invocations stay
    aligned between columns). An invocation is kept for a group only when every column has a
    finished value in it."""
    groups = {}
    for invocation in sorted(by_invocation, key=lambda i: (i[1], i[0])):
        found = compare_mod.rerun_groups(by_invocation[invocation], conditions, tuple(columns))
        for (rundefinition, name) in dict.fromkeys(key[:2] for key in found):
            arrays = [found.get((rundefinition, name, column), ([], 0))[0] for column in columns]
            if not all(arrays):
                continue
            group = groups.setdefault((rundefinition, name), Group(rundefinition, name, [], {c: [] for c in columns},
                                                                   {c: {} for c in columns}))
            group.invocations.append(invocation)
            for column, [values] in zip(columns, arrays):
                group.columns[column].append(values)
                reasons = found[(rundefinition, name, column)][1]
                group.left_out[column] = validity.merge(group.left_out[column], reasons)
    return groups


def load_groups(paths, columns, error=UserError):
    """{(run definition, input): Group} of all paths (see groups_of)."""
    return groups_of(*load_invocations(paths, columns, error), columns)


def holm_reject(p, alpha):
    """Holm on each row of p (splits x family): which hypotheses are rejected at alpha (stats.holm,
    statsmodels' Holm; NaN never rejects and does not count in the family)."""
    return stats.holm(p) < alpha


def describe(labels, columns, alpha):
    """One line: which family, what a row is tested at."""
    k = len(labels)
    default = tuple(columns) == tuple(DEFAULT_COLUMNS)
    which = "compare's and ab's default columns" if default else "the columns given"
    text = (f"Holm family: {k} row{'s' if k != 1 else ''} ({', '.join(labels)}; {which}), as compare forms it; "
            f"each row is tested at alpha {alpha:g} / {k} = {alpha / k:.3g} when no other row is significant")
    if k > 1:
        text += (f", at alpha {alpha:g} when all others are. A smaller family (--column cputime, also in compare) tests "
                 "its rows at a larger alpha and so has more power")
    return text + "."
