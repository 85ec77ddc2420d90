"""Result tables of a sweep directory, a directory of result files, or result files."""

from pathlib import Path

from analysis.core import results
from analysis.sweep.model import MANIFEST, Sweep


def load_tables(path, columns=None):
    """(RunTables, conditions by file name, sweep or None) of a sweep directory or result files;
    `columns`: the titles to keep (None keeps all)."""
    path = Path(path)
    if (path / MANIFEST).exists():
        sweep = Sweep.load(path)
        files, conditions = [], {}
        for step in sweep.steps:
            for name in step.result_files:
                files.append(path / name)
                conditions[name] = step
        return results.load_results(files, columns), conditions, sweep
    if path.is_dir():
        return results.without_duplicate_blocks(results.load_results(path, columns)), {}, None
    return results.load_results([path], columns), {}, None
