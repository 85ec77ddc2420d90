"""
Timing APIs as a BenchExec tool wrapper.

`wrap("some.tool_info.module")` returns a tool-info class that runs that module's tool, unchanged,
under the timer a run definition selects with the option `--timer NAME`:

    runexec   no timer: BenchExec's cgroup values (cputime, walltime) are the measurement
    bash      bash's `time` keyword, TIMEFORMAT at its highest precision (%3R, 1 ms)
    fish      fish's `time`, which switches units (micros, millis, secs, mins) by magnitude
    gnu       GNU /usr/bin/time with -f (%e/%U/%S, 10 ms)

Whatever the timer, its values land in the columns `timer-real`, `timer-user`, `timer-sys`
(seconds), so one table lines the timing APIs up. The inner command is passed as separate
arguments (`"$@"` for bash, `$argv` for fish, argv for GNU time), never pasted into shell text:
task options and file names cannot inject shell code.
"""

import importlib
import re
import subprocess

from benchexec import tooladapter
from benchexec.tools.template import BaseTool2, ToolNotFoundException
from benchexec.tools.template import UnsupportedFeatureException

TIMER_OPTION = "--timer"
COLUMNS = ("timer-real", "timer-user", "timer-sys")
_NUMBER = r"([0-9]+(?:[.,][0-9]+)?)"


def _seconds(text, unit_factor=1.0):
    """Timers print numbers in the C locale or the user's (decimal comma); return seconds as text."""
    return f"{float(text.replace(',', '.')) * unit_factor:.9g}"


class Timer:
    """One timing API: how to put it in front of a command and read its output."""

    name = None
    program = None  # executable looked up on PATH; None for runexec
    # The timer's own output lines, to keep them away from the inner tool's determine_result.
    own_lines = re.compile(r"(?!)")

    def prefix(self, path):
        return []

    def values(self, output):
        """Map of COLUMNS to seconds (as text) read from the output, or None."""
        return None


class RunexecTimer(Timer):
    name = "runexec"


class OneLineTimer(Timer):
    """A timer whose format we choose: one line `<tag> real=R user=U sys=S` in seconds."""

    tag = None

    def __init_subclass__(cls):
        cls._line = re.compile(rf"^{cls.tag} real={_NUMBER} user={_NUMBER} sys={_NUMBER}\s*$")

    def values(self, output):
        for line in reversed(output):
            match = self._line.match(line)
            if match:
                return dict(zip(COLUMNS, map(_seconds, match.groups())))
        return None


class BashTimer(OneLineTimer):
    name = "bash"
    program = "bash"
    tag = "bash-time"
    # %3R etc.: three digits is the most bash's TIMEFORMAT can print. The \n in the format is
    # expanded by bash, so the command line itself holds no newline and its header line in
    # the log can never match the anchored pattern.
    SCRIPT = "TIMEFORMAT=$'\\nbash-time real=%3R user=%3U sys=%3S'; time \"$@\""
    own_lines = re.compile(r"^bash-time real=")

    def prefix(self, path):
        return [path, "-c", self.SCRIPT, "bash"]


class GnuTimer(OneLineTimer):
    name = "gnu"
    program = "time"
    tag = "gnu-time"
    FORMAT = "\\ngnu-time real=%e user=%U sys=%S"  # GNU time expands \n itself
    own_lines = re.compile(r"^gnu-time real=|^Command (exited with non-zero|terminated by)")

    def prefix(self, path):
        return [path, "-f", self.FORMAT, "--"]


class FishTimer(Timer):
    """
    fish prints a block such as
        Executed in   87.29 millis    fish           external
           usr time   86.36 millis   94.00 micros   86.27 millis
           sys time    0.09 millis   94.00 micros    0.00 millis
    The first number of each line is the total (fish itself plus the command) that a fish user
    reads; its unit changes with the magnitude.
    """

    name = "fish"
    program = "fish"
    UNITS = {
        "micros": 1e-6, "microseconds": 1e-6,
        "millis": 1e-3, "milliseconds": 1e-3,
        "secs": 1.0, "seconds": 1.0,
        "mins": 60.0, "minutes": 60.0,
    }  # fmt: skip
    own_lines = re.compile(r"^_{20,}\s*$|^Executed in |^\s+(usr|sys) time ")
    _lines = {
        "timer-real": re.compile(rf"^Executed in\s+{_NUMBER}\s+([a-z]+)\b"),
        "timer-user": re.compile(rf"^\s+usr time\s+{_NUMBER}\s+([a-z]+)\b"),
        "timer-sys": re.compile(rf"^\s+sys time\s+{_NUMBER}\s+([a-z]+)\b"),
    }

    def prefix(self, path):
        return [path, "--no-config", "-c", "time $argv", "--"]

    def values(self, output):
        found = {}
        for line in output:
            for column, pattern in self._lines.items():
                match = pattern.match(line)
                if match and match.group(2) in self.UNITS:
                    found[column] = _seconds(match.group(1), self.UNITS[match.group(2)])
        return found if len(found) == len(COLUMNS) else None


