"""
What did not happen, from BenchExec's statuses: how many runs of an experiment finished, and why
the others did not ("0 of 3 stream runs finished: out of memory"). The demo, `timekit run` and
`timekit report` print it per experiment, and it heads the experiment's report section, so that
an empty section never passes for an analysed one.
"""

from __future__ import annotations

import collections


def reason(status):
    """BenchExec's status of a run that did not finish, in a few plain words."""
    if not status:
        return "no status (did not run)"
    if status.startswith("OUT OF MEMORY"):
        return "out of memory"
    if status.startswith("TIMEOUT"):
        return "timeout"
    return status.lower()  # 'error (exit code 2)', 'error (signal 11)', 'killed', ...


def runs_line(tables, skipped=None):
    """('k of n TOOL runs finished[: why]', n - k) over RunTables, TOOL as BenchExec recorded it
    where all share one; `skipped` ({run definition: why}) names run definitions a sweep did not run."""
    total, finished, why = 0, 0, collections.Counter()
    for table in tables:
        valid = table.valid()
        total += len(table)
        finished += int(valid.sum())
        why.update(reason(s) for s, ok in zip(table.status.tolist(), valid.tolist()) if not ok)
    tools = {t.tool for t in tables}
    noun = f"{tools.pop()} runs" if len(tools) == 1 else "runs"
    line = f"{finished} of {total} {noun} finished"
    if len(why) == 1:
        line += f": {next(iter(why))}"
    elif why:
        line += ": " + ", ".join(f"{n} {r}" for r, n in why.most_common())
    if skipped:
        line += "; not run: " + ", ".join(f"{r} ({w})" for r, w in skipped.items())
    return line, total - finished
