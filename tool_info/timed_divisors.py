"""
BenchExec tool info: the divisor counter (tool_info.divisors) under a selectable timing API.
Run definitions choose the timer with `<option name="--timer">bash</option>` (runexec, bash,
fish, gnu); see tool_info.timer.
"""

from tool_info.timer import wrap

Tool = wrap("tool_info.divisors")
