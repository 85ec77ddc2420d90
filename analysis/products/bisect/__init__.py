"""`timekit bisect GOOD BAD`: which commit made it slower, every step a decided verdict against GOOD.

repo (the git side: revisions, the commits between, a worktree and a build per commit), search (the
binary search over verdicts, skips and undecided steps, with the error controlled over its steps),
manifest (every step kept, for --resume), shape (sudden or spread), answer (the answer as data and
its text), report (report.json, report.html and the plot of each tested commit's ratio to GOOD).
"""
