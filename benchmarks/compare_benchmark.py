"""Benchmark 3: `timekit compare` of two competition-style result files (one run per task).

A = `python -m analysis.cli compare BASE NEW --report OUT` (load both files, pair the tasks,
statistics per run set, column and task set, text on stdout, report.html with the scatter and
quantile plots, the PNGs); B = `table-generator BASE NEW -o OUT2` (BenchExec's HTML and CSV tables
of the same two files side by side). Both under `/usr/bin/time -f '%e %M'`, alternating as the
other benchmarks do. Targets at 100,000 tasks: B/A >= 10, A's peak RSS <= 300 MB. At 1,000,000
tasks (competition scale) A alone: <= 90 s and <= 1 GB; table-generator is not run there (it would
need about 13 GB).

The files come from benchmarks/make_competition_result.py: the new side 5 % slower on every
task with 3 % noise, 1 % of outcomes changed; made once per size under the scratch directory.
"""

import sys
from pathlib import Path

COMPETITION = Path(__file__).resolve().parent / "make_competition_result.py"
TARGET_SPEEDUP = 10.0
TARGET_RSS_MB = 300.0
TARGET_BIG_SECONDS = 90.0
TARGET_BIG_RSS_MB = 1000.0


def competition_files(bench, workdir, tasks):
    """(base, new) result files with `tasks` tasks each, made once and reused."""
    paths = []
    for side, extra in (("base", ["--side-seed", 0, "--date", "2025-01-10 12:00:00"]),
                        ("new", ["--side-seed", 1, "--slowdown", 0.05, "--flip", 0.01, "--date", "2025-01-17 12:00:00"])):
        path = workdir / f"comp-{tasks}-{side}.results.xml.bz2"
        if not path.exists():
            bench.log(f"  generating {path.name} (once; reused by later invocations)")
            tmp = path.with_name("tmp-" + path.name)
            bench.check_call([sys.executable, COMPETITION, tmp, "--tasks", tasks, *extra], workdir / "generate.log")
            tmp.replace(path)
        paths.append(path)
    return paths


def kit(bench, workdir, files, name):
    outdir = workdir / f"{name}-report"
    command = [sys.executable, "-m", "analysis.cli", "compare", *files, "--report", outdir]
    wall, rss = bench.timed(command, workdir, name, ok=(0, 1))   # 1: the gate found the 5 % slowdown
    return {"command": " ".join(map(str, command)), "seconds": wall, "peak_rss_kib": rss,
            "loadavg_after": bench.loadavg(), "outputs": bench._sizes(outdir)}


def table_generator(bench, workdir, files):
    import shutil

    outdir = workdir / "compare-tg"
    shutil.rmtree(outdir, ignore_errors=True)
    program = shutil.which("table-generator")
    if not program:
        raise bench.BenchmarkError("table-generator is not on PATH; install BenchExec (pip install benchexec)")
    command = [program, *files, "-o", outdir]
    wall, rss = bench.timed(command, workdir, "compare-tg")
    return {"command": " ".join(map(str, command)), "seconds": wall, "peak_rss_kib": rss,
            "loadavg_after": bench.loadavg(), "outputs": bench._sizes(outdir)}


