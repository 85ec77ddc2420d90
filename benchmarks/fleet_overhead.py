"""What running through the fleet adds to one node's sweep: submitting, waiting and reporting.

B = one node's sweep as a one-node fleet on a throw-away SLURM cluster on this host (tests/slurm.py):
    `fleet submit EXPERIMENT --preset P --nodes n1 --output FLEET`, then `fleet report FLEET --wait`
    (waits for the node, reuses its report, writes the fleet sections), each a fresh process like a
    user's commands. Inside, the node's job runs `timekit run EXPERIMENT --preset P --output
    FLEET/n1/` (the sweep, its table-generator pages and its report): from the start marker the job
    writes just before it (date -Ins) to that run's report.json is the per-node sweep time S.
    The overhead is B - S, measured in the same round, so the machine's drift between rounds (large
    on a shared VM) does not enter it; target (B - S) / S <= 0.05.
A = the same `timekit run` on this host without SLURM, for comparison (A and B alternate, the order
    swapped every round: AB, BA, ...; their difference carries the drift between the two).

On a cluster the nodes run in parallel, so one node's overhead is the fleet's. Medians over
`--repeat` rounds go to benchmarks/results/DATE-fleet-EXPERIMENT.json; scratch to
.pytest-tmp/bench-fleet/. Needs root (the simulated cluster's munged and slurmd).

    python benchmarks/fleet_overhead.py                          # core-heterogeneity quick, 3 rounds
    python benchmarks/fleet_overhead.py --experiment os-microbench --repeat 3
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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from run_benchmarks import BenchmarkError, check_call, loadavg, log, machine, median, orders  # noqa: E402

from tests import slurm  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO / "benchmarks" / "results"
WORKDIR = REPO / ".pytest-tmp" / "bench-fleet"
TARGET = 0.05


def direct(experiment, preset, round_no):
    outdir = WORKDIR / f"direct-{round_no}"
    shutil.rmtree(outdir, ignore_errors=True)
    command = [sys.executable, "-m", "analysis.cli", "run", experiment, "--preset", preset, "--output", outdir]
    seconds = check_call(command, WORKDIR / f"direct-{round_no}.log")
    return {"seconds": seconds, "loadavg_after": loadavg(), "command": " ".join(map(str, command))}


def wait_until_idle(node, env, timeout=60):
    """The previous round's job may still be ending on the node (SLURM's completing state): a
    user's fleet is submitted to free nodes, so that wait is not the fleet's overhead."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = subprocess.run(["sinfo", "-h", "-n", node, "-o", "%t"], env=env, capture_output=True, text=True).stdout
        if state.strip() == "idle":
            return
        time.sleep(0.2)
    raise BenchmarkError(f"node {node} not idle after {timeout} s")


def through_fleet(experiment, preset, round_no, env):
    fleet = WORKDIR / f"fleet-{round_no}"
    shutil.rmtree(fleet, ignore_errors=True)
    wait_until_idle("n1", env)
    cli = [sys.executable, "-m", "analysis.cli", "fleet"]
    parts, ended = {}, {}
    for part, command in (("submit", cli + ["submit", experiment, "--preset", preset, "--nodes", "n1", "--output", fleet]),
                          ("report-wait", cli + ["report", fleet, "--wait"])):
        parts[part] = check_call(command, WORKDIR / f"fleet-{round_no}.{part}.log", env=env)
        ended[part] = time.time()
    sweep = json.loads((fleet / "n1" / "sweep.json").read_text())
    if any(s["status"] != "done" for s in sweep["steps"]):
        raise BenchmarkError(f"{fleet}: the node's sweep did not finish")
    started = datetime.datetime.fromisoformat(next((fleet / "slurm").glob("n1.*.started")).read_text().split()[-1])
    node_report = (fleet / "n1" / "report" / "report.json").stat().st_mtime
    sweep_seconds = node_report - started.timestamp()
    total = sum(parts.values())
    # where the overhead lies: the submit command, SLURM's start of the job (its scheduler's cadence:
    # batch_sched_delay, 3 s by default), and after the node's report: the job's end and the fleet report
    parts["queued"] = started.timestamp() - ended["submit"]
    parts["after-node-report"] = ended["report-wait"] - node_report
    return {"seconds": total, "parts": parts, "sweep_seconds": sweep_seconds, "overhead_seconds": total - sweep_seconds,
            "overhead": (total - sweep_seconds) / sweep_seconds, "loadavg_after": loadavg()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default="core-heterogeneity")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    reason = slurm.missing_reason()
    if reason:
        log(f"cannot run: {reason}")
        return 2
    WORKDIR.mkdir(parents=True, exist_ok=True)
    rounds = []
    with slurm.SimulatedCluster(WORKDIR / "cluster", nodes=1) as cluster:
        env = {**os.environ, **cluster.env}
        for round_no, order in enumerate(orders(args.repeat), 1):
            measured = {}
            for which in order:
                measured[which] = (direct(args.experiment, args.preset, round_no) if which == "A"
                                   else through_fleet(args.experiment, args.preset, round_no, env))
            a, b = measured["A"], measured["B"]
            rounds.append({"round": round_no, "order": "".join(order), "A": a, "B": b,
                           "b_minus_a_seconds": b["seconds"] - a["seconds"]})
            log(f"  round {round_no} ({''.join(order)}): A {a['seconds']:.1f} s; B {b['seconds']:.1f} s = submit "
                f"{b['parts']['submit']:.1f} + report --wait {b['parts']['report-wait']:.1f}, of which the node's sweep "
                f"{b['sweep_seconds']:.1f}: overhead {b['overhead_seconds']:.1f} s = {b['overhead']:.1%} (queued in SLURM "
                f"{b['parts']['queued']:.1f} s, after the node's report {b['parts']['after-node-report']:.1f} s)")
    summary = {"a_seconds": median(r["A"]["seconds"] for r in rounds), "b_seconds": median(r["B"]["seconds"] for r in rounds),
               "sweep_seconds": median(r["B"]["sweep_seconds"] for r in rounds),
               "overhead_seconds": median(r["B"]["overhead_seconds"] for r in rounds),
               "overhead": median(r["B"]["overhead"] for r in rounds),
               "submit_seconds": median(r["B"]["parts"]["submit"] for r in rounds),
               "queued_seconds": median(r["B"]["parts"]["queued"] for r in rounds),
               "after_node_report_seconds": median(r["B"]["parts"]["after-node-report"] for r in rounds),
               "b_minus_a_seconds": median(r["b_minus_a_seconds"] for r in rounds),
               "target": f"overhead <= {TARGET:.0%}"}
    summary["met"] = summary["overhead"] <= TARGET
    result = {"benchmark": "fleet overhead", "experiment": args.experiment, "preset": args.preset,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": machine(), "rounds": rounds, "summary": summary}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{datetime.date.today().isoformat()}-fleet-{args.experiment}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{args.experiment} ({args.preset}): node sweep {summary['sweep_seconds']:.1f} s, through the fleet "
          f"{summary['b_seconds']:.1f} s, overhead {summary['overhead_seconds']:.1f} s = {summary['overhead']:.1%} "
          f"(target <= {TARGET:.0%}: {'met' if summary['met'] else 'NOT met'}); direct run {summary['a_seconds']:.1f} s; "
          f"{path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchmarkError as e:
        log(f"error: {e}")
        sys.exit(2)
