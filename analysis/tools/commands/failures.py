"""Why a command's runs failed, from what BenchExec kept: their statuses, the last lines of the
command's own output in the *.logfiles.zip, and paths the container hides. A user otherwise
reruns the command by hand, where it works, and looks in the wrong place. The one line is the
same whether the runs failed in the invocations or in the command's first execution before them
(analysis.tools.commands.first_run)."""

import collections
import re
from dataclasses import dataclass, field
from pathlib import Path

from analysis.core import paths

SEPARATOR = "-" * 80                      # BenchExec's line between its header and the tool's output
CMDRUN_LINE = re.compile(r"^(cmdrun-execution |exec-[\w-]+=|executions=|cmdrun: warmup run|[ab]-(wall|cpu)time=|logratio-\w+=|"
                         r"pairs=|duet=)")
PATH = re.compile(r"(?<![\w.])/[^\s'\":;,()]+")
NOT_RUN = ("ERROR (exit code 126)", "ERROR (exit code 127)")   # the shell's and cmdrun's "cannot execute"


@dataclass
class Failure:
    command: str
    directory: Path                                # None: its first execution, before any invocation
    statuses: dict = field(default_factory=dict)   # status -> runs
    output: list = field(default_factory=list)     # the last lines the command itself wrote
    hidden: dict = field(default_factory=dict)     # path -> the hidden directory it lies under
    timed: bool = True   # cmdrun timed the executions (only they failed): --ignore-failure would measure them

    def line(self):
        """One line: what, where, why, and the way out."""
        runs = sum(self.statuses.values())
        statuses = ", ".join(f"{n} {s or 'without status'}" for s, n in self.statuses.items())
        where = f"in {self.directory}" if self.directory else "in its first execution, before any measurement"
        text = f"{self.command}: no run finished normally {where} ({runs} run{'s' if runs != 1 else ''}: {statuses})"
        if self.output:
            text += "; its output ends: " + " | ".join(f"\"{s}\"" for s in self.output)
        if self.hidden:
            text += "; " + "; ".join(f"{p} lies under {d}, which BenchExec's container hides (put it elsewhere, "
                                     f"or use --no-container)" for p, d in self.hidden.items())
        elif not self.output and self.directory:
            text += "; its output is in the *.logfiles.zip there"
        if not self.hidden and self.timed and any(str(s).startswith("ERROR (") and s not in NOT_RUN for s in self.statuses):
            text += "; --ignore-failure measures runs that exit non-zero"
        return text

    def find_hidden(self):
        """The paths in the command and its output that BenchExec's container hides."""
        for text in [self.command, *self.output]:
            for path in PATH.findall(text):
                hidden = paths.hidden_in_container(path)
                if hidden:
                    self.hidden.setdefault(path, hidden)
        return self


def explain(tables, command, directory, lines=2):
    """The Failure of `command` (its text and run-definition name) over its result tables."""
    failure = Failure(command.text, Path(directory))
    statuses, timed = collections.Counter(), []
    for table in tables:
        if table.rundefinition != command.name:
            continue
        statuses.update(table.status.tolist())
        if not failure.output:
            failure.output = _last_output(table, lines)
        if "executions" in table.columns:   # cmdrun's count: there where it timed the executions
            timed += [count == count for count, ok in zip(table.columns["executions"].tolist(), table.valid().tolist())
                      if not ok]
    failure.statuses = dict(statuses.most_common())
    failure.timed = all(timed)
    return failure.find_hidden()


def _last_output(table, lines):
    """The last `lines` lines the command wrote in its first failed run's log file, else []."""
    from analysis.tools.commands import executions

    valid = table.valid()
    failed = [Path(task).name for task, ok in zip(table.tasks.tolist(), valid.tolist()) if not ok]
    for _, text in executions.logs(executions.archive_of(table), table.rundefinition, failed):
        kept = own_output(text, lines)
        if kept:
            return kept
    return []


def own_output(log, lines=2):
    """The last `lines` lines that the command itself wrote, from a run's log (BenchExec's header
    and cmdrun's lines left out)."""
    own = log.split(SEPARATOR, 1)[-1].splitlines()
    return [s.strip() for s in own if s.strip() and not CMDRUN_LINE.match(s)][-lines:]
