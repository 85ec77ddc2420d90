"""What a report says about the memory workloads' sizes (tool_info/sizing.py chooses them)."""

from analysis.core import fmt


def not_reached(buffers, llc, budget, largest):
    """The one line a section and the runner print where the largest buffer stays short of memory:
    'memory level not reached: LLC reported X, budget Y (...)'; None where it reaches it or the
    LLC is unknown."""
    if not llc or not largest or largest >= buffers.memory_from * llc:
        return None
    return (f"memory level not reached: LLC reported {fmt.binary_size(llc)}, budget "
            f"{fmt.binary_size(budget) if budget is not None else 'not recorded'} ({buffers.name} "
            f"{fmt.binary_size(largest)} = {largest / llc:.2g} × LLC; memory counts from {buffers.memory_from:g} ×)")
