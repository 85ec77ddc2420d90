"""
BenchExec tool info for the kit's OS and memory microbenchmarks (`programs/osbench.c`), the
workload of the os-microbench experiment (lmbench-style: timer, loop, procedure call, system
call, process and thread creation, context switches, memory latency and bandwidth, page faults).
The task's input file names the measurement (`measure=...`) and its parameters.

Columns: the main variant of every measurement in `variant`, `unit`, `median`, `p10`, `p90`,
`min`, `n`; every variant V in `V-median-ns`, `V-p10-ns`, ... (bandwidth in `...-gbs`, GB/s);
curves one key per point index, `lat-bytes-NN` with `lat-median-ns-NN`, `bw-bytes-NN` with
`bw-read-median-gbs-NN`; calibration in `tsc-ghz` and the core clock (`core-ghz-add`, `core-ghz-imul`,
`core-ghz-perf`; `core-ghz` where they agree); `migrations` counts measured
regions that did not start and end on one CPU. analysis.experiments.os_microbench.output.COLUMNS lists them all.

Every run gets its memory budget (`osbench budget-bytes=N FILE`, tool_info/sizing.py): the memory
curves end at 4x the last-level cache or at what the budget holds, whichever is smaller.
"""

import os

import benchexec.result as result

from tool_info import sizing
from tool_info.keyvalue import KeyValueTool


class Tool(KeyValueTool):
    """lmbench-style microbenchmarks; one measurement per run, chosen by the task's input file."""

    PROGRAM = "osbench"
    TOOL_NAME = "osbench"
    EXEC_TARGET = "osbench_exit"  # what the fork+exec measurement executes, found next to osbench

    def cmdline(self, executable, options, task, rlimits):
        return [executable, *sizing.budget_argument(rlimits), *options, task.input_files_or_identifier[0]]

    def program_files(self, executable):
        return [executable, os.path.join(os.path.dirname(executable), self.EXEC_TARGET)]

    def determine_result(self, run):
        status = super().determine_result(run)
        if status == result.RESULT_DONE and self.get_value_from_output(run.output, "median") is None:
            return f"{result.RESULT_ERROR} (no measurement in output)"
        return status
