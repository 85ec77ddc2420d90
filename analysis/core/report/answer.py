"""
The answer first: a report's opening sentences, which a person can act on without reading the
findings: what this machine's timing can be trusted for, which column to gate on, how many
invocations a 2 % comparison needs here, what could not be tested and what is still open. Each
line is drawn from findings' fields (and the per-invocation spread the discipline section
recorded) and names the findings it rests on; a line whose findings are absent is left out.
"""

from __future__ import annotations

import math

import scipy.stats

from analysis.core.report import summary
from analysis.core.report.model import VERDICTS

CHANGE = 0.02  # the comparison a reader most often asks about: a 2 % change
AGREE = 0.02  # two timers "agree" when their ratio's interval lies within 1 ± 2 %, every no-effect claim's margin
MAX_INVOCATIONS = 200


def _findings(report):
    return [f for section in report.sections for f in section.findings]


def _by_suffix(findings, suffix):
    return [f for f in findings if f.id.endswith(suffix)]


def _line(topic, text, findings):
    return {"topic": topic, "text": text, "findings": [f.id for f in findings]}


def _tally(findings):
    counts = {v: sum(f.verdict == v for f in findings) for v in VERDICTS}
    return f"{len(findings)} findings: " + ", ".join(f"{counts[v]} {v}" for v in VERDICTS if counts[v])


def _gate(findings):
    """Which column to gate on: CPU time where clock() agrees with the cgroup; wall time only as far
    as a competitor leaves it alone."""
    clock = [f for f in _by_suffix(findings, "/clock-close-to-cgroup") if f.parts]
    same_core = [f for f in _by_suffix(findings, "discipline/same-core-noisier") if f.parts]
    if not (clock or same_core):
        return None
    text = "Gate on CPU time (BenchExec's cputime column)"
    if clock and clock[0].verdict == "confirmed":
        text += f": {_clock_agreement(clock[0].parts[0])}"
    text += "."
    if same_core and same_core[0].parts[0].verdict == "confirmed":
        text += (" Wall time is only as good as the machine is quiet: a CPU-bound competitor on the same CPU makes it "
                 f"{summary.interval(same_core[0].parts[0])} times as long.")
    return _line("gate", text, clock + same_core)


def _clock_agreement(part):
    """How clock() and the cgroup compare, from the ratio's interval: "agree" only within ±AGREE
    (a claim confirmed within 5 % may still lie outside it: 0.9741, CI 0.9736-0.9745)."""
    ratio = f"{summary.interval(part)} (clock() / cgroup)"
    margin = part.implies[1] - 1  # the confirmed claim's own margin (5 %)
    claimed = f"within the claim's {100 * margin:.3g} %" if math.isfinite(margin) else "as the claim says"
    agree = f"{100 * AGREE:g} %"
    if 1 - AGREE <= part.low and part.high <= 1 + AGREE:
        return f"the program's own clock() and the cgroup agree within {agree}, {ratio}"
    if part.high < 1 - AGREE or part.low > 1 + AGREE:
        return (f"the program's own clock() and the cgroup differ by more than {agree}, {ratio}, {claimed}: "
                "compare CPU times of one source")
    return f"the program's own clock() is {claimed} of the cgroup, {ratio}; within {agree} is not shown"


def _timers(findings):
    """Timers whose reported steps are coarse: prefer the cgroup's and the program's own timing."""
    steps = [f for f in findings if f.id.endswith("-steps") and f.verdict == "confirmed"]
    if not steps:
        return None
    return _line("timers", f"{'; '.join(f.statement for f in steps)}: for runs under about a second prefer "
                           "BenchExec's or the program's own timing, whose steps are finer.", steps)


def invocations_for(cv, change=CHANGE, confidence=0.95):
    """Invocations a side for a t interval of a ratio of means (two sides of M, separate
    invocations, between-invocation CV `cv`) to be narrower than `change`: None beyond MAX_INVOCATIONS."""
    if not (cv and math.isfinite(cv)):
        return None
    for m in range(2, MAX_INVOCATIONS + 1):
        half = scipy.stats.t.ppf((1 + confidence) / 2, 2 * m - 2) * math.sqrt(2 / m) * cv
        if half < change:
            return m
    return None


def _comparisons(report, findings):
    """How many invocations a 2 % comparison needs here, from the spread of invocation means that
    the discipline section recorded for a task running alone."""
    alone = report.data.get("discipline", {}).get("conditions", {}).get("alone", {})
    cvs = {"cputime": (alone.get("cpu_variation") or {}).get("between_cv"),
           "walltime": alone.get("variation", {}).get("between_cv")}
    cvs = {k: v for k, v in cvs.items() if isinstance(v, float) and math.isfinite(v)}
    if not cvs:
        return None
    per_column = []
    for column, cv in cvs.items():
        m = invocations_for(cv)
        per_column.append(f"{column} about M = {m}" if m else f"{column} more than {MAX_INVOCATIONS}")
    reruns = _by_suffix(findings, "discipline/reruns-differ")
    text = (f"Comparing two builds: invocation means of one task vary by {', '.join(f'{v:.1%} ({k})' for k, v in cvs.items())} "
            f"here, so a 95 % interval of a change narrower than ±{CHANGE:.0%} takes {' and '.join(per_column)} "
            "invocations a side (t interval of the ratio of means, two sides of M); timekit ab runs them and "
            "timekit plan sizes them for your command.")
    return _line("comparisons", text, reruns)


def _untestable(findings):
    missing = [f for f in findings if f.verdict == "not testable here"]
    if not missing:
        return None
    names = "; ".join(f.statement for f in missing[:4]) + (f"; and {len(missing) - 4} more" if len(missing) > 4 else "")
    return _line("not testable", f"Not testable on this machine ({len(missing)}): {names}.", missing)


def _busy(findings):
    """Findings left without a verdict because the machine was busy from outside (analysis.sweep.disturbed)."""
    busy = [f for f in findings if f.decide and "quiet" in f.decide]
    if not busy:
        return None
    reasons = "; ".join(dict.fromkeys(f.decide["quiet"] for f in busy))
    return _line("busy", f"Rerun on a quiet machine: {len(busy)} finding(s) have no verdict, as {reasons}.", busy)


def _open(findings):
    """The inconclusive findings (but those a busy machine left open: _busy) and the cheapest to decide."""
    undecided = [f for f in findings if f.verdict == "inconclusive" and not (f.decide and "quiet" in f.decide)]
    if not undecided:
        return None
    sized = [f for f in undecided if f.decide and "reruns" in f.decide]
    text = f"Still open ({len(undecided)} inconclusive)"
    if sized:
        cheapest = min(sized, key=lambda f: f.decide["reruns"])
        text += f"; the nearest to a decision: {cheapest.statement}, about M = {cheapest.decide['reruns']} reruns"
    return _line("open", text + ".", undecided)


def lines(report):
    """The opening answer as [{"topic", "text", "findings": [ids]}], the most actionable first."""
    findings = _findings(report)
    if not findings:
        return []
    found = [_busy(findings), _gate(findings), _timers(findings), _comparisons(report, findings), _untestable(findings), _open(findings)]
    return [_line("tally", _tally(findings) + ".", [])] + [line for line in found if line]
