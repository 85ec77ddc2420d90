"""Analysis side of the timing kit: load BenchExec results, compute statistics, plot, report.

Data flows one way: result files in, numbers, figures and pages out. Nothing here runs a benchmark
except the experiment runner (`analysis.sweep.runner`), which only starts benchexec with arguments.
"""
