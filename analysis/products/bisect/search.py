"""
The search: the first commit whose verdict against GOOD is "slower", whatever measures a step
(`compare(commit) -> Step`). BAD first, then git bisect's halving between the last commit shown not
slower and the first shown slower; skipped and undecided commits are stepped over, and one left
between the two makes the answer a range. Each step is decided at alpha / P over at most P planned
steps (Bonferroni), so the named commit is wrong with chance at most alpha however the steps fall
(docs/commands.md, "Error control").
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional, Sequence

from analysis.core.errors import UserError

VERDICTS = ("slower", "same", "faster", "undecided", "skipped")
DECIDED = ("slower", "same", "faster")


class BadNotBuilt(UserError):
    """BAD did not build: it cannot be confirmed slower."""


@dataclass(frozen=True)
class Step:
    """One commit against GOOD: the verdict at the threshold, the ratio (commit / GOOD) and its CI at
    `confidence`; `detail` says where its measurement lies (a directory, invocations, seconds)."""

    verdict: str
    ratio: float = math.nan
    low: float = math.nan
    high: float = math.nan
    confidence: float = math.nan
    detail: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"step verdict {self.verdict!r} is not one of {', '.join(VERDICTS)}")

    @property
    def decided(self) -> bool:
        return self.verdict in DECIDED

    def to_dict(self) -> dict:
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict) -> "Step":
        ratio, low, high, confidence = (math.nan if data.get(k) is None else float(data[k])
                                        for k in ("ratio", "low", "high", "confidence"))
        return cls(data["verdict"], ratio, low, high, confidence, dict(data.get("detail") or {}))


@dataclass(frozen=True)
class Taken:
    """A step as the search took it: its number (from 1), the commit's position and the step."""

    order: int
    index: int
    commit: str
    step: Step
    reused: bool = False

    def to_dict(self) -> dict:
        return {"order": self.order, "index": self.index, "commit": self.commit, "reused": self.reused,
                **self.step.to_dict()}


@dataclass
class Outcome:
    """Where the search ended. `commits`: the search's order, BAD last (GOOD precedes them, index -1).
    Found: lo is the last commit shown not slower (-1: GOOD), hi the first shown slower; the culprit is
    one of lo+1..hi (exactly hi where lo + 1 == hi). Not found (BAD not shown slower): lo = hi = None."""

    commits: list
    steps: list
    step_alpha: float
    planned: int
    lo: Optional[int] = None
    hi: Optional[int] = None
    ended: str = ""    # narrowed, budget (the planned steps spent), or not-slower

    @property
    def found(self) -> bool:
        return self.hi is not None

    @property
    def alpha(self) -> float:
        return self.step_alpha * self.planned

    @property
    def decided_steps(self) -> int:
        return sum(t.step.decided for t in self.steps)

    @property
    def measured_steps(self) -> int:
        """Steps that measured (all but skipped builds): each could have erred."""
        return sum(t.step.verdict != "skipped" for t in self.steps)

    @property
    def bound(self) -> float:
        """The chance that the named commit is wrong is at most this (measured steps x step alpha)."""
        return self.measured_steps * self.step_alpha

    def tested(self) -> dict:
        """Position -> its step (the last, where one was taken twice)."""
        return {t.index: t.step for t in self.steps}

    @property
    def candidates(self) -> list:
        """Positions that may hold the culprit: lo+1..hi."""
        return list(range(self.lo + 1, self.hi + 1)) if self.found else []

    def to_dict(self) -> dict:
        return {"commits": list(self.commits), "steps": [t.to_dict() for t in self.steps],
                "step_alpha": self.step_alpha, "planned": self.planned, "alpha": self.alpha,
                "decided_steps": self.decided_steps, "measured_steps": self.measured_steps, "bound": self.bound, "lo": self.lo, "hi": self.hi,
                "ended": self.ended}


def planned_steps(n: int) -> int:
    """ceil(log2 n) + 2: the binary search over n commits, BAD's confirmation, one in reserve."""
    if n < 1:
        raise ValueError("no commits between GOOD and BAD")
    return math.ceil(math.log2(n)) + 2


def step_alpha(alpha: float, n: int) -> float:
    """Each step's alpha, so that the search over n commits errs at most at `alpha` (Bonferroni)."""
    return alpha / planned_steps(n)


def steps_left(lo: int, hi: int) -> int:
    """About how many more steps a binary search over lo+1..hi takes."""
    return math.ceil(math.log2(hi - lo)) if hi - lo > 1 else 0


def _pick(lo: int, hi: int, tested) -> Optional[int]:
    """The untested commit strictly between lo and hi nearest their middle (the lower on a tie)."""
    middle = (lo + hi) / 2
    open_ = [i for i in range(lo + 1, hi) if i not in tested]
    return min(open_, key=lambda i: (abs(i - middle), i)) if open_ else None


def search(commits: Sequence[str], compare: Callable[[str], Step], alpha_per_step: float,
           planned: Optional[int] = None, manifest=None,
           progress: Optional[Callable[[Taken, int, int], None]] = None) -> Outcome:
    """Binary search for the first commit slower than GOOD (module docstring). `manifest` (see
    manifest.Manifest): steps it holds are reused, new ones are added to it as they finish, so an
    interrupted search resumes where it stopped. `progress(taken, commits_left, steps_left)` after each step."""
    commits = list(commits)
    planned = planned or planned_steps(len(commits))
    outcome = Outcome(commits, [], alpha_per_step, planned)
    tested = {}

    def measure(i):
        commit = commits[i]
        step = manifest.step(commit) if manifest is not None else None
        reused = step is not None
        if step is None:
            if manifest is not None:
                manifest.start(commit)
            step = compare(commit)
            if not isinstance(step, Step):
                raise TypeError(f"compare({commit!r}) returned {type(step).__name__}, not a Step")
        taken = Taken(len(outcome.steps) + 1, i, commit, step, reused)
        outcome.steps.append(taken)
        tested[i] = step
        if manifest is not None and not reused:
            manifest.add(taken)
        return taken

    def report(taken, lo, hi):
        if progress is not None:
            progress(taken, hi - lo, steps_left(lo, hi))

    bad = measure(len(commits) - 1)
    if bad.step.verdict == "skipped":
        raise BadNotBuilt(f"BAD {commits[-1][:12]} did not build: it cannot be compared with GOOD "
                          "(give as BAD a commit that builds)")
    if bad.step.verdict != "slower":
        outcome.ended = "not-slower"
        report(bad, 0, 0)
        return outcome
    lo, hi = -1, len(commits) - 1
    report(bad, lo, hi)
    while True:
        i = _pick(lo, hi, tested)
        if i is None:
            outcome.ended = "narrowed"
            break
        if outcome.measured_steps >= planned:
            outcome.ended = "budget"
            break
        taken = measure(i)
        if taken.step.verdict == "slower":
            hi = i
        elif taken.step.verdict in ("same", "faster"):
            lo = i
        report(taken, lo, hi)
    outcome.lo, outcome.hi = lo, hi
    return outcome
