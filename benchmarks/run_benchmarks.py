"""Benchmarks of the kit against BenchExec itself: runner overhead, analysis of 100,000 runs, and
compare of two competition-style files (benchmarks/compare_benchmark.py).

1. runner: the kit's experiment runner against plain benchexec on the same runs.
   A = `python -m analysis.cli run time-apis --reps R --loads 0 --reruns 1 --output DIR`; its
   benchexec step's wall time comes from the runner's own manifest (DIR/sweep.json,
   steps[].seconds), the whole command's wall time (with table-generator pages and the report)
   is kept as information. B = plain `benchexec DIR/time-apis.xml --tasks thesis-input
   --numOfThreads 1 -o OTHERDIR/` on the copy of the benchmark definition (and its tasks) that
   A wrote. Reported: time per run and the ratio A/B (target <= 1.05).
2. analysis: a 100,000-run result file of the time-APIs experiment (benchmarks/
   make_large_result.py), timed with `/usr/bin/time -f '%e %M'`:
   A = `python -m analysis.cli report FILE --output OUT` (load, statistics, plots, report),
   B = `table-generator FILE -o OUT2` (HTML + CSV). Reported: wall times, peak RSS, the ratio
   B/A (target >= 10) and the kit's peak RSS (target <= 300 MB).

Each benchmark alternates A and B `--repeat` times (the order swaps every round: AB, BA, AB, ...
so that drift of a shared machine hits both alike) and reports medians; on a shared or virtual
machine compare the ratios, not the absolute times. Every measurement goes to
benchmarks/results/<date>.json (<date>-<benchmark>.json with --only, "-quick" appended with
--quick), with the 1-minute load average after each command. Scratch output lives under
.pytest-tmp/bench/ in the checkout: BenchExec's container does not see /tmp.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import compare_benchmark

REPO = Path(__file__).resolve().parent.parent
GENERATOR = REPO / "benchmarks" / "make_large_result.py"
RESULTS_DIR = REPO / "benchmarks" / "results"
DEFAULT_WORKDIR = REPO / ".pytest-tmp" / "bench"
GNU_TIME = "/usr/bin/time"
# a finished run in benchexec's console output: "HH:MM:SS   task   status   cpu   wall"
RUN_LINE = re.compile(r"^\d\d:\d\d:\d\d\s+\S", re.MULTILINE)
TARGET_RUNNER = 1.05  # A/B wall time per run, at most
TARGET_SPEEDUP = 10.0  # table-generator time / kit time, at least
TARGET_RSS_MB = 300.0  # kit's peak RSS, at most (MB = 10^6 B)


class BenchmarkError(Exception):
    """A measured command failed (one line for the user)."""


def log(message):
    print(message, file=sys.stderr, flush=True)


def loadavg():
    """The 1-minute load average now: other users of a shared machine show up here."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def check_call(command, log_path, ok=(0,), **kwargs):
    """Run a command with its output in log_path; its wall time in s, or BenchmarkError when its
    exit code is not in `ok`."""
    with open(log_path, "w") as out:
        out.write(f"# {' '.join(map(str, command))}\n")
        out.flush()
        begin = time.monotonic()
        done = subprocess.run(list(map(str, command)), stdout=out, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, cwd=REPO, **kwargs)
        seconds = time.monotonic() - begin
    if done.returncode not in ok:
        tail = (Path(log_path).read_text().strip().splitlines() or ["no output"])[-1]
        raise BenchmarkError(f"{command[0]} ... exited with {done.returncode}: {tail} (log: {log_path})")
    return seconds


def orders(repeat):
    """A and B alternating, the pair's order swapped every round: AB, BA, AB, ..."""
    return [("A", "B") if i % 2 == 0 else ("B", "A") for i in range(repeat)]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# ---------------------------------------------------------------------------------------------
# 1. runner overhead


def runner_a(workdir, round_no, reps):
    """The kit's runner: whole command wall time, benchexec step time from sweep.json, runs."""
    outdir = workdir / f"runner-a{round_no}"
    shutil.rmtree(outdir, ignore_errors=True)
    command = [sys.executable, "-m", "analysis.cli", "run", "time-apis", "--reps", reps,
               "--loads", "0", "--reruns", "1", "--output", outdir]
    total = check_call(command, workdir / f"runner-a{round_no}.log")
    sweep = json.loads((outdir / "sweep.json").read_text())
    steps = sweep["steps"]
    if len(steps) != 1 or steps[0]["status"] != "done":
        raise BenchmarkError(f"{outdir}/sweep.json: expected one finished step, got {steps}")
    bench_log = (outdir / f"benchexec.{steps[0]['name']}.log").read_text()
    return {"command": " ".join(map(str, command)), "directory": str(outdir), "loadavg_after": loadavg(),
            "total_seconds": total,
            "benchexec_seconds": steps[0]["seconds"], "runs": len(RUN_LINE.findall(bench_log)),
            "rundefinitions": sweep["rundefinitions"], "skipped": sweep["skipped"]}


