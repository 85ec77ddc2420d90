"""BenchExec tool-info modules of the timing kit (use them as `tool="tool_info.<name>"`)."""
