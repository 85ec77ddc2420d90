"""Does `timekit ab` stay right on a busy machine, and does hyperfine?

Pairs of `programs/bin/workload compute UNITS` (a xorshift chain) where B does 0, 2, 5 or 10 %
more work, under four conditions: nothing else running; a shell loop on another CPU; a compressor
(`xz -6` in a loop) on another CPU; a loop on the CPU the runs use (BenchExec gives a one-core
run CPU 0 here; the other CPU is the highest). Each load runs in a session of its own, as another
user's job would.

The truth of a pair is measured first, on the quiet machine: `cmdrun --repeat N -- A --- B`
(alternating, back to back, outside BenchExec), the ratio of the sides' mean CPU time (wait4)
with a bootstrap 95 % CI. Then, per condition and pair: `timekit ab A B --format json` as a user
runs it (the default: until decided, a 2-minute budget), with `--design` where given, and
`hyperfine -N --warmup 3` (its ratio of mean wall times). Recorded: the verdict, exit code, the
ratio and CI, whether the CI holds the truth, what the invocations met and what was done with
it, and the wall time of each command.

    python benchmarks/busy_runner.py                       # all conditions, all changes, auto
    python benchmarks/busy_runner.py --conditions other-loop --changes 0 5 --designs interleaved blocks
Results: benchmarks/results/DATE-busy-runner.json and a Markdown table on stdout; scratch in
.pytest-tmp/busy-runner/ (BenchExec hides /tmp). `TIMEKIT_OUTSIDE_LEVEL=inf` in the environment
keeps every invocation (the designs' raw answers under load).
"""

import argparse
import datetime
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORKLOAD = REPO / "programs" / "bin" / "workload"
CMDRUN = REPO / "programs" / "bin" / "cmdrun"
WORKDIR = REPO / ".pytest-tmp" / "busy-runner"
RESULTS = REPO / "benchmarks" / "results"
UNITS = 1000          # about 30 ms of CPU a run (programs/workload.c)
CHANGES = (0, 2, 5, 10)
CONDITIONS = ("quiet", "other-loop", "other-xz", "own-loop")
LINE = re.compile(r"^cmdrun-execution \d+ side=([ab]) wall=\S+ user=(\S+) sys=(\S+) status=0", re.MULTILINE)


def command(change):
    return f"{WORKLOAD} compute {round(UNITS * (1 + change / 100))}"


def truth(a, b, pairs=300, seed=0):
    """B/A of the mean CPU time alone, back to back, alternating on one CPU (the one the kit's runs
    get); (ratio, low, high) 95 % bootstrap."""
    cpu = str(sorted(os.sched_getaffinity(0))[0])
    done = subprocess.run(["taskset", "-c", cpu, str(CMDRUN), "--shell", "sh", "--repeat", str(pairs), "--seed",
                           str(seed + 1), "--", a, "---", b], capture_output=True, text=True, check=True)
    sides = {"a": [], "b": []}
    for side, user, system in LINE.findall(done.stdout):
        sides[side].append(float(user) + float(system))
    ratio = statistics.fmean(sides["b"]) / statistics.fmean(sides["a"])
    rng, draws = random.Random(seed), []
    for _ in range(2000):
        idx = [rng.randrange(len(sides["a"])) for _ in sides["a"]]
        draws.append(statistics.fmean(sides["b"][i] for i in idx) / statistics.fmean(sides["a"][i] for i in idx))
    draws.sort()
    return ratio, draws[50], draws[1949]


def start_load(condition, text):
    """The condition's load in a session of its own (None: quiet)."""
    cpus = sorted(os.sched_getaffinity(0))
    if condition == "quiet":
        return None
    cpu = cpus[0] if condition == "own-loop" else cpus[-1]
    body = f"while :; do xz -6 -c {text} > /dev/null; done" if condition == "other-xz" else "while :; do :; done"
    return subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", body], start_new_session=True)