def runner_b(workdir, round_no, definition):
    """Plain benchexec on the runner's copy of the benchmark definition."""
    outdir = workdir / f"runner-b{round_no}"
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    benchexec = shutil.which("benchexec")
    prefix = [benchexec] if benchexec else [sys.executable, "-m", "benchexec.benchexec"]
    command = [*prefix, definition, "--tasks", "thesis-input", "--numOfThreads", "1", "-o", f"{outdir}{os.sep}"]
    log_path = workdir / f"runner-b{round_no}.log"
    seconds = check_call(command, log_path)
    return {"command": " ".join(map(str, command)), "directory": str(outdir), "loadavg_after": loadavg(),
            "benchexec_seconds": seconds,
            "runs": len(RUN_LINE.findall(log_path.read_text()))}


def bench_runner(workdir, reps, repeat):
    log(f"== runner overhead: reps {reps}, {repeat} rounds A (timekit run) / B (plain benchexec)")
    rounds, definition = [], None
    for round_no, order in enumerate(orders(repeat), 1):
        measured = {}
        for which in order:
            if which == "B" and definition is None:  # B needs A's copy: the first round is AB
                raise AssertionError("round order must start with A")
            if which == "A":
                measured["A"] = runner_a(workdir, round_no, reps)
                definition = Path(measured["A"]["directory"]) / "time-apis.xml"
                a = measured["A"]
                log(f"  round {round_no} A: benchexec step {a['benchexec_seconds']:.2f} s, "
                    f"whole command {a['total_seconds']:.2f} s, {a['runs']} runs")
            else:
                measured["B"] = runner_b(workdir, round_no, definition)
                b = measured["B"]
                log(f"  round {round_no} B: benchexec {b['benchexec_seconds']:.2f} s, {b['runs']} runs")
        a, b = measured["A"], measured["B"]
        if a["runs"] != b["runs"] or not a["runs"]:
            raise BenchmarkError(f"round {round_no}: runner made {a['runs']} runs, plain benchexec {b['runs']}")
        runs = a["runs"]
        rounds.append({
            "round": round_no, "order": "".join(order), "runs": runs, "A": a, "B": b,
            "a_per_run_ms": 1e3 * a["benchexec_seconds"] / runs,
            "b_per_run_ms": 1e3 * b["benchexec_seconds"] / runs,
            "a_whole_per_run_ms": 1e3 * a["total_seconds"] / runs,
            "ratio": (a["benchexec_seconds"] / runs) / (b["benchexec_seconds"] / runs),
            "ratio_whole": a["total_seconds"] / b["benchexec_seconds"],
        })
        log(f"  round {round_no}: ratio A/B per run {rounds[-1]['ratio']:.3f}")
    summary = {
        "runs": rounds[0]["runs"],
        "a_per_run_ms": median(r["a_per_run_ms"] for r in rounds),
        "b_per_run_ms": median(r["b_per_run_ms"] for r in rounds),
        "a_whole_per_run_ms": median(r["a_whole_per_run_ms"] for r in rounds),
        "a_benchexec_seconds": median(r["A"]["benchexec_seconds"] for r in rounds),
        "a_total_seconds": median(r["A"]["total_seconds"] for r in rounds),
        "b_seconds": median(r["B"]["benchexec_seconds"] for r in rounds),
        "ratio": median(r["ratio"] for r in rounds),
        "ratio_whole": median(r["ratio_whole"] for r in rounds),
        "target": f"ratio <= {TARGET_RUNNER}",
    }
    summary["met"] = summary["ratio"] <= TARGET_RUNNER
    return {"reps": reps, "repeat": repeat, "rounds": rounds, "summary": summary}


# ---------------------------------------------------------------------------------------------
# 2. analysis of a large result file


def large_file(workdir, runs, seed):
    """The generated result file, made once per (runs, seed) and reused."""
    path = workdir / f"time-apis-{runs}runs-seed{seed}.results.xml.bz2"
    if not path.exists():
        log(f"  generating {path.name} (once; reused by later invocations)")
        tmp = path.with_name("tmp-" + path.name)
        check_call([sys.executable, GENERATOR, tmp, "--runs", runs, "--seed", seed], workdir / "generate.log")
        os.replace(tmp, path)
    return path


def timed(command, workdir, name, ok=(0,)):
    """Wall time (s) and peak RSS (KiB) of a command, as GNU time reports them."""
    times = workdir / f"{name}.time"
    check_call([GNU_TIME, "-o", times, "-f", "%e %M", *command], workdir / f"{name}.log", ok=ok)
    wall, rss = times.read_text().split()[-2:]  # the last line: '%e %M'
    return float(wall), int(rss)


