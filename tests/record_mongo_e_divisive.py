"""Record MongoDB's E-Divisive changepoints on the seeded series of tests/test_history.py.

MongoDB's implementation (PyPI `signal-processing-algorithms`) allows Python 3.11 only and numpy < 2,
so it is a test dependency, not a dependency of the kit (setup.cfg's test extras install it on
Python 3.11). The cross-check test compares the kit's E-Divisive with the changepoints recorded
here, in tests/data/history/mongo-e-divisive.json, and where the package is installed, also
recomputes them. To record them again, from the repository root in the test environment:

    .tox/test/bin/python tests/record_mongo_e_divisive.py

The script needs only numpy and that package (not the kit). `series` is the one definition of the
series: the test imports it from here.
"""

import json
import re
import sys
from pathlib import Path

import numpy as np

RECORDING = Path(__file__).parent / "data" / "history" / "mongo-e-divisive.json"
PVALUE = 0.05
PERMUTATIONS = 199
SERIES_SEEDS = range(20)
# MongoDB's permutation test draws from numpy's global generator, seeded per call
PERMUTATION_SEEDS = {"step": [0], "updown": [0, 1, 2, 3]}


def series(kind, seed):
    """30 sets with 1 % noise from numpy's default_rng(seed): 'step' is 15 at 1.0 then 15 at
    1.05; 'updown' is 10 at 1.0, 10 at 1.1, 10 at 1.0."""
    r = np.random.default_rng(seed)
    if kind == "step":
        return np.r_[r.normal(1, 0.01, 15), r.normal(1.05, 0.01, 15)]
    return np.r_[r.normal(1, 0.01, 10), r.normal(1.1, 0.01, 10), r.normal(1.0, 0.01, 10)]


def mongo_changepoints(kind, seed, permutation_seed):
    """MongoDB's changepoints (sorted) on series(kind, seed) with its permutations seeded."""
    from signal_processing_algorithms.determinism import deterministic_numpy_random
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    with deterministic_numpy_random(permutation_seed):
        return sorted(int(x) for x in e_divisive(series(kind, seed), pvalue=PVALUE, permutations=PERMUTATIONS))


def record():
    """The recording: the changepoints per kind, per series seed, in the order of PERMUTATION_SEEDS."""
    from importlib.metadata import version

    return {
        "package": "signal-processing-algorithms",
        "version": version("signal-processing-algorithms"),
        "python": sys.version.split()[0],
        "numpy": np.__version__,
        "pvalue": PVALUE,
        "permutations": PERMUTATIONS,
        "permutation_seeds": PERMUTATION_SEEDS,
        # sum of each kind's series over all seeds: that the test generates the same series
        "series_sums": {kind: float(sum(series(kind, s).sum() for s in SERIES_SEEDS)) for kind in PERMUTATION_SEEDS},
        "changepoints": {
            kind: {str(s): [mongo_changepoints(kind, s, p) for p in seeds] for s in SERIES_SEEDS}
            for kind, seeds in PERMUTATION_SEEDS.items()
        },
    }


def main():
    text = json.dumps(record(), indent=1)
    # one line per series: lists of numbers on one line
    text = re.sub(r"\[[\d,\s\[\]]*\]", lambda m: re.sub(r"\s+", "", m.group()).replace(",", ", "), text)
    RECORDING.parent.mkdir(parents=True, exist_ok=True)
    RECORDING.write_text(text + "\n")
    print(f"wrote {RECORDING}")


if __name__ == "__main__":
    main()
