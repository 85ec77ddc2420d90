"""
A sweep with another job beside it for part of the time: the recording behind
tests/data/recorded-disturbed and the check that the kit catches outside work.

    python -m benchmarks.outside_load --output results/disturbed --during 2 -- time-apis --loads 0,1 --reruns 3

runs `timekit run EXPERIMENT ARGS --output DIR` and, while any invocation of rerun `--during`
runs, a shell busy loop in a session of its own (as another user's job would be). Prints each
step's disturbance record at the end.
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def steps(directory):
    try:
        return json.loads((Path(directory) / "sweep.json").read_text())["steps"]
    except (OSError, ValueError, KeyError):
        return []


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output", required=True, help="the sweep directory")
    parser.add_argument("--during", type=int, default=2, help="the rerun during which the busy loop runs")
    parser.add_argument("run", nargs=argparse.REMAINDER, help="-- EXPERIMENT and timekit run's arguments")
    args = parser.parse_args(argv)
    run = [a for a in args.run if a != "--"]
    sweep = subprocess.Popen([sys.executable, "-m", "analysis.cli", "run", *run, "--output", args.output], cwd=REPO)
    loop = None
    try:
        while sweep.poll() is None:
            busy = any(s["rerun"] == args.during and s["status"] == "running" for s in steps(args.output))
            if busy and loop is None:
                loop = subprocess.Popen(["sh", "-c", "while :; do :; done"], start_new_session=True)
            elif not busy and loop is not None:
                loop.kill()
                loop.wait()
                loop = None
            time.sleep(0.05)
    finally:
        if loop is not None:
            loop.kill()
        sweep.wait()
    for step in steps(args.output):
        record = step.get("disturbance") or {}
        cpus = (record.get("outside", 0) + record.get("steal", 0)) / record["seconds"] if record.get("seconds") else 0
        print(f"{step['name']}: {cpus:.2f} CPUs of outside work, {record.get('busiest') or 'no one process'}")
    return sweep.returncode


if __name__ == "__main__":
    sys.exit(main())
