"""
The memory-bandwidth experiment (seed 004, experiment B): STREAM per (CPU node, memory node) pair
against the firmware's NUMA distances.

Input: BenchExec result files of `benchmark-defs/memory-bandwidth.xml` (tool `stream`), one run
definition per node pair (`--cpunode C --memnode M`, which tool_info.stream turns into
`numactl --cpunodebind=C --membind=M`). The firmware's distances come from `numactl --hardware`
output when given, else from what each STREAM run recorded (`numa-nodes`, `node-distances` of its
CPU node, read from /sys inside the run), else from /sys below `root`.

The bandwidth matrix holds the median triad bandwidth of each pair (rows: CPU node, columns:
memory node). As the seed did, a bandwidth becomes a distance relative to local access:
    derived[c][m] = 10 x bandwidth[c][c] / bandwidth[c][m]
so local access is 10 (the firmware's convention) and half the bandwidth is 20. The difference
derived - firmware says where the firmware's table misleads. On a machine with one node all this
is a 1 x 1 matrix: the section says so and the seed's claims are not testable.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import matplotlib
import matplotlib.colors
import numpy as np
from lxml import etree

from analysis.core import plots
from analysis.machine import facts as machine_facts
from analysis.machine.numa import Hardware, NumaError, parse_hardware, sysfs_hardware  # noqa: F401 (re-exported for the tests)
from analysis.core.report import Figure, Finding, Section, Table
from analysis.machine.topology import parse_cpu_list

KERNELS = ("copy", "scale", "add", "triad")
COLUMNS = ("status", "category", "copy-mbs", "scale-mbs", "add-mbs", "triad-mbs", "cpu-node", "mem-node",
           "numa-nodes", "node-distances", "array-bytes", "llc-bytes", "checksum-ok", "trials")
LOCAL = 10.0  # the firmware's distance of a node to itself (ACPI SLIT)
SEED_REMOTE_FIRMWARE = 16
SEED_REMOTE_DERIVED = 22
SLOWER_MARGIN = 0.10  # derived remote distances count as 'beyond the firmware's' 10 % above it
_NODE_OPTION = re.compile(r"--(cpunode|memnode)[= ](\d+)")


def recorded_hardware(rows):
    """Hardware from what the STREAM runs recorded: [(numa-nodes text, cpu node, distance row text)].
    None unless every node's row was recorded by some run."""
    nodes, found = None, {}
    for online, cpu_node, distances in rows:
        if not online or not distances or cpu_node is None:
            continue
        nodes = parse_cpu_list(online)
        found[int(cpu_node)] = [float(x) for x in distances.split(",")]
    if not nodes or sorted(found) != nodes or any(len(r) != len(nodes) for r in found.values()):
        return None
    return Hardware(nodes=nodes, distance=np.array([found[n] for n in nodes]), cpus={}, size_mb={},
                    source="/sys as recorded by the STREAM runs")


# ---------------------------------------------------------------------------------------------
# bandwidths


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


def collect(tables):
    """(Pairs of the runs that finished with valid checksums, recorded distance rows,
    {excluded run: reason}, [warnings])."""
    values, recorded, excluded, warnings = {}, [], {}, []
    for table in tables:
        valid = table.valid()
        for i, task in enumerate(table.tasks.tolist()):
            label = f"{table.name}/{task.rsplit('/', 1)[-1]}"
            ok = table.columns.get("checksum-ok")
            triad = table.columns.get("triad-mbs")
            if not valid[i] or triad is None or not np.isfinite(triad[i]):
                excluded[label] = table.status[i] or "no status"
                continue
            if ok is None or ok[i] != 1:
                excluded[label] = "checksum not ok"
                continue
            cpu, mem = pair_of(table, i)
            if cpu is None or mem is None:
                excluded[label] = "no node pair (neither --cpunode/--memnode nor cpu-node/mem-node)"
                continue
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
    pairs = Pairs({pair: {k: np.array(v) for k, v in kernels.items()} for pair, kernels in values.items()})
    return pairs, recorded, excluded, warnings


