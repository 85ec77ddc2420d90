"""How fast does `timekit ab --until-decided` decide under each design, and against hyperfine?

For each workload (programs/bin/spin sized to about 20 ms and 0.3 s of CPU, and gzip -6 of a
file of the repository) B does +1, +2 and +5 % more work (spin: a larger argument; gzip: the
file with its first 1, 2, 5 % appended again), and A against itself (A/A). Every pair is run
under the designs separate, blocks (one pair a BenchExec run), blocks with batches (K chosen by the
kit), interleaved and duet, with `timekit ab A B --until-decided --threshold T --budget B --format json`;
recorded: the wall time of the whole command, its exit code, each row's verdict and change. Beside
it, `hyperfine -N A B` with its defaults: its wall time and its ratio. Everything runs one after
the other in one sitting, the designs in a rotated order per pair, so that the machine's state is
shared out.

    python benchmarks/ab_designs.py                               # everything (about 30 min here)
    python benchmarks/ab_designs.py --workloads spin20 --changes 2 --designs blocks
    python benchmarks/ab_designs.py --workloads spin20 --changes 0 2 --designs blocks+batches --tries 6
Results: benchmarks/results/DATE-ab-designs.json and a Markdown table on stdout
(benchmarks/README.md keeps it); scratch in .pytest-tmp/bench-ab-designs/.
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_benchmarks import log, loadavg, machine  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
SPIN = REPO / "programs" / "bin" / "spin"
WORKDIR = REPO / ".pytest-tmp" / "bench-ab-designs"
RESULTS_DIR = REPO / "benchmarks" / "results"
GZIP_SOURCE = REPO / "tests" / "data"     # gzip's input: the repository's test data, tarred
DESIGNS = {"separate": ["--design", "separate"], "blocks": ["--design", "blocks", "--repeat", "1"],
           "blocks+batches": ["--design", "blocks"], "interleaved": ["--design", "interleaved"],
           "duet": ["--design", "duet"], "auto": []}
CHANGES = {"spin20": (0, 1, 2, 5), "spin300": (0, 1, 5), "gzip": (0, 2)}   # percent more work for B (0: A/A)
WORKLOADS = tuple(CHANGES)
SETTINGS = {"spin20": {"threshold": "0.01", "budget": "1m"}, "spin300": {"threshold": "0.005", "budget": "2m"},
            "gzip": {"threshold": "0.01", "budget": "1m"}}


def spin_units(seconds):
    """spin's argument for about `seconds` of CPU here (timed on 200000 units)."""
    before = os.times()
    subprocess.run([str(SPIN), "200000"], check=True)
    after = os.times()
    cpu = after.children_user - before.children_user + after.children_system - before.children_system
    return max(1000, int(seconds * 200000 / max(cpu, 1e-3)))


