"""Regimes before averages (analysis.core.regimes, docs/verdicts.md): invocations that fall into
separate groups are judged one by one, and the claim's verdict follows from theirs."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from analysis.core import regimes, verdicts
from analysis.core.report import Finding
from analysis.core.verdicts import Estimate
from analysis.experiments.os_microbench import claims as microbench_claims
from analysis.experiments.os_microbench import samples
from analysis.experiments.scheduling_noise import claims
from analysis.sweep.load import load_tables
from analysis.experiments.scheduling_noise.per_run import TraceFigures

pytestmark = pytest.mark.unit

RECORDED_MICROBENCH = Path(__file__).resolve().parent / "data" / "recorded-demo" / "os-microbench"


def point(value, grid=0.01):
    return Estimate(value, value, value, unit="runs", n=1, grid=grid, scale="ratio", level=0.90)


def test_regimes_split_where_neighbours_lie_far_apart():
    found = regimes.regimes({"a": 0.515, "b": 4.000, "c": 4.001})
    assert [r.invocations for r in found] == [("a",), ("b", "c")]
    assert found[1].value == pytest.approx(4.0005, rel=1e-6)
    assert len(regimes.regimes({"a": 1.77, "b": 1.00, "c": 1.74})) == 2
    assert len(regimes.regimes({"a": 4.00, "b": 4.05, "c": 3.98})) == 1  # drift, not regimes
    text = regimes.describe(found, 3, "ms")
    assert text == "invocations fall into two regimes: 0.515 ms (1 of 3) and 4.00 ms (2 of 3)"


def judge(est):
    return verdicts.no_effect(est, 0.10)


def test_all_refuting_invocations_refute_and_each_verdict_is_kept():
    judged = regimes.per_invocation({"a": point(0.515), "b": point(4.000), "c": point(4.001)}, judge,
                                    label="period / 1 ms", quantity="q", scale="ms")
    assert judged.verdict == "refuted" and judged.decide is None
    assert [p.verdict for p in judged.parts] == ["refuted"] * 3
    assert [p.label for p in judged.parts][0] == "invocation 1: period / 1 ms"
    assert len({p.quantity for p in judged.parts}) == 3  # no contradiction between invocations
    assert "two regimes: 0.515 ms (1 of 3) and 4.00 ms (2 of 3)" in judged.evidence
    assert "every invocation refutes it" in judged.evidence


def test_mixed_invocations_are_inconclusive_and_name_the_regimes():
    judged = regimes.per_invocation({"a": point(1.0), "b": point(4.0), "c": point(4.0)}, judge, label="x")
    assert judged.verdict == "inconclusive"
    assert [p.verdict for p in judged.parts] == ["confirmed", "refuted", "refuted"]
    assert "never" in judged.decide and "two regimes" in judged.decide["never"]
    assert "1 confirmed, 2 refuted" in judged.evidence
    confirmed = regimes.per_invocation({"a": point(1.0), "b": point(1.02)}, judge, label="x")
    assert confirmed.verdict == "confirmed"


def test_timer_every_1ms_is_refuted_from_per_invocation_periods():
    """The 2026-11-28 demo: CONFIG_HZ = 250, dominant periods 0.515, 4.000 and 4.001 ms, one run per
    invocation; one log-t interval over the three (2.02, CI 0.27-14.9) said inconclusive."""
    figures = [TraceFigures(name, period, 3.0, 2.0) for name, period in (("r1", 0.515), ("r2", 4.000), ("r3", 4.001))]
    gaps = SimpleNamespace(period=SimpleNamespace(period_ms=4.0), near_1ms=1.0, z_1ms=1.0)
    found = claims.timer_every_ms(gaps, figures, 4.0, "CONFIG_HZ = 250")
    assert isinstance(found, Finding)
    assert found.verdict == "refuted"
    assert [p.verdict for p in found.parts] == ["refuted"] * 3
    assert "0.515 ms (1 of 3) and 4.00 ms (2 of 3)" in found.evidence
    # one regime keeps the interval over the invocations
    same = [TraceFigures(name, period, 3.0, 2.0) for name, period in (("r1", 4.0), ("r2", 4.01), ("r3", 4.0))]
    one = claims.timer_every_ms(gaps, same, 4.0, "CONFIG_HZ = 250")
    assert len(one.parts) == 1 and one.parts[0].replication == "reruns"


def _variant(medians_by_invocation):
    """An os-microbench variant as samples.collect gives it: one run per invocation."""
    names = [f"inv{k}.results.xml.bz2" for k in range(len(medians_by_invocation))]
    values = list(medians_by_invocation)
    return {"median": float(np.median(values)), "p10": min(values) * 0.98, "p90": max(values) * 1.02,
            "min": min(values) * 0.97, "n": 1000 * len(values), "run_medians": values, "invocations": names}


def test_loop_cycles_in_two_regimes_are_judged_per_invocation():
    """The demo of 2026-11-28: 1.77, 1.00 and 1.74 cycles per iteration over three invocations;
    one interval over all three straddled the band. Judged one by one: 1.77 and 1.74 lie within a
    factor 2 of 2 cycles, 1.00 on the band's edge; the claim is inconclusive, naming the regimes."""
    data = samples.collect(load_tables(RECORDED_MICROBENCH)[0])  # the recorded machine's probes and clock
    add = data["variants"]["add"]["median"]  # ns of one dependent add
    data["variants"].update(loop=_variant([1.77 * add, 1.00 * add, 1.74 * add]), add=_variant([add, add, add]))
    [finding] = microbench_claims.loop_cost(data)
    assert finding.verdict == "inconclusive"
    assert len(finding.parts) == 3 and [round(p.estimate, 2) for p in finding.parts] == [1.77, 1.0, 1.74]
    assert finding.parts[0].verdict == "confirmed" and finding.parts[2].verdict == "confirmed"
    assert "two regimes" in finding.evidence and "never on one interval" in finding.evidence
