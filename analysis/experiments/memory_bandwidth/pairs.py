"""
STREAM results per (CPU node, memory node) pair: which pair a run measured, which runs count, and
the matrix of median bandwidths (rows: CPU node, columns: memory node).

Input: BenchExec result files of `benchmark-defs/memory-bandwidth.xml` (tool `stream`), one run
definition per node pair (`--cpunode C --memnode M`, which tool_info.stream turns into
`numactl --cpunodebind=C --membind=M`), or a CSV of a recorded machine (read_pairs_csv).
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass

import numpy as np

from analysis.core import validity
from analysis.machine.numa import NumaError

KERNELS = ("copy", "scale", "add", "triad")
COLUMNS = ("status", "category", "copy-mbs", "scale-mbs", "add-mbs", "triad-mbs", "cpu-node", "mem-node",
           "numa-nodes", "node-distances", "array-bytes", "llc-bytes", "budget-bytes", "checksum-ok", "trials")
_NODE_OPTION = re.compile(r"--(cpunode|memnode)[= ](\d+)")


@dataclass
class Pairs:
    """STREAM results per (CPU node, memory node): MB/s per kernel, one value per run."""

    values: dict  # (cpu node, mem node) -> {kernel: np.ndarray}

    @property
    def nodes(self):
        return sorted({n for pair in self.values for n in pair})

    def median(self, pair, kernel="triad"):
        v = self.values.get(pair, {}).get(kernel)
        return float(np.median(v)) if v is not None and len(v) else math.nan


def pair_of(table, i):
    """(cpu node, mem node) a run asked for: the run definition's --cpunode/--memnode; without
    them (no numactl binding) the nodes the run reports it ran on and allocated from."""
    asked = dict((k, int(v)) for k, v in _NODE_OPTION.findall(table.options or ""))
    cpu = asked.get("cpunode", _int(table.columns.get("cpu-node"), i))
    mem = asked.get("memnode", _int(table.columns.get("mem-node"), i))
    return cpu, mem


def _int(column, i):
    if column is None or not np.isfinite(column[i]):
        return None
    return int(column[i])


def _exclusion(table, valid, triad, i):
    """Why run i of the table does not count ('' when it does); `valid`: table.valid(); `triad`:
    validity.of_column of its triad-mbs."""
    ok = table.columns.get("checksum-ok")
    if not valid[i]:
        return table.status[i] or "no status"
    if not triad.usable[i]:
        return f"triad-mbs: {triad.reason(i)}"
    if ok is None or ok[i] != 1:
        return "checksum not ok"
    cpu, mem = pair_of(table, i)
    if cpu is None or mem is None:
        return "no node pair (neither --cpunode/--memnode nor cpu-node/mem-node)"
    return ""


def _as_pairs(values):
    return Pairs({pair: {k: np.array(v) for k, v in kernels.items()} for pair, kernels in values.items()})


def collect(tables):
    """(Pairs of the runs that finished with valid checksums, recorded distance rows,
    {excluded run: reason}, [warnings])."""
    values, recorded, excluded, warnings = {}, [], {}, []
    for table in tables:
        valid = table.valid()
        triad = validity.of_column(table, "triad-mbs", valid)
        for i, task in enumerate(table.tasks.tolist()):
            label = f"{table.name}/{task.rsplit('/', 1)[-1]}"
            why = _exclusion(table, valid, triad, i)
            if why:
                excluded[label] = why
                continue
            cpu, mem = pair_of(table, i)
            measured = (_int(table.columns.get("cpu-node"), i), _int(table.columns.get("mem-node"), i))
            if measured[0] not in (None, cpu) or measured[1] not in (None, mem):
                warnings.append(f"{label}: asked for CPU node {cpu} and memory node {mem}, but ran on node "
                                f"{measured[0]} with its arrays on node {measured[1]} (-2: spread over several)")
            entry = values.setdefault((cpu, mem), {k: [] for k in KERNELS})
            for kernel in KERNELS:
                column = table.columns.get(f"{kernel}-mbs")
                entry[kernel].append(float(column[i]) if column is not None else math.nan)
            texts = table.text_columns
            recorded.append((_text(texts.get("numa-nodes"), table.columns.get("numa-nodes"), i), measured[0],
                             _text(texts.get("node-distances"), table.columns.get("node-distances"), i)))
    return _as_pairs(values), recorded, excluded, warnings


def _text(text_column, numeric_column, i):
    """A column that is text on a big machine ('0,2,4,6') and a number on a small one ('0')."""
    if text_column is not None:
        return str(text_column[i])
    if numeric_column is not None and np.isfinite(numeric_column[i]):
        return f"{numeric_column[i]:g}"
    return None


def read_pairs_csv(path):
    """Pairs from a CSV with columns cpu_node, mem_node and <kernel>_mbs (a recorded machine)."""
    values = {}
    with open(path, newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            try:
                pair = (int(row["cpu_node"]), int(row["mem_node"]))
                entry = values.setdefault(pair, {k: [] for k in KERNELS})
                for kernel in KERNELS:
                    entry[kernel].append(float(row[f"{kernel}_mbs"]))
            except (KeyError, TypeError, ValueError) as e:
                raise NumaError(f"{path}, line {number}: expected cpu_node, mem_node and copy/scale/add/triad_mbs ({e})") from None
    return _as_pairs(values)


def bandwidth_matrix(pairs, nodes, kernel="triad"):
    """Median MB/s per (CPU node row, memory node column); nan where a pair was not measured."""
    return np.array([[pairs.median((c, m), kernel) for m in nodes] for c in nodes])
