"""
What the mode rule (analysis.core.modality) can see at a given number of runs.

The rule keeps a mode only if it holds max(5 %, 8/n) of the runs, so at the preset's n = 30 a
second mode of 20 % cannot be found. ``detection_rate`` simulates how often the rule finds one;
``DETECTS_FROM`` is the smallest n at which it finds SECOND_MODE in 90 % of samples, checked by a
test (docs/experiments.md, "Modes").
"""

import numpy as np

from analysis.core import modality

SECOND_MODE = 0.20  # the claim is judged for a second mode holding 20 % of the runs
SEPARATION = 6.0  # sd of each mode between the two modes (well apart, as in the thesis's histograms)
DETECTS_FROM = 70  # detection_rate(70) >= 0.9 (0.96; at 60: 0.85; tests/test_verdict_cases.py re-simulates it)
POWER = 0.90


def rule_floor(n):
    """The smallest share of the runs the mode rule keeps as a mode at n runs."""
    return max(0.05, 8 / n)


def detection_rate(n, share=SECOND_MODE, separation=SEPARATION, tries=100, seed=0):
    """Share of `tries` simulated samples of n runs (two normal modes `separation` sd apart, the
    second holding `share` of the runs on average) in which the rule finds 2 or more modes."""
    rng = np.random.default_rng([seed, n])
    found = 0
    for _ in range(tries):
        k = rng.binomial(n, share)
        x = 0.09 + 0.001 * np.concatenate([rng.normal(0, 1, n - k), rng.normal(separation, 1, k)])
        found += modality.modality(x).modes >= 2
    return found / tries
