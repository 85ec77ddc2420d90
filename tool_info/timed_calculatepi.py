"""
BenchExec tool info: BenchExec's own `benchexec.tools.calculatepi` (bc computing pi), unchanged,
under a selectable timing API. It shows that tool_info.timer wraps any upstream module.
"""

from tool_info.timer import wrap

Tool = wrap("benchexec.tools.calculatepi")
