"""Where does `timekit ab`'s time to a verdict go, and how does it compare with hyperfine's?

A pair of `programs/bin/spin` sized to about `--ms` milliseconds of CPU here, B doing `--change`
percent more work, is run `--tries` times, alternating with `hyperfine -N A B` (its defaults). Each
`timekit ab A B --threshold T` runs as a user runs it (until decided, within its budget; `--design`
pins a design instead of auto's), and its time is split into:

- start: from the command to its first invocation (Python, imports, the first execution of each
  command, the pair timed alone, a co-located design's pilot);
- measurement: the BenchExec runs' own wall time (the pairs);
- BenchExec: the rest of each invocation (BenchExec's start, cgroups, its files);
- looks and report: everything after the invocations (the analysis of every look, the last table).

Beside them, the noise that sets how many invocations a decision needs: the SD of one pair's
ln(B/A) of CPU time (robust: the interquartile range / 1.35) and of one invocation's log ratio.

    python benchmarks/ab_time.py                          # 20 ms, +2 %, threshold 1 %, 5 tries
    python benchmarks/ab_time.py --ms 20 --change 2 --threshold 0.01 --tries 5
    python benchmarks/ab_time.py --commands 'lz4 -1 -c IN' 'lz4 -2 -c IN' --threshold 0.02   # any pair
    python benchmarks/ab_time.py --design interleaved     # a co-located design, piloted every try
Results: benchmarks/results/DATE-ab-time.json and a Markdown table on stdout; scratch in
.pytest-tmp/bench-ab-time/ (BenchExec hides /tmp).
"""

import argparse
import bz2
import datetime
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ab_designs import hyperfine, spin_units  # noqa: E402
from run_benchmarks import log, loadavg, machine  # noqa: E402


REPO = Path(__file__).resolve().parent.parent
SPIN = REPO / "programs" / "bin" / "spin"
WORKDIR = REPO / ".pytest-tmp" / "bench-ab-time"
RESULTS_DIR = REPO / "benchmarks" / "results"
WALLTIME = re.compile(rb'<column title="walltime" value="([0-9.]+)s"')


def timed_ab(a, b, threshold, out, design=None):
    """(seconds to the first invocation, seconds in all, exit code, the JSON it printed) of one ab."""
    command = [sys.executable, "-m", "analysis.cli", "ab", a, b, "--threshold", str(threshold), "--format", "json",
               "--output", str(out), *(["--design", design] if design else [])]
    start = time.monotonic()
    with open(out.parent / f"{out.name}.json", "w+") as printed:   # a file: the JSON outgrows a pipe's buffer
        process = subprocess.Popen(command, cwd=REPO, stdout=printed, stderr=subprocess.PIPE, text=True)
        first = float("nan")
        for line in process.stderr:
            if line.startswith("A/B:") and first != first:
                first = time.monotonic() - start
        code = process.wait()
        printed.seek(0)
        stdout = printed.read()
    return first, time.monotonic() - start, code, json.loads(stdout[stdout.index("{\n"):])


def invocations(out):
    """[(the invocation's wall seconds, its BenchExec runs' own wall seconds)] of the pair in `out`."""
    record = json.loads((out / "commands.json").read_text())
    directory = out / record["pairs"][0]["directory"]
    steps = json.loads((directory / "paired.json").read_text())["steps"]
    found = []
    for step in steps:
        if step["status"] != "done":
            continue
        # each run's walltime, then the run set's total last (left out)
        runs = sum(float(v) for f in step["result_files"]
                   for v in WALLTIME.findall(bz2.decompress((directory / f).read_bytes()))[:-1])
        found.append((step["seconds"], runs))
    return found


def spreads(out):
    """(SD of one pair's ln(B/A), robust: IQR / 1.35; SD of one invocation's log ratio) of the CPU
    time in `out`, in percent: the noise that sets how many invocations a decision needs."""
    import numpy as np

    from analysis.ab import observations, paired
    from analysis.tools.commands import executions

    record = json.loads((out / "commands.json").read_text())
    directory = out / record["pairs"][0]["directory"]
    run = paired.PairedRun.load(directory)
    logs, pairs = observations.invocation_log_ratios(
        executions.of_tables(paired.tables(directory, run), run.rundefinitions[0]), "exec-cputime")
    if len(logs) < 2:
        return math.nan, math.nan
    q75, q25 = np.percentile(np.concatenate(pairs), [75, 25])
    return 100 * (q75 - q25) / 1.35, 100 * float(np.std(logs, ddof=1))


