"""
BenchExec tool info for the workloads of the core-heterogeneity experiment (seed 002):
`programs/cachestress` (clflush cache-stress microbenchmark), `programs/cg` (sparse conjugate
gradient) and `programs/isort` (integer sort, the negative control). One module, so that one
benchmark definition runs all three on the same core: a task set chooses its program with the
option `--workload NAME`; without it the program is the one the input file is named after
(`cg.txt`, `cg-small.txt`, ...), else `cachestress`. Each program refuses a parameter file
written for another (`workload=` line), so a wrong choice fails instead of measuring.

Columns: `self-seconds` (kernel time from CLOCK_MONOTONIC), `checksum`, `cpu-start` and
`cpu-end` (the CPU the run was on, sched_getcpu), and each workload's own keys.
"""

import os
import re

import benchexec.result as result
from benchexec.tools.template import UnsupportedFeatureException

from tool_info.keyvalue import KeyValueTool

WORKLOADS = ("cachestress", "cg", "isort")
EXIT_UNSUPPORTED = 3  # cachestress where clflush does not exist


class Tool(KeyValueTool):
    """Runs one of the core-heterogeneity workloads on the task's parameter file."""

    PROGRAM = "cachestress"
    TOOL_NAME = "core-heterogeneity workloads"

    def program_files(self, executable):
        directory = os.path.dirname(executable)
        return [os.path.join(directory, name) for name in WORKLOADS]

    def cmdline(self, executable, options, task, rlimits):
        options = list(options)
        workload = None
        for i, option in enumerate(options):
            if option == "--workload" and i + 1 < len(options):
                workload = options[i + 1]
                del options[i:i + 2]
                break
            if option.startswith("--workload="):
                workload = option.split("=", 1)[1]
                del options[i]
                break
        input_file = task.input_files_or_identifier[0]
        if workload is None:
            stem = os.path.basename(input_file)
            workload = next((w for w in WORKLOADS if re.match(rf"{w}([-_.]|$)", stem)), self.PROGRAM)
        if workload not in WORKLOADS:
            raise UnsupportedFeatureException(f"--workload {workload}: unknown workload; choose one of {', '.join(WORKLOADS)}")
        program = os.path.join(os.path.dirname(executable), workload)
        return [program, *options, input_file]

    def determine_result(self, run):
        if run.exit_code.value == EXIT_UNSUPPORTED:
            # e.g. "unsupported=clflush needs x86" -> "ERROR (clflush needs x86)"
            reasons = [line.split("=", 1)[1].strip() for line in run.output if line.startswith("unsupported=")]
            return f"{result.RESULT_ERROR} ({reasons[-1] if reasons else 'unsupported on this machine'})"
        return super().determine_result(run)
