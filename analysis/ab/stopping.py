"""
When a paired run (blocks, interleaved, duet; two definitions merged under blocks too) stops: the
loop that runs the planned invocations, compares and, with --until-decided, looks after every
invocation from the third (analysis.tools.plan.sequential.run_paired_sequence, alpha / rows each)
until every row is decided, one is decided slower (the gate's answer cannot change), the budget or
--max-reruns; with --until PCT until the CI is narrow enough. Then the sequential verdicts, their
cost and what would decide an undecided row, as data and in lines.
"""

import functools
import math
import sys
from dataclasses import dataclass

import numpy as np


def measure_loop(run, outdir, pending, observe, options, out=sys.stderr):
    """The paired designs' loop: run what is planned, compare, look (--until-decided), plan one more
    invocation or stop. `observe()` -> (compare's Result, a thunk of the rows' log series) of the
    invocations so far; alpha and threshold are the AbOptions'. Returns (the Result, [Look])."""
    alpha, threshold = options.alpha, options.threshold
    while True:
        pending()
        result, series = observe()
        looks = decide(series(), run, alpha, threshold) if run.until_decided else []
        stop = _stop(run, result, looks, alpha, threshold)
        if stop is not None:
            run.stopped = stop
            run.save(outdir)
            return result, looks
        run.add_rerun(outdir, run.checks[-1]["why"], out)


def _stop(run, result, looks, alpha, threshold):
    """Why the run stops now ('' for the planned M, None to go on); records the check."""
    if result.nothing:
        return ""
    if run.until_decided:
        undecided = [r.row for r in looks if not r.decision.decided]
        slower = [r.row for r in looks if r.decision.decided and r.decision.verdict == "slower"]
        nearest = _nearest_decision(run, looks, alpha, threshold)
        run.checks.append({"reruns": run.reruns, "undecided": undecided, "nearest_decision": nearest,
                           "why": f"undecided: {', '.join(undecided)}{_forecast(run, nearest)}"})
        if not undecided:
            return f"every row decided after {run.reruns} invocations"
        if slower:
            return f"{'; '.join(slower)} decided slower after {run.reruns} invocations: the gate's answer (exit 1) is known"
    elif run.until is not None:
        width = max(100 * (r.ci_high - r.ci_low) / 2 for r in result.rows)
        run.checks.append({"reruns": run.reruns, "half_width": width, "why": f"CI half-width {width:.2f} % >= {run.until:g} %"})
        if width < run.until:
            return f"CI half-width {width:.2f} % < {run.until:g} % after {run.reruns} invocations"
    else:
        return ""
    return _out_of_room(run)


def _out_of_room(run):
    """Why no further invocation may run (M_max or the budget), else None."""
    if run.reruns >= run.max_reruns:
        return f"--max-reruns {run.max_reruns} reached"
    from analysis.tools.plan import ab_looks

    if not ab_looks.budget_left_for_a_pair(run, invocations=1):
        return f"the budget ({run.budget / 60:.3g} min) does not fit another invocation"
    return None


def _nearest_decision(run, looks, alpha, threshold):
    """About how many invocations this run would stop at, at the spread met so far: where an
    undecided row leans slower, the fewest that would call one slower (the gate's answer); else
    the most that every undecided row needs. None where that lies beyond
    paired_power.MAX_INVOCATIONS or cannot be told."""
    from analysis.tools.plan import paired_power
    from analysis.tools.plan.ab_looks import seconds_spent

    seconds = seconds_spent(run) / max(1, run.reruns)
    advice = [paired_power.advice(r.sd, r.decision.ratio, r.decision.level or alpha / len(looks), threshold, seconds)
              for r in looks if not r.decision.decided and math.isfinite(r.sd) and r.sd > 0]
    slower = [a.invocations for a in advice if a.goal == "change" and a.change > 0 and a.invocations is not None]
    if slower:
        return min(slower)
    if not advice or any(a.invocations is None for a in advice):
        return None
    return max(a.invocations for a in advice)


def _forecast(run, nearest):
    """What the progress line says of the spread: a decision near, or out of this run's reach."""
    if nearest is None:
        from analysis.tools.plan.paired_power import MAX_INVOCATIONS

        return (f" (at this spread, beyond {MAX_INVOCATIONS} invocations: likely to end undecided)"
                if run.reruns >= 3 else "")
    if nearest > run.max_reruns:
        return f" (at this spread about M = {nearest} would decide it, beyond M_max = {run.max_reruns}: likely to end undecided)"
    return f" (at this spread about M = {max(nearest, run.reruns + 1)} would decide it)"


@dataclass
class Look:
    row: str
    decision: object      # analysis.tools.plan.sequential.Decision
    pairs: int            # pairs up to the look that decided it (or all)
    sd: float = math.nan  # sd of the invocations' log ratios up to that look


def decide(series, run, alpha, threshold):
    """[Look] per row: the paired sequential rule over its invocations' log ratios: slower or faster
    at alpha / rows each (any row slower fails the gate), "~" at alpha each (the run says ~ only
    where every row does: an intersection-union test, whose error is at most alpha without a split)."""
    from analysis.tools.plan import sequential

    series = [s for s in series if s[1].size >= 2]
    out = []
    for label, logs, sizes in series:
        d = sequential.run_paired_sequence(logs, alpha / len(series), threshold, run.max_reruns, decide=_remembered,
                                           same_alpha=alpha)
        out.append(Look(label, d, int(sum(sizes[:d.reruns])), float(np.std(logs[:d.reruns], ddof=1))))
    return out


def _remembered(log_ratios, level, threshold, same_level):
    """sequential.decide_paired, remembered by its input. Every look replays the looks before it
    (an invocation set aside later changes the series), and at M = 70 those replays took 0.18 s
    of each look; remembered, a look decides only the prefixes it has not seen."""
    return _decided(np.asarray(log_ratios, dtype=float).tobytes(), level, threshold, same_level)


@functools.lru_cache(maxsize=4096)
def _decided(logs, level, threshold, same_level):
    from analysis.tools.plan import sequential

    return sequential.decide_paired(np.frombuffer(logs), level, threshold, same_level)


def verdicts(run, looks, alpha, threshold):
    """[RowVerdict] of the looks: the sequential verdict, its cost, and what would decide an undecided row."""
    from analysis.tools.plan import paired_power
    from analysis.tools.plan.ab_looks import seconds_spent
    from analysis.tools.plan.verdict_record import RowVerdict

    out = []
    for r in looks:
        d = r.decision
        would = None
        if not d.decided and math.isfinite(r.sd):
            would = paired_power.advice(r.sd, d.ratio, d.level or alpha / len(looks), threshold,
                                       seconds_spent(run) / max(1, run.reruns))
        out.append(RowVerdict(r.row, d.verdict if d.decided else "inconclusive", d.reruns, "one-sample t", d.p, d.level,
                              d.ratio, d.rci_low, d.rci_high, seconds_spent(run, d.reruns) / 60, pairs=r.pairs or None,
                              would_decide=would, confidence=d.confidence))
    return out


def sequential_report(run, result, looks, options, outdir):
    """The SequentialReport of a paired run (empty without --until-decided); compare's rows take
    the sequential verdicts."""
    from analysis.tools.plan import ab_looks
    from analysis.tools.plan.verdict_record import SequentialReport

    if not looks:
        return SequentialReport()
    ab_looks.apply(result.rows, looks)
    rows = verdicts(run, looks, options.alpha, options.threshold)
    return SequentialReport(ab_looks.report(run, outdir, rows, options.alpha, options.threshold, paired=True), rows)
