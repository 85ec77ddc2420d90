"""
samples.csv's rows: one per run of every result file in a report, built in one place from the
loaded RunTables and the sweep's steps, so that no experiment writes its own sample function.

Per run: its experiment, run definition, step, task, result file, status and category, then every
measured column of its file, in SI units. Columns are numpy arrays, so 100,000 runs stay a few
dozen arrays (docs/architecture.md, "The report").
"""

import numpy as np

# the columns that say where a run comes from; every measured column follows them
IDENTITY = ("experiment", "run_definition", "step", "condition", "load", "rerun", "task", "result_file",
            "status", "category", "set_aside")


def _constant(value, n):
    return np.full(n, value, dtype=object)


def _identity(experiment, table, step, set_aside):
    """The identity columns of one table's runs; `step` is its sweep step or None (bare files);
    `set_aside` why the statistics leave its runs out ('' where they do not)."""
    n = len(table)
    return {
        "experiment": _constant(experiment or "", n),
        "run_definition": _constant(table.rundefinition, n),
        "step": _constant(step.name if step else None, n),
        "condition": _constant(step.condition if step else None, n),
        "load": _constant(step.load if step else None, n),
        "rerun": _constant(step.rerun if step else None, n),
        "task": np.asarray(table.tasks, dtype=object),
        "result_file": _constant(table.path.name, n),
        "status": np.asarray(table.status, dtype=object),
        "category": np.asarray(table.category, dtype=object),
        "set_aside": _constant(set_aside, n),
    }


def columns(tables, conditions, set_aside=None):
    """{column: array of one value per run} over `tables`, a list of (experiment or None, RunTable);
    `conditions` maps a result file's name to its sweep step; `set_aside` a result file's name to
    why the statistics leave it out. Empty dict when there are no runs."""
    set_aside = set_aside or {}
    parts, numeric, text = list(tables), {}, {}
    for _, table in parts:
        for name in table.columns:
            numeric.setdefault(name, None)
        for name in table.text_columns:
            if name not in ("status", "category"):
                text.setdefault(name, None)
    total = sum(len(t) for _, t in parts)
    if not total:
        return {}
    out = {name: [] for name in IDENTITY}
    measured = {name: [] for name in [*numeric, *(n for n in text if n not in numeric)]}
    for experiment, table in parts:
        n = len(table)
        step = conditions.get(table.path.name)
        for name, values in _identity(experiment, table, step, set_aside.get(table.path.name, "")).items():
            out[name].append(values)
        for name in measured:
            if name in table.columns:
                values = np.asarray(table.columns[name], dtype=float)
            elif name in table.text_columns:
                values = np.asarray(table.text_columns[name], dtype=object)
            else:
                values = np.full(n, np.nan) if name in numeric else _constant(None, n)
            measured[name].append(values)
    out.update(measured)
    return {name: _joined(pieces) for name, pieces in out.items()}


def _joined(pieces):
    """One column from its per-table pieces: floats stay floats; anything mixed becomes objects."""
    if all(p.dtype.kind == "f" for p in pieces):
        return np.concatenate(pieces)
    return np.concatenate([p.astype(object) for p in pieces])
