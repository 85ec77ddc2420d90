"""
BenchExec tool info for the kit's fault injector (`programs/fault.c`): a run that exits non-zero,
dies of a signal, runs out of memory or time, on purpose. Tests use it to check that such runs keep
their BenchExec status and stay out of every statistic.
"""

from tool_info.keyvalue import KeyValueTool


class Tool(KeyValueTool):
    """Fails in the way its input file names (ok, exit, segv, abort, kill, oom, hang)."""

    PROGRAM = "fault"
    TOOL_NAME = "fault"
