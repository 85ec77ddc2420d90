"""
BenchExec tool info for any shell command: what `timekit bench` and `timekit ab 'CMD A' 'CMD B'`
write their benchmark definitions for (they are ordinary definitions: `benchexec DEF.xml` reruns
them from the kit's checkout).

The command is an option of the run definition, `<option name="--command">./my-build --fast</option>`;
the module's own options, on the benchmark, a run definition or a task set:
    --cwd DIR          directory the command runs in (default: where benchexec runs)
    --shell SHELL      the shell that runs it as `SHELL -c COMMAND` (default sh); `none`: split the
                       command into words (shell quoting rules) and execute it without a shell
    --prepare CMD      before each execution, not timed (hyperfine's --prepare; always `sh -c`)
    --repeat K         K executions inside one BenchExec run, timed one by one
    --warmup           the run is a warmup: its status is `warmup` and every statistic skips it
Every other option is an argument of the command, appended (quoted) to it. The task's input files
are the command's positional parameters ($1, $2, ...: the kit's repetition tasks point at a file
it need not read; with `--shell none` they are not passed). Without --command the first input
file is a script run by the shell (`sh SCRIPT ARGS`), the other input files and the options its
arguments: a task set of scripts is a benchmark too.

`programs/bin/cmdrun` runs the command and times every execution itself (CLOCK_MONOTONIC, wait4's
rusage); its columns `exec-walltime`, `exec-cputime`, `exec-user`, `exec-sys` (means per
execution, seconds) and `executions` are what --repeat and --prepare are measured by. With one
execution and no --prepare, BenchExec's own cputime and walltime measure the command (plus one
fork of cmdrun).
"""

import os
import re
import shlex

import benchexec.result as result
from benchexec.tools.template import UnsupportedFeatureException

from tool_info.keyvalue import KeyValueTool

OPTIONS_WITH_VALUE = ("--command", "--cwd", "--shell", "--prepare", "--repeat")
WARMUP = "--warmup"
RESULT_WARMUP = "warmup"  # BenchExec counts an unknown status as an error: the run is kept out of every statistic
# what BenchExec would expand in an argument before the run (os.path.expandvars, expanduser)
_EXPANDED = re.compile(r"\$(\w|\{)|^~")


def parse_options(options):
    """({own option: value, `--warmup`: True}, [every other option: the command's arguments])."""
    own, arguments, rest = {}, [], iter(options)
    for option in rest:
        name, sep, value = option.partition("=")
        if name == WARMUP and not sep:
            own[WARMUP] = True
        elif name in OPTIONS_WITH_VALUE:
            value = value if sep else next(rest, None)
            if value is None:
                raise UnsupportedFeatureException(f"command: option {name} needs a value")
            own[name] = value
        else:
            arguments.append(option)
    if not re.fullmatch(r"[1-9][0-9]*", own.get("--repeat", "1")):
        raise UnsupportedFeatureException(f"command: --repeat must be a positive integer, got {own['--repeat']!r}")
    return own, arguments


def command_words(own, arguments, inputs):
    """(words after cmdrun's `--`, the shell for cmdrun's --shell)."""
    shell = own.get("--shell", "sh")
    if "--command" not in own:  # the first input file is a script
        return [shell if shell != "none" else "sh", *inputs, *arguments], "none"
    if shell != "none":
        return [" ".join([own["--command"], *map(shlex.quote, arguments)]), *inputs], shell
    try:
        words = shlex.split(own["--command"])
    except ValueError as e:
        raise UnsupportedFeatureException(f"command: cannot split {own['--command']!r} into words: {e}") from None
    if not words:
        raise UnsupportedFeatureException("command: the command is empty")
    return words + arguments, shell


def _escape(text):
    return text.replace("%", "%25").replace("$", "%24").replace("~", "%7E")


class Tool(KeyValueTool):
    """Runs one shell command per run (or K times), timed by BenchExec and by programs/bin/cmdrun."""

    PROGRAM = "cmdrun"
    TOOL_NAME = "command"

    def cmdline(self, executable, options, task, rlimits):
        own, arguments = parse_options(options)
        inputs = [os.path.abspath(f) for f in task.input_files]  # the command runs in --cwd
        words, shell = command_words(own, arguments, inputs)
        prepare = own.get("--prepare")
        escaped = any(_EXPANDED.search(text) for text in [*words, prepare or ""])
        if escaped:
            words, prepare = [_escape(w) for w in words], prepare and _escape(prepare)
        line = [executable, "--shell", shell]
        if "--cwd" in own:
            line += ["--cwd", own["--cwd"]]
        if prepare:
            line += ["--prepare", prepare]
        if own.get("--repeat", "1") != "1":
            line += ["--repeat", own["--repeat"]]
        if own.get(WARMUP):
            line.append(WARMUP)
        if escaped:
            line.append("--escaped")
        return [*line, "--", *words]

    def determine_result(self, run):
        status = super().determine_result(run)
        if status == result.RESULT_DONE and WARMUP in run.cmdline[:run.cmdline.index("--")]:
            return RESULT_WARMUP
        return status
