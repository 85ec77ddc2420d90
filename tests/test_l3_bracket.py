"""Where the latency rises after a cache level is judged on the union of each invocation's bracket
(issue 43 item 3): synthetic per-invocation curves, no benchexec."""

import pytest

from analysis.core.verdicts import BracketUnion, Estimate
from analysis.experiments.os_microbench import levels, memory_claims, samples, tables
from analysis.experiments.os_microbench.output import INVOCATION, LAT_KEYS

pytestmark = pytest.mark.unit

MIB = 2**20
L3 = {3: 32 * MIB}  # 'about 32 MiB' = 16-64 MiB
SIZES_MIB = [1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64]
NARROW = "more runs do not narrow it"


def _curve(rise_after_mib, rise_to_mib):
    """ns per size: 15 ns up to `rise_after_mib`, 150 ns from `rise_to_mib`, 50 ns between."""
    return [15.0 if s <= rise_after_mib else 150.0 if s >= rise_to_mib else 50.0 for s in SIZES_MIB]


def _rows(invocation, curve, runs=3):
    """`runs` runs of one invocation as samples' rows, each printing `curve` (p10/p90 within 5 %)."""
    row = {INVOCATION: invocation}
    for i, (size, ns) in enumerate(zip(SIZES_MIB, curve)):
        for key, value in zip(LAT_KEYS, (size * MIB, ns, ns * 0.95, ns * 1.05)):
            row[key.format(i)] = value
    return [dict(row) for _ in range(runs)]


def _data(*curves):
    rows = [r for k, c in enumerate(curves) for r in _rows(f"inv{k}.results.xml.bz2", c)]
    return {"latency": samples._latency(rows), "bandwidth": None,
            "main": {"mem-latency": {"runs": len(rows), "invocations": [r[INVOCATION] for r in rows]}}}


def _l3(data):
    found, matches = levels.latency_levels(data, L3)
    [finding] = memory_claims.plateaus_mark_cache_sizes(data, L3, found, matches)
    return matches[0], finding


def test_invocations_that_disagree_give_the_union_and_no_verdict_on_the_median():
    data = _data(_curve(8, 12), _curve(8, 16), _curve(16, 24))
    assert [c["invocation"] for c in data["latency"]["by_invocation"]] == [f"inv{k}.results.xml.bz2" for k in range(3)]
    mt, finding = _l3(data)
    assert [tuple(e) for e in mt["invocation_edges"]] == [(8 * MIB, 12 * MIB), (8 * MIB, 16 * MIB), (16 * MIB, 24 * MIB)]
    assert levels.rise_bracket(mt) == (8 * MIB, 24 * MIB, False)
    [part] = finding.parts
    assert (part.low, part.high, part.m, part.n) == (8.0, 24.0, 3, 3)
    assert finding.verdict == part.verdict == "inconclusive"  # 8-24 MiB straddles 16 MiB
    assert NARROW not in finding.evidence and "which differ (8–12 MiB, 8–16 MiB, 16–24 MiB)" in finding.evidence
    assert "in invocations that agree" in part.decide["grid"]
    assert tables._rise_text(mt) == "8 MiB – 24 MiB (per invocation: 8 MiB – 12 MiB, 8 MiB – 16 MiB, 16 MiB – 24 MiB)"


def test_the_median_curve_alone_would_refute_what_the_union_leaves_open():
    """The issue's case: the median curve rises in 8-12 MiB (refuted for a 32 MiB L3), the
    invocations in 8-12, 8-16 and 16-24 MiB."""
    edge = (8 * MIB, 12 * MIB)
    mt = {"level": 3, "bytes": 32 * MIB, "edge": edge, "match": False}
    data = {"latency": {"bytes": [s * MIB for s in SIZES_MIB]}, "bandwidth": None,
            "main": {"mem-latency": {"runs": 9, "invocations": ["a"] * 3 + ["b"] * 3 + ["c"] * 3}}}
    alone, _, _ = memory_claims._plateau_verdict(mt, L3, data)
    assert alone == "refuted"
    union = {**mt, "invocation_edges": [edge, (8 * MIB, 16 * MIB), (16 * MIB, 24 * MIB)]}
    verdict, evidence, (part,) = memory_claims._plateau_verdict(union, L3, data)
    assert verdict == "inconclusive" and (part.low, part.high) == (8.0, 24.0) and NARROW not in evidence
    missing = {**mt, "invocation_edges": [edge, None, edge]}  # an invocation with no such rise: not judged
    verdict, evidence, _ = memory_claims._plateau_verdict(missing, L3, data)
    assert verdict == "inconclusive" and NARROW not in evidence and "invocation 2 shows no rise" in evidence


def test_invocations_that_agree_keep_the_bracket_and_say_runs_do_not_narrow_it():
    data = _data(_curve(8, 12), _curve(8, 12), _curve(8, 12))
    mt, finding = _l3(data)
    assert levels.rise_bracket(mt) == (8 * MIB, 12 * MIB, True)
    assert finding.verdict == "refuted" and NARROW in finding.evidence
    assert isinstance(memory_claims._rise(mt, data["main"]["mem-latency"])[0], BracketUnion)


def test_one_invocation_is_judged_as_before():
    data = _data(_curve(16, 24))
    assert "by_invocation" not in data["latency"]
    mt, finding = _l3(data)
    assert "invocation_edges" not in mt
    rise = memory_claims._rise(mt, data["main"]["mem-latency"])[0]
    assert type(rise) is Estimate and (rise.low, rise.high, rise.m) == (16.0, 24.0, 1)
    assert finding.verdict == "confirmed" and NARROW in finding.evidence


def test_an_invocation_without_the_rise_leaves_the_claim_open():
    """Two invocations rise in [8, 12] MiB, one shows no rise at all: the union of the two that do
    would refute 'about 32 MiB', but whether the rise is there is not settled by the three."""
    data = _data(_curve(8, 12), _curve(8, 12), [15.0] * len(SIZES_MIB))
    mt, finding = _l3(data)
    assert mt["invocation_edges"][2] is None
    assert finding.verdict == "inconclusive" and finding.parts[0].verdict == "inconclusive"
    assert "invocation 3 shows no rise" in finding.evidence and "never" in finding.decide
