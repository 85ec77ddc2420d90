"""Result tables of a sweep directory, a directory of result files, or result files."""

from dataclasses import dataclass
from pathlib import Path

from analysis.core import results
from analysis.sweep import disturbed
from analysis.sweep.model import MANIFEST, Sweep

WALL_CPU = {"cputime", "walltime"}  # what the wall / CPU sign of a disturbed invocation reads


@dataclass
class Loaded:
    tables: list  # RunTables, those of disturbed invocations left out (unless too many are)
    conditions: dict  # result file name -> its sweep step
    sweep: object  # the Sweep (or another steps manifest), None for bare result files
    disturbed: disturbed.Disturbed | None  # the sweep's invocations that met outside work
    set_aside: list = None  # the RunTables left out for it (they cost time all the same)


def load(path, columns=None):
    """The Loaded of a sweep directory, a directory of result files or one result file; `columns`:
    the titles to keep (None keeps all)."""
    path = Path(path)
    if (path / MANIFEST).exists():
        return of_record(path, Sweep.load(path), columns)
    if path.is_dir():
        return Loaded(results.without_duplicate_blocks(results.load_results(path, columns)), {}, None, None, [])
    return Loaded(results.load_results([path], columns), {}, None, None, [])


def of_record(directory, record, columns=None, unit="rerun"):
    """The Loaded of the result files a manifest's steps list (a sweep's, `ab`'s): the invocations
    that met outside work are left out, unless so many did that the report must say so instead
    (analysis.sweep.disturbed); `unit` names a step in the text ('rerun', 'invocation')."""
    files, conditions = [], {}
    for step in record.steps:
        for name in step.result_files:
            files.append(Path(directory) / name)
            conditions[name] = step
    tables = results.load_results(files, None if columns is None else set(columns) | WALL_CPU)
    found = disturbed.of(record, tables, conditions, unit)
    out = [t for t in tables if conditions[t.path.name].name in found.names] if not found.too_many else []
    return Loaded([t for t in tables if t not in out], conditions, record, found, out)


def load_tables(path, columns=None):
    """(RunTables, conditions by file name, sweep or None), as load() finds them."""
    found = load(path, columns)
    return found.tables, found.conditions, found.sweep
