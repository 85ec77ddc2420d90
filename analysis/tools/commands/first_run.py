"""
Each command executed once before the first invocation, as the measured runs execute it: the
command line tool_info.command gives BenchExec (cmdrun, the shell, --prepare, --cwd), under
BenchExec's runexec with the runner's container (runner.container_dirs; none with
--no-container), its status decided by the tool-info module as BenchExec's runs are. A misspelled
binary, a command that exits non-zero or an input the container hides then costs a fraction of
a second and one line (failures.Failure), not every invocation first; nothing is written.
"""

import concurrent.futures
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from analysis.core.paths import REPO
from analysis.machine import guard
from analysis.sweep import runner
from analysis.tools.commands import failures
from analysis.tools.commands.spec import CommandError

STOP_SECONDS = 10   # runexec ends its run on SIGTERM; after this long it is killed


def check(commands, options, container=True):
    """Execute every distinct (command, prepare) of `commands` once; CommandError with the first
    failure's line. The commands get /dev/null as the input file the repetition tasks give them."""
    from benchexec import result
    from tool_info import command as command_tool

    tool = command_tool.Tool()
    distinct = list(dict.fromkeys(commands))
    # at once, each runexec on a CPU of its own (most of its 0.3 s is its start): A and B cost
    # one start, not two; the first failure in the commands' order is the one reported
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(len(distinct), len(os.sched_getaffinity(0))))) as pool:
        done = [pool.submit(_once, tool, text, prepare, options, container) for text, prepare in distinct]
        for future in done:
            status, failure = future.result()
            if status not in (result.RESULT_DONE, command_tool.RESULT_WARMUP):
                raise CommandError(failure.line())


def tool_options(text, prepare, options):
    """The tool-info options a generated definition gives one run of `text` (definition.write_definition)."""
    given = [("--cwd", options.cwd), ("--shell", options.shell if options.shell != "sh" else ""),
             ("--command", text), ("--prepare", prepare), ("--output", options.output if options.output != "null" else "")]
    flags = ["--ignore-failure"] if options.ignore_failure else []
    return [part for name, value in given if value for part in (name, value)] + flags


def _once(tool, text, prepare, options, container):
    """(the tool-info module's status, the Failure to report should it not be done) of one execution."""
    from benchexec.tools.template import BaseTool2, UnsupportedFeatureException
    from benchexec.util import ProcessExitCode

    task = BaseTool2.Task.with_files([os.devnull])
    try:
        cmdline = tool.cmdline(str(runner.PROGRAMS / "bin" / "cmdrun"), tool_options(text, prepare, options), task, None)
    except UnsupportedFeatureException as e:   # what BenchExec would refuse every run of (they end without status)
        raise CommandError(f"{text}: {e}") from None
    with tempfile.TemporaryDirectory(prefix="timekit-first-run-") as scratch:   # runexec writes it outside the container
        log = Path(scratch) / "output.log"
        done = _runexec([*(runner.container_dirs() if container else ["--no-container"]), "--output", str(log),
                         "--", *cmdline])
        values = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        if "returnvalue" in values:
            exit_code = ProcessExitCode.create(value=int(values["returnvalue"]))
        elif "exitsignal" in values:
            exit_code = ProcessExitCode.create(signal=int(values["exitsignal"]))
        else:
            why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
            raise CommandError(f"{text}: BenchExec's runexec could not execute it once before the measurements: {why}")
        output = log.read_text(errors="replace") if log.exists() else ""
    own = output.split(failures.SEPARATOR, 1)[-1].splitlines(keepends=True)
    run = BaseTool2.Run(cmdline, exit_code, BaseTool2.RunOutput(own), values.get("terminationreason"))
    status = tool.determine_result(run)
    failure = failures.Failure(text, None, {status: 1}, failures.own_output(output),
                               timed=tool.get_value_from_output(run.output, "executions") is not None)
    return status, failure.find_hidden()


def _runexec(arguments):
    """runexec ARGUMENTS under the kit's guard (it ends with the kit); its stdout and stderr."""
    command = guard.wrap([sys.executable, "-m", "benchexec.runexecutor", "--quiet", *arguments])
    process = guard.popen(command, os.setpgrp, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = process.communicate()
    finally:
        if process.poll() is None:   # interrupted: the guard hands SIGTERM to runexec, which ends the run
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