def _text(text_column, numeric_column, i):
    """A column that is text on a big machine ('0,2,4,6') and a number on a small one ('0')."""
    if text_column is not None:
        return str(text_column[i])
    if numeric_column is not None and np.isfinite(numeric_column[i]):
        return f"{numeric_column[i]:g}"
    return None


def read_pairs_csv(path):
    """Pairs from a CSV with columns cpu_node, mem_node and <kernel>_mbs (a recorded machine)."""
    import csv

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
    return Pairs({pair: {k: np.array(v) for k, v in kernels.items()} for pair, kernels in values.items()})


def bandwidth_matrix(pairs, nodes, kernel="triad"):
    """Median MB/s per (CPU node row, memory node column); nan where a pair was not measured."""
    return np.array([[pairs.median((c, m), kernel) for m in nodes] for c in nodes])


def derived_distance(bandwidth):
    """10 x local bandwidth of the row's CPU node / bandwidth, as the seed derived it."""
    local = np.diag(bandwidth)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        return LOCAL * local / bandwidth


def benchmark_for_nodes(template, nodes):
    """The benchmark definition `template` (XML text) with one run definition per
    (CPU node, memory node) pair of `nodes`, named cpuC-memM, in place of its own."""
    parser = etree.XMLParser(remove_blank_text=False)
    root = etree.fromstring(template.encode() if isinstance(template, str) else template, parser)
    old = root.findall("rundefinition")
    if not old:
        raise NumaError("benchmark definition has no <rundefinition> to replace")
    anchor = root.index(old[0])
    for element in old:
        root.remove(element)
    for k, (c, m) in enumerate((c, m) for c in nodes for m in nodes):
        element = etree.Element("rundefinition", name=f"cpu{c}-mem{m}")
        for name, value in (("--cpunode", c), ("--memnode", m)):
            option = etree.SubElement(element, "option", name=name)
            option.text = str(value)
        element.tail = "\n  "
        root.insert(anchor + k, element)
    doctype = root.getroottree().docinfo.doctype
    return etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8", doctype=doctype).decode()


# ---------------------------------------------------------------------------------------------
# figures


def heatmaps(nodes, bandwidth, derived, firmware, title):
    """Two heatmaps side by side: bandwidth (GB/s) and derived distance, each cell annotated with
    its value and the firmware's distance."""
    n = len(nodes)
    size = min(3.0 + 0.5 * n, 4.8)
    with plots.styled_figure(2 * size + 1.2, size + 0.6) as fig:
        axes = fig.subplots(1, 2)
        panels = ((axes[0], bandwidth / 1e3, "triad bandwidth (GB/s)", "viridis", "{:.2f}"),
                  (axes[1], derived, "distance from bandwidth", "magma_r", "{:.1f}"))
        for ax, matrix, label, cmap, fmt in panels:
            ax.grid(False)
            finite = matrix[np.isfinite(matrix)]
            vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
            if vmax <= vmin:
                vmin, vmax = vmin - 1, vmax + 1
            image = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=vmin, vmax=vmax)
            fig.colorbar(image, ax=ax, shrink=0.8)
            ax.set_xticks(range(n), [str(x) for x in nodes])
            ax.set_yticks(range(n), [str(x) for x in nodes])
            ax.set_xlabel("memory node")
            ax.set_ylabel("CPU node")
            ax.set_title(label)
            norm = matplotlib.colors.Normalize(vmin, vmax)
            for i in range(n):
                for j in range(n):
                    value = matrix[i, j]
                    r, g, b = matplotlib.colormaps[cmap](norm(value))[:3] if np.isfinite(value) else (1, 1, 1)
                    colour = "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.5 else "black"
                    text = fmt.format(value) if np.isfinite(value) else "not run"
                    ax.text(j, i, f"{text}\nfirmware {firmware[i, j]:g}", ha="center", va="center", fontsize=7.5 if n > 3 else 9,
                            color=colour)
        fig.suptitle(title)
    return fig