def gzip_inputs(workdir, changes):
    """{percent: file} with the base file and its +1/+2/+5 % versions (the first bytes again)."""
    base = workdir / "gzip-input-0.tar"
    if not base.exists():
        subprocess.run(["tar", "-cf", str(base), "-C", str(GZIP_SOURCE.parent), GZIP_SOURCE.name], check=True)
    data = base.read_bytes()
    out = {0: base}
    for c in changes:
        if c:
            path = workdir / f"gzip-input-{c}.tar"
            path.write_bytes(data + data[: len(data) * c // 100])
            out[c] = path
    return out


def commands(workload, change, workdir, units):
    if workload == "gzip":
        files = gzip_inputs(workdir, (1, 2, 5))
        return f"gzip -6 -c {files[0]} > /dev/null", f"gzip -6 -c {files[change]} > /dev/null"
    return f"{SPIN} {units[workload]}", f"{SPIN} {units[workload] * (100 + change) // 100}"


def hyperfine(a, b, workdir):
    """(wall seconds, ratio B/A of hyperfine's means) with its defaults (-N where no shell is needed)."""
    export = workdir / "hyperfine.json"
    shell = ["-N"] if ">" not in a else []
    start = time.monotonic()
    subprocess.run(["hyperfine", *shell, "--export-json", str(export), a, b], check=True, capture_output=True)
    seconds = time.monotonic() - start
    results = json.loads(export.read_text())["results"]
    return seconds, results[1]["mean"] / results[0]["mean"]


def timekit_ab(a, b, design, settings, workdir):
    """(wall seconds, exit code, [(row, verdict, change %)], reruns, design summary) of one ab."""
    out = workdir / f"ab-{design}-{time.monotonic_ns()}"
    command = [sys.executable, "-m", "analysis.cli", "ab", a, b, *DESIGNS[design], "--until-decided",
               "--threshold", settings["threshold"], "--budget", settings["budget"], "--format", "json", "--output", str(out)]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, cwd=workdir)
    seconds = time.monotonic() - start
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return seconds, done.returncode, [("error", done.stderr.strip().splitlines()[-1:] or ["?"], 0)], 0, ""
    rows = [(c["column"], c["verdict"], 100 * (c["ratio"] - 1),
             100 * c["cv_within"] if isinstance(c.get("cv_within"), (int, float)) else float("nan"))
            for c in data["comparison"]]
    ab = data["ab"][0]
    shutil.rmtree(out, ignore_errors=True)
    return seconds, done.returncode, rows, ab["reruns"], ab["stopped"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--changes", nargs="+", type=int, help="percent more work for B (default per workload, 0: A/A)")
    parser.add_argument("--designs", nargs="+", default=list(DESIGNS), choices=list(DESIGNS))
    parser.add_argument("--tries", type=int, default=1, help="run every pair this many times (hyperfine beside each)")
    args = parser.parse_args(argv)
    subprocess.run(["make", "-s", "-C", str(REPO / "programs")], check=True)
    WORKDIR.mkdir(parents=True, exist_ok=True)
    units = {"spin20": spin_units(0.02), "spin300": spin_units(0.3)}
    record = {"date": datetime.datetime.now().isoformat(timespec="minutes"), "machine": machine(), "units": units,
              "rows": []}
    k = 0
    for workload in args.workloads:
        for change in [c for c in args.changes or CHANGES[workload] for _ in range(args.tries)]:
            a, b = commands(workload, change, WORKDIR, units)
            h_seconds, h_ratio = hyperfine(a, b, WORKDIR)
            log(f"{workload} +{change} %: hyperfine {h_seconds:.1f} s, ratio {h_ratio:.3f}")
            designs = args.designs[k % len(args.designs):] + args.designs[:k % len(args.designs)]
            k += 1
            for design in designs:
                seconds, code, rows, reruns, stopped = timekit_ab(a, b, design, SETTINGS[workload], WORKDIR)
                log(f"  {design}: {seconds:.1f} s, exit {code}, M = {reruns}, {rows}; load {loadavg()}")
                record["rows"].append({"workload": workload, "change": change, "design": design, "seconds": seconds,
                                       "exit": code, "rows": rows, "reruns": reruns, "stopped": stopped,
                                       "hyperfine_seconds": h_seconds, "hyperfine_ratio": h_ratio, "a": a, "b": b})
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}-ab-designs.json"
    path.write_text(json.dumps(record, indent=2))
    print(table(record))
    log(f"written: {path}")


def table(record):
    lines = ["| workload | B | design | timekit ab (s) | M | verdicts (cputime; walltime) | sd of a pair's ln(b/a), CPU | exit "
             "| hyperfine (s) | hyperfine B/A | ab / hyperfine |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in record["rows"]:
        verdicts = "; ".join(f"{row[1]} {row[2]:+.1f} %" for row in r["rows"])
        spread = next((f"{row[3]:.1f} %" for row in r["rows"] if len(row) > 3 and row[3] == row[3]), "")
        lines.append(f"| {r['workload']} | {'A/A' if not r['change'] else '+' + str(r['change']) + ' %'} | {r['design']} | "
                     f"{r['seconds']:.1f} | {r['reruns']} | {verdicts} | {spread} | {r['exit']} | {r['hyperfine_seconds']:.1f} | "
                     f"{r['hyperfine_ratio']:.3f} | {r['seconds'] / r['hyperfine_seconds']:.1f}x |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
