"""
BenchExec tool info for the kit's activity tracer (`programs/tracer.c`), the workload of the
scheduling-noise experiment (seed 004). The task's input file holds its parameters (`mode=trace`
or `mode=context-switch`, `duration-ms`, `threshold-factor`, ...). It writes every active and
inactive period to `periods.csv` in the working directory (kept with `<resultfiles>`) and prints
summary columns: `tsc-frequency`, `kernel-tsc`, the core clock's estimates (`core-ghz-add`,
`core-ghz-imul`, `core-ghz-perf`; `core-ghz` where they agree), `dominant-period` (ms),
`interruption-mean`/`-median`/`-max`, `lost-per-ms`, `threshold`, `context-switch` (us), `gaps`.
"""

from tool_info.keyvalue import KeyValueTool


class Tool(KeyValueTool):
    """Polls the TSC in a tight loop and reports when the process was not running."""

    PROGRAM = "tracer"
    TOOL_NAME = "tracer"
