"""
Repetitions as BenchExec tasks.

BenchExec has no repetition feature: a task included twice is dropped, and two tasks with the
same name collide in the log archive. A repetition is therefore its own task-definition file
(format 2.0) with a distinct name, all pointing at the same deterministic input. The repository
holds each experiment's default set (what plain `benchexec` runs); a sweep writes its own set of
N per input into its directory.
"""

import os
import re
from pathlib import Path, PurePosixPath

from analysis.core.errors import UserError

TASK_TEMPLATE = """\
format_version: '2.0'
# repetition {rep} of {count}, written by analysis.core.tasks; all repetitions share one input
input_files: '{input}'
"""


_REPETITION = re.compile(r"([^/]+?)\.r\d+\.yml$")


def input_of(task_name):
    """The input a run measured: `<input>` of a repetition task `<input>.r<k>.yml`, else the
    task file's stem (a plain task is its own input)."""
    match = _REPETITION.search(task_name)
    return match.group(1) if match else PurePosixPath(task_name).stem


class TaskError(UserError):
    """A task set cannot be written (one line for the user)."""


def write_repetitions(inputs, count, directory):
    """Write `count` task files per input file into `directory` (replacing older ones there).

    Names are `<input stem>.r<k>.yml` with k zero-padded, so they sort in run order.
    Returns the list of written paths.
    """
    if count < 1:
        raise TaskError(f"repetitions must be at least 1, got {count}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.yml"):
        old.unlink()
    width = max(3, len(str(count)))
    written = []
    for input_file in map(Path, inputs):
        if not input_file.is_file():
            raise TaskError(f"{input_file}: input file does not exist")
        relative = Path(os.path.relpath(input_file.resolve(), directory.resolve()))
        for rep in range(1, count + 1):
            path = directory / f"{input_file.stem}.r{rep:0{width}d}.yml"
            path.write_text(TASK_TEMPLATE.format(rep=rep, count=count, input=relative.as_posix()))
            written.append(path)
    return written