# ---------------------------------------------------------------------------------------------
# the section


def section(tables, facts=None, hardware=None):
    """The report section of memory-bandwidth results (RunTables of tool `stream`).

    hardware: `numactl --hardware` output (text) of the measured machine, if recorded; else the
    distances the runs recorded, else the node distances the sweep recorded (`facts`, an
    analysis.machine.facts.Facts; without a sweep, this host's /sys if the results were made here).
    Returns (Section, data).
    """
    pairs, recorded, excluded, warnings = collect(tables)
    notes = []
    firmware = None
    if hardware is not None:
        firmware = parse_hardware(hardware) if isinstance(hardware, str) else hardware
    if firmware is None:
        firmware = recorded_hardware(recorded)
    if firmware is None:
        facts = facts if facts is not None else machine_facts.for_results(tables)
        firmware = facts.numa_hardware()
        if firmware is not None:
            notes.append(f"The runs did not record every node's distances; the firmware's table is {firmware.source}.")
    notes.append(_sizes_and_checksums(tables))
    sec, data = section_from_pairs(pairs, firmware, notes=notes)
    sec.warnings[:0] = warnings
    if excluded:
        sec.warnings.append(f"{len(excluded)} run(s) are left out: " + ", ".join(f"{k} ({v})" for k, v in excluded.items()))
    data["excluded"] = excluded
    return sec, data


def _sizes_and_checksums(tables):
    """What makes a STREAM figure valid, said once: array size against the last-level cache,
    trials, and how many runs validated their checksums."""
    sizes, llcs, trials, ok, runs = set(), set(), set(), 0, 0
    for table in tables:
        for i in np.flatnonzero(table.valid()):
            runs += 1
            for column, found in (("array-bytes", sizes), ("llc-bytes", llcs), ("trials", trials)):
                value = table.columns.get(column)
                if value is not None and np.isfinite(value[i]):
                    found.add(int(value[i]))
            checksum = table.columns.get("checksum-ok")
            ok += int(checksum is not None and checksum[i] == 1)
    mib = lambda values: ", ".join(f"{v / 2**20:g} MiB" for v in sorted(values)) or "unknown"  # noqa: E731
    return (f"Each of STREAM's three arrays held {mib(sizes)} (last-level cache: {mib(llcs)}; at least 4 x, so no "
            f"kernel runs from cache), best of {', '.join(map(str, sorted(trials))) or 'unknown'} trials; "
            f"{ok} of {runs} finished runs validated their checksums (a run that does not is left out).")