def bench_compare(bench, workdir, tasks, big_tasks, repeat):
    """Rounds of A/B at `tasks`, then rounds of A alone at `big_tasks` (0: skipped)."""
    bench.log(f"== compare of two {tasks}-task files: {repeat} rounds A (timekit compare) / B (table-generator)")
    files = competition_files(bench, workdir, tasks)
    rounds = []
    for round_no, order in enumerate(bench.orders(repeat), 1):
        measured = {}
        for which in order:
            measured[which] = kit(bench, workdir, files, "compare-kit") if which == "A" else table_generator(bench, workdir, files)
            m = measured[which]
            bench.log(f"  round {round_no} {which}: {m['seconds']:.2f} s, peak RSS {m['peak_rss_kib'] / 1024:.0f} MiB")
        rounds.append({"round": round_no, "order": "".join(order), "kit": measured["A"],
                       "table_generator": measured["B"], "speedup": measured["B"]["seconds"] / measured["A"]["seconds"]})
        bench.log(f"  round {round_no}: table-generator / kit = {rounds[-1]['speedup']:.1f}x")
    rss = bench.median(r["kit"]["peak_rss_kib"] for r in rounds)
    summary = {"tasks": tasks, "files": [str(f) for f in files], "file_bytes": [f.stat().st_size for f in files],
               "kit_seconds": bench.median(r["kit"]["seconds"] for r in rounds),
               "tg_seconds": bench.median(r["table_generator"]["seconds"] for r in rounds),
               "speedup": bench.median(r["speedup"] for r in rounds),
               "kit_peak_rss_mb": rss * 1024 / 1e6,
               "tg_peak_rss_mb": bench.median(r["table_generator"]["peak_rss_kib"] for r in rounds) * 1024 / 1e6}
    summary["met"] = {"speedup": summary["speedup"] >= TARGET_SPEEDUP, "rss": summary["kit_peak_rss_mb"] <= TARGET_RSS_MB}
    out = {"tasks": tasks, "repeat": repeat, "rounds": rounds, "summary": summary}
    if big_tasks:
        bench.log(f"== compare of two {big_tasks}-task files: {repeat} rounds of A (timekit compare) alone")
        big_files = competition_files(bench, workdir, big_tasks)
        big = []
        for round_no in range(1, repeat + 1):
            big.append(kit(bench, workdir, big_files, "compare-kit-big"))
            bench.log(f"  round {round_no}: {big[-1]['seconds']:.2f} s, peak RSS {big[-1]['peak_rss_kib'] / 1024:.0f} MiB")
        big_summary = {"tasks": big_tasks, "file_bytes": [f.stat().st_size for f in big_files],
                       "kit_seconds": bench.median(r["seconds"] for r in big),
                       "kit_peak_rss_mb": bench.median(r["peak_rss_kib"] for r in big) * 1024 / 1e6}
        big_summary["met"] = {"seconds": big_summary["kit_seconds"] <= TARGET_BIG_SECONDS,
                              "rss": big_summary["kit_peak_rss_mb"] <= TARGET_BIG_RSS_MB}
        out["big"] = {"rounds": big, "summary": big_summary}
    return out


def table_lines(result, fmt):
    """Lines for run_benchmarks' final table."""
    s = result["summary"]
    lines = [
        f"{'compare: tasks per result file':44} {s['tasks']:>14}",
        f"{'compare: kit (s)':44} {fmt(s['kit_seconds'], '14.2f')}",
        f"{'compare: table-generator (s)':44} {fmt(s['tg_seconds'], '14.2f')}",
        f"{'compare: table-generator / kit':44} {fmt(s['speedup'], '14.1f')}  >= {TARGET_SPEEDUP:g}"
        f"  {'met' if s['met']['speedup'] else 'MISSED'}",
        f"{'compare: kit peak RSS (MB)':44} {fmt(s['kit_peak_rss_mb'], '14.0f')}  <= {TARGET_RSS_MB:g}"
        f"  {'met' if s['met']['rss'] else 'MISSED'}",
    ]
    if "big" in result:
        b = result["big"]["summary"]
        lines += [
            f"{'compare big: tasks per result file':44} {b['tasks']:>14}",
            f"{'compare big: kit (s)':44} {fmt(b['kit_seconds'], '14.2f')}  <= {TARGET_BIG_SECONDS:g}"
            f"  {'met' if b['met']['seconds'] else 'MISSED'}",
            f"{'compare big: kit peak RSS (MB)':44} {fmt(b['kit_peak_rss_mb'], '14.0f')}  <= {TARGET_BIG_RSS_MB:g}"
            f"  {'met' if b['met']['rss'] else 'MISSED'}",
        ]
    return lines