def one_try(a, b, threshold, k, design=None):
    h_seconds, h_ratio = hyperfine(a, b, WORKDIR)
    out = WORKDIR / f"ab-{k}"
    shutil.rmtree(out, ignore_errors=True)
    first, total, code, data = timed_ab(a, b, threshold, out, design)
    steps = invocations(out)
    gated = [c for c in data["comparison"] if c["column"] == "exec-cputime"] or data["comparison"]
    row = {"try": k, "hyperfine_seconds": h_seconds, "hyperfine_ratio": h_ratio, "ab_seconds": total, "exit": code,
           "verdict": gated[0]["verdict"] if gated else "", "change": 100 * (gated[0]["ratio"] - 1) if gated else None,
           "invocations": len(steps), "start": first, "measurement": sum(r for _, r in steps),
           "benchexec": sum(s - r for s, r in steps), "design": data["ab"][0]["design"], "load": loadavg(),
           "asked": design or "auto"}
    row["looks_and_report"] = total - first - sum(s for s, _ in steps)
    row["pair_sd"], row["invocation_sd"] = spreads(out)
    log(f"try {k}: hyperfine {h_seconds:.1f} s; ab {total:.1f} s ({row['verdict']} {row['change']:+.2f} %, exit {code}, "
        f"M = {len(steps)}): start {first:.1f}, measurement {row['measurement']:.1f}, BenchExec {row['benchexec']:.1f}, "
        f"looks and report {row['looks_and_report']:.1f}; a pair's log ratio SD {row['pair_sd']:.1f} %, an "
        f"invocation's {row['invocation_sd']:.2f} %")
    return row


def table(record):
    lines = ["| try | hyperfine (s) | timekit ab (s) | ab / hyperfine | verdict (CPU time) | exit | M | start | measurement "
             "| BenchExec | looks and report | pair SD (%) | invocation SD (%) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in record["rows"]:
        lines.append(f"| {r['try']} | {r['hyperfine_seconds']:.1f} | {r['ab_seconds']:.1f} | "
                     f"{r['ab_seconds'] / r['hyperfine_seconds']:.1f}x | {r['verdict']} {r['change']:+.2f} % | {r['exit']} | "
                     f"{r['invocations']} | {r['start']:.1f} | {r['measurement']:.1f} | {r['benchexec']:.1f} | "
                     f"{r['looks_and_report']:.1f} | {r.get('pair_sd', math.nan):.1f} | {r.get('invocation_sd', math.nan):.2f} |")
    rows = record["rows"]
    med = {key: statistics.median(r[key] for r in rows) for key in ("hyperfine_seconds", "ab_seconds", "start",
                                                                       "measurement", "benchexec", "looks_and_report")}
    lines.append(f"| median | {med['hyperfine_seconds']:.1f} | {med['ab_seconds']:.1f} | "
                 f"{med['ab_seconds'] / med['hyperfine_seconds']:.1f}x | | | | {med['start']:.1f} | {med['measurement']:.1f} | "
                 f"{med['benchexec']:.1f} | {med['looks_and_report']:.1f} | | |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ms", type=float, default=20.0, help="CPU milliseconds of A here (default 20)")
    parser.add_argument("--change", type=float, default=2.0, help="percent more work for B (default 2)")
    parser.add_argument("--threshold", type=float, default=0.01, help="ab's --threshold (default 0.01)")
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--commands", nargs=2, metavar=("A", "B"),
                        help="time this pair instead of spin (absolute paths: ab and hyperfine run in other folders)")
    parser.add_argument("--design", help="ab's --design (default: none given, auto)")
    args = parser.parse_args(argv)
    subprocess.run(["make", "-s", "-C", str(REPO / "programs")], check=True)
    WORKDIR.mkdir(parents=True, exist_ok=True)
    if args.commands:
        a, b = args.commands
    else:
        units = spin_units(args.ms / 1000)
        a, b = f"{SPIN} {units}", f"{SPIN} {round(units * (1 + args.change / 100))}"
    record = {"date": datetime.datetime.now().isoformat(timespec="minutes"), "machine": machine(), "a": a, "b": b,
              "threshold": args.threshold, "rows": [one_try(a, b, args.threshold, k, args.design) for k in range(1, args.tries + 1)]}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}-ab-time.json"
    path.write_text(json.dumps(record, indent=2))
    print(table(record))
    log(f"written: {path}")


if __name__ == "__main__":
    sys.exit(main())
