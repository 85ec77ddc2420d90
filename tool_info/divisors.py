"""
BenchExec tool info for the kit's divisor counter (`programs/divisors.c`), the workload of the
time-APIs experiment. Columns: `divisors`, `input`, `self-clock` and `self-cputime` (seconds of
CPU time the program measured itself, with clock() and CLOCK_PROCESS_CPUTIME_ID).
"""

from tool_info.keyvalue import KeyValueTool


class Tool(KeyValueTool):
    """Counts the divisors of the number in the task's input file, by trial division."""

    PROGRAM = "divisors"
    TOOL_NAME = "divisors"
