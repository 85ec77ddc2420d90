"""Write a competition-style BenchExec result file: one run per verification task, SV-COMP shape.

The file looks like what BenchExec 3.35 writes for a verifier over sv-benchmarks: benchmark
`svcomp-tool`, run definition `SV-COMP25_unreach-call`, one <run> per task with `name` (a task
definition under `../sv-benchmarks/c/<directory>/`), `files`, `properties="unreach-call"` and
`expectedVerdict`; columns status, cputime, walltime and memory (with units) plus BenchExec's hidden
category, host, start time, return value or termination reason. Tasks are spread over 40
directories (the task sets). Per task, a "difficulty" drawn from a lognormal distribution fixes
the CPU time on every side made with the same --seed; `--slowdown 0.05` makes every task's time 5 %
longer (with fresh noise per side, --noise, default 3 %), so a pair of files has a known
per-task change. About 60 % of tasks are correct, 1 % wrong, the rest timeouts (at 900 s), out of
memory, errors or unknowns; `--flip` changes that share of outcomes on this side (e.g. correct to
timeout or wrong), drawn with --side-seed.

    python benchmarks/make_competition_result.py BASE.xml.bz2 --tasks 100000
    python benchmarks/make_competition_result.py NEW.xml.bz2 --tasks 100000 --slowdown 0.05 --side-seed 1
"""

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_large_result import open_text  # noqa: E402  (the same compression by suffix)

TIMELIMIT = 900.0
MEMLIMIT = 15_000_000_000
DIRECTORIES = 40

HEADER = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE result
  PUBLIC '+//IDN sosy-lab.org//DTD BenchExec result 3.12//EN'
  'https://www.sosy-lab.org/benchexec/result-3.12.dtd'>
<result benchmarkname="svcomp-tool" date="{date} UTC" starttime="{iso}+00:00" \
tool="Verifier" version="{version}" toolmodule="benchexec.tools.cpachecker" generator="BenchExec 3.35" \
memlimit="{memlimit}B" timelimit="{timelimit:g}s" cpuCores="8" options="-svcomp25 -heap 10000M" \
name="SV-COMP25_unreach-call" endtime="{iso}+00:00">
  <columns>
    <column title="status"/>
    <column title="cputime"/>
    <column title="walltime"/>
    <column title="memory"/>
  </columns>
  <systeminfo hostname="apollon001">
    <os name="Linux 6.8.0-45-generic"/>
    <cpu model="Intel Xeon E3-1230 v5 @ 3.40 GHz" cores="8" frequency="3800000000Hz" turboboostActive="false"/>
    <ram size="33553035264B"/>
    <environment/>
  </systeminfo>
