"""Do the intervals `timekit ab` prints after deciding sequentially hold their 95 %?

Simulates the kit's own rule (analysis.tools.plan.sequential: `run_paired_sequence` for blocks and
interleaved, one log ratio per invocation; `run_sequence` for separate, one mean per invocation
and side) on normal data with a known true ratio, stops where the rule stops, and counts how often
the interval holds the truth: the repeated interval the rows now show (`Decision.two_sided`), and
the fixed-sample 95 % t interval at the stopping look that they showed before. Stopping early
selects looks whose spread happened to be small, so the fixed-sample one covers less than 95 %.

    python benchmarks/sequential_coverage.py                  # 10,000 sequences per case
    python benchmarks/sequential_coverage.py --sequences 1000
Results: a Markdown table on stdout, benchmarks/results/DATE-sequential-coverage.json.
"""

import argparse
import datetime
import json
import math
import time
from pathlib import Path

import numpy as np
import scipy.stats

from analysis.core import stats
from analysis.tools.plan import sequential

ALPHA, THRESHOLD, MAX_LOOKS = 0.05, 0.02, 20
# (design, true change, sd of one invocation's log ratio or mean): no change, one beyond the
# threshold, one inside it, and a noisy one that runs to the last look
CASES = (("paired", 0.0, 0.02), ("paired", 0.03, 0.02), ("paired", 0.01, 0.01), ("paired", 0.02, 0.05),
         ("separate", 0.0, 0.02), ("separate", 0.05, 0.02), ("separate", 0.02, 0.02))


def paired_sequence(rng, change, sd):
    """(true ratio, the rule's Decision, the fixed-sample 95 % interval at its stopping look)."""
    logs = rng.normal(math.log1p(change), sd, MAX_LOOKS)
    decision = sequential.run_paired_sequence(logs, ALPHA, THRESHOLD, MAX_LOOKS)
    mean, half, _ = stats.log_ratio_t(logs[:decision.reruns], ALPHA)
    return 1 + change, decision, (math.exp(mean - half), math.exp(mean + half))


def separate_sequence(rng, change, sd):
    base, new = rng.normal(1, sd, MAX_LOOKS), rng.normal(1 + change, sd, MAX_LOOKS)
    decision = sequential.run_sequence(base, new, ALPHA, THRESHOLD, MAX_LOOKS)
    a, b = base[:decision.reruns], new[:decision.reruns]
    welch = scipy.stats.ttest_ind(a, b, equal_var=False)
    half = float(scipy.stats.t.ppf(1 - ALPHA / 2, welch.df)) * math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size) / a.mean()
    ratio = b.mean() / a.mean()
    return 1 + change, decision, (ratio - half, ratio + half)


def coverage(design, change, sd, sequences, seed=0):
    """{"repeated": share held, "fixed": share held, "mean_looks": M where it stopped} of one case."""
    rng = np.random.default_rng([seed, int(1000 * change), int(1000 * sd)])
    one = paired_sequence if design == "paired" else separate_sequence
    held, fixed, looks = 0, 0, 0
    for _ in range(sequences):
        truth, decision, interval = one(rng, change, sd)
        held += decision.two_sided[0] <= truth <= decision.two_sided[1]
        fixed += interval[0] <= truth <= interval[1]
        looks += decision.reruns
    return {"design": design, "change": change, "sd": sd, "sequences": sequences, "repeated": held / sequences,
            "fixed": fixed / sequences, "mean_looks": looks / sequences}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequences", type=int, default=10_000)
    args = parser.parse_args()
    started = time.monotonic()
    rows = [coverage(*case, args.sequences) for case in CASES]
    print("| design | true change | sd | sequences | mean M at stop | repeated CI holds | fixed-sample CI holds |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['design']} | {100 * r['change']:+g} % | {100 * r['sd']:g} % | {r['sequences']} | {r['mean_looks']:.1f} "
              f"| {100 * r['repeated']:.1f} % | {100 * r['fixed']:.1f} % |")
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M")
    out = Path(__file__).parent / "results" / f"{stamp}-sequential-coverage.json"
    out.write_text(json.dumps({"alpha": ALPHA, "threshold": THRESHOLD, "max_looks": MAX_LOOKS, "rows": rows,
                               "seconds": round(time.monotonic() - started, 1)}, indent=1))
    print(f"\n{out}")


if __name__ == "__main__":
    main()
