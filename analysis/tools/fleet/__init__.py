"""
The experiments on many machines through SLURM, and their claims judged across the fleet.

SLURM places one exclusive batch job per node (submit, status); inside it `timekit run` measures
under BenchExec as on one machine, into a fleet directory every node shares (manifest). The fleet
report collects the node reports (collect) and compares the nodes: claims, cores, outliers.
"""
