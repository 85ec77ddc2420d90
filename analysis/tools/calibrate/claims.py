"""
`timekit calibrate --claims`: how often each finding's verdict is wrong, measured by simulation.

For each claim an experiment declares (analysis.core.verdicts.ClaimSpec), result sets in which it
is true, false and exactly at its bound are drawn with this machine's drift between invocations,
judged by the report's own interval and verdict function, and counted: a verdict is wrong when it
confirms a false claim or refutes a true one (docs/verdicts.md, "Measured: how often a verdict is
wrong").
"""

import json
from dataclasses import dataclass

import numpy as np
import scipy.stats

from analysis.core.verdicts import DRIFT, Estimate

TRIES = 1000
WITHIN_CV = 0.01  # run-to-run CV inside one invocation
SEED = 0
BOOTSTRAP = 400  # resamples for the one-rerun (runs-level) interval


@dataclass
class Outcome:
    claim: str
    preset: str
    truth: str  # "true", "false" or "boundary"
    true_value: float
    n: int
    m: int
    tries: int
    confirmed: int
    refuted: int
    inconclusive: int

    @property
    def wrong(self):
        return {"true": self.refuted, "false": self.confirmed}.get(self.truth, 0)

    def as_dict(self):
        d = dict(self.__dict__)
        d["wrong"] = self.wrong
        d["wrong_rate"] = self.wrong / self.tries
        return d


def _level(rng, tries, m, n, drift, within):
    """Means of n runs in each of m reruns, tries times: shape (tries, m). Each rerun has its own
    level (lognormal, CV `drift`), each run its noise (lognormal, CV `within`)."""
    s_b, s_w = np.sqrt(np.log1p(drift**2)), np.sqrt(np.log1p(within**2))
    level = rng.lognormal(-s_b**2 / 2, s_b, (tries, m, 1))
    runs = rng.lognormal(-s_w**2 / 2, s_w, (tries, m, n))
    return level * runs


def _estimates(true_value, n, m, drift, within, tries, rng, confidence):
    """The interval the report computes, for `tries` simulated result sets."""
    a = _level(rng, tries, m, n, drift, within)
    b = true_value * _level(rng, tries, m, n, drift, within)
    if m >= 2:
        ratios = b.mean(axis=2) / a.mean(axis=2)
        mean, sem = ratios.mean(axis=1), scipy.stats.sem(ratios, axis=1)
        low, high = scipy.stats.t.interval(confidence, m - 1, loc=mean, scale=sem)
        return [Estimate(v, lo, hi, unit="reruns", n=n, m=m) for v, lo, hi in zip(mean, low, high)]
    a, b = a[:, 0, :], b[:, 0, :]
    picks = rng.integers(0, n, (BOOTSTRAP, n))
    boot = b[:, picks].mean(axis=2) / a[:, picks].mean(axis=2)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(boot, [tail, 100 - tail], axis=1)
    value = b.mean(axis=1) / a.mean(axis=1)
    return [Estimate(v, lo, hi, unit="runs", n=n) for v, lo, hi in zip(value, low, high)]


def calibrate_claim(spec, preset, drift=DRIFT, within=WITHIN_CV, tries=TRIES, seed=SEED):
    """Outcomes of one claim at one preset's n and M, for a true, a false and a boundary case."""
    n, m = spec.sizes[preset]
    outcomes = []
    for k, (truth, value) in enumerate(spec.cases().items()):
        rng = np.random.default_rng([seed, k, n, m])
        counts = {"confirmed": 0, "refuted": 0, "inconclusive": 0}
        for est in _estimates(value, n, m, drift, within, tries, rng, spec.confidence):
            counts[spec.judge(est).verdict] += 1
        outcomes.append(Outcome(spec.claim, preset, truth, value, n, m, tries, **counts))
    return outcomes


def calibrate_claims(specs, drift=DRIFT, within=WITHIN_CV, tries=TRIES, seed=SEED):
    return [o for spec in specs for preset in spec.sizes for o in calibrate_claim(spec, preset, drift, within, tries, seed)]


HEADER = ["claim", "preset", "truth", "true value", "n", "M", "confirmed", "refuted", "inconclusive", "wrong"]


def render(outcomes, fmt="text"):
    if fmt == "json":
        return json.dumps([o.as_dict() for o in outcomes], indent=2)
    rows = [[o.claim, o.preset, o.truth, f"{o.true_value:.4g}", str(o.n), str(o.m), str(o.confirmed), str(o.refuted),
             str(o.inconclusive), f"{o.wrong / o.tries:.1%}" if o.truth != "boundary" else "–"] for o in outcomes]
    if fmt == "markdown":
        lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADER)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(HEADER), *map(line, rows)])

