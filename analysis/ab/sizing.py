"""
Longer invocations where the machine's slow spells make short ones cost more than they tell.

A paired invocation's observation is the median of its pairs' log ratios (analysis.ab.observations).
On a host whose CPU speed moves in spells (a 20 ms loop ran 12 to 62 ms on the development VM), the
median of a few dozen pairs follows the spells: back-to-back pairs of a 20 ms loop measured there
(benchmarks/README.md, "Invocations long enough for slow spells") gave the SD of one invocation's
median times sqrt(pairs) as 16 % at 20 pairs and 8 % at 60, so with BenchExec's half second around
each invocation, 60-pair invocations reach a given precision in about a fifth of the time of
25-pair ones. On a quiet machine an invocation of about a second decides at the first look, and a
longer one would only cost. So invocations start at about a second; where the first look finds
the decision far off, the run goes on with invocations of GROWN_SECONDS of pairs, and the rows and
looks count those only. The short ones stay in the record, not counted: invocations of two sizes
have two variances, which the one-sample t test over invocations does not allow. The alpha their
look could have spent is taken from what follows (AbRecord.spent), so a wrong verdict stays below
alpha over both.
"""

import math

from analysis.ab import designs
from analysis.tools.plan.args import FIRST_LOOK

GROWN_SECONDS = 2.5   # s of pairs an invocation holds once grown
FAR = 8               # a first look that forecasts more invocations than this (or none) grows them
GROWTH = 1.5          # grow only where the invocation gets at least this much longer


def grown_runs(run):
    """BenchExec runs per invocation once grown (None where the run keeps its size): only at the
    first look of a deciding (--until-decided), undecided back-to-back run sized by the kit (not by
    --runs or --repeat) whose forecast is far, and whose invocation would grow by GROWTH or more."""
    b = run.batch
    if (not run.until_decided or run.counted_from != 1 or b.fixed or len(run.checks) != 1
            or designs.get(run.design).co_located):
        return None
    nearest = run.checks[-1].get("nearest_decision")
    if nearest is not None and nearest <= FAR:
        return None
    if not (math.isfinite(b.pair_seconds) and b.pair_seconds > 0):
        return None
    runs = math.ceil(GROWN_SECONDS / (b.pair_seconds * b.pairs_per_run))
    return runs if runs * b.pairs_per_run >= GROWTH * b.pairs else None


def grow(run, looks, runs, out):
    """Lengthen the invocations from the next one on to `runs` BenchExec runs: the record says from
    which invocation the rows count and what the looks so far could have spent; plans the first
    FIRST_LOOK grown invocations (a look needs that many). Returns the line that says so."""
    b = run.batch
    before = (b.runs, b.pairs)
    run.counted_from = run.reruns + 1
    run.spent = max((look.decision.level for look in looks), default=0.0)
    b.runs = runs
    run.options.runs = runs
    b.why += (f"; from invocation {run.counted_from}: {runs} run(s), {b.pairs} pairs, about "
              f"{b.pairs * b.pair_seconds:.1f} s (the first look found a decision far off)")
    run.plan_reruns(run.reruns + 1, run.reruns + FIRST_LOOK)
    run.reruns += FIRST_LOOK
    run.max_reruns = max(run.max_reruns, run.reruns)
    nearest = run.checks[-1].get("nearest_decision")
    far = f"about M = {nearest}" if nearest else "more than the budget holds"
    return (f"  invocations 1-{run.counted_from - 1} ({before[0]} run(s) of {before[1]} pairs) left a decision far off "
            f"({far}); longer invocations reach it sooner where the machine's speed moves in spells (docs/designs.md): "
            f"from invocation {run.counted_from} on, {b.pairs} pairs (about {b.pairs * b.pair_seconds:.1f} s), and the "
            "rows count those only")
