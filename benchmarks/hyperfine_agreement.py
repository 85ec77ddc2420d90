"""Does `timekit bench` measure a command as hyperfine does, and what does each cost per run?

The command: tests/data/commands/loop.c built so that one run takes about --seconds (0.5 s) of CPU
here (calibrated at the start). Each round runs, N runs each:
A = `timekit bench ./loop --reruns 1 --runs N --export-json A.json` (one BenchExec invocation, container)
B = `hyperfine --runs N --export-json B.json ./loop` (hyperfine's defaults: sh -c, its shell spawn
    time subtracted)
C = N calls of BenchExec's `runexec ./loop` (its container and cgroups without the kit), to tell
    the kit's share of a difference from BenchExec's run environment's
in an order rotated every round (ABC, BCA, CAB, ...): short rounds, so that the drift of a shared
machine between the sides stays small. Compared per round: the means of the wall time per run (A:
BenchExec's walltime; B: hyperfine's mean; C: runexec's walltime) and of the CPU time (A: the cgroup
cputime, and cmdrun's user + system of the command; B: user + system; C: the cgroup cputime).
Target: A and B agree within 2 %, judged on the per-round ratios A / B: their geometric mean and a
95 % t interval over rounds ('agree' when the interval lies within 1 +- 2 %, 'differ' when wholly
outside, else 'not resolved'), for BenchExec's walltime and for the command's own wall time in the
kit (walltime less what BenchExec adds beyond cmdrun's timing). The same ratios with each side
first divided by the loop's own timing of the executions it measured (the loop is built with
-DSELF_REPORT: its process CPU time and main's wall time, printed per execution) compare what the
tools add to or leave out of an execution, which the machine's drift between the turns does not
move: the figure that answers "do the kit's numbers agree with hyperfine's" on a shared VM, where
the same loop's own CPU time moves by a third between two minutes. The overhead per run is what a user waits for beyond the command:
for B its whole command's wall time / runs - the command's mean; for A BenchExec's gap between one
run's end and the next one's start (from the result files) and, once per invocation, the rest of
the command's wall time (BenchExec's start and end, the kit's own); beside them, what BenchExec's
walltime holds beyond cmdrun's timing of the command.

    python benchmarks/hyperfine_agreement.py                   # 8 rounds of 10 runs each
    python benchmarks/hyperfine_agreement.py --repeat 12 --runs 10 --seconds 0.5

Results: benchmarks/results/DATE-hyperfine.json; scratch in .pytest-tmp/bench-hyperfine/.
"""

import argparse
import datetime
import json
import math
import resource
import shutil
import statistics
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_benchmarks import BenchmarkError, loadavg, log, machine, median  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
LOOP = REPO / "tests" / "data" / "commands" / "loop.c"
RESULTS_DIR = REPO / "benchmarks" / "results"
WORKDIR = REPO / ".pytest-tmp" / "bench-hyperfine"
TARGET = 0.02


def run(command, log_path, env=None):
    """Run in WORKDIR (where ./loop is); wall time in s."""
    with open(log_path, "w") as out:
        out.write(f"# {' '.join(map(str, command))}\n")
        out.flush()
        begin = time.monotonic()
        done = subprocess.run(list(map(str, command)), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                              cwd=WORKDIR, env=env)
        seconds = time.monotonic() - begin
    if done.returncode != 0:
        raise BenchmarkError(f"{command[0]} exited with {done.returncode} (log: {log_path})")
    return seconds


def cpu_of_child(command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, cwd=WORKDIR)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build(seconds):
    """./loop taking about `seconds` of CPU: calibrated from a build of 200 million additions."""
    def compile_with(millions):
        subprocess.run(["cc", "-O2", "-DSELF_REPORT", f"-DMILLIONS={millions}", "-o", str(WORKDIR / "loop"), str(LOOP)],
                       check=True)

    compile_with(200)
    per_million = min(cpu_of_child(["./loop"]) for _ in range(3)) / 200
    millions = max(1, round(seconds / per_million))
    compile_with(millions)
    return millions


SELF_LINE = re.compile(r"^loop-self cpu=([0-9.]+) wall=([0-9.]+)$", re.MULTILINE)