def analysis_kit(workdir, path):
    outdir = workdir / "kit-report"
    shutil.rmtree(outdir, ignore_errors=True)
    command = [sys.executable, "-m", "analysis.cli", "report", path, "--output", outdir]
    wall, rss = timed(command, workdir, "analysis-kit")
    return {"command": " ".join(map(str, command)), "seconds": wall, "peak_rss_kib": rss, "loadavg_after": loadavg(),
            "outputs": _sizes(outdir)}


def analysis_tg(workdir, path):
    outdir = workdir / "tg-table"
    shutil.rmtree(outdir, ignore_errors=True)
    program = shutil.which("table-generator")
    if not program:
        raise BenchmarkError("table-generator is not on PATH; install BenchExec (pip install benchexec)")
    command = [program, path, "-o", outdir]
    wall, rss = timed(command, workdir, "analysis-tg")
    return {"command": " ".join(map(str, command)), "seconds": wall, "peak_rss_kib": rss, "loadavg_after": loadavg(),
            "outputs": _sizes(outdir)}


def _sizes(directory):
    return {p.name: p.stat().st_size for p in sorted(Path(directory).iterdir())} if Path(directory).is_dir() else {}


def bench_analysis(workdir, runs, seed, repeat):
    log(f"== analysis of {runs} runs: {repeat} rounds A (timekit report) / B (table-generator)")
    if not Path(GNU_TIME).exists():
        raise BenchmarkError(f"{GNU_TIME} is missing; install GNU time (Debian package 'time')")
    path = large_file(workdir, runs, seed)
    rounds = []
    for round_no, order in enumerate(orders(repeat), 1):
        measured = {}
        for which in order:
            measured[which] = (analysis_kit if which == "A" else analysis_tg)(workdir, path)
            m = measured[which]
            log(f"  round {round_no} {which} ({'kit' if which == 'A' else 'table-generator'}): "
                f"{m['seconds']:.2f} s, peak RSS {m['peak_rss_kib'] / 1024:.0f} MiB")
        kit, tg = measured["A"], measured["B"]
        rounds.append({"round": round_no, "order": "".join(order), "kit": kit, "table_generator": tg,
                       "speedup": tg["seconds"] / kit["seconds"]})
        log(f"  round {round_no}: table-generator / kit = {rounds[-1]['speedup']:.1f}x")
    kit_rss = median(r["kit"]["peak_rss_kib"] for r in rounds)
    summary = {
        "runs": runs,
        "file": str(path), "file_bytes": path.stat().st_size,
        "kit_seconds": median(r["kit"]["seconds"] for r in rounds),
        "tg_seconds": median(r["table_generator"]["seconds"] for r in rounds),
        "speedup": median(r["speedup"] for r in rounds),
        "kit_peak_rss_kib": kit_rss,
        "kit_peak_rss_mb": kit_rss * 1024 / 1e6,
        "tg_peak_rss_kib": median(r["table_generator"]["peak_rss_kib"] for r in rounds),
        "target": f"speedup >= {TARGET_SPEEDUP}, kit peak RSS <= {TARGET_RSS_MB} MB",
    }
    summary["met"] = {"speedup": summary["speedup"] >= TARGET_SPEEDUP,
                      "rss": summary["kit_peak_rss_mb"] <= TARGET_RSS_MB}
    return {"runs": runs, "seed": seed, "repeat": repeat, "rounds": rounds, "summary": summary}


# ---------------------------------------------------------------------------------------------
# machine, table, main


