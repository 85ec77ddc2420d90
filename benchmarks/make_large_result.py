"""Write a large, realistic BenchExec result file of the time-APIs experiment.

The file looks like one that `timekit run time-apis` gets from BenchExec 3.35 for the run
definition `bash` (results/*/time-apis.load0-rerun1.*.results.bash.thesis-input.xml.bz2 is a
real one): benchmark `time-apis.load0-rerun1` (the runner's `--name`), tool-info module
`tool_info.timed_divisors`, options `--timer bash`, DOCTYPE, <columns>, <systeminfo>, runs whose
<column> elements are sorted by (hidden, title), run-set totals at the end. The runs are split
evenly across the experiment's two inputs (43434343 and 250000000) and named like the kit's
repetition tasks (`tasks/43434343.r00001.yml`, analysis.core.tasks: zero-padded to at least 3
digits), so every task name is distinct. Each run carries BenchExec's own measurements (with
units: cputime, walltime, memory, hidden category, per-CPU time, blkio, start time and return
value or termination reason) and the kit's tool columns as plain numbers in seconds: bash
`time`'s timer-user/-sys/-real with its 1 ms resolution, the program's self-clock and
self-cputime, and its divisor count. About 2 % of runs time out, run out of memory or fail and
then print no tool columns. Values are random but drawn from a seeded generator, so the same
arguments give the same bytes.

    python benchmarks/make_large_result.py OUT.xml.bz2 --runs 100000
"""

import argparse
import bz2
import datetime
import gzip
import io
import random

BENCHMARK = "time-apis.load0-rerun1"
HEADER = f"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE result
  PUBLIC '+//IDN sosy-lab.org//DTD BenchExec result 3.12//EN'
  'https://www.sosy-lab.org/benchexec/result-3.12.dtd'>
<result benchmarkname="{BENCHMARK}" date="2024-01-02 03:04:05 UTC" \
starttime="2024-01-02T03:04:05.000000+00:00" tool="divisors (timed)" \
version="1.0 (cc (Debian 12.2.0-14) 12.2.0; -O2 -std=c11 -Wall -Wextra -Wpedantic -Werror; uint64_t) \
[timers: bash 5.2.15, fish 3.6.0, time version unknown]" toolmodule="tool_info.timed_divisors" \
generator="BenchExec 3.35" memlimit="256000000B" timelimit="60s" options="--timer bash" name="bash" \
endtime="2024-01-03T03:04:05.000000+00:00">
  <columns>
    <column title="status"/>
    <column title="cputime"/>
    <column title="walltime"/>
    <column title="timer-real"/>
    <column title="timer-user"/>
    <column title="timer-sys"/>
    <column title="self-clock"/>
    <column title="self-cputime"/>
    <column title="divisors"/>
  </columns>
  <systeminfo hostname="node-01">
    <os name="Linux-6.1.0-18-amd64-x86_64-with-glibc2.36"/>
    <cpu model="Intel Xeon E3-1230 v5 @ 3.40 GHz" cores="8" frequency="3400000000Hz" \
turboboostActive="false"/>
    <ram size="33553035264B"/>
    <environment>
    </environment>
  </systeminfo>
"""

COLUMN = '    <column title="{}" value="{}"{}/>\n'

# input -> (mean CPU time in s, divisor count), as measured for programs/divisors.c
INPUTS = {"43434343": (0.09, 16), "250000000": (0.5, 80)}
# (status, category, termination reason, share of runs), as BenchExec 3.35 reports them;
# a run that did not finish prints no tool columns, a killed one has no return value
OUTCOMES = [("done", "missing", None, 0.98), ("TIMEOUT", "error", "cputime", 0.01),
            ("OUT OF MEMORY", "error", "memory", 0.005), ("ERROR (1)", "error", None, 0.005)]
TIMELIMIT = 60.0  # s, as in HEADER
MEMLIMIT = 256_000_000  # B, as in HEADER
START = datetime.datetime.fromisoformat("2024-01-02T03:04:05+00:00")  # as in HEADER


def task_names(runs):
    """(task name, files attribute, input) per run: the runs split evenly across INPUTS, each
    input's repetitions numbered from 1 like analysis.core.tasks.write_repetitions names them."""
    names = []
    for position, input_name in enumerate(INPUTS):
        count = runs // len(INPUTS) + (position < runs % len(INPUTS))
        width = max(3, len(str(count)))
        files = f"[../../programs/inputs/{input_name}.txt]"
        names += [(f"tasks/{input_name}.r{rep:0{width}d}.yml", files, input_name)
                  for rep in range(1, count + 1)]
    return names


