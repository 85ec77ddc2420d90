"""
A sweep's memory limit follows its workload's buffers (tool_info/sizing.py says why): the sweep's
copy of a definition whose tool sizes its buffers by the last-level cache (STREAM, osbench) gets
the memory limit that 4 x the LLC needs, never less than the committed one and never more than
half of MemAvailable can use, and the sweep records what it planned (`sizes` in sweep.json).
The programs print what really ran (budget-bytes, array-bytes, lat-bytes-NN).
"""

import math

from benchexec.util import parse_memory_value
from lxml import etree

from analysis.core import fmt, memory_level
from tool_info import sizing


def plan(definition, llc, mem_available):
    """Raise the memory limit of the benchmark definition file `definition` where its tool's
    buffers need more; returns the record for sweep.json ({} for a tool that sizes nothing)."""
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    tree = etree.parse(str(definition), parser)
    root = tree.getroot()
    buffers = sizing.BY_TOOL.get(root.get("tool"))
    if buffers is None:
        return {}
    committed = int(parse_memory_value(root.get("memlimit"))) if root.get("memlimit") else None
    limit = committed
    if llc:
        wanted = sizing.limit_for(buffers, llc, mem_available, committed)
        if wanted is not None and wanted > committed:
            limit = math.ceil(wanted / 10**6) * 10**6  # BenchExec's MB are 10^6 bytes
            root.set("memlimit", f"{limit // 10**6} MB")
            text = etree.tostring(tree, xml_declaration=True, encoding="UTF-8", doctype=tree.docinfo.doctype).decode()
            definition.write_text(text)
    fit = sizing.fit(buffers, llc, sizing.budget(limit, mem_available)) if llc else None
    return {
        "tool": root.get("tool"),
        "buffer": buffers.name,
        "llc_bytes": llc,
        "mem_available_bytes": mem_available,
        "memlimit_committed_bytes": committed,
        "memlimit_bytes": limit,
        "budget_bytes": fit.budget if fit else None,
        "wanted_bytes": fit.wanted if fit else None,
        "planned_bytes": fit.size if fit else None,
        "memory_level_reached": fit.reached if fit else None,
    }


def describe(sizes):
    """What the runner says about a sweep's sizes before it starts: a raised limit, a level not reached."""
    if not sizes or not sizes.get("llc_bytes"):
        return []
    lines = []
    committed, limit = sizes["memlimit_committed_bytes"], sizes["memlimit_bytes"]
    if committed is not None and limit != committed:
        lines.append(f"memory limit {committed / 1e6:.0f} MB raised to {limit / 1e6:.0f} MB: the {sizes['buffer']} "
                     f"follows the LLC ({fmt.binary_size(sizes['llc_bytes'])}) to {fmt.binary_size(sizes['wanted_bytes'])}")
    short = memory_level.not_reached(sizing.BY_TOOL[sizes["tool"]], sizes["llc_bytes"], sizes["budget_bytes"], sizes["planned_bytes"])
    return lines + ([f"warning: {short}"] if short else [])
