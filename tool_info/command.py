"""
BenchExec tool info for any shell command: what `timekit bench` and `timekit ab 'CMD A' 'CMD B'`
write their benchmark definitions for (they are ordinary definitions: `benchexec DEF.xml` reruns
them from the kit's checkout).

The command is an option of the run definition, `<option name="--command">./my-build --fast</option>`;
the module's own options, on the benchmark, a run definition or a task set:
    --cwd DIR          directory the command runs in (default: where benchexec runs)
    --shell SHELL      the shell that runs it as `SHELL -c COMMAND` (default sh; under sh a command
                       of plain words, without quotes, $, globs, redirections or builtins, is
                       executed directly, as hyperfine -N does); `none`: split the command into
                       words (shell quoting rules) and execute it without a shell
    --prepare CMD      before each execution, not timed (hyperfine's --prepare; always `sh -c`)
    --repeat K         K executions inside one BenchExec run, timed one by one
    --warmup           the run is a warmup: its status is `warmup` and every statistic skips it
    --ignore-failure   hyperfine's: an execution that exits non-zero (or dies of a signal) is
                       timed and counted; cmdrun exits 0 all the same, so the run is `done`,
                       and prints the first failing code as `exit-code` (a failing --prepare
                       still fails the run)
    --output WHERE     hyperfine's: where the command's standard output goes: null (default,
                       discarded), pipe (drained through a pipe), inherit (the run's log file),
                       or a file; its standard error is discarded but for the last lines of the
                       first execution that fails, which land in the log
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

A pair of commands: with `--versus CMD` a run times the run definition's --command (side a)
against CMD (side b) inside one run, K pairs (--repeat K) of one execution each, built from the
same arguments, inputs and shell. cmdrun's columns are then `a-walltime`, `a-cputime`,
`b-walltime`, `b-cputime`, `logratio-walltime`, `logratio-cputime` (mean of ln(b/a) over the pairs)
and `pairs`. Options of a pair only:
    --seed N           the orders of a and b (couples of pairs in opposite orders) are drawn from N
                       (default 0) and the run's repetition number: runs differ, a rerun repeats them
    --duet             a and b start together, each on one of the run's first two cores (the run
                       needs two: cpuCores="2"), not back to back
    --interleave       a and b start together on one core, which cmdrun hands to each in turn
                       (turns of 1.2 to 2.2 ms): a slow spell of the machine falls on both; only
                       their CPU times compare (each one's wall time includes the other's turns)
    --sentinel S       with --duet or --interleave: one couple of pairs in every S couples runs back to back
                       (at least one a run), so that the run holds each side's cost alone beside
                       its cost under the design
    --task-name NAME   give it as ${taskdef_name}: BenchExec tells the module a task's input
                       files, not its task file, whose name carries the repetition number
                       (`run.r007.yml`: 7)
The seed cmdrun gets is N * 1000003 + the repetition number, or + the CRC-32 of the task's name
(else of its first input file's) when that has no `.r<k>`: then all runs of a task share their orders.
"""

import os
import re
import shlex
import zlib

import benchexec.result as result
from benchexec.tools.template import UnsupportedFeatureException

from tool_info.keyvalue import KeyValueTool

OPTIONS_WITH_VALUE = ("--command", "--cwd", "--shell", "--prepare", "--repeat", "--versus", "--seed", "--task-name",
                      "--sentinel", "--output")
WARMUP = "--warmup"
IGNORE_FAILURE = "--ignore-failure"
DUET = "--duet"
INTERLEAVE = "--interleave"
SENTINEL = "--sentinel"
PAIR_ONLY = ("--seed", DUET, INTERLEAVE, "--task-name", SENTINEL)   # meaningless without --versus
SEED_STRIDE = 1000003   # seeds of different --seed values do not meet for a million repetitions
PAIR_SEPARATOR = "---"  # cmdrun's word between side a and side b
_REPETITION = re.compile(r"\.r0*(\d+)(\.yml)?$")   # analysis.core.tasks: <input>.r<k>.yml
RESULT_WARMUP = "warmup"  # BenchExec counts an unknown status as an error: the run is kept out of every statistic
# what BenchExec would expand in an argument before the run (os.path.expandvars, expanduser)
_EXPANDED = re.compile(r"\$(\w|\{)|^~")


