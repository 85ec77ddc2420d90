"""Shared infrastructure every experiment and tool uses: reading BenchExec results, statistics,
plots, the report model and its writers. Imports nothing above it."""
