"""Sweeps of benchexec invocations: the model experiments declare themselves with, the runner
that executes them, loading their results, and lint for the files they use."""