def parse_options(options):
    """({own option: value, `--warmup`: True}, [every other option: the command's arguments])."""
    own, arguments, rest = {}, [], iter(options)
    for option in rest:
        name, sep, value = option.partition("=")
        if name in (WARMUP, DUET, INTERLEAVE, IGNORE_FAILURE) and not sep:
            own[name] = True
        elif name in OPTIONS_WITH_VALUE:
            value = value if sep else next(rest, None)
            if value is None:
                raise UnsupportedFeatureException(f"command: option {name} needs a value")
            own[name] = value
        else:
            arguments.append(option)
    if not re.fullmatch(r"[1-9][0-9]*", own.get("--repeat", "1")):
        raise UnsupportedFeatureException(f"command: --repeat must be a positive integer, got {own['--repeat']!r}")
    if "--output" in own and not own["--output"].strip():
        raise UnsupportedFeatureException("command: --output needs null, pipe, inherit or a file name")
    if "--versus" in own and "--command" not in own:
        raise UnsupportedFeatureException("command: --versus CMD needs --command CMD (side a)")
    if own.get(DUET) and own.get(INTERLEAVE):
        raise UnsupportedFeatureException("command: --duet runs a pair on two cores, --interleave on one: give one of them")
    if SENTINEL in own and not (own.get(DUET) or own.get(INTERLEAVE)):
        raise UnsupportedFeatureException("command: --sentinel S puts back-to-back pairs among --duet or --interleave ones")
    if SENTINEL in own and not re.fullmatch(r"[1-9][0-9]*", own[SENTINEL]):
        raise UnsupportedFeatureException(f"command: --sentinel must be a positive integer, got {own[SENTINEL]!r}")
    if "--versus" not in own:
        given = [name for name in PAIR_ONLY if name in own]
        if given:
            raise UnsupportedFeatureException(f"command: {', '.join(given)} only with --versus CMD (a pair of commands)")
    elif not re.fullmatch(r"[0-9]+", own.get("--seed", "0")) or int(own.get("--seed", "0")) >= 2**64:
        raise UnsupportedFeatureException(f"command: --seed must be an unsigned 64-bit integer, got {own['--seed']!r}")
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


def repetition(own, task):
    """The run's repetition number: the `.r<k>` of --task-name (`run.r007.yml`: 7), else the CRC-32
    of that name or, without one, of the first input file's name."""
    name = own.get("--task-name") or os.path.basename(task.input_files_or_identifier[0])
    match = _REPETITION.search(name)
    return int(match.group(1)) if match else zlib.crc32(name.encode())


def pair_seed(own, task):
    """cmdrun's --seed: the definition's (default 0) times SEED_STRIDE plus the repetition number."""
    return (int(own.get("--seed", "0")) * SEED_STRIDE + repetition(own, task)) % 2**64


class Tool(KeyValueTool):
    """Runs one shell command per run (or K times), timed by BenchExec and by programs/bin/cmdrun."""

    PROGRAM = "cmdrun"
    TOOL_NAME = "command"

    def cmdline(self, executable, options, task, rlimits):
        own, arguments = parse_options(options)
        inputs = [os.path.abspath(f) for f in task.input_files]  # the command runs in --cwd
        words, shell = command_words(own, arguments, inputs)
        versus = []
        if "--versus" in own:   # side b: the same arguments and inputs as side a
            versus, _ = command_words({**own, "--command": own["--versus"]}, arguments, inputs)
        if PAIR_SEPARATOR in words or PAIR_SEPARATOR in versus:   # only --shell none has a word of its own
            raise UnsupportedFeatureException(f"command: cmdrun reads a word {PAIR_SEPARATOR} as the border between two commands")
        prepare = own.get("--prepare")
        escaped = any(_EXPANDED.search(text) for text in [*words, *versus, prepare or ""])
        if escaped:
            words, versus, prepare = [_escape(w) for w in words], [_escape(w) for w in versus], prepare and _escape(prepare)
        line = [executable, "--shell", shell]
        if "--cwd" in own:
            line += ["--cwd", own["--cwd"]]
        if prepare:
            line += ["--prepare", prepare]
        if own.get("--repeat", "1") != "1":
            line += ["--repeat", own["--repeat"]]
        if own.get(WARMUP):
            line.append(WARMUP)
        if own.get(IGNORE_FAILURE):
            line.append(IGNORE_FAILURE)
        if escaped:
            line.append("--escaped")
        if own.get("--output", "null") != "null":
            line += ["--output", own["--output"]]
        if not versus:
            return [*line, "--", *words]
        line += ["--seed", str(pair_seed(own, task))]
        line += [flag for flag in (DUET, INTERLEAVE) if own.get(flag)]
        line += [SENTINEL, own[SENTINEL]] if SENTINEL in own else []
        return [*line, "--", *words, PAIR_SEPARATOR, *versus]

    def determine_result(self, run):
        status = super().determine_result(run)
        if status == result.RESULT_DONE and WARMUP in run.cmdline[:run.cmdline.index("--")]:
            return RESULT_WARMUP
        return status
