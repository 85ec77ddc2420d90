"""The answer as data (kind, commits, outcome, shape, error control) and, last, every text of it.

The kinds: `culprit` (one commit carries at least half of GOOD -> BAD), `range` (sudden, but the
search could not narrow it to one commit: undecided or skipped commits, or the error budget spent),
`spread` (no commit or range carries half: the decided parts are listed), `not-slower` (BAD was not
shown slower than GOOD; exit 3). The last line is the answer (`culprit: SHA subject (+4.8 % of
+5.2 %, CI ...)`); report.json holds the fields, nothing parses the text back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

from analysis.products.bisect.repo import Commit
from analysis.products.bisect.search import Outcome, Taken
from analysis.products.bisect.shape import Part, Shape, shape

EXIT_FOUND, EXIT_NOT_SLOWER = 0, 3


@dataclass
class Answer:
    kind: str                    # culprit, range, spread or not-slower
    good: Commit
    commits: list                # Commit, BAD's first-parent line after GOOD, BAD last
    outcome: Outcome
    shape: Optional[Shape]
    threshold: float
    builds: dict = field(default_factory=dict)   # sha -> repo.Build.to_dict()

    @property
    def bad(self) -> Commit:
        return self.commits[-1]

    @property
    def exit_code(self) -> int:
        return EXIT_NOT_SLOWER if self.kind == "not-slower" else EXIT_FOUND

    @property
    def culprit(self) -> Optional[Commit]:
        return self.commits[self.outcome.hi] if self.kind == "culprit" else None

    @property
    def candidates(self) -> list:
        return [self.commits[i] for i in self.outcome.candidates]

    def at(self, index: int) -> Commit:
        return self.good if index < 0 else self.commits[index]

    def rows(self) -> list:
        """Every commit in commit order (GOOD first): tested or not, its last step, its build."""
        tested = {t.index: t for t in self.outcome.steps}
        rows = [{"position": 0, "sha": self.good.sha, "subject": self.good.subject, "tested": True,
                 "verdict": "good", "ratio": 1.0, "low": 1.0, "high": 1.0, "step": None,
                 "build": self.builds.get(self.good.sha)}]
        for i, c in enumerate(self.commits):
            t = tested.get(i)
            s = t.step if t else None
            rows.append({"position": i + 1, "sha": c.sha, "subject": c.subject, "tested": t is not None,
                         "verdict": s.verdict if s else None, "ratio": _num(s.ratio) if s else None,
                         "low": _num(s.low) if s else None, "high": _num(s.high) if s else None,
                         "confidence": _num(s.confidence) if s else None, "step": t.order if t else None,
                         "build": self.builds.get(c.sha)})
        return rows

    def to_dict(self) -> dict:
        return {"kind": self.kind, "exit_code": self.exit_code, "answer": last_line(self), "lines": lines(self),
                "threshold": self.threshold,
                "good": vars(self.good), "bad": vars(self.bad),
                "culprit": vars(self.culprit) if self.culprit else None,
                "candidates": [vars(c) for c in self.candidates],
                "shape": self.shape.to_dict() if self.shape else None,
                "error_control": {"alpha": self.outcome.alpha, "step_alpha": self.outcome.step_alpha,
                                  "planned_steps": self.outcome.planned, "measured_steps": self.outcome.measured_steps,
                                  "bound": self.outcome.bound, "method": "Bonferroni over the planned steps"},
                "commits": self.rows(), "steps": [t.to_dict() for t in self.outcome.steps],
                "builds": self.builds,
                "search": {k: v for k, v in self.outcome.to_dict().items() if k not in ("steps", "commits")}}


def _num(x):
    return x if isinstance(x, float) and math.isfinite(x) else None


def make(good: Commit, commits: list, outcome: Outcome, threshold: float, builds=None) -> Answer:
    """The answer of a finished search."""
    if not outcome.found:
        return Answer("not-slower", good, list(commits), outcome, None, threshold, dict(builds or {}))
    found = shape(outcome)
    kind = "spread" if found.kind == "spread" else ("culprit" if outcome.hi == outcome.lo + 1 else "range")
    return Answer(kind, good, list(commits), outcome, found, threshold, dict(builds or {}))


# ---- text, rendered from the fields above

def pct(x: float) -> str:
    return f"{x * 100:+.1f} %" if math.isfinite(x) else "n/a"


def ci(low: float, high: float) -> str:
    return f"CI {pct(low)} to {pct(high)}" if math.isfinite(low) and math.isfinite(high) else "no CI"


def _span(answer: Answer, first: int, last: int) -> str:
    if first == last:
        c = answer.at(first)
        return f"{c.short} {c.subject}"
    return f"{answer.at(first).short}..{answer.at(last).short} ({last - first + 1} commits)"


def _part(answer: Answer, p: Part) -> str:
    return f"{pct(p.rise)} ({ci(p.low, p.high)}) at {_span(answer, p.first, p.last)}"


def _unresolved(answer: Answer) -> str:
    tested = answer.outcome.tested()
    why = {}
    for i in answer.outcome.candidates[:-1]:
        verdict = tested[i].verdict if i in tested else "untested"
        why.setdefault(verdict, []).append(answer.commits[i].short)
    said = "; ".join(f"{k}: {', '.join(v[:3])}" + (f" and {len(v) - 3} more" if len(v) > 3 else "")
                     for k, v in why.items())
    budget = ", the planned steps spent" if answer.outcome.ended == "budget" else ""
    return f"{said}{budget}"


def last_line(answer: Answer) -> str:
    o, s = answer.outcome, answer.shape
    if answer.kind == "not-slower":
        b = o.tested()[len(answer.commits) - 1]
        return (f"not slower: BAD {answer.bad.short} is not shown slower than GOOD {answer.good.short} at the "
                f"{answer.threshold * 100:g} % threshold ({b.verdict}: {pct(b.ratio - 1)}, {ci(b.low - 1, b.high - 1)})"
                + ("; the machine was busy from outside during its invocations: rerun on a quiet machine"
                   if b.detail.get("busy_from_outside") else ""))
    carried = f"{pct(s.carried.rise)} of {pct(s.total)}, {ci(s.carried.low, s.carried.high)}"
    if answer.kind == "culprit":
        return f"culprit: {answer.culprit.short} {answer.culprit.subject} ({carried})"
    if answer.kind == "range":
        return (f"culprit: one of {_span(answer, o.lo + 1, o.hi)}, not narrowed ({_unresolved(answer)}) "
                f"({carried})")
    first, last = (s.parts[0].first, s.parts[-1].last) if s.parts else (0, len(answer.commits) - 1)
    return (f"spread: {pct(s.total)} ({ci(s.total_low, s.total_high)}) over {_span(answer, first, last)}; "
            f"no commit carries half of it: {len(s.parts)} decided parts")


def error_line(answer: Answer) -> str:
    o, n = answer.outcome, len(answer.commits)
    return (f"error control: each step decided at alpha {o.step_alpha:.3g} = {o.alpha:g} / {o.planned} planned "
            f"steps (ceil(log2 {n}) + 2, Bonferroni); {o.measured_steps} measured, so the chance that a named "
            f"commit is wrong is at most {o.bound:.3g}")


def _before(answer: Answer) -> str:
    o = answer.outcome
    if o.lo < 0:
        return "GOOD"
    said = "its parent" if o.hi == o.lo + 1 else "the last commit shown not slower,"
    return f"{said} {answer.at(o.lo).short}"


def lines(answer: Answer) -> list:
    """The answer's text, its last line the answer itself."""
    o, s = answer.outcome, answer.shape
    counts = {v: sum(t.step.verdict == v for t in o.steps) for v in ("undecided", "skipped")}
    out = [f"GOOD {answer.good.short} {answer.good.subject} -> BAD {answer.bad.short} {answer.bad.subject}: "
           f"{len(answer.commits)} commits on BAD's first-parent line",
           f"steps: {len(o.steps)} ({o.decided_steps} decided, {counts['undecided']} undecided, "
           f"{counts['skipped']} did not build; {sum(t.reused for t in o.steps)} reused from the record)"]
    if s is not None:
        out.append(f"BAD: {pct(s.total)} to GOOD ({ci(s.total_low, s.total_high)})")
        carried = f"{pct(s.carried.rise)} of {pct(s.total)} ({s.share:.0%}; against {_before(answer)})"
        if s.kind == "sudden":
            out.append(f"sudden: {_span(answer, o.lo + 1, o.hi)} carries {carried}")
        elif s.kind == "unclear":
            out.append(f"sudden or spread is not clear: {_span(answer, o.lo + 1, o.hi)} carries {carried}, "
                       f"{ci(s.carried.low, s.carried.high)}; half of BAD's rise, {pct(s.total / 2)}, lies within it")
        else:
            out.append(f"spread: the search's first slower commit {_span(answer, o.hi, o.hi)} carries "
                       f"{pct(s.carried.rise)} of {pct(s.total)} ({s.share:.0%}); the decided parts:")
            out += [f"  {_part(answer, p)}" for p in s.parts]
    out += [error_line(answer), last_line(answer)]
    return out


def progress_line(taken: Taken, commit: Commit, commits_left: int, steps_left: int) -> str:
    """One line per step: the commit, its verdict against GOOD, what is left."""
    s = taken.step
    why = f" ({s.detail['why']})" if s.detail.get("why") else ""
    said = (f"did not build{why}: skipped, as git bisect skip" if s.verdict == "skipped" else
            f"{s.verdict}, {pct(s.ratio - 1)} ({ci(s.low - 1, s.high - 1)})")
    reused = " (recorded)" if taken.reused else ""
    steps = "no more steps" if steps_left == 0 else f"about {steps_left} step{'s' if steps_left != 1 else ''}"
    return (f"step {taken.order}{reused}: {commit.short} {commit.subject}: {said}; "
            f"{commits_left} commit{'s' if commits_left != 1 else ''} left, {steps}")
