"""What would decide an inconclusive part, sized on the estimate's own scale:
a ratio or a time whose interval is a t interval of logs is sized on the log scale, checked against
the issue's figures, an independent re-computation on the recorded demo and a simulation."""

import dataclasses
import math
from pathlib import Path
from statistics import median

import numpy as np
import pytest
import scipy.stats

from analysis import pipeline
from analysis.core import replication, verdicts
from analysis.core.verdicts import Estimate
from analysis.experiments import EXPERIMENTS
from analysis.experiments.os_microbench import claims as microbench_claims
from analysis.experiments.os_microbench import samples as microbench_samples
from analysis.sweep.load import load_tables
from tests.helpers import figures_not_drawn

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "recorded-demo"
FACTOR = 1.5  # every M named within a factor 1.5 of the log-scale sizing


def log_scale_m(value, low, high, level, size, edges, grid=0.0):
    """The issue's rule, computed here on its own: s = the sd of the logs recovered from the log
    half-width t(size-1) s / sqrt(size); the smallest M > size whose t(M-1) s / sqrt(M) fits in the
    log distance to the nearest edge (moved half a grid step toward the estimate). None: no logs."""
    if not (value > 0 and low > 0 and high > 0):
        return None
    quantile = (1 + (level or 0.90)) / 2
    s = max(math.log(high / value), math.log(value / low)) * math.sqrt(size) / scipy.stats.t.ppf(quantile, size - 1)
    near = [e + math.copysign(grid / 2, value - e) for e in edges]
    room = min(abs(math.log(value / e)) for e in near if e > 0)
    sizes = np.arange(2, 20_001)
    fits = scipy.stats.t.ppf(quantile, sizes - 1) * s / np.sqrt(sizes) <= room
    return max(int(sizes[np.argmax(fits)]), size + 1) if fits.any() else None


def test_the_issues_figures_are_sized_on_the_log_scale():
    """Issue 43's demo (2026-11-28; its result files are not in tests/data), from the figures the
    issue quotes. A 'flat' part of the wall-time claim: per-rerun ratios 1.396, 1.801, 0.857, 98.75 %
    CI 0.19-8.9 against 1 ± 2 %: M = 20 as the issue computed (the old rule, the upper side of the
    exponentiated interval: 191, the report said 192). timer-every-1ms: 2.02, 90 % CI 0.27-14.9 over
    3 invocations on the 0.01 histogram grid, against 1 ± 10 %: 13 (the old rule: 191, report 190)."""
    flat = replication.over_reruns([1.396, 1.801, 0.857], n=10, confidence=0.9875, log=True, method="ratios")
    assert (round(flat.low, 2), round(flat.high, 1)) == (0.19, 8.9) and flat.interval == "log t"
    timer = Estimate(2.02, 0.27, 14.9, unit="reruns", n=1, m=3, level=0.90, grid=0.01, interval="log t")
    for est, margin, issue in ((flat, 0.02, 20), (timer, 0.10, 13)):
        decide = verdicts.no_effect(est, margin).part.decide
        assert decide["refuting"] and issue / FACTOR <= decide["reruns"] <= issue * FACTOR, decide
        assert decide["reruns"] == issue
        old = verdicts.no_effect(dataclasses.replace(est, interval="t"), margin).part.decide["reruns"]
        assert old > 9 * issue  # what the linear upper side named


def _sized_on_the_recorded_demo(monkeypatch):
    """(Estimate, edges, decide) of every size the report of the recorded demo named."""
    sized = []
    original = verdicts._needed

    def spy(est, edges, refuting=False):
        decide = original(est, edges, refuting)
        sized.append((est, edges, decide))
        return decide

    monkeypatch.setattr(verdicts, "_needed", spy)
    monkeypatch.chdir(REPO)
    with figures_not_drawn():
        pipeline.build_report([(RECORDED / e).relative_to(REPO) for e in EXPERIMENTS if (RECORDED / e).is_dir()])
    return sized


def test_every_m_named_on_the_recorded_demo_is_within_a_factor_of_the_log_scale_sizing(monkeypatch):
    """Every M (or n) the recorded demo's report names from an interval, sized again here by the
    issue's rule: within a factor 1.5. Before, wide log intervals were sized by their upper side:
    the separate core's CV ratio 3.25 (CI 1.10-9.62, M = 5) asked 36 reruns, then 8 (12 since its
    rerun 5, disturbed from outside, is set aside: 2.67, CI 0.667-10.7, M = 4); the interrupt
    cost 10.7 µs (CI 1.60-72.2 over 3 runs) 117 runs, now 10; the period / tick 26, now 16. An F
    interval (theta of 'reruns differ') follows the F quantiles and is left out here."""
    checked = []
    for est, edges, decide in _sized_on_the_recorded_demo(monkeypatch):
        kind = next((k for k in ("reruns", "runs") if k in decide), None)
        if kind is None or est.interval == "F":
            continue
        low, high, level = est.sizing()
        reference = log_scale_m(est.value, low, high, level, est.m if kind == "reruns" else est.n, edges, est.grid)
        assert reference, est
        assert reference / FACTOR <= decide[kind] <= reference * FACTOR, (est, edges, decide, reference)
        checked.append((est.method, decide[kind], reference))
    assert len(checked) >= 10, checked
    log_t = [(named, reference) for method, named, reference in checked if "t interval of the logs" in method]
    assert {5, 10, 12, 16} <= {named for named, _ in log_t}, log_t