def stop_load(process):
    if process is not None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def timekit_ab(a, b, design, outdir):
    started = time.monotonic()
    args = [sys.executable, "-m", "analysis.cli", "ab", a, b, "--format", "json", "--output", str(outdir)]
    args += ["--design", design] if design != "auto" else []
    done = subprocess.run(args, capture_output=True, text=True, cwd=WORKDIR)
    seconds = time.monotonic() - started
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return {"exit": done.returncode, "seconds": seconds, "error": done.stderr.strip().splitlines()[-1:]}
    row = next((c for c in data["comparison"] if c["column"] == "exec-cputime"), data["comparison"][0])
    ab = data["ab"][0]
    manifest = json.loads((outdir / "p1" / "paired.json").read_text()) if (outdir / "p1" / "paired.json").exists() \
        else next((json.loads(p.read_text()) for p in outdir.rglob("paired.json")), {})
    met = [s.get("disturbance") or {} for s in manifest.get("steps", []) if s.get("status") == "done"]
    return {"exit": done.returncode, "seconds": seconds, "verdict": row["verdict"], "ratio": row["ratio"],
            "ci": [row["ci_low"], row["ci_high"]], "design": ab["design"], "invocations": ab["reruns"],
            "set_aside": ab.get("disturbed", []), "busy": data.get("busy_from_outside", []),
            "met": [{"run_cpus": m.get("run_cpus"), "by_cpu": m.get("by_cpu"), "seconds": m.get("seconds")} for m in met]}


def hyperfine(a, b, export):
    started = time.monotonic()
    subprocess.run(["hyperfine", "-N", "--warmup", "3", "--export-json", str(export), a, b],
                   capture_output=True, text=True, check=True)
    seconds = time.monotonic() - started
    results = json.loads(export.read_text())["results"]
    mean_a, mean_b = results[0]["mean"], results[1]["mean"]
    sd = ((results[0]["stddev"] / mean_a) ** 2 + (results[1]["stddev"] / mean_b) ** 2) ** 0.5 * mean_b / mean_a
    return {"seconds": seconds, "ratio": mean_b / mean_a, "sd": sd, "runs": [len(r["times"]) for r in results]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conditions", nargs="+", default=CONDITIONS, choices=CONDITIONS)
    parser.add_argument("--changes", nargs="+", type=int, default=CHANGES)
    parser.add_argument("--designs", nargs="+", default=["auto"])
    parser.add_argument("--no-hyperfine", action="store_true")
    args = parser.parse_args(argv)
    WORKDIR.mkdir(parents=True, exist_ok=True)
    text = WORKDIR / "input.txt"
    text.write_bytes(b"".join(b"%d the quick brown fox\n" % k for k in range(400000)))
    subprocess.run(["make", "-s", "-C", str(REPO / "programs")], check=True)
    truths = {change: truth(command(0), command(change), seed=change) for change in args.changes}
    print(f"truths: {json.dumps({c: [round(v, 4) for v in t] for c, t in truths.items()})}", file=sys.stderr)
    rows, stamp = [], datetime.datetime.now().strftime("%Y-%m-%d_%H-%M")
    for condition in args.conditions:
        for change in args.changes:
            a, b = command(0), command(change)
            load = start_load(condition, text)
            try:
                time.sleep(1)   # the load settles
                for design in args.designs:
                    outdir = WORKDIR / f"{stamp}-{condition}-{change}-{design}"
                    found = timekit_ab(a, b, design, outdir)
                    row = {"condition": condition, "change": change, "tool": f"timekit ab ({design})",
                           "truth": truths[change], **found}
                    if "ci" in found:
                        row["covers"] = found["ci"][0] <= truths[change][0] <= found["ci"][1]
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
                if not args.no_hyperfine:
                    found = hyperfine(a, b, WORKDIR / f"{stamp}-{condition}-{change}-hyperfine.json")
                    rows.append({"condition": condition, "change": change, "tool": "hyperfine -N", "truth": truths[change],
                                 **found})
                    print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            finally:
                stop_load(load)
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{stamp}-busy-runner.json"
    path.write_text(json.dumps({"date": stamp, "machine": os.uname().nodename, "cpus": os.cpu_count(),
                                "level": os.environ.get("TIMEKIT_OUTSIDE_LEVEL", "default"), "rows": rows}, indent=1))
    print("| condition | change | truth (95 % CI) | tool | answer | CI | holds truth | exit | time |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        t = r["truth"]
        answer = (f"{r.get('verdict', '')} {100 * (r['ratio'] - 1):+.2f} %" if "ratio" in r and "verdict" in r
                  else f"{100 * (r['ratio'] - 1):+.2f} % ± {100 * r['sd']:.1f}" if "sd" in r else "error")
        ci = f"{100 * (r['ci'][0] - 1):+.2f} … {100 * (r['ci'][1] - 1):+.2f} %" if "ci" in r else ""
        print(f"| {r['condition']} | +{r['change']} % | {100 * (t[0] - 1):+.2f} % ({100 * (t[1] - 1):+.2f} … "
              f"{100 * (t[2] - 1):+.2f}) | {r['tool']} | {answer} | {ci} | {r.get('covers', '')} | {r.get('exit', '')} "
              f"| {r['seconds']:.1f} s |")
    print(f"\nresults: {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
