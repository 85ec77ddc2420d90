"""Shared base of the kit's workload tool-info modules: run one program, read `key=value` lines."""

import re

import benchexec.result as result
from benchexec.tools.template import BaseTool2


class KeyValueTool(BaseTool2):
    """
    A workload of the kit's `programs/`: it gets the task's input file as its only argument
    and prints its measurements as `key=value` lines. Any key works as a column identifier.
    Subclasses set PROGRAM (the executable's name) and TOOL_NAME.
    """

    PROGRAM = None
    TOOL_NAME = None
    REQUIRED_PATHS = []

    def executable(self, tool_locator):
        return tool_locator.find_executable(self.PROGRAM, subdir="programs/bin")

    def name(self):
        return self.TOOL_NAME

    def version(self, executable):
        return self._version_from_tool(executable, line_prefix=self.PROGRAM)

    def cmdline(self, executable, options, task, rlimits):
        return [executable, *options, task.input_files_or_identifier[0]]

    def determine_result(self, run):
        if run.exit_code.signal:
            return f"{result.RESULT_ERROR} (signal {run.exit_code.signal})"
        if run.exit_code.value:
            return f"{result.RESULT_ERROR} (exit code {run.exit_code.value})"
        return result.RESULT_DONE

    def get_value_from_output(self, output, identifier):
        # BenchExec asks once per column with the same output (a fresh copy each time, through
        # its container worker): read the lines once, compare them (cheap) on the next column.
        lines = list(output)
        if getattr(self, "_parsed_lines", None) != lines:
            self._parsed_lines, self._values = lines, _key_values(lines)
        return self._values.get(identifier)


# Anchored: table-generator passes the log with BenchExec's header, which holds the command
# line; only a whole line `key=value` counts, the last one wins.
_KEY_VALUE_LINE = re.compile(r"^([^=\s]+)=(\S+)\s*$")


def _key_values(output):
    values = {}
    for line in output:
        match = _KEY_VALUE_LINE.match(line)
        if match:
            values[match.group(1)] = match.group(2)
    return values