def self_means(texts, runs):
    """The loop's own CPU and wall time (its -DSELF_REPORT line), averaged over the executions
    whose output is in `texts`: the reference both tools are held against."""
    found = [(float(cpu), float(wall)) for text in texts for cpu, wall in SELF_LINE.findall(text)]
    if len(found) != runs:
        raise BenchmarkError(f"expected {runs} 'loop-self' lines, found {len(found)}")
    return {"self_cpu": statistics.fmean(c for c, _ in found), "self_wall": statistics.fmean(w for _, w in found)}


def kit_outputs(directory):
    """The runs' output as BenchExec kept it (the logfiles zip of each invocation)."""
    for archive in sorted(Path(directory).glob("*.logfiles.zip")):
        with zipfile.ZipFile(archive) as z:
            yield from (z.read(name).decode(errors="replace") for name in z.namelist() if name.endswith(".log"))


def kit(round_no, runs):
    out = WORKDIR / f"kit-{round_no}.json"
    seconds = run([sys.executable, "-m", "analysis.cli", "bench", "./loop", "--reruns", 1, "--runs", runs,
                   "--output", WORKDIR / f"kit-{round_no}", "--export-json", out], WORKDIR / f"kit-{round_no}.log")
    data = json.loads(out.read_text())
    [result] = data["results"]
    gap = data["benchexec"]["per_run"]
    in_walltime = data["benchexec"]["in_walltime"]
    return {"seconds": seconds, "runs": runs, "mean": result["mean"], "cputime": result["cputime"],
            "command_mean": result["mean"] - in_walltime,
            "user_system": result["user"] + result["system"], "stddev": result["stddev"],
            "overhead_per_run": gap, "per_invocation": seconds - runs * (result["mean"] + gap),
            "benchexec_in_walltime": in_walltime, "loadavg_after": loadavg(),
            **self_means(kit_outputs(WORKDIR / f"kit-{round_no}"), runs)}


def hyperfine(round_no, runs):
    out = WORKDIR / f"hyperfine-{round_no}.json"
    self_log = WORKDIR / f"hyperfine-{round_no}.self"
    seconds = run(["hyperfine", "--runs", runs, "--export-json", out, "--style", "basic", "./loop"],
                  WORKDIR / f"hyperfine-{round_no}.log", env={**os.environ, "LOOP_SELF_LOG": str(self_log)})
    [result] = json.loads(out.read_text())["results"]
    return {"seconds": seconds, "runs": runs, "mean": result["mean"], "cputime": result["user"] + result["system"],
            "stddev": result["stddev"], "overhead_per_run": seconds / runs - result["mean"], "loadavg_after": loadavg(),
            **self_means([self_log.read_text()], runs)}


def plain_runexec(round_no, runs):
    """C: BenchExec's runexec alone, one call per run (its container and cgroups, no kit): whether a
    difference between A and B comes from the kit or from BenchExec's run environment."""
    walls, cpus, outputs = [], [], []
    for k in range(runs):
        log_path, output = WORKDIR / f"runexec-{round_no}-{k}.log", WORKDIR / f"runexec-{round_no}-{k}.out"
        run([str(Path(sys.executable).parent / "runexec"), "--quiet", "--output", output, "--", "./loop"], log_path)
        values = dict(line.split("=", 1) for line in log_path.read_text().splitlines() if "=" in line and not line.startswith("#"))
        walls.append(float(values["walltime"].rstrip("s")))
        cpus.append(float(values["cputime"].rstrip("s")))
        outputs.append(output.read_text())
    return {"runs": runs, "mean": sum(walls) / runs, "cputime": sum(cpus) / runs, "loadavg_after": loadavg(),
            **self_means(outputs, runs)}


# each tool's figure over the loop's own timing of the same executions, kit / hyperfine
SELF_REFERENCED = ("self_wall_ratio", "self_command_wall_ratio", "self_cpu_ratio", "self_runexec_cpu_ratio")


