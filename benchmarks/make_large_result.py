"""Write a large, realistic BenchExec result file to measure the result loader.

The layout copies what BenchExec 3.35 writes (tests/data/calculatepi-real.results.xml.bz2 is
a real one): DOCTYPE, <columns>, <systeminfo>, runs whose <column> elements are sorted by
(hidden, title), run-set totals at the end. Each run carries BenchExec's own measurements
(with units), hidden category, host, start time and return value or termination reason, and
the kit's tool columns as plain numbers; about 2 % of runs time out, run out of memory or fail.
Values are random but drawn from a seeded generator, so the same arguments give the same bytes.

    python benchmarks/make_large_result.py OUT.xml.bz2 --runs 100000
"""

import argparse
import bz2
import datetime
import gzip
import io
import random

HEADER = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE result
  PUBLIC '+//IDN sosy-lab.org//DTD BenchExec result 3.12//EN'
  'https://www.sosy-lab.org/benchexec/result-3.12.dtd'>
<result benchmarkname="large" date="2024-01-02 03:04:05 UTC" \
starttime="2024-01-02T03:04:05.000000+00:00" tool="Busy loop" version="1.0" \
toolmodule="tool_info.busyloop" generator="BenchExec 3.35" memlimit="2000000000B" \
timelimit="60s" cpuCores="1" options="" block="synthetic" name="runexec.synthetic" \
endtime="2024-01-03T03:04:05.000000+00:00">
  <columns>
    <column title="status"/>
    <column title="cputime"/>
    <column title="walltime"/>
    <column title="timer-user"/>
    <column title="timer-sys"/>
    <column title="timer-real"/>
    <column title="self-clock"/>
    <column title="self-cputime"/>
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

# (status, category, termination reason, share of runs), as BenchExec 3.35 reports them;
# a run that did not finish prints no tool columns, a killed one has no return value
OUTCOMES = [("done", "missing", None, 0.98), ("TIMEOUT", "error", "cputime", 0.01),
            ("OUT OF MEMORY", "error", "memory", 0.005), ("ERROR (1)", "error", None, 0.005)]
TIMELIMIT = 60.0  # s, as in HEADER
MEMLIMIT = 2_000_000_000  # B, as in HEADER
START = datetime.datetime.fromisoformat("2024-01-02T03:04:05+00:00")  # as in HEADER


def run_xml(rng, index, clock):
    """One <run> element and its cputime and walltime; clock: start in seconds after START."""
    status, category, killed = rng.choices([o[:3] for o in OUTCOMES], [o[3] for o in OUTCOMES])[0]
    cputime = TIMELIMIT + rng.random() if status == "TIMEOUT" else rng.lognormvariate(0, 0.5)
    walltime = cputime + rng.expovariate(100)
    columns = {
        "cputime": f"{cputime:.9f}s",
        "memory": f"{MEMLIMIT if killed == 'memory' else rng.randrange(10**6, 5 * 10**7, 4096)}B",
        "status": status,
        "walltime": f"{walltime:.9f}s",
        "@category": category,
        "@host": f"node-{rng.randrange(1, 9):02d}",
        "@starttime": (START + datetime.timedelta(seconds=clock)).isoformat(),
    }
    if killed:
        columns.update({"@exitsignal": "9", "@terminationreason": killed})
    else:
        columns["@returnvalue"] = "1" if status.startswith("ERROR") else "0"
    if status == "done":
        user = cputime * rng.uniform(0.97, 0.99)
        columns.update({
            "self-clock": f"{walltime * rng.uniform(0.98, 0.995):.9f}",
            "self-cputime": f"{user:.9f}",
            "timer-real": f"{walltime:.3f}",
            "timer-sys": f"{cputime - user:.3f}",
            "timer-user": f"{user:.3f}",
        })
    task = f"programs/tasks/busyloop/input-{index:06d}.yml"
    lines = [f'  <run name="{task}" files="[{task}]">\n']
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
        for index in range(runs):
            text, cputime, walltime = run_xml(rng, index, clock)
            f.write(text)
            cputime_total += cputime
            walltime_total += walltime
            clock += walltime + rng.random()
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
