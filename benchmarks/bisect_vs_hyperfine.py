"""
`timekit bisect` against `git bisect run` around hyperfine with a fixed cut-off, on one kind of
repository: a C loop of about 20 ms a run, 64 commits after GOOD, one of which adds 3 % of the
process's CPU time (drawn per try), the others only a comment.

    python -m benchmarks.bisect_vs_hyperfine --tries 5 --workdir .bench-tmp/bisect

For every try it builds a fresh repository (tests/bisect_repo), runs `timekit bisect v1 main`, then
`git bisect run` with a script that builds the commit and calls hyperfine on GOOD's program and the
commit's, calling the commit bad where hyperfine's mean is more than each --cutoff above GOOD's.
It prints a table per method (right commit or not, steps, wall time) and, from the real steps'
CIs, the noise of one step, and with it the simulated chance of a wrong commit (tests/bisect_model).
The summary is kept in WORKDIR/summary.json.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.bisect_model import noise_of, wrong_share  # noqa: E402
from tests.bisect_repo import git, make_repo  # noqa: E402

BUILD = "make -s prog"
ORACLE = """#!/bin/sh
# git bisect run: 125 skip (no build), 1 bad (slower than GOOD beyond the cut-off), 0 good
make -s prog >/dev/null 2>&1 || exit 125
hyperfine --warmup 3 --style none --export-json "$BISECT_JSON" "$GOOD_PROG" ./prog >/dev/null 2>&1 || exit 125
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
ratio = r[1]["mean"] / r[0]["mean"]
print(sys.argv[3], ratio, file=open(sys.argv[4], "a"))
sys.exit(1 if ratio > 1 + float(sys.argv[2]) else 0)' "$BISECT_JSON" "$CUTOFF" "$(git rev-parse HEAD)" "$BISECT_LOG"
"""


def hyperfine_mean(command, cwd):
    """Mean wall seconds of COMMAND by hyperfine (its defaults)."""
    out = cwd / "calibrate.json"
    subprocess.run(["hyperfine", "--warmup", "3", "--style", "none", "--export-json", str(out), command],
                   cwd=cwd, check=True, capture_output=True)
    return json.loads(out.read_text())["results"][0]["mean"]


def loop_size(workdir, target):
    """Iterations for a run of about TARGET seconds, and the iterations that add 3 % of a run:
    two builds (N and 2N) give the fixed cost and the cost per iteration."""
    probe = workdir / "probe"
    shutil.rmtree(probe, ignore_errors=True)
    times = {}
    for n in (2_000_000, 4_000_000):
        make_repo(probe / str(n), [], base=n)
        subprocess.run(BUILD, shell=True, cwd=probe / str(n), check=True)
        times[n] = hyperfine_mean("./prog", probe / str(n))
    per = (times[4_000_000] - times[2_000_000]) / 2_000_000
    fixed = max(times[2_000_000] - per * 2_000_000, 0.0)
    base = int(round((target - fixed) / per, -5))
    return base, int(round(0.03 * (fixed + per * base) / per, -3)), {"fixed_s": fixed, "per_iteration_s": per}


def timekit_try(repo, out):
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "bisect", "v1", "main", "./prog", "--build", BUILD,
                           "--repo", str(repo), "--output", str(out)], cwd=REPO, capture_output=True, text=True)
    seconds = time.monotonic() - started
    record = json.loads((out / "bisect.json").read_text())
    answer = record["extra"].get("answer", {})
    culprit = (answer.get("culprit") or {}).get("sha")
    return {"exit": done.returncode, "seconds": round(seconds, 1), "named": culprit, "kind": answer.get("kind"),
            "steps": len(record["steps"]), "last_line": done.stdout.strip().splitlines()[-1] if done.stdout else "",
            "step_records": record["steps"]}


def hyperfine_try(repo, good_sha, cutoff, workdir):
    """`git bisect run` with the oracle script, in a clone (git bisect moves its checkout)."""
    clone = workdir / f"clone-{cutoff}"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    good = workdir / "good"
    if not (good / "prog").exists():
        subprocess.run(["git", "clone", "-q", str(repo), str(good)], check=True)
        git(good, "checkout", "-q", good_sha)
        subprocess.run(BUILD, shell=True, cwd=good, check=True)
    script = workdir / "oracle.sh"
    script.write_text(ORACLE)
    script.chmod(0o755)
    log = workdir / f"oracle-{cutoff}.log"
    log.unlink(missing_ok=True)
    env = {"GOOD_PROG": str(good / "prog"), "CUTOFF": str(cutoff), "BISECT_JSON": str(workdir / "oracle.json"),
           "BISECT_LOG": str(log)}
    started = time.monotonic()
    git(clone, "bisect", "start", "main", good_sha)
    done = subprocess.run(["git", "-C", str(clone), "bisect", "run", str(script)], capture_output=True, text=True,
                          env={**os.environ, **env})
    seconds = time.monotonic() - started
    steps = done.stdout.count("running ")
    named = None
    for line in done.stdout.splitlines():
        if line.endswith("is the first bad commit"):
            named = line.split()[0]
    git(clone, "bisect", "reset")
    ratios = [line.split() for line in log.read_text().splitlines()] if log.exists() else []
    return {"seconds": round(seconds, 1), "named": named, "steps": steps,
            "ratios": {sha: float(ratio) for sha, ratio in ratios}}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--commits", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=0.020, help="GOOD's run time to aim at")
    parser.add_argument("--cutoff", type=float, action="append", help="hyperfine's fixed cut-off (repeatable; default 0.03)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--simulations", type=int, default=2000)
    parser.add_argument("--workdir", type=Path, default=REPO / ".bench-tmp" / "bisect")
    args = parser.parse_args(argv)
    cutoffs = args.cutoff or [0.03]
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    base, rise, costs = loop_size(workdir, args.seconds)
    print(f"loop of {base} iterations (fixed {costs['fixed_s'] * 1e3:.2f} ms, {costs['per_iteration_s'] * 1e9:.2f} ns "
          f"an iteration); the culprit adds {rise} iterations (3 % of a run)", flush=True)
    rng = np.random.default_rng(args.seed)
    tries = []
    for k in range(1, args.tries + 1):
        culprit = int(rng.integers(2, args.commits + 1))
        work = [0] * args.commits
        work[culprit - 1] = rise
        tdir = workdir / f"try{k}"
        shutil.rmtree(tdir, ignore_errors=True)
        shas = make_repo(tdir / "repo", work, base=base)
        git(tdir / "repo", "tag", "v1", shas[0])
        row = {"try": k, "culprit_index": culprit, "culprit": shas[culprit], "timekit": timekit_try(tdir / "repo", tdir / "timekit")}
        row["timekit"]["right"] = row["timekit"]["named"] == shas[culprit]
        print(f"try {k}: culprit commit {culprit}; timekit: {row['timekit']['last_line']} "
              f"({'right' if row['timekit']['right'] else 'WRONG'}, {row['timekit']['steps']} steps, "
              f"{row['timekit']['seconds']} s)", flush=True)
        for cutoff in cutoffs:
            h = hyperfine_try(tdir / "repo", shas[0], cutoff, tdir)
            h["right"] = h["named"] == shas[culprit]
            h["wrong_steps"] = sum((ratio > 1 + cutoff) != (shas.index(sha) >= culprit) for sha, ratio in h["ratios"].items())
            row[f"hyperfine-{cutoff}"] = h
            print(f"  git bisect run + hyperfine at {cutoff:.1%}: {h['named'] and h['named'][:12]} "
                  f"({'right' if h['right'] else 'WRONG'}, {h['steps']} steps of which {h['wrong_steps']} wrong, "
                  f"{h['seconds']} s)", flush=True)
        tries.append(row)
    records = [{**s, "invocations": s["detail"]["invocations"]} for row in tries for s in row["timekit"]["step_records"]
               if s.get("detail", {}).get("invocations")]
    sigma, looks = noise_of(records)
    simulated = wrong_share(args.commits, 0.03, sigma, looks, args.simulations) if math.isfinite(sigma) else math.nan
    summary = {"base": base, "rise_iterations": rise, "costs": costs, "tries": tries,
               "step_noise_sd": sigma, "looks": looks, "simulated_wrong": simulated, "simulations": args.simulations}
    (workdir / "summary.json").write_text(json.dumps(summary, indent=1))
    print("\n| method | right | median steps | median wall time |\n|---|---|---|---|")
    for name in ["timekit"] + [f"hyperfine-{c}" for c in cutoffs]:
        got = [row[name] for row in tries]
        print(f"| {name} | {sum(g['right'] for g in got)} of {len(got)} | {statistics.median(g['steps'] for g in got):g} "
              f"| {statistics.median(g['seconds'] for g in got):.0f} s |")
    print(f"\none invocation's log ratio: SD {sigma:.4f} (median over {len(records)} steps); simulated at that noise "
          f"with {looks} looks a step: wrong commit or range in {simulated:.1%} of {args.simulations} searches")


if __name__ == "__main__":
    main()
