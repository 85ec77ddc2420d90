"""
A finding's one-sentence summary, rendered from its fields: the estimate, its interval and why the
verdict follows, at most MAX_WORDS words. The verdict itself stands beside it (a badge), so the
sentence does not repeat it. A claim of parts names how its parts went and the part that decides
it: one refuted part refutes an all-of claim, so that part is the one to read.
"""

from __future__ import annotations

import math

from analysis.core.verdicts import format_interval, format_value

MAX_WORDS = 30


def number(value, unit, digits=4):
    """A value in its unit, as the evidence writes it (verdicts.format_value); '–' when missing."""
    if value is None:
        return "–"
    return format_value(value, unit or "ratio", digits)


_RESTS_ON = {"reruns": "M = {m} reruns", "cases": "{n} cases", "samples": "n = {n} samples",
             "bracket": "two measured points", "pooled": "one pooled figure"}


def sizes(part):
    """'M = 5 reruns', 'n = 30 runs', '180 cases': what the part's interval rests on, in short (the
    evidence's long form is Estimate.replication)."""
    return _RESTS_ON.get(part.replication, "n = {n} runs").format(m=part.m, n=part.n)


def interval(part, with_sizes=True):
    """'1.006 (95 % CI 0.992–1.02, M = 5 reruns)' of a part with an interval, else ''."""
    if not math.isfinite(part.estimate):
        return ""
    level = f"{100 * part.level:.3g} % " if part.level else ""
    rests = f", {sizes(part)}" if with_sizes else ""
    low, high, estimate = _distinct(part)
    return f"{estimate} ({level}CI {low}–{high}{rests})"


def _distinct(part):
    """low, high and the estimate as text, the interval's ends to the same significant digits
    (verdicts.format_interval: not '0.2691–7'), as many as it takes to tell them apart (a TSC rate
    within 0.001 % of the kernel's reads '1–1' at 4 digits)."""
    unit = part.unit or "ratio"
    texts = [*format_interval(part.low, part.high, unit), number(part.estimate, unit)]
    if unit != "pct" and texts[0] == texts[1] and all(map(math.isfinite, (part.low, part.high, part.estimate))):
        for digits in range(5, 10):  # a zero-width interval (identical invocations) shows its 9 digits
            texts = [*format_interval(part.low, part.high, unit, digits), number(part.estimate, unit, digits)]
            if texts[0] != texts[1]:
                break
    return texts


def _words(text):
    return len(text.split())


def _first_fitting(candidates):
    for text in candidates:
        if text and _words(text) <= MAX_WORDS:
            return text
    words = next(t for t in candidates if t).split()
    return " ".join(words[:MAX_WORDS - 1]) + " …"


def _sentence(text):
    text = text.strip()
    return text if text.endswith((".", "…")) else text + "."


def _part_sentences(part, lead=""):
    """The ways to say one part, longest first."""
    head = f"{lead}: " if lead else ""
    ci = interval(part)
    short = interval(part, with_sizes=False)
    return [_sentence(f"{head}{ci}: {part.why}") if ci else _sentence(f"{head}{part.why}"),
            _sentence(f"{head}{short}: {part.why}") if short else "",
            _sentence(f"{head}{short}") if short else "",
            _sentence(part.why)]


def deciding_part(finding):
    """The part a reader should look at: the first refuted part of a refuted claim, the first
    undecided of an inconclusive one, else the first."""
    for verdict in (finding.verdict, "inconclusive", "refuted"):
        found = next((p for p in finding.parts if p.verdict == verdict), None)
        if found is not None:
            return found
    return finding.parts[0] if finding.parts else None


def tally(parts):
    """'2 of 3 parts confirmed, 1 refuted'."""
    counts = {}
    for part in parts:
        counts[part.verdict] = counts.get(part.verdict, 0) + 1
    order = [v for v in ("confirmed", "refuted", "inconclusive") if v in counts]
    return ", ".join(f"{counts[v]} {v}" for v in order)


def summary(finding):
    """The finding's summary: given, else rendered from its parts (or its reason)."""
    if finding.summary:
        return finding.summary
    if not finding.parts:
        reason = finding.why or finding.evidence.split(". ")[0]
        return _first_fitting([_sentence(reason)])
    if len(finding.parts) == 1:
        return _first_fitting(_part_sentences(finding.parts[0]))
    part = deciding_part(finding)
    head = f"{len(finding.parts)} parts: {tally(finding.parts)}."
    label = part.label or "one part"
    if finding.verdict == "confirmed":
        label = f"e.g. {label}"
    return _first_fitting([f"{head} {s}" for s in _part_sentences(part, label)] + [head])
