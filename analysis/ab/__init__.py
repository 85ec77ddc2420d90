"""
`timekit ab`: is B slower than A, as each runs alone? `designs` says how base and new share the
machine, `record` what every run records, `runner` runs the invocations on the step loop,
`stopping` decides when to stop, `verdict` gives the one exit code; `cli` and `api` are the ways
in, `command_pairs` (shell commands) and `definitions` (two benchmark definitions) the two paths.
docs/architecture.md maps the rest.
"""
