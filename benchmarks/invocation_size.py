"""How many back-to-back pairs should a paired invocation hold on this machine?

An invocation's observation is the median of its pairs' ln(B/A) (analysis.ab.observations). This
times `--pairs` back-to-back pairs of `programs/bin/spin` sized to about `--ms` ms, B doing
`--change` percent more work, as the truth of benchmarks/designs_truth.py is timed (cmdrun, the
order alternating, CPU time by wait4, on one core, outside BenchExec). It then cuts the series into consecutive blocks of K pairs, as
invocations of K pairs would be, and prints per K: the SD of the blocks' medians, that SD times
sqrt(K) (what a pair is worth inside such a median: lower is better), and the time a decision
would take relative to K = 25, with `--overhead` seconds around every invocation (BenchExec's
start and the look): the SD squared times an invocation's seconds.

    python benchmarks/invocation_size.py                 # 1200 pairs of 20 ms, +2 %
Results: benchmarks/results/DATE-invocation-size.json and a Markdown table on stdout.
"""

import argparse
import datetime
import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ab_designs import spin_units  # noqa: E402
from designs_truth import truth_pairs  # noqa: E402
from run_benchmarks import log, machine  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SPIN = REPO / "programs" / "bin" / "spin"
RESULTS_DIR = REPO / "benchmarks" / "results"
WORKDIR = REPO / ".pytest-tmp" / "invocation-size"
SIZES = (10, 20, 25, 30, 40, 60, 80, 100, 120, 160)
REFERENCE = 25


def by_size(log_ratios, pair_seconds, overhead):
    """Per K: blocks, SD of their medians, SD * sqrt(K), and the relative time to a given precision."""
    rows = []
    for k in SIZES:
        blocks = len(log_ratios) // k
        if blocks < 4:
            continue
        medians = np.median(log_ratios[: blocks * k].reshape(blocks, k), axis=1)
        sd = float(np.std(medians, ddof=1))
        rows.append({"pairs": k, "blocks": blocks, "sd": sd, "sd_sqrt_k": sd * math.sqrt(k),
                     "cost": sd ** 2 * (k * pair_seconds + overhead)})
    reference = next((r["cost"] for r in rows if r["pairs"] == REFERENCE), math.nan)
    for r in rows:
        r["relative_time"] = r["cost"] / reference
    return rows


def table(rows):
    lines = ["| pairs K | blocks | SD of a block's median (%) | SD × √K (%) | time to a given precision, relative to K = 25 |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['pairs']} | {r['blocks']} | {100 * r['sd']:.2f} | {100 * r['sd_sqrt_k']:.1f} | "
                     f"{r['relative_time']:.2f} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ms", type=float, default=20.0, help="CPU milliseconds of A here (default 20)")
    parser.add_argument("--change", type=float, default=2.0, help="percent more work for B (default 2)")
    parser.add_argument("--pairs", type=int, default=1200)
    parser.add_argument("--overhead", type=float, default=0.6, help="seconds around an invocation (default 0.6)")
    args = parser.parse_args(argv)
    a_units = spin_units(args.ms / 1000)
    b_units = round(a_units * (1 + args.change / 100))
    log(f"{args.pairs} pairs of spin {a_units} / {b_units}")
    WORKDIR.mkdir(parents=True, exist_ok=True)
    timed = truth_pairs(f"{SPIN} {a_units}", f"{SPIN} {b_units}", args.pairs, cwd=WORKDIR)
    a, b = np.array(timed).T
    log_ratios = np.log(b / a)
    rows = by_size(log_ratios, float(np.median(a + b)), args.overhead)
    q75, q25 = np.percentile(log_ratios, [75, 25])
    record = {"date": datetime.datetime.now().isoformat(timespec="minutes"), "machine": machine(),
              "a_units": int(a_units), "b_units": int(b_units), "pairs": timed, "overhead": args.overhead,
              "a_ms_deciles": [1000 * float(x) for x in np.percentile(a, range(10, 100, 10))],
              "pair_robust_sd": float((q75 - q25) / 1.35), "by_size": rows}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}-invocation-size.json"
    path.write_text(json.dumps(record, indent=1))
    print(f"A's CPU time, deciles (ms): {', '.join(f'{x:.1f}' for x in record['a_ms_deciles'])}; "
          f"a pair's ln(B/A), robust SD {100 * record['pair_robust_sd']:.1f} %")
    print(table(rows))
    log(f"written: {path}")


if __name__ == "__main__":
    sys.exit(main())