def self_referenced(measured):
    """The ratios kit / hyperfine with each side divided by the loop's own timing of the very
    executions it measured. On a shared VM the loop's CPU time moves by a third between two
    minutes (other tenants, frequency), so the plain ratios of two turns measure the machine as
    much as the tools; what each tool adds to or leaves out of the execution it times does not
    move with the machine, and these ratios compare exactly that."""
    a, b, c = measured["A"], measured["B"], measured["C"]
    hyperfine_wall, hyperfine_cpu = b["mean"] / b["self_wall"], b["cputime"] / b["self_cpu"]
    return {"self_wall_ratio": a["mean"] / a["self_wall"] / hyperfine_wall,
            "self_command_wall_ratio": a["command_mean"] / a["self_wall"] / hyperfine_wall,
            "self_cpu_ratio": a["cputime"] / a["self_cpu"] / hyperfine_cpu,
            "self_runexec_cpu_ratio": c["cputime"] / c["self_cpu"] / hyperfine_cpu}


def agreement(ratios, confidence=0.95):
    """Per-round ratios kit / hyperfine summarised on the log scale: the geometric mean and a t
    interval over rounds (each round is one pair measured minutes apart, so the rounds are the
    independent units); 'agree' when the whole interval lies within 1 +- TARGET, 'differ' when it
    lies wholly outside, else 'not resolved' (more rounds would tell)."""
    logs = [math.log(r) for r in ratios]
    n = len(logs)
    centre = statistics.fmean(logs)
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * statistics.stdev(logs) / math.sqrt(n) if n > 1 else math.inf
    low, high = math.exp(centre - half), math.exp(centre + half)
    inside = 1 / (1 + TARGET) <= low and high <= 1 + TARGET
    outside = high < 1 / (1 + TARGET) or low > 1 + TARGET
    return {"geometric_mean": math.exp(centre), "ci": [low, high], "rounds": n, "confidence": confidence,
            "verdict": "agree" if inside else "differ" if outside else "not resolved"}


def _judged(a):
    return f"{a['geometric_mean']:.4f} (95 % CI {a['ci'][0]:.4f} … {a['ci'][1]:.4f}, t over {a['rounds']} rounds)"