def machine():
    def read(path):
        try:
            return Path(path).read_text()
        except OSError:
            return ""
    model = re.search(r"^model name\s*:\s*(.+)$", read("/proc/cpuinfo"), re.MULTILINE)
    version = subprocess.run([sys.executable, "-c", "import benchexec; print(benchexec.__version__)"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout.strip()
    return {
        "hostname": platform.node(),
        "nproc": os.cpu_count(),
        "cpu_model": model.group(1).strip() if model else platform.processor(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "benchexec": version,
        "commit": commit,
        "loadavg": read("/proc/loadavg").split()[:3],
    }


def _fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def table(result):
    """The final table: one line per figure, with its target where it has one."""
    lines = [f"{'benchmark':44} {'median':>14}  target", "-" * 72]
    runner = result.get("runner")
    if runner:
        s = runner["summary"]
        lines += [
            f"{'runner: runs per benchexec invocation':44} {s['runs']:>14}",
            f"{'runner: A benchexec step (ms per run)':44} {_fmt(s['a_per_run_ms'], '14.1f')}",
            f"{'runner: B plain benchexec (ms per run)':44} {_fmt(s['b_per_run_ms'], '14.1f')}",
            f"{'runner: ratio A/B per run':44} {_fmt(s['ratio'], '14.3f')}  <= {TARGET_RUNNER}"
            f"  {'met' if s['met'] else 'MISSED'}",
            f"{'runner: whole `run` command (s)':44} {_fmt(s['a_total_seconds'], '14.2f')}  (info)",
            f"{'runner: whole `run` / plain benchexec':44} {_fmt(s['ratio_whole'], '14.3f')}  (info)",
        ]
    analysis = result.get("analysis")
    if analysis:
        s = analysis["summary"]
        lines += [
            f"{'analysis: runs in the result file':44} {s['runs']:>14}",
            f"{'analysis: kit report (s)':44} {_fmt(s['kit_seconds'], '14.2f')}",
            f"{'analysis: table-generator (s)':44} {_fmt(s['tg_seconds'], '14.2f')}",
            f"{'analysis: table-generator / kit':44} {_fmt(s['speedup'], '14.1f')}  >= {TARGET_SPEEDUP:g}"
            f"  {'met' if s['met']['speedup'] else 'MISSED'}",
            f"{'analysis: kit peak RSS (MB)':44} {_fmt(s['kit_peak_rss_mb'], '14.0f')}  <= {TARGET_RSS_MB:g}"
            f"  {'met' if s['met']['rss'] else 'MISSED'}",
            f"{'analysis: table-generator peak RSS (MB)':44} {_fmt(s['tg_peak_rss_kib'] * 1024 / 1e6, '14.0f')}  (info)",
        ]
    if result.get("compare"):
        lines += compare_benchmark.table_lines(result["compare"], _fmt)
    return "\n".join(lines)


def build_parser():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true",
                        help="smaller run: runner with --reps 10 (40 runs) instead of 30 (120 runs), "
                             "analysis of 20,000 runs instead of 100,000; same number of rounds")
    parser.add_argument("--only", choices=("runner", "analysis", "compare"), help="run just one of the benchmarks")
    parser.add_argument("--tasks", type=int, help="compare: tasks per result file (default 100000, 20000 with --quick)")
    parser.add_argument("--big-tasks", type=int, help="compare: tasks per file of the competition-scale round, "
                        "kit only (default 1000000, 0 skips it and is the default with --quick)")
    parser.add_argument("--reps", type=int, help="runner: repetitions per input and timing API (default 30, 10 with --quick)")
    parser.add_argument("--runs", type=int, help="analysis: runs in the generated result file (default 100000, 20000 with --quick)")
    parser.add_argument("--seed", type=int, default=0, help="analysis: seed of the generated file (default 0)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of A and B per benchmark; medians are reported (default 3)")
    parser.add_argument("--workdir", type=Path, default=DEFAULT_WORKDIR,
                        help="scratch directory inside the checkout (default .pytest-tmp/bench; not /tmp: "
                             "BenchExec's container does not see it)")
    parser.add_argument("--json", type=Path, help="where to write every measurement "
                        "(default benchmarks/results/DATE.json; DATE-runner.json, DATE-analysis.json with "
                        "--only, -quick appended with --quick)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.repeat < 1:
        build_parser().error("--repeat must be at least 1")
    reps = args.reps or (10 if args.quick else 30)
    runs = args.runs or (20_000 if args.quick else 100_000)
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    date = datetime.date.today().isoformat()
    suffix = (f"-{args.only}" if args.only else "") + ("-quick" if args.quick else "")
    json_path = args.json or RESULTS_DIR / f"{date}{suffix}.json"

    result = {"date": date, "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
              "argv": sys.argv[1:], "quick": args.quick, "machine": machine()}
    log(f"machine: {result['machine']['nproc']} CPUs, {result['machine']['cpu_model']}, "
        f"load average {' '.join(result['machine']['loadavg'])}; scratch in {workdir}")
    try:
        if args.only in (None, "runner"):
            result["runner"] = bench_runner(workdir, reps, args.repeat)
        if args.only in (None, "analysis"):
            result["analysis"] = bench_analysis(workdir, runs, args.seed, args.repeat)
        if args.only in (None, "compare"):
            tasks = args.tasks or (20_000 if args.quick else 100_000)
            big = args.big_tasks if args.big_tasks is not None else (0 if args.quick else 1_000_000)
            result["compare"] = compare_benchmark.bench_compare(sys.modules[__name__], workdir, tasks, big, args.repeat)
    except BenchmarkError as e:
        print(f"run_benchmarks: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("run_benchmarks: interrupted; nothing written", file=sys.stderr)
        return 130
    result["finished"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    result["loadavg_after"] = machine()["loadavg"]

    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))
    print(f"\nevery measurement: {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
