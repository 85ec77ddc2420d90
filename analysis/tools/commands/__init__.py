"""
Shell commands as benchmarks: `timekit bench 'CMD' ...` and `timekit ab 'CMD A' 'CMD B'`. The kit
writes an ordinary BenchExec definition for the commands (`definition`) and runs it as it runs
everything else; `spec` holds the commands as data, `figures`, `output` and `export` what is shown
of them, `cli` the options both commands share. `timekit ab` itself is the package analysis.ab.
"""