TIMERS = {timer.name: timer for timer in (RunexecTimer(), BashTimer(), FishTimer(), GnuTimer())}


def split_timer_option(options):
    """Return (timer, remaining options); `--timer NAME` or `--timer=NAME`, default runexec."""
    remaining, name, rest = [], "runexec", iter(options)
    for option in rest:
        if option == TIMER_OPTION:
            name = next(rest, "")
        elif option.startswith(TIMER_OPTION + "="):
            name = option.split("=", 1)[1]
        else:
            remaining.append(option)
    if name not in TIMERS:
        raise UnsupportedFeatureException(
            f"unknown timer '{name}' in option {TIMER_OPTION}; "
            f"use one of: {', '.join(TIMERS)}"
        )
    return TIMERS[name], remaining


def timer_values(output):
    """The timer columns found in a run's output, whichever timer wrote them (None if none)."""
    for timer in TIMERS.values():
        values = timer.values(output)
        if values:
            return values
    return None


def _program_version(path):
    try:
        out = subprocess.run(
            [path, "--version"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    match = re.search(r"\b[0-9]+(\.[0-9]+)+\b", out)
    return match.group(0) if match else "version unknown"


def wrap(inner_module):
    """Return a Tool class running the tool of module `inner_module` under a selectable timer."""
    inner_tool = tooladapter.adapt_to_current_version(
        importlib.import_module(inner_module).Tool()
    )

    class Tool(BaseTool2):
        __doc__ = (
            f"The tool of {inner_module}, run under the timing API that the option "
            f"{TIMER_OPTION} selects ({', '.join(TIMERS)}); see tool_info.timer."
        )
        INNER_MODULE = inner_module
        inner = inner_tool
        _locator = None

        def executable(self, tool_locator):
            self._locator = tool_locator
            return self.inner.executable(tool_locator)

        def name(self):
            return f"{self.inner.name()} (timed)"

        def version(self, executable):
            timers = []
            for timer in TIMERS.values():
                if timer.program:
                    path = self._find(timer)
                    timers.append(f"{timer.program} {_program_version(path) if path else 'missing'}")
            inner_version = self.inner.version(executable)
            # BenchExec wants a version that starts with the tool's own number; without one, none
            return f"{inner_version} [timers: {', '.join(timers)}]" if inner_version else ""

        def project_url(self):
            return self.inner.project_url()

        def program_files(self, executable):
            return self.inner.program_files(executable)

        def working_directory(self, executable):
            return self.inner.working_directory(executable)

        def environment(self, executable):
            return self.inner.environment(executable)

        def _find(self, timer):
            locator = self._locator or BaseTool2.ToolLocator(None, use_path=True, use_current=False)
            try:
                return locator.find_executable(timer.program)
            except ToolNotFoundException:
                return None

        def cmdline(self, executable, options, task, rlimits):
            timer, inner_options = split_timer_option(options)
            command = self.inner.cmdline(executable, inner_options, task, rlimits)
            if not timer.program:
                return command
            path = self._find(timer)
            if not path:
                raise UnsupportedFeatureException(
                    f"timer '{timer.name}' needs the program '{timer.program}', which is "
                    f"not installed; install it (Debian: apt-get install {timer.program}) "
                    f"or drop the run definition"
                )
            return [*timer.prefix(path), *command]

        def determine_result(self, run):
            lines = [line for line in run.output if not _is_timer_line(line)]
            inner_run = run._replace(output=BaseTool2.RunOutput([f"{line}\n" for line in lines]))
            return self.inner.determine_result(inner_run)

        def get_value_from_output(self, output, identifier):
            if identifier in COLUMNS:
                values = timer_values(output)
                return values[identifier] if values else None
            return self.inner.get_value_from_output(output, identifier)

        def close(self):
            self.inner.close()

    return Tool


def _is_timer_line(line):
    return any(timer.own_lines.match(line) for timer in TIMERS.values())
