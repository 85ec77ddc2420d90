"""Why a command's runs failed, from what BenchExec kept: their statuses, the last lines of the
command's own output in the *.logfiles.zip, and paths the container hides. A user otherwise
reruns the command by hand, where it works, and looks in the wrong place."""

import collections
import re
from dataclasses import dataclass, field
from pathlib import Path

from analysis.core import paths

SEPARATOR = "-" * 80                      # BenchExec's line between its header and the tool's output
CMDRUN_LINE = re.compile(r"^(cmdrun-execution |exec-[\w-]+=|executions=|cmdrun: warmup run|[ab]-(wall|cpu)time=|logratio-\w+=|"
                         r"pairs=|duet=)")
PATH = re.compile(r"(?<![\w.])/[^\s'\":;,()]+")


@dataclass
class Failure:
    command: str
    directory: Path
    statuses: dict = field(default_factory=dict)   # status -> runs
    output: list = field(default_factory=list)     # the last lines the command itself wrote
    hidden: dict = field(default_factory=dict)     # path -> the hidden directory it lies under

    def line(self):
        """One line: what, where, why."""
        runs = sum(self.statuses.values())
        statuses = ", ".join(f"{n} {s or 'without status'}" for s, n in self.statuses.items())
        text = f"{self.command}: no run finished normally in {self.directory} ({runs} runs: {statuses})"
        if self.output:
            text += "; its output ends: " + " | ".join(f"\"{s}\"" for s in self.output)
        if self.hidden:
            text += "; " + "; ".join(f"{p} lies under {d}, which BenchExec's container hides (put it elsewhere, "
                                     f"or use --no-container)" for p, d in self.hidden.items())
        elif not self.output:
            text += "; its output is in the *.logfiles.zip there"
        return text


def explain(tables, command, directory, lines=2):
    """The Failure of `command` (its text and run-definition name) over its result tables."""
    failure = Failure(command.text, Path(directory))
    statuses = collections.Counter()
    for table in tables:
        if table.rundefinition != command.name:
            continue
        statuses.update(table.status.tolist())
        if not failure.output:
            failure.output = _last_output(table, lines)
    failure.statuses = dict(statuses.most_common())
    for text in [command.text, *failure.output]:
        for path in PATH.findall(text):
            hidden = paths.hidden_in_container(path)
            if hidden:
                failure.hidden.setdefault(path, hidden)
    return failure


def _last_output(table, lines):
    """The last `lines` lines the command wrote in its first failed run's log file, else []."""
    from analysis.tools.commands import executions

    valid = table.valid()
    failed = [Path(task).name for task, ok in zip(table.tasks.tolist(), valid.tolist()) if not ok]
    for _, text in executions.logs(executions.archive_of(table), table.rundefinition, failed):
        own = text.split(SEPARATOR, 1)[-1].splitlines()
        kept = [s.strip() for s in own if s.strip() and not CMDRUN_LINE.match(s)]
        if kept:
            return kept[-lines:]
    return []