def section_from_pairs(pairs, firmware, notes=()):
    """The section from per-pair STREAM values and the firmware's table (Hardware or None)."""
    sec = Section(id="memory-bandwidth", title="Memory bandwidth per NUMA node pair (STREAM)")
    measured_nodes = pairs.nodes
    nodes = firmware.nodes if firmware is not None else measured_nodes
    n = len(nodes)
    sec.paragraphs += [
        "Seed 004 (experiment B) ran McCalpin's STREAM with every CPU node against every memory node and turned the "
        "bandwidths into distances relative to local access (10 × local / remote bandwidth) to compare them with the "
        "firmware's table from numactl --hardware. Here STREAM (programs/stream, one thread, each array 4 × the "
        "last-level cache, best of trials 2–10) runs under numactl --cpunodebind=C --membind=M, one BenchExec run "
        "definition per pair; the matrix holds the median over repetitions of the triad bandwidth.",
        *notes,
    ]
    data = {"nodes": nodes, "firmware_source": firmware.source if firmware else None}
    if firmware is None:
        sec.warnings.append("no firmware distance table: neither numactl --hardware output, nor distances recorded by the "
                            "runs, nor /sys/devices/system/node are available")
        firmware_matrix = np.full((n, n), np.nan)
    else:
        firmware_matrix = firmware.distance
        missing = [x for x in measured_nodes if x not in nodes]
        if missing:
            sec.warnings.append(f"runs name node(s) {missing} that the firmware's table ({firmware.source}) does not have")
    if not pairs.values:
        sec.warnings.append("no STREAM run finished: nothing to analyse")
        sec.findings.append(_remote_finding_untestable("no finished STREAM runs"))
        return sec, data

    bandwidth = {k: bandwidth_matrix(pairs, nodes, k) for k in KERNELS}
    triad = bandwidth["triad"]
    derived = derived_distance(triad)
    difference = derived - firmware_matrix
    if n == 1:
        sec.paragraphs.append(f"This machine has one NUMA node ({nodes[0]}): the matrices are 1 × 1, local access only "
                              "(derived distance 10 by definition), so nothing here compares local with remote memory.")
    unmeasured = [(c, m) for c in nodes for m in nodes if (c, m) not in pairs.values]
    if unmeasured:
        sec.warnings.append(f"{len(unmeasured)} of {n * n} node pairs have no STREAM result: "
                            + ", ".join(f"({c}, {m})" for c, m in unmeasured[:12]) + ("…" if len(unmeasured) > 12 else ""))

    rows = []
    for i, c in enumerate(nodes):
        for j, m in enumerate(nodes):
            if (c, m) not in pairs.values:
                continue
            values = pairs.values[(c, m)]["triad"]
            rows.append([c, m, len(values), *(bandwidth[k][i, j] for k in KERNELS),
                         f"{values.min():.0f} – {values.max():.0f}", firmware_matrix[i, j], derived[i, j], difference[i, j]])
    sec.tables.append(Table(
        title="STREAM bandwidth per (CPU node, memory node) and the distances",
        columns=["CPU node", "memory node", "runs", "copy (MB/s)", "scale (MB/s)", "add (MB/s)", "triad (MB/s)",
                 "triad range (MB/s)", "firmware distance", "derived distance", "derived − firmware"],
        rows=rows,
        caption="Medians over runs of STREAM's best rate (MB/s = 10^6 bytes per second). Derived distance = 10 × triad "
                "bandwidth of the CPU node's own memory / triad bandwidth of this pair.",
    ))
    if firmware is not None:
        sec.tables.append(Table(
            title=f"Firmware NUMA distances ({firmware.source})",
            columns=["node", *[str(x) for x in nodes], "CPUs", "size (MB)"],
            rows=[[c, *firmware_matrix[i].tolist(), _cpu_text(firmware.cpus.get(c)), firmware.size_mb.get(c)]
                  for i, c in enumerate(nodes)],
        ))
    sec.figures.append(Figure(
        f"Bandwidth and distance per node pair ({n} × {n})",
        plots.to_png(heatmaps(nodes, triad, derived, firmware_matrix,
                              f"STREAM triad per (CPU node, memory node), {n} × {n}")),
        "Left: median triad bandwidth. Right: the distance it implies, 10 × local / this pair's bandwidth. Each cell also "
        "shows the firmware's distance for the pair.",
    ))
    sec.findings += _findings(nodes, triad, derived, firmware_matrix)
    data.update({
        "bandwidth_mbs": {k: v.tolist() for k, v in bandwidth.items()},
        "derived_distance": derived.tolist(),
        "firmware_distance": firmware_matrix.tolist(),
        "difference": difference.tolist(),
        "runs_per_pair": {f"{c},{m}": int(len(v["triad"])) for (c, m), v in pairs.values.items()},
    })
    return sec, data


