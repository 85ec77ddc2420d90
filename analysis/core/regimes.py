"""
Regimes before averages (docs/verdicts.md, "Regimes: invocation by invocation").

Where the invocations of a quantity fall into separate groups, one interval over all of them
describes no invocation. `regimes` finds the groups; `per_invocation` judges each invocation as a
part and combines them: all refute -> refuted, all confirm -> confirmed, else inconclusive,
naming the regimes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from analysis.core.verdicts import decide_of, format_value, never

# invocations whose values lie further apart than this factor belong to different regimes: well beyond
# the drift between invocations of the quantities it is applied to (under 1 % for periods and loops)
REGIME_FACTOR = 1.25
_COUNT_WORDS = {2: "two", 3: "three", 4: "four"}


@dataclass(frozen=True)
class Regime:
    """A group of invocations whose values lie within REGIME_FACTOR of their neighbours."""

    value: float  # geometric mean of its invocations' values
    invocations: tuple  # their names, in the order given


def regimes(values, factor=REGIME_FACTOR):
    """{invocation: positive value} -> its Regimes in order of value: sorted, split wherever the
    next value is more than `factor` times the previous one. Non-finite or non-positive values
    are left out."""
    items = sorted(((v, k) for k, v in values.items() if math.isfinite(v) and v > 0), key=lambda x: x[0])
    groups = []
    for v, k in items:
        if groups and v <= groups[-1][-1][0] * factor:
            groups[-1].append((v, k))
        else:
            groups.append([(v, k)])
    order = list(values)
    return [Regime(math.exp(sum(math.log(v) for v, _ in g) / len(g)),
                   tuple(sorted((k for _, k in g), key=order.index))) for g in groups]


def describe(found, total, scale):
    """'invocations fall into two regimes: 0.515 ms (1 of 3) and 4.00 ms (2 of 3)' (3 digits)."""
    texts = [f"{format_value(r.value, scale, 3, zeros=True)} ({len(r.invocations)} of {total})" for r in found]
    listed = ", ".join(texts[:-1]) + f" and {texts[-1]}" if len(texts) > 1 else texts[0]
    return f"invocations fall into {_COUNT_WORDS.get(len(found), len(found))} regimes: {listed}"


@dataclass(frozen=True)
class Judged:
    """A claim judged invocation by invocation: the combined verdict, its evidence sentence, one
    Part per invocation, and what would decide it where inconclusive."""

    verdict: str
    evidence: str
    parts: tuple
    decide: dict | None = None


def per_invocation(estimates, judge, *, label, quantity="", scale="", factor=REGIME_FACTOR):
    """Judge each invocation's Estimate ({invocation: Estimate}, in order) with `judge` (Estimate ->
    verdicts.Verdict) and combine: confirmed or refuted when every invocation is, else inconclusive.
    The regimes (of the estimates' values) are named in the evidence; a mix of confirming and
    refuting invocations is decided by no number of reruns (more reruns count how often each regime
    occurs, they do not merge them)."""
    names = list(estimates)
    found = regimes({k: e.value for k, e in estimates.items()}, factor)
    judged = {k: judge(e) for k, e in estimates.items()}
    parts = tuple(v.as_part(f"invocation {i + 1}: {label}", f"{quantity} (invocation {i + 1})" if quantity else "")
                  for i, v in enumerate(judged.values()))
    words = [v.verdict for v in judged.values()]
    verdict = words[0] if words and all(w == words[0] for w in words) and words[0] != "inconclusive" else "inconclusive"
    regime_text = describe(found, len(names), scale or next(iter(estimates.values())).scale) if found else ""
    each = "; ".join(f"invocation {i + 1}: {v.verdict}, {format_value(estimates[k].value, estimates[k].scale)}"
                     for i, (k, v) in enumerate(judged.items()))
    decide = None
    if verdict == "inconclusive":
        if "confirmed" in words and "refuted" in words:
            decide = never(f"the {regime_text}, and they disagree; more reruns count how often each regime occurs, "
                           "they do not merge them", "bound")
        else:
            decide = decide_of(parts)
    how = {"confirmed": "every invocation confirms it", "refuted": "every invocation refutes it"}.get(
        verdict, f"the invocations disagree ({', '.join(f'{words.count(w)} {w}' for w in dict.fromkeys(words))})")
    evidence = (f"Judged invocation by invocation, never on one interval over separate regimes ({regime_text}): "
                f"{each}; {how}. " + " ".join(f"Invocation {i + 1}: {v.evidence}" for i, v in enumerate(judged.values())))
    return Judged(verdict, evidence, parts, decide)
