"""What loading a result file gives: a RunTable, or a ResultFileError of one line.

Also the two exceptions with which the fast reader gives up, so that the strict one reads the file.
"""

from __future__ import annotations

import collections
import dataclasses
import pathlib

import numpy as np

from analysis.core.errors import UserError


class ResultFileError(UserError):
    """A result file that cannot be loaded; str(e) is one line: '<path>: <what>; <what to do>'."""

    def __init__(self, path, problem):
        super().__init__(" ".join(f"{path}: {problem}".splitlines()))


class NotSimple(Exception):
    """The fast reader met something it does not read itself; the strict reader takes over."""


class TextAfterNumbers(NotSimple):
    """A column has text after numbers whose text the fast reader did not keep: read again."""


@dataclasses.dataclass(eq=False)
class RunTable:
    """The runs of one result file (one run set), one array entry per run in file order.

    ``benchmark`` is BenchExec's ``benchmarkname``, ``name`` the result's ``name`` (the run definition,
    plus ``.<tasks name>`` in per-task-set files), ``rundefinition`` the run definition alone ('' if
    unnamed). ``text_columns`` holds every non-numeric column (dtype object); ``nonfinite`` counts per
    numeric column the values written as NaN or (-)Inf, which stay nan/inf in ``columns``.
    docs/architecture.md, "Reading result files".
    """

    path: pathlib.Path
    benchmark: str
    name: str
    rundefinition: str
    tool: str
    toolmodule: str
    version: str
    date: str
    options: str
    attributes: dict[str, str] = dataclasses.field(repr=False)
    systeminfo: list[dict] = dataclasses.field(repr=False)
    tasks: np.ndarray = dataclasses.field(repr=False)
    files: np.ndarray = dataclasses.field(repr=False)
    run_options: np.ndarray = dataclasses.field(repr=False)
    properties: np.ndarray = dataclasses.field(repr=False)  # BenchExec's run identity: task name + properties
    status: np.ndarray = dataclasses.field(repr=False)
    category: np.ndarray = dataclasses.field(repr=False)
    columns: dict[str, np.ndarray] = dataclasses.field(repr=False)
    units: dict[str, str] = dataclasses.field(repr=False)
    text_columns: dict[str, np.ndarray] = dataclasses.field(repr=False)
    nonfinite: dict[str, int] = dataclasses.field(repr=False)

    def __len__(self) -> int:
        return len(self.tasks)

    def valid(self) -> np.ndarray:
        """Mask of runs that finished normally, the only ones whose times mean anything.

        BenchExec gives a timeout, out-of-memory, crash or kill the category 'error'. Files
        older than categories get the category BenchExec would give their status. A run
        without status did not finish at all.
        """
        # imported here: benchexec.result imports urllib and http.client (9 MB), which loading
        # a file does not need
        from benchexec import result as bx_result

        error_statuses = {status for status in set(self.status.tolist()) if _is_error_status(bx_result, status)}
        error = [
            category == bx_result.CATEGORY_ERROR or (not category and status in error_statuses)
            for category, status in zip(self.category, self.status)
        ]
        return (self.status != "") & ~np.array(error, dtype=bool)

    def status_counts(self) -> dict[str, int]:
        """Runs per status, most frequent first; '' counts runs without status."""
        return dict(collections.Counter(self.status.tolist()).most_common())


def _is_error_status(bx_result, status):
    """Whether BenchExec's get_result_category would call this status an error."""
    classification = bx_result.get_result_classification(status)
    return classification == bx_result.RESULT_CLASS_OTHER and status not in (
        bx_result.RESULT_DONE,
        bx_result.RESULT_UNKNOWN,
    )


def without_duplicate_blocks(tables):
    """BenchExec writes a run definition's runs once in total and again per task set (files with a
    `block` attribute), but only the per-task-set files when just one task set ran. Keep each run once."""
    def key(t):
        return (t.benchmark, t.date, t.rundefinition)

    combined = {key(t) for t in tables if "block" not in t.attributes}
    return [t for t in tables if "block" not in t.attributes or key(t) not in combined]
