"""
What a `timekit run --until-decided` sweep did, for its report: the looks (M, budget spent,
decided, given up), why it stopped, and what the budget decided beyond the preset's design.

The comparison with the preset is made on the same data: before its first look the loop judges
the preset's reruns at the claims' fixed levels (run_looks._preset_verdicts), the verdicts the
quick preset's report gives, on this machine in the same hour. A verdict counts as decided when it
is confirmed or refuted; "not testable here" and inconclusive are not.
"""

from __future__ import annotations

from analysis.core.report import Table

DECIDED = ("confirmed", "refuted")


def short_forms(findings):
    """{claim or record key: the finding's claim without its source (Finding.short), for a table
    cell}, so that a claim sweep.json recorded as text is shown from its finding's fields; a claim
    no finding has any more is shown whole."""
    out = {}
    for f in findings:
        out[f.claim] = out[key(f)] = f.short
    return out


def _decided(verdicts):
    return [claim for claim, verdict in verdicts.items() if verdict in DECIDED]


def tally(record, findings):
    """One line: 'decided K of N claims; the preset's M = 3 reruns alone, at fixed levels, decide J'."""
    now = _decided({f.claim: f.verdict for f in findings})
    line = f"decided {len(now)} of {len(findings)} claims"
    preset = record.get("preset")
    if preset:
        before = _decided(preset["verdicts"])
        line += f"; the preset's M = {preset['reruns']} reruns alone, at fixed levels, decide {len(before)}"
    return line


def key(finding):
    """What sweep.json's record keys a finding by: its id (an earlier version's record: its claim)."""
    return finding.id or finding.claim


def recorded(mapping, finding):
    """The entry a record holds for the finding, by id or, in an earlier version's record, claim."""
    return mapping.get(key(finding)) or mapping.get(finding.claim)


def _preset_sentence(preset, findings):
    short = short_forms(findings).get
    before = set(_decided(preset["verdicts"]))
    claims = {**preset.get("claims", {}), **{key(f): f.claim for f in findings}}
    before_claims = {claims.get(k, k) for k in before}
    now = {f.claim: f.verdict for f in findings if f.verdict in DECIDED}
    gained = [f"{short(c, c)} ({v})" for c, v in now.items() if c not in before_claims and c not in before]
    lost = [short(k, claims.get(k, k)) for k in before if claims.get(k, k) not in now]
    text = (f"Against the preset's design on the same data: its M = {preset['reruns']} reruns, judged at the claims' "
            f"fixed levels before the first look, decide {len(before)} of the claims")
    text += f"; decided here beyond it: {'; '.join(gained)}." if gained else "; the budget decided none beyond it."
    if lost:
        text += (f" Decided by the preset's reruns but not here: {'; '.join(lost)} (a repeated interval is wider "
                 "than the fixed one at the same M, and later reruns can move a verdict that no look kept).")
    return text


def paragraphs(record, findings, reruns):
    """The paragraphs that head the section of a sequential sweep: the rule and why it stopped,
    what it decided, and what the budget added to the preset's design."""
    short = short_forms(findings).get
    decided = {f.claim: f for f in findings if f.verdict in DECIDED}
    at_looks = {d.get("claim", k): d for k, d in record.get("decided", {}).items()}
    kept = [f"{short(c, c)} ({d['verdict']} at M = {d['reruns']})" for c, d in at_looks.items() if c in decided]
    once = [f"{f.short} ({f.verdict})" for c, f in decided.items() if c not in at_looks]
    looks = record.get("looks", [])
    spent = looks[-1]["seconds"] / 60 if looks and "seconds" in looks[-1] else float("nan")
    rule = (f"Decide, then stop (--until-decided, a budget of {record.get('budget_seconds', 0) / 60:.0f} min): a look "
            f"after every round of reruns from M = {looks[0]['reruns'] if looks else reruns}, the claims on t intervals "
            f"over reruns judged on repeated intervals ({record.get('rule', '')}; docs/calibration.md). Stopped at "
            f"M = {reruns} after {spent:.1f} min ({record.get('judge_seconds', 0):.0f} s of it judging): "
            f"{record.get('stopped', 'interrupted')}.")
    parts = ([f"at looks, {'; '.join(kept)}"] if kept else []) + ([f"judged once on the final data, {'; '.join(once)}"]
                                                                  if once else [])
    outcome = f"Decided {len(decided)} of the {len(findings)} claims" + (": " + ". And ".join(parts) if parts else "") + "."
    given_up = {g.get("claim", c): g for c, g in record.get("given_up", {}).items()}
    given_up = {c: g for c, g in given_up.items() if c not in decided}  # a look may decide it later
    if given_up:
        outcome += " Not pursued: " + "; ".join(
            f"{short(c, c)} (from M = {g['reruns']}, " + (f"needs about M = {g['needed']}" if g.get("needed") else
                                                       "no M decides it") + f", the budget allowed {g['allowed']})"
            for c, g in given_up.items()) + "."
    return [rule, outcome] + ([_preset_sentence(record["preset"], findings)] if record.get("preset") else [])


def looks_table(record, findings=()):
    """One row per look: M, the budget's share spent, minutes, what it decided and gave up (the
    claims without their sources, from their findings)."""
    short = short_forms(findings).get
    rows = [[look["reruns"], f"{100 * look['share']:.0f} %" + (" (final)" if look.get("final") else ""),
             round(look.get("seconds", float("nan")) / 60, 1), look.get("undecided"),
             "; ".join(short(c, c) for c in look.get("decided", [])) or None,
             "; ".join(short(c, c) for c in look.get("given_up", [])) or None]
            for look in record.get("looks", [])]
    return Table(title="Decide, then stop: the looks", columns=["look at M", "budget spent", "minutes", "still waiting",
                                                                 "decided at this look", "given up at this look"],
                 rows=rows, caption="Minutes: the invocations, the runner's work and the looks up to this one. Still "
                                    "waiting: claims on a repeated interval not yet decided (given-up ones included).")