"""


def task(index, directories=DIRECTORIES):
    """(task name, directory) of task number index: spread evenly over the directories."""
    directory = f"set{index % directories:02d}"
    return f"../sv-benchmarks/c/{directory}/task{index:07d}.yml", directory


def base_outcome(rng):
    """(status, category, expected true?) of a task on the base side."""
    expected = rng.random() < 0.6
    u = rng.random()
    if u < 0.60:
        return ("true" if expected else "false(unreach-call)"), "correct", expected
    if u < 0.61:
        return ("false(unreach-call)" if expected else "true"), "wrong", expected
    if u < 0.85:
        return "TIMEOUT", "error", expected
    if u < 0.90:
        return "OUT OF MEMORY", "error", expected
    if u < 0.95:
        return "ERROR (1)", "error", expected
    return "unknown", "unknown", expected


def flipped(rng, status, category, expected):
    """Another outcome for a task whose outcome changes on this side."""
    if category == "correct":
        if rng.random() < 0.5:
            return "TIMEOUT", "error"
        return ("false(unreach-call)" if expected else "true"), "wrong"
    return ("true" if expected else "false(unreach-call)"), "correct"


def run_xml(index, difficulty, outcome, factor, rng, noise, directories=DIRECTORIES):
    """One <run> element; difficulty: the task's CPU time on the base side without noise."""
    name, _ = task(index, directories)
    status, category, expected = outcome
    if status == "TIMEOUT":
        cputime = TIMELIMIT + rng.uniform(0.5, 3.0)
    else:
        cputime = min(difficulty * factor * math.exp(rng.gauss(0, noise)), TIMELIMIT - 1)
    walltime = cputime * rng.uniform(0.55, 1.02) + 0.05
    memory = MEMLIMIT if status == "OUT OF MEMORY" else int(difficulty ** 0.3 * 2e8) // 4096 * 4096
    hidden = [f'    <column hidden="true" title="category" value="{category}"/>\n',
              f'    <column hidden="true" title="host" value="apollon{index % 168 + 1:03d}"/>\n']
    if status == "TIMEOUT":
        hidden.append('    <column hidden="true" title="terminationreason" value="cputime"/>\n')
    elif status == "OUT OF MEMORY":
        hidden.append('    <column hidden="true" title="terminationreason" value="memory"/>\n')
    else:
        hidden.append(f'    <column hidden="true" title="returnvalue" value="{1 if status.startswith("ERROR") else 0}"/>\n')
    return (f'  <run name="{name}" files="[{name[:-4]}.c]" properties="unreach-call" '
            f'expectedVerdict="{"true" if expected else "false"}">\n'
            f'    <column title="cputime" value="{cputime:.9f}s"/>\n'
            f'    <column title="memory" value="{memory}B"/>\n'
            f'    <column title="status" value="{status}"/>\n'
            f'    <column title="walltime" value="{walltime:.9f}s"/>\n'
            + "".join(hidden) + "  </run>\n")



def write(out, tasks, seed, side_seed, slowdown, flip, date, noise=0.03, directories=DIRECTORIES):
    """The whole file. Task difficulties and outcomes come from `seed` (the same on both sides of a
    pair), the per-side noise and flipped outcomes from `side_seed`."""
    tasks_rng, side_rng = random.Random(seed), random.Random(f"{seed}/{side_seed}")
    with open_text(out) as f:
        f.write(HEADER.format(date=date, iso=date.replace(" ", "T"), memlimit=MEMLIMIT, timelimit=TIMELIMIT,
                              version=f"4.0-side{side_seed}"))
        for index in range(tasks):
            difficulty = min(math.exp(tasks_rng.gauss(0.5, 1.8)), TIMELIMIT / 2)
            status, category, expected = base_outcome(tasks_rng)
            if flip and side_rng.random() < flip:
                status, category = flipped(side_rng, status, category, expected)
            f.write(run_xml(index, difficulty, (status, category, expected), 1 + slowdown, side_rng, noise, directories))
        f.write("</result>\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="file to write (.xml, .xml.bz2 or .xml.gz)")
    parser.add_argument("--tasks", type=int, default=100_000, help="number of tasks (default 100000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tasks (difficulty, outcome); equal on both sides")
    parser.add_argument("--side-seed", type=int, default=0, help="seed of this side's noise and flips")
    parser.add_argument("--slowdown", type=float, default=0.0, help="relative change of every task's time, e.g. 0.05")
    parser.add_argument("--noise", type=float, default=0.03, help="per-task noise (sd of the log time, default 0.03)")
    parser.add_argument("--flip", type=float, default=0.0, help="share of tasks whose outcome changes on this side")
    parser.add_argument("--date", default="2025-01-10 12:00:00", help="BenchExec's date attribute (UTC)")
    parser.add_argument("--directories", type=int, default=DIRECTORIES, help=f"task sets (default {DIRECTORIES})")
    args = parser.parse_args(argv)
    write(args.out, args.tasks, args.seed, args.side_seed, args.slowdown, args.flip, args.date, args.noise,
          args.directories)


if __name__ == "__main__":
    main()