def _cpu_text(cpus):
    if not cpus:
        return None
    ranges, start = [], cpus[0]
    for a, b in zip(cpus, cpus[1:] + [None]):
        if b != a + 1:
            ranges.append(f"{start}" if start == a else f"{start}-{a}")
            start = b
    return ",".join(ranges)


def _remote_finding_untestable(why):
    return Finding(f"Remote memory is slower than the firmware's distance says: about {SEED_REMOTE_DERIVED} from bandwidth "
                   f"where the firmware says {SEED_REMOTE_FIRMWARE} (seed 004, B)", "not testable here", why)


def _findings(nodes, triad, derived, firmware):
    n = len(nodes)
    if n == 1:
        why = f"one NUMA node ({nodes[0]}): there is no remote memory on this machine; the 1 × 1 matrix holds local access only"
        return [_remote_finding_untestable(why),
                Finding("Each node reaches one other node faster than the rest (seed 004, B)", "not testable here", why)]
    off = ~np.eye(n, dtype=bool)
    remote_derived, remote_firmware = derived[off], firmware[off]
    keep = np.isfinite(remote_derived) & np.isfinite(remote_firmware)
    findings = []
    if keep.any():
        ratio = remote_derived[keep] / remote_firmware[keep]
        beyond = ratio > 1 + SLOWER_MARGIN
        mean_ratio = float(np.mean(ratio))
        findings.append(Finding(
            f"Remote memory is slower than the firmware's distance says: about {SEED_REMOTE_DERIVED} from bandwidth where "
            f"the firmware says {SEED_REMOTE_FIRMWARE} (seed 004, B)",
            "confirmed" if mean_ratio > 1 + SLOWER_MARGIN else "refuted",
            f"{int(keep.sum())} remote pairs: derived distance {np.nanmin(remote_derived):.1f} – {np.nanmax(remote_derived):.1f} "
            f"(mean {np.mean(remote_derived[keep]):.1f}) against firmware {np.min(remote_firmware[keep]):g} – "
            f"{np.max(remote_firmware[keep]):g}; {int(beyond.sum())} pairs more than {SLOWER_MARGIN:.0%} beyond the firmware's "
            f"value; mean ratio derived/firmware {mean_ratio:.2f}. Confirmed if that mean exceeds {1 + SLOWER_MARGIN:.2f}.",
        ))
    else:
        findings.append(_remote_finding_untestable("no remote pair has both a bandwidth and a firmware distance"))
    favoured = []
    for i, c in enumerate(nodes):
        remote = [(triad[i, j], nodes[j]) for j in range(n) if j != i and np.isfinite(triad[i, j])]
        if len(remote) < 2:
            continue
        remote.sort(reverse=True)
        if remote[0][0] > remote[1][0] * (1 + SLOWER_MARGIN):
            favoured.append((c, remote[0][1], remote[0][0] / remote[1][0]))
    testable = sum(1 for i in range(n) if np.isfinite(triad[i, off[i]]).sum() >= 2)
    findings.append(Finding(
        "Each node reaches one other node faster than the rest (seed 004, B)",
        ("confirmed" if len(favoured) == testable else "refuted") if testable else "not testable here",
        (f"{len(favoured)} of {testable} CPU nodes have a remote node with more than {SLOWER_MARGIN:.0%} more triad bandwidth "
         "than the next: " + (", ".join(f"{c} → {m} (×{r:.2f})" for c, m, r in favoured) or "none")
         + ". The firmware's table gives every remote node the same distance." if testable else "needs 3 or more nodes"),
    ))
    local_best = [bool(np.isfinite(triad[i, i]) and np.all(triad[i, i] >= triad[i, np.isfinite(triad[i])])) for i in range(n)]
    findings.append(Finding(
        "Local memory has the highest bandwidth for every CPU node (seed 004, B: 'the distance from each node to itself')",
        "confirmed" if all(local_best) else "refuted",
        f"{sum(local_best)} of {n} CPU nodes reach their own memory fastest (median triad).",
    ))
    return findings