def _verdict(a):
    return f"within {TARGET:.0%}: {a['verdict']}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=8, help="rounds (default 8)")
    parser.add_argument("--runs", type=int, default=10, help="runs of each side per round (default 10)")
    parser.add_argument("--seconds", type=float, default=0.5, help="CPU time of one run of the loop (default 0.5)")
    args = parser.parse_args(argv)
    if not shutil.which("hyperfine"):
        sys.exit("hyperfine is not installed (Debian: apt-get install hyperfine)")
    shutil.rmtree(WORKDIR, ignore_errors=True)
    WORKDIR.mkdir(parents=True)
    millions = build(args.seconds)
    subprocess.run(["make", "-s", "-C", str(REPO / "programs")], check=True)
    record = {"machine": machine(), "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "loop_millions": millions, "runs": args.runs, "loadavg_before": loadavg(),
              "hyperfine": subprocess.run(["hyperfine", "--version"], capture_output=True, text=True).stdout.strip(),
              "rounds": []}
    for round_no in range(1, args.repeat + 1):
        measured, order = {}, ["A", "B", "C"]
        order = order[(round_no - 1) % 3:] + order[:(round_no - 1) % 3]   # ABC, BCA, CAB, ...
        for side in order:
            log(f"round {round_no}: {dict(A='timekit bench', B='hyperfine', C='runexec')[side]}")
            measured[side] = {"A": kit, "B": hyperfine, "C": plain_runexec}[side](round_no, args.runs)
        measured["wall_ratio"] = measured["A"]["mean"] / measured["B"]["mean"]
        measured["command_wall_ratio"] = measured["A"]["command_mean"] / measured["B"]["mean"]
        measured["cpu_ratio"] = measured["A"]["cputime"] / measured["B"]["cputime"]
        measured["user_system_ratio"] = measured["A"]["user_system"] / measured["B"]["cputime"]
        measured["runexec_wall_ratio"] = measured["C"]["mean"] / measured["B"]["mean"]
        measured["runexec_cpu_ratio"] = measured["C"]["cputime"] / measured["B"]["cputime"]
        measured.update(self_referenced(measured))
        record["rounds"].append(measured)
        log(f"  wall: kit {measured['A']['mean']:.4f} s, hyperfine {measured['B']['mean']:.4f} s, ratio {measured['wall_ratio']:.4f}; "
            f"cpu ratio {measured['cpu_ratio']:.4f}")
    rounds = record["rounds"]
    ratios = ("wall_ratio", "command_wall_ratio", "cpu_ratio", "user_system_ratio", "runexec_wall_ratio",
              "runexec_cpu_ratio", *SELF_REFERENCED)
    record["median"] = {key: median([r[key] for r in rounds]) for key in ratios}
    record["agreement"] = {key: agreement([r[key] for r in rounds]) for key in ratios}
    for side in ("A", "B", "C"):
        record["median"][side] = {key: median([r[side][key] for r in rounds if r[side].get(key) is not None])
                                  for key in rounds[0][side]}
    RESULTS_DIR.mkdir(exist_ok=True)
    out = RESULTS_DIR / f"{datetime.date.today().isoformat()}-hyperfine.json"
    for k in range(2, 100):   # every run kept: -2, -3, ... for later runs of the day
        if not out.exists():
            break
        out = RESULTS_DIR / f"{datetime.date.today().isoformat()}-hyperfine-{k}.json"
    out.write_text(json.dumps(record, indent=2))
    m = record["median"]
    walls = ", ".join(f"{r['wall_ratio']:.4f}" for r in rounds)
    cpus = ", ".join(f"{r['cpu_ratio']:.4f}" for r in rounds)
    print(f"loop of {millions} million additions; medians of {len(rounds)} rounds (load average after: "
          f"{', '.join(str(r[s]['loadavg_after']) for r in rounds for s in ('A', 'B'))})")
    print(f"| | timekit bench ({args.runs} runs a round) | hyperfine ({args.runs} runs a round) "
          "| kit / hyperfine: geometric mean of the rounds' ratios | target |")
    print("|---|---|---|---|---|")
    a = record["agreement"]
    print(f"| mean wall time per run (BenchExec's walltime) | {m['A']['mean']:.4f} s | {m['B']['mean']:.4f} s | "
          f"{_judged(a['wall_ratio'])} (rounds {walls}) | {_verdict(a['wall_ratio'])} |")
    print(f"| mean wall time of the command (cmdrun's timing: walltime less BenchExec's part) | "
          f"{m['A']['command_mean']:.4f} s | {m['B']['mean']:.4f} s | {_judged(a['command_wall_ratio'])} | "
          f"{_verdict(a['command_wall_ratio'])} |")
    print(f"| mean CPU time per run (cgroup) | {m['A']['cputime']:.4f} s | {m['B']['cputime']:.4f} s | "
          f"{_judged(a['cpu_ratio'])} (rounds {cpus}) | {_verdict(a['cpu_ratio'])} |")
    print(f"| user + system of the command (A: cmdrun's wait4 rusage) | {m['A']['user_system']:.4f} s | "
          f"{m['B']['cputime']:.4f} s | {_judged(a['user_system_ratio'])} | {_verdict(a['user_system_ratio'])} |")
    for key, what in (("self_wall_ratio", "wall time per run (BenchExec's walltime)"),
                      ("self_command_wall_ratio", "wall time of the command (cmdrun's timing)"),
                      ("self_cpu_ratio", "CPU time per run (cgroup)"),
                      ("self_runexec_cpu_ratio", "C: plain runexec's CPU time (cgroup)")):
        print(f"| {what}, each side over the loop's own timing of its executions | "
              f"{m['A']['self_wall' if 'wall' in key else 'self_cpu']:.4f} s own | "
              f"{m['B']['self_wall' if 'wall' in key else 'self_cpu']:.4f} s own | {_judged(a[key])} | {_verdict(a[key])} |")
    print(f"| C: plain runexec per run (BenchExec without the kit), wall and CPU | {m['C']['mean']:.4f} s, "
          f"{m['C']['cputime']:.4f} s | | {m['runexec_wall_ratio']:.4f}, {m['runexec_cpu_ratio']:.4f} | (info) |")
    print(f"| overhead per run (A: BenchExec's gap between runs; B: whole command / runs - mean) | "
          f"{1000 * m['A']['overhead_per_run']:.0f} ms | {1000 * m['B']['overhead_per_run']:.1f} ms | | (info) |")
    print(f"| A: once per invocation (the rest of the command's wall time) | {m['A']['per_invocation']:.2f} s | | | (info) |")
    print(f"| A: BenchExec's walltime beyond cmdrun's timing of the command | {1000 * m['A']['benchexec_in_walltime']:.1f} ms "
          "| | | (info) |")
    print(f"all measurements: {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
