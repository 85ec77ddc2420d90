"""Benchmark of the rerun-aware compare: 100,000 runs x 10 reruns per side in under 10 s.

1. statistics: analysis.tools.compare.reruns.compare_reruns on two sides of 10 reruns x 100,000 runs
   (1,000,000 runs a side, lognormal: 2 % drift between reruns, 1 % CV within), in memory: Welch t
   and Mann-Whitney U on the rerun means, the variance components, the two-stage bootstrap (2000
   resamples). At this size the inner stage draws each rerun's mean from its normal limit (the
   default above reruns.EXACT_DRAWS draws a side). Target: under 10 s.
2. exact bootstrap: the largest comparison whose runs the default still really resamples:
   10 reruns x 2,500 runs a side (2000 resamples x 25,000 runs = reruns.EXACT_DRAWS draws a side),
   the vectorized resampling itself and the cost of one such row. Target: under 10 s.
3. end to end (information): `python -m analysis.cli compare BASE NEW --column cputime` on two
   directories of 10 result files of 10,000 runs each (benchmarks/make_large_result.py, each file
   given its own date so that it is its own invocation), wall time and peak RSS under GNU time:
   loading 200,000 runs dominates.

Each measurement is repeated `--repeat` times (default 3) and the median reported; every value
goes to benchmarks/results/DATE-reruns.json.
"""

import argparse
import bz2
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from analysis.tools.compare import reruns  # noqa: E402
from benchmarks.run_benchmarks import (DEFAULT_WORKDIR, GENERATOR, RESULTS_DIR, check_call, log,  # noqa: E402
                                       machine, median, timed)

TARGET_SECONDS = 10.0


def sides(rng, m, n, drift=0.02, cv=0.01):
    """Two sides of m reruns x n runs: lognormal rerun level times lognormal run noise."""
    def one():
        sb, sw = np.sqrt(np.log1p(drift ** 2)), np.sqrt(np.log1p(cv ** 2))
        return [rng.lognormal(-sb * sb / 2, sb) * rng.lognormal(-sw * sw / 2, sw, n) for _ in range(m)]
    return one(), one()


def bench_statistics(m, n, repeat):
    rounds = []
    for round_no in range(repeat):
        base, new = sides(np.random.default_rng(round_no), m, n)
        begin = time.perf_counter()
        result = reruns.compare_reruns(base, new)
        seconds = time.perf_counter() - begin
        rounds.append({"seconds": seconds, "ratio": result.ratio, "ci": [result.ci_low, result.ci_high],
                       "between_share": result.components.between_share, "method": result.method})
        log(f"  {m} x {n:,} runs a side: {seconds:.2f} s, {result.method}")
    seconds = median(r["seconds"] for r in rounds)
    return {"reruns": m, "runs_per_rerun": n, "rounds": rounds, "seconds": seconds,
            "target": f"< {TARGET_SECONDS:g} s", "met": seconds < TARGET_SECONDS}


def result_directory(workdir, side, m, n):
    """m generated result files of n runs, each with its own date (one invocation each)."""
    directory = workdir / f"reruns-{side}-{m}x{n}"
    if len(list(directory.glob("*.xml.bz2"))) == m:
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    for k in range(m):
        tmp = directory / f"tmp{k}.xml.bz2"
        check_call([sys.executable, GENERATOR, tmp, "--runs", n, "--seed", 100 * (side == "new") + k], workdir / "generate.log")
        date = datetime.datetime(2024, 1, 2, 3, 4, 5) + datetime.timedelta(minutes=k + 30 * (side == "new"))
        text = bz2.decompress(tmp.read_bytes()).replace(b'date="2024-01-02 03:04:05 UTC"',
                                                       date.strftime('date="%Y-%m-%d %H:%M:%S UTC"').encode(), 1)
        (directory / f"time-apis.rerun{k}.results.bash.xml.bz2").write_bytes(bz2.compress(text))
        tmp.unlink()
    return directory


def bench_end_to_end(workdir, m, n, repeat):
    base, new = (result_directory(workdir, side, m, n) for side in ("base", "new"))
    # --threshold 0.5: exit 0 whatever the seeded files say (exit 1 would count as a failed command)
    command = [sys.executable, "-m", "analysis.cli", "compare", base, new, "--column", "cputime", "--format", "json",
               "--threshold", "0.5"]
    rounds = []
    for round_no in range(repeat):
        wall, rss = timed(command, workdir, f"reruns-compare{round_no}")
        rounds.append({"seconds": wall, "peak_rss_kib": rss})
        log(f"  compare, {m} files x {n:,} runs a side: {wall:.2f} s, peak RSS {rss / 1024:.0f} MiB")
    return {"reruns": m, "runs_per_rerun": n, "command": " ".join(map(str, command)), "rounds": rounds,
            "seconds": median(r["seconds"] for r in rounds), "peak_rss_kib": median(r["peak_rss_kib"] for r in rounds)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds per measurement; medians are reported (default 3)")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, help="scratch directory (default .pytest-tmp/bench)")
    parser.add_argument("--json", type=Path, help="where to write every measurement (default benchmarks/results/DATE-reruns.json)")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    date = datetime.date.today().isoformat()
    result = {"date": date, "machine": machine(),
              "statistics": bench_statistics(10, 100_000, args.repeat),
              "exact": bench_statistics(10, 2_500, args.repeat),
              "end_to_end": bench_end_to_end(workdir, 10, 10_000, args.repeat)}
    result["loadavg_after"] = machine()["loadavg"]
    path = args.json or RESULTS_DIR / f"{date}-reruns.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    s, e, x = result["statistics"], result["exact"], result["end_to_end"]
    print(f"{'benchmark':58} {'median':>9}  target\n" + "-" * 80)
    print(f"{'statistics, 10 reruns x 100,000 runs a side (s)':58} {s['seconds']:9.2f}  < 10  {'met' if s['met'] else 'MISSED'}")
    print(f"{'exact two-stage bootstrap, 10 x 2,500 runs a side (s)':58} {e['seconds']:9.2f}  < 10  {'met' if e['met'] else 'MISSED'}")
    print(f"{'timekit compare end to end, 10 files x 10,000 runs a side (s)':58} {x['seconds']:9.2f}  (info)")
    print(f"\nevery measurement: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
