"""Benchmark of `timekit plan`: 100 result files of 1,000 runs in a few seconds.

`python -m analysis.cli plan DIR --effect 5% --format json` on one directory of 100 result files
(benchmarks/make_large_result.py, 1,000 runs each over its two inputs, each file given its own
date, so 100 invocations, an end time one second after its last run, and a seeded 2 % lognormal
drift of cputime and walltime per file so that the invocations differ as real ones do): loading,
the variance components and costs of 4 rows (2 inputs x cputime, walltime), Kalibera & Jones's n,
statsmodels' power and the simulation check. Wall and CPU time (user + system) and peak RSS under GNU time,
median of `--repeat` rounds (default 3). Target: CPU time under 10 s (the wall time on the shared VM
grows with the other jobs' load; loading the 100,000 runs is about 4 s of the CPU time, statsmodels'
import 1.2 s). Every value goes to benchmarks/results/DATE-plan.json.
"""

import argparse
import bz2
import datetime
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.run_benchmarks import (DEFAULT_WORKDIR, GENERATOR, GNU_TIME, RESULTS_DIR, check_call, log,  # noqa: E402
                                       machine, median)

TARGET_SECONDS = 10.0
FILES, RUNS = 100, 1000
_TIME_VALUE = re.compile(rb'(<column title="(?:cputime|walltime)" value=")([0-9.]+)(s")')
_STARTS = re.compile(rb'title="starttime" value="([^"]+)"')


def pilot_directory(workdir, files=FILES, runs=RUNS):
    directory = workdir / f"plan-{files}x{runs}"
    if len(list(directory.glob("*.xml.bz2"))) == files:
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for k in range(files):
        tmp = directory / f"tmp{k}.xml.bz2"
        check_call([sys.executable, GENERATOR, tmp, "--runs", runs, "--seed", k], workdir / "generate.log")
        text = bz2.decompress(tmp.read_bytes())
        date = datetime.datetime(2024, 1, 2, 3, 4, 5) + datetime.timedelta(minutes=k)
        text = text.replace(b'date="2024-01-02 03:04:05 UTC"', date.strftime('date="%Y-%m-%d %H:%M:%S UTC"').encode(), 1)
        last = max(datetime.datetime.fromisoformat(s.decode()) for s in _STARTS.findall(text))
        text = re.sub(rb'endtime="[^"]+"', f'endtime="{(last + datetime.timedelta(seconds=1)).isoformat()}"'.encode(), text,
                      count=1)
        factor = float(rng.lognormal(0, 0.02))
        text = _TIME_VALUE.sub(lambda m, f=factor: m.group(1) + f"{float(m.group(2)) * f:.9f}".encode() + m.group(3), text)
        (directory / f"time-apis.rerun{k}.results.bash.xml.bz2").write_bytes(bz2.compress(text))
        tmp.unlink()
    return directory


def bench_plan(workdir, repeat):
    directory = pilot_directory(workdir)
    command = [sys.executable, "-m", "analysis.cli", "plan", directory, "--effect", "5%", "--format", "json"]
    rounds = []
    for round_no in range(repeat):
        times = workdir / f"plan{round_no}.time"
        check_call([GNU_TIME, "-o", times, "-f", "%e %U %S %M", *command], workdir / f"plan{round_no}.log")
        wall, user, system, rss = (float(x) for x in times.read_text().split()[-4:])
        result = json.loads((workdir / f"plan{round_no}.log").read_text().split("\n", 1)[1])  # after the command line
        rounds.append({"seconds": wall, "cpu_seconds": user + system, "peak_rss_kib": rss, "rows": len(result["rows"]),
                       "designs": [(r["row"], r["reruns"], r["runs"]) for r in result["rows"]]})
        log(f"  plan, {FILES} files x {RUNS:,} runs: {wall:.2f} s wall, {user + system:.2f} s CPU, peak RSS {rss / 1024:.0f} MiB")
    cpu = median(r["cpu_seconds"] for r in rounds)
    # the target is on CPU time: on the shared VM the wall time grows with the other jobs' load
    return {"files": FILES, "runs_per_file": RUNS, "command": " ".join(map(str, command)), "rounds": rounds,
            "seconds": median(r["seconds"] for r in rounds), "cpu_seconds": cpu,
            "peak_rss_kib": median(r["peak_rss_kib"] for r in rounds),
            "target": f"CPU < {TARGET_SECONDS:g} s", "met": cpu < TARGET_SECONDS}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the median is reported (default 3)")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR, help="scratch directory (default .pytest-tmp/bench)")
    parser.add_argument("--json", type=Path, help="where to write every measurement (default benchmarks/results/DATE-plan.json)")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    date = datetime.date.today().isoformat()
    result = {"date": date, "machine": machine(), "plan": bench_plan(workdir, args.repeat)}
    result["loadavg_after"] = machine()["loadavg"]
    path = args.json or RESULTS_DIR / f"{date}-plan.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    p = result["plan"]
    print(f"timekit plan, {FILES} files x {RUNS:,} runs: {p['cpu_seconds']:.2f} s CPU, {p['seconds']:.2f} s wall "
          f"(target: CPU < {TARGET_SECONDS:g} s: "
          f"{'met' if p['met'] else 'MISSED'}), peak RSS {p['peak_rss_kib'] / 1024:.0f} MiB\nevery measurement: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
