"""
Shell commands as benchmarks: `timekit bench 'CMD' ...` and `timekit ab 'CMD A' 'CMD B'`.

The kit writes an ordinary BenchExec benchmark definition for the commands (tool_info.command,
one run definition per command, repetition tasks) and runs it as it runs everything else, under
BenchExec's cgroups and container, reruns interleaved. `spec` turns arguments into commands,
`definition` writes the XML and tasks, `bench` runs them, `figures` computes the per-command
figures and BenchExec's cost per run, `export` writes hyperfine-shaped JSON, Markdown and CSV,
`ab_input` gives `timekit ab` its commands, `first_run` executes each command once before the
first invocation, `cli` holds the options both commands share.
"""