def _bash_seconds(seconds):
    """What tool_info.timer writes for bash `time` (TIMEFORMAT %3R/%3U/%3S: milliseconds)."""
    return f"{float(f'{seconds:.3f}'):.9g}"


def run_xml(rng, task, files, input_name, clock):
    """One <run> element and its cputime and walltime; clock: start in seconds after START."""
    status, category, killed = rng.choices([o[:3] for o in OUTCOMES], [o[3] for o in OUTCOMES])[0]
    mean, divisors = INPUTS[input_name]
    # bimodal like the thesis's distributions: a main mode and a slower one 3 % above it
    program = mean * rng.lognormvariate(0, 0.01) * (1.03 if rng.random() < 0.2 else 1.0)
    # the cgroup also counts the shell's start-up and exit around the program
    cputime = TIMELIMIT + rng.random() if status == "TIMEOUT" else program + rng.uniform(0.004, 0.010)
    walltime = cputime + rng.uniform(0.002, 0.006) + rng.expovariate(50)
    cpu1 = cputime * rng.uniform(0, 0.05) if rng.random() < 0.5 else 0.0
    columns = {
        "cputime": f"{cputime:.9f}s",
        "memory": f"{MEMLIMIT if killed == 'memory' else rng.randrange(2_000_000, 5_000_000, 4096)}B",
        "status": status,
        "walltime": f"{walltime}s",
        "@blkio-read": "0B",
        "@blkio-write": "0B",
        "@category": category,
        "@cputime-cpu0": f"{cputime - cpu1:.9f}s",
        "@starttime": (START + datetime.timedelta(seconds=clock)).isoformat(timespec="microseconds"),
    }
    if cpu1:
        columns["@cputime-cpu1"] = f"{cpu1:.9f}s"
    if killed:
        columns.update({"@exitsignal": "9", "@terminationreason": killed})
    else:
        columns["@returnvalue"] = "1" if status.startswith("ERROR") else "0"
    if status == "done":
        sys_time = rng.choice([0.0, 0.0, 0.0, 0.001, 0.002]) * (1 + mean)
        user = program + rng.uniform(0.001, 0.003) - sys_time
        clock_value = program - rng.uniform(0, 0.0005)
        columns.update({
            "divisors": str(divisors),
            "self-clock": f"{clock_value:.6f}",
            "self-cputime": f"{clock_value - rng.uniform(0, 1e-5):.9f}",
            "timer-real": _bash_seconds(user + sys_time + rng.uniform(0, 0.003)),
            "timer-sys": _bash_seconds(sys_time),
            "timer-user": _bash_seconds(user),
        })
    lines = [f'  <run name="{task}" files="{files}">\n']
    # BenchExec sorts a run's columns by (hidden, title); '@' marks hidden ones as in BenchExec
    for title in sorted(columns, key=lambda t: (t.startswith("@"), t)):
        hidden = ' hidden="true"' if title.startswith("@") else ""
        lines.append(COLUMN.format(title.lstrip("@"), columns[title], hidden))
    lines.append("  </run>\n")
    return "".join(lines), cputime, walltime


def open_text(out):
    """Open out for writing text, compressed by its suffix like BenchExec's (.bz2, .gz).

    gzip gets a fixed mtime so that the same arguments give the same bytes.
    """
    if out.endswith(".bz2"):
        return bz2.open(out, "wt", encoding="utf-8")
    if out.endswith(".gz"):
        return io.TextIOWrapper(gzip.GzipFile(out, "wb", mtime=0), encoding="utf-8")
    return open(out, "w", encoding="utf-8")


def write(out, runs, seed):
    """Write the whole file: header, runs, and the run set's total times as BenchExec does."""
    rng = random.Random(seed)
    cputime_total = walltime_total = clock = 0.0
    with open_text(out) as f:
        f.write(HEADER)
        for task, files, input_name in task_names(runs):
            text, cputime, walltime = run_xml(rng, task, files, input_name, clock)
            f.write(text)
            cputime_total += cputime
            walltime_total += walltime
            clock += walltime + rng.uniform(0.1, 0.3)
        f.write(f'  <column title="cputime" value="{cputime_total}s"/>\n'
                f'  <column title="walltime" value="{walltime_total}s"/>\n</result>\n')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="file to write (.xml, .xml.bz2 or .xml.gz)")
    parser.add_argument("--runs", type=int, default=100_000, help="number of runs (default 100000)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    args = parser.parse_args(argv)
    write(args.out, args.runs, args.seed)


if __name__ == "__main__":
    main()
