"""
BenchExec tool info for the kit's STREAM (`programs/stream.c`, McCalpin's copy, scale, add and
triad on arrays of 4x the last-level cache), the workload of the memory-bandwidth experiment.
Columns: `copy-mbs`, `scale-mbs`, `add-mbs`, `triad-mbs` (best MB/s), `cpu-node`, `mem-node`,
`array-bytes`, `llc-bytes`, `budget-bytes`, `checksum-ok`.

Every run gets its memory budget (`stream budget-bytes=N FILE`): the run's memory limit less a
reserve, at most half of MemAvailable (tool_info/sizing.py); the arrays shrink to fit it, so a
large last-level cache never ends a run OUT OF MEMORY.

A run definition chooses a pair of NUMA nodes with `<option name="--cpunode">C</option>` and
`<option name="--memnode">M</option>`; the program then runs under
`numactl --cpunodebind=C --membind=M` (Debian package numactl). Without them it runs where
BenchExec puts it. A missing numactl or a node this machine does not have stops the run with
one line that says so.
"""

import os
import re

from benchexec.tools.template import ToolNotFoundException, UnsupportedFeatureException

from tool_info import sizing
from tool_info.keyvalue import KeyValueTool

NODE_OPTIONS = {"--cpunode": "--cpunodebind", "--memnode": "--membind"}
NODES = "/sys/devices/system/node"


def node_options(options):
    """({'--cpunode': 'C', '--memnode': 'M'} as given, the other options). Accepts `--x N` and `--x=N`."""
    nodes, rest = {}, []
    options = list(options)
    i = 0
    while i < len(options):
        name, sep, value = options[i].partition("=")
        if name in NODE_OPTIONS:
            if not sep:
                if i + 1 >= len(options):
                    raise UnsupportedFeatureException(f"stream: option {name} needs a node number")
                value = options[i + 1]
                i += 1
            if not re.fullmatch(r"[0-9]+", value):
                raise UnsupportedFeatureException(f"stream: {name} {value!r} is not a node number")
            nodes[name] = value
        else:
            rest.append(options[i])
        i += 1
    return nodes, rest


class Tool(KeyValueTool):
    """STREAM copy/scale/add/triad bandwidth, optionally bound to a (CPU node, memory node) pair."""

    PROGRAM = "stream"
    TOOL_NAME = "STREAM"
    _numactl = None
    _numactl_missing = "numactl was not looked up"

    def executable(self, tool_locator):
        try:
            self._numactl = tool_locator.find_executable("numactl")
        except ToolNotFoundException as e:
            self._numactl_missing = str(e)
        return super().executable(tool_locator)

    def cmdline(self, executable, options, task, rlimits):
        nodes, rest = node_options(options)
        command = [executable, *sizing.budget_argument(rlimits), *rest, task.input_files_or_identifier[0]]
        if not nodes:
            return command
        if not self._numactl:
            raise UnsupportedFeatureException(
                f"stream: --cpunode/--memnode need numactl ({self._numactl_missing}); "
                "install it: apt-get install numactl")
        for name, value in nodes.items():
            if not os.path.isdir(f"{NODES}/node{value}"):
                have = sorted(n for n in os.listdir(NODES) if re.fullmatch(r"node[0-9]+", n)) if os.path.isdir(NODES) else []
                raise UnsupportedFeatureException(
                    f"stream: {name} {value}: this machine has no NUMA node {value} "
                    f"(it has {', '.join(have) or 'no NUMA information'})")
        binding = [f"{NODE_OPTIONS[name]}={value}" for name, value in sorted(nodes.items())]
        return [self._numactl, *binding, *command]