# --- the simulation: does the M named decide? -------------------------------------------------

def _pattern(m, centre, spread, seed=1):
    """m logs whose mean is `centre` and whose sd is `spread` exactly."""
    z = np.random.default_rng(seed).standard_normal(m)
    return centre + spread * (z - z.mean()) / z.std(ddof=1)


CASES = {  # judge, the reruns' logs so far, the interval's level, the grid
    "flat part of the issue (refuting, 98.75 %)": (lambda e: verdicts.no_effect(e, 0.02), np.log([1.396, 1.801, 0.857]),
                                                   0.9875, 0.0),
    "timer every 1 ms of the issue (on a grid)": (lambda e: verdicts.no_effect(e, 0.10), _pattern(3, math.log(2.02), 1.185),
                                                  0.90, 0.01),
    "about 3.1 µs, measured 10.7": (lambda e: verdicts.about(e, 3.1), _pattern(3, math.log(10.75), 0.77), 0.95, 0.0),
    "no effect, inside the margin": (lambda e: verdicts.no_effect(e, 0.05), _pattern(3, math.log(1.01), 0.06), 0.90, 0.0),
    "no effect, inside, M = 5": (lambda e: verdicts.no_effect(e, 0.02), _pattern(5, math.log(1.005), 0.02), 0.90, 0.0),
    "at least 1.1, measured 1.2": (lambda e: verdicts.at_least(e, 1.1), _pattern(5, math.log(1.2), 0.12), 0.95, 0.0),
    "direction, measured 1.05": (lambda e: verdicts.direction(e), _pattern(3, math.log(1.05), 0.06), 0.95, 0.0),
    "about 2, measured 1.3": (lambda e: verdicts.about(e, 2.0), _pattern(3, math.log(1.3), 0.35), 0.95, 0.0),
}


def decided_share(judge, logs, level, grid, continuations=2000, seed=0):
    """(M named, the share of simulated continuations to M reruns that the report's own rule
    decides): the reruns so far stay, the M - m added ones are drawn with today's log mean and sd."""
    est = dataclasses.replace(replication.over_reruns(np.exp(logs), n=10, confidence=level, log=True), grid=grid)
    reruns, m = judge(est).part.decide["reruns"], len(logs)
    added = np.random.default_rng(seed).normal(logs.mean(), logs.std(ddof=1), (continuations, reruns - m))
    values = np.hstack([np.broadcast_to(logs, (continuations, m)), added])
    mean, half = values.mean(1), scipy.stats.t.ppf((1 + level) / 2, reruns - 1) * values.std(1, ddof=1) / math.sqrt(reruns)
    decided = sum(judge(Estimate(float(math.exp(c)), float(math.exp(c - h)), float(math.exp(c + h)), unit="reruns", n=10,
                                 m=reruns, level=level, grid=grid, interval="log t")).verdict != "inconclusive"
                  for c, h in zip(mean, half))
    return reruns, decided / continuations


def test_the_m_named_decides_about_half_of_simulated_continuations():
    """Continue each case to the M named, 2000 times (seed 0): the reruns so far stay, the added ones
    are drawn at today's log mean and sd, and the report's own rule judges each. The M named decides
    in 52-64 % of them (median 60 %): about half, a little more because the M named is the smallest
    whose half-width fits, so it fits with some room, and the reruns kept hold the mean still. The
    old rule's 191 for the issue's two cases decided every continuation: 10-15 times the reruns needed."""
    shares = {name: decided_share(*case) for name, case in CASES.items()}
    assert all(0.45 <= share <= 0.85 for _, share in shares.values()), shares
    assert 0.5 <= median(share for _, share in shares.values()) <= 0.7, shares
    assert shares["flat part of the issue (refuting, 98.75 %)"][0] == 20


# --- a grid wider than the room, even with no spread ------------------------------------------

def test_identical_medians_on_a_grid_name_the_grid_not_a_missing_spread():
    """The recorded CPUID;RDTSC floor (20.03 ns, on the TSC's 10.01 ns grid), as three invocations
    that all read it, as the issue's demo did: no spread between them, and half a step (5.007 ns) is
    wider than the 4.03 ns from the estimate to the band's edge, 16 ns. That is why no number of
    reruns decides it, and what the reason says (it said 'no spread to judge by')."""
    tables, _, _ = load_tables(RECORDED / "os-microbench")
    data = microbench_samples.collect(tables)
    floor = data["variants"]["tsc-cpuid"]
    data["variants"]["tsc-cpuid"] = {**floor, "run_medians": [floor["median"]] * 3, "invocations": ["a", "b", "c"],
                                     "run_quantiles": floor["run_quantiles"] * 3, "runs": 3}
    [finding] = microbench_claims.timer_read_cost(data)
    [part] = finding.parts
    assert finding.verdict == "inconclusive" and part.replication == "reruns" and part.m == 3
    reason = part.decide["never"]
    assert "spread" not in reason
    assert reason == ("on this 10.01 ns grid, half a step (5.007 ns) is at least the distance from the estimate to the "
                      "bound (4.03 ns)")
    assert f"no number of reruns decides it: {reason}" in finding.evidence and finding.cost == ""
