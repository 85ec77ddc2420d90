"""Does each design of `timekit ab` find the ratio that two commands have when each runs alone?

Pairs of commands with a known change: programs/bin/workload KIND UNITS (compute, branchy,
chase-l2, chase-llc, stream, syscalls, pagefault, alloc, forkexec, pagecache, threads: each
stresses another part of the machine, about 30 ms of CPU at UNITS=1000); "output", `seq` writing
20 MB of text to stdout; "long", compute at seven times the units (about 250 ms); gzip -6 of a
deterministic text file. B does `change` percent more work (UNITS * (1 + change); gzip: the file
with its first change % appended again, or cut by it). The "flip" pair is chase-llc against stream
sized so that B alone is about 10 % slower than A alone (calibrated at the start), where running
side by side may change the ratio's sign. The changes are 0, +-2, +-5, +-10 %, two per class,
rotated so that every change appears several times.

The truth of a pair: `cmdrun --shell sh --repeat N -- A --- B`, back to back, alternating, on one
core (both on the same; threads: unpinned), outside BenchExec, in segments of N pairs: one before
the pair's first design and one after each, pooled (the same window of minutes as the designs'
runs); the ratio of the sides' mean CPU time (user + sys, wait4) with a paired bootstrap 95 % CI,
and the robust truth, the median of the pairs' log ratios (a slow spell drags a mean).
Then every design, between the segments: `timekit ab A B --design D --until-decided --threshold T
--budget B --format json` (`timekit_ab`), the designs in a rotated order per pair; recorded: the
design that ran, the exec-cputime estimate and CI, the verdict, whether the CI covers the truth,
whether the verdict has the wrong sign, the truth's CI width as a share of the design's, the exit
code and the wall time of the command.

    python benchmarks/designs_truth.py                            # everything (about an hour here)
    python benchmarks/designs_truth.py --quick --pairs 30         # smoke test: compute +5 %, auto
    python benchmarks/designs_truth.py --classes flip stream --designs interleaved duet --tries 3
    python benchmarks/designs_truth.py --classes compute --changes 10 --units 250 --designs auto blocks interleaved duet
Results: benchmarks/results/DATE-designs-truth.json (DATE-designs-truth-quick.json with --quick)
and a Markdown table on stdout; scratch in .pytest-tmp/designs-truth/ (BenchExec hides /tmp).
Import it with sys.path.insert(0, "benchmarks"): truth, truth_pairs, truth_of, timekit_ab, pairs_of, main.
"""

import argparse
import datetime
import json
import math
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run_benchmarks import log, loadavg, machine  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
WORKLOAD = REPO / "programs" / "bin" / "workload"
CMDRUN = REPO / "programs" / "bin" / "cmdrun"
WORKDIR = REPO / ".pytest-tmp" / "designs-truth"
RESULTS_DIR = REPO / "benchmarks" / "results"

KINDS = ("compute", "branchy", "chase-l2", "chase-llc", "stream", "syscalls", "pagefault", "alloc", "forkexec",
         "pagecache", "threads")
CLASSES = KINDS + ("output", "long", "gzip", "flip")
CHANGE_CYCLE = (0, 2, -2, 5, -5, 10, -10)     # percent more work for B; two per class, rotated
DESIGNS = ("auto", "blocks", "interleaved", "duet", "separate")
DEFAULT_DESIGNS = ("auto", "blocks", "interleaved", "duet")
UNITS = 1000                                  # A's UNITS: about 30 ms of CPU (programs/workload.c)
GZIP_BYTES = 1_500_000                        # about 30 ms of gzip -6
OUTPUT_LINES = 3000                           # output: seq's lines per unit (1000 units: 20 MB, about 40 ms)
LONG_FACTOR = 7                               # long: compute at 7 times the units (about 250 ms)
FLIP_SLOWER = 0.10                            # flip: B alone this much slower than A alone
LINE = re.compile(r"^cmdrun-execution (\d+) side=([ab]) wall=(\S+) user=(\S+) sys=(\S+) status=(-?\d+)")


@dataclass
class Truth:
    """B/A of the mean CPU time (user + sys) a side, alone and back to back, with its 95 % CI; and
    the robust truth, exp(median of the pairs' ln(B/A)) with its 95 % CI, which a slow spell of the
    host (executions at half speed) does not drag as it drags a mean (None in sittings before it)."""
    ratio: float
    ci_low: float
    ci_high: float
    n: int           # pairs
    cpu_a: float     # mean CPU seconds of A's executions
    cpu_b: float
    median: float = None
    median_low: float = None
    median_high: float = None


@dataclass
class Pair:
    cls: str         # the class: a KIND, "output", "long", "gzip" or "flip"
    change: object   # percent more work for B (int), or "flip"
    a: str
    b: str


# ---------------------------------------------------------------------------------------------
# the truth

def cmdrun_pairs(a, b, pairs, cwd=WORKDIR, cores=None):
    """[(cpu_a, cpu_b)] of `cmdrun --shell sh --repeat pairs -- A --- B`, one per pair (seconds), on
    the CPUs `cores` ("0", "0,1"; None: unpinned)."""
    pin = ["taskset", "-c", cores] if cores else []
    done = subprocess.run([*pin, str(CMDRUN), "--shell", "sh", "--repeat", str(pairs), "--", a, "---", b],
                          capture_output=True, text=True, cwd=cwd)
    sides = {}
    for line in done.stdout.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        k, side, _wall, user, sys_, status = m.groups()
        if int(status) != 0:
            raise RuntimeError(f"{a if side == 'a' else b}: exit status {status} in pair {k}")
        sides.setdefault(int(k), {})[side] = float(user) + float(sys_)
    if done.returncode != 0 or not sides:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"cmdrun exited {done.returncode}: {last}")
    return [(s["a"], s["b"]) for _, s in sorted(sides.items()) if "a" in s and "b" in s]


def ratio_ci(cpu_a, cpu_b, confidence=0.95, seed=0):
    """(mean(b) / mean(a), low, high): a paired bootstrap (BCa; percentile where BCa fails)."""
    import numpy as np
    from scipy import stats

    a, b = np.asarray(cpu_a, dtype=float), np.asarray(cpu_b, dtype=float)

    def statistic(x, y, axis=-1):
        return np.mean(y, axis=axis) / np.mean(x, axis=axis)

    point = float(statistic(a, b))
    for method in ("BCa", "percentile"):
        try:
            res = stats.bootstrap((a, b), statistic, paired=True, vectorized=True, confidence_level=confidence,
                                  n_resamples=9999, method=method, random_state=np.random.default_rng(seed))
        except (ValueError, FloatingPointError):
            continue
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(low) and math.isfinite(high):
            return point, low, high
    return point, float("nan"), float("nan")


def truth_pairs(a, b, pairs=40, cwd=WORKDIR, threads=False):
    """`pairs` pairs of A and B back to back (cmdrun, outside BenchExec), on the cores each uses
    alone: one (the same for both: the two vCPUs of a VM can differ in speed far more than the change
    sought), or every core for commands that run threads; [(cpu_a, cpu_b)]."""
    import os

    cores = None if threads else str(min(os.sched_getaffinity(0)))
    return cmdrun_pairs(a, b, pairs, cwd, cores)


def median_ratio_ci(cpu_a, cpu_b, confidence=0.95, seed=0):
    """(exp(median ln(b/a)), low, high) over pairs: a percentile bootstrap of the median."""
    import numpy as np
    from scipy import stats

    d = np.log(np.asarray(cpu_b, dtype=float) / np.asarray(cpu_a, dtype=float))
    res = stats.bootstrap((d,), np.median, vectorized=True, confidence_level=confidence, n_resamples=9999,
                          method="percentile", random_state=np.random.default_rng(seed))
    return (float(np.exp(np.median(d))), float(np.exp(res.confidence_interval.low)),
            float(np.exp(res.confidence_interval.high)))


def truth_of(measured):
    """The Truth of pairs [(cpu_a, cpu_b)] (several segments of truth_pairs pooled)."""
    cpu_a, cpu_b = [x for x, _ in measured], [y for _, y in measured]
    ratio, low, high = ratio_ci(cpu_a, cpu_b)
    return Truth(ratio, low, high, len(measured), statistics.fmean(cpu_a), statistics.fmean(cpu_b),
                 *median_ratio_ci(cpu_a, cpu_b))


def truth(a, b, pairs=40, cwd=WORKDIR, threads=False):
    """The truth of A against B from one segment of `pairs` pairs."""
    return truth_of(truth_pairs(a, b, pairs, cwd, threads))


# ---------------------------------------------------------------------------------------------
# the pairs

def gzip_file(change, workdir=WORKDIR):
    """A's deterministic text (change 0), or B's: A's with its first change % appended again (cut by
    it where negative)."""
    base = workdir / "gzip-input-0.txt"
    if not base.exists():
        r = random.Random(20261128)
        letters = "etaoinshrdlcumwfgypbvkjxqz"
        vocab = ["".join(r.choices(letters, weights=range(26, 0, -1), k=r.randint(2, 10))) for _ in range(2000)]
        lines, size = [], 0
        while size < GZIP_BYTES:
            line = " ".join(r.choices(vocab, k=r.randint(6, 16))) + "\n"
            lines.append(line)
            size += len(line)
        base.write_text("".join(lines))
    if not change:
        return base
    path = workdir / f"gzip-input{change:+d}.txt"
    if not path.exists():
        data = base.read_bytes()
        cut = len(data) * abs(change) // 100
        path.write_bytes(data + data[:cut] if change > 0 else data[:len(data) - cut])
    return path


def flip_units(workdir=WORKDIR, pairs=10):
    """stream's UNITS for about FLIP_SLOWER more CPU time than chase-llc UNITS, each alone: stream
    at two sizes (its set-up does not scale), each in `pairs` pairs back to back with chase-llc;
    the median ratio of each size, interpolated (pairs, so that the machine's drift cancels)."""
    a, low, high = f"{WORKLOAD} chase-llc {UNITS}", UNITS // 2, UNITS * 3 // 2
    r_low, r_high = (statistics.median(y / x for x, y in cmdrun_pairs(a, f"{WORKLOAD} stream {u}", pairs, workdir))
                     for u in (low, high))
    slope = (r_high - r_low) / (high - low)
    if not slope > 0:
        return UNITS
    return max(1, round(low + (1 + FLIP_SLOWER - r_low) / slope))


def pairs_of(classes, changes=None, flip=None, workdir=WORKDIR, units=UNITS, offset=0):
    """[Pair]: every class with `changes` (percent), or by default two changes a class, rotated
    through CHANGE_CYCLE from `offset` on, A at `units` (the workload classes); "flip" is one pair
    (chase-llc UNITS against stream `flip` units, calibrated here when None)."""
    out = []
    for i, cls in enumerate(c for c in classes if c != "flip"):
        mine = changes if changes is not None else [CHANGE_CYCLE[(offset + 2 * i + j) % len(CHANGE_CYCLE)] for j in (0, 1)]
        for change in mine:
            if cls == "gzip":
                a = f"gzip -6 -c {gzip_file(0, workdir)} > /dev/null"
                b = f"gzip -6 -c {gzip_file(change, workdir)} > /dev/null"
            elif cls == "output":   # 20 MB of text on stdout, which ab and the truth discard
                a = f"seq 1 {units * OUTPUT_LINES}"
                b = f"seq 1 {round(units * OUTPUT_LINES * (100 + change) / 100)}"
            elif cls == "long":
                a = f"{WORKLOAD} compute {units * LONG_FACTOR}"
                b = f"{WORKLOAD} compute {round(units * LONG_FACTOR * (100 + change) / 100)}"
            else:
                a = f"{WORKLOAD} {cls} {units}"
                b = f"{WORKLOAD} {cls} {round(units * (100 + change) / 100)}"
            out.append(Pair(cls, change, a, b))
    if "flip" in classes:
        units = flip if flip is not None else flip_units(workdir)
        out.append(Pair("flip", "flip", f"{WORKLOAD} chase-llc {UNITS}", f"{WORKLOAD} stream {units}"))
    return out


# ---------------------------------------------------------------------------------------------
# timekit ab

def _seconds(budget):
    """'40s', '2m', '1h' or minutes -> seconds (None when unreadable)."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([smh]?)\s*", str(budget))
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "": 60}[m.group(2)] if m else None


def timekit_ab(a, b, design, threshold=0.02, budget="40s", workdir=WORKDIR, keep=False):
    """One `timekit ab A B --design D --until-decided` as a dict: design asked and run, design_why,
    reruns, colocation (None where the kit does not say), the exec-cputime row's estimate, CI and
    verdict, the exit code, the command's wall seconds, and error (the last stderr line) where
    its JSON could not be read."""
    out = workdir / f"ab-{design}-{time.monotonic_ns()}"
    command = [sys.executable, "-m", "analysis.cli", "ab", a, b, "--design", design, "--until-decided",
               "--threshold", str(threshold), "--budget", str(budget), "--format", "json", "--output", str(out)]
    limit = _seconds(budget)
    start = time.monotonic()
    record = {"design": design, "ran": None, "design_why": None, "reruns": None, "colocation": None,
              "ratio": None, "ci_low": None, "ci_high": None, "verdict": None, "column": None,
              "exit": None, "seconds": None, "error": None, "reason": None, "directory": str(out)}
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=workdir,
                              timeout=None if limit is None else 10 * limit + 600)
    except subprocess.TimeoutExpired:
        record.update(seconds=time.monotonic() - start, error="timed out")
        return record
    record.update(seconds=time.monotonic() - start, exit=done.returncode)
    try:
        data = json.loads(done.stdout)
        rows = data["comparison"]
        row = next((r for r in rows if r.get("column") == "exec-cputime"), rows[0])
        ab = data["ab"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        record["error"] = (done.stderr.strip().splitlines() or ["no output, no JSON"])[-1]
        return record
    record.update(ran=ab.get("design"), design_why=ab.get("design_why"), reruns=ab.get("reruns"),
                  colocation=ab.get("colocation"), column=row.get("column"), verdict=row.get("verdict"),
                  ratio=_number(row.get("ratio")), ci_low=_number(row.get("ci_low")), ci_high=_number(row.get("ci_high")),
                  reason=(data.get("verdict") or {}).get("reason"))
    if not keep:
        shutil.rmtree(out, ignore_errors=True)
    return record


def _number(x):
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None


def judge(record, t):
    """Adds covers (the CI holds the truth's ratio), wrong_sign (slower while the truth is below 1,
    faster while above) and wrong_sign_sure (the truth's whole CI on the other side)."""
    low, high, verdict = record["ci_low"], record["ci_high"], record["verdict"]
    record["covers"] = None if low is None or high is None else low <= t.ratio <= high
    record["covers_median"] = None if low is None or high is None or t.median is None else low <= t.median <= high
    record["wrong_sign"] = (verdict == "slower" and t.ratio < 1) or (verdict == "faster" and t.ratio > 1)
    record["wrong_sign_sure"] = (verdict == "slower" and t.ci_high < 1) or (verdict == "faster" and t.ci_low > 1)
    # the truth is measured too: the two agree where their intervals meet (a narrow design CI can
    # miss the truth's point by the truth's own noise alone)
    record["agrees"] = None if low is None or high is None else low <= t.ci_high and t.ci_low <= high
    record["consistent"] = consistent(record, t)
    record["truth_width_share"] = width_share(record, t)
    return record


def width_share(record, t):
    """The truth's 95 % CI as a share of the design's (log scale): issue 50 asks for at most 1/4."""
    values = (record["ci_low"], record["ci_high"], t.ci_low, t.ci_high)
    if any(v is None or not (v > 0 and math.isfinite(v)) for v in values) or record["ci_high"] <= record["ci_low"]:
        return None
    return math.log(t.ci_high / t.ci_low) / math.log(record["ci_high"] / record["ci_low"])


def consistent(record, t):
    """Whether the design's estimate and the truth differ by no more than their two 95 % intervals
    allow together (on the log scale, |ln est - ln truth| <= sqrt(h_design^2 + h_truth^2), each h
    the wider side): the truth is measured too, and its own noise must not count against a design."""
    values = (record["ratio"], record["ci_low"], record["ci_high"], t.ratio, t.ci_low, t.ci_high)
    if any(v is None or not (v > 0 and math.isfinite(v)) for v in values):
        return None
    est, low, high, truth_ratio, t_low, t_high = (math.log(v) for v in values)
    h_design, h_truth = max(high - est, est - low), max(t_high - truth_ratio, truth_ratio - t_low)
    return abs(est - truth_ratio) <= math.hypot(h_design, h_truth)


# ---------------------------------------------------------------------------------------------
# the report

def _change(change):
    return change if isinstance(change, str) else f"{change:+d} %"


def _ci(ratio, low, high):
    if ratio is None:
        return "–"
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return f"{ratio:.3f}"
    return f"{ratio:.3f} ({low:.3f}–{high:.3f})"


def table(record):
    lines = ["| class | change | truth B/A (95 % CI) | design → ran | estimate (CI) | covers | verdict | exit | seconds |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in record["rows"]:
        t = r["truth"]
        verdict = r["verdict"] or f"error: {r['error']}"
        if r.get("wrong_sign"):
            verdict += " (wrong sign" + (", sure)" if r.get("wrong_sign_sure") else ")")
        covers = {True: "yes", False: "**no**", None: "–"}[r.get("covers")]
        if r.get("covers_median") is not None:
            covers += "; robust " + {True: "yes", False: "**no**"}[r["covers_median"]]
        covers += {True: "", False: " (**inconsistent**)", None: ""}[r.get("consistent")]
        lines.append(f"| {r['class']} | {_change(r['change'])} | {_ci(t['ratio'], t['ci_low'], t['ci_high'])} | "
                     f"{r['design']} → {r['ran'] or '–'} | {_ci(r['ratio'], r['ci_low'], r['ci_high'])} | {covers} | "
                     f"{verdict} | {r['exit'] if r['exit'] is not None else '–'} | {r['seconds']:.1f} |")
    lines.append("")
    for design in dict.fromkeys(r["design"] for r in record["rows"]):
        mine = [r for r in record["rows"] if r["design"] == design]
        judged = [r for r in mine if r.get("covers") is not None]
        coverage = f"{100 * sum(r['covers'] for r in judged) / len(judged):.0f} %" if judged else "–"
        agree = f"{100 * sum(bool(r.get('agrees')) for r in judged) / len(judged):.0f} %" if judged else "–"
        fits = f"{100 * sum(bool(r.get('consistent')) for r in judged) / len(judged):.0f} %" if judged else "–"
        wrong = sum(bool(r.get("wrong_sign")) for r in mine)
        sure = sum(bool(r.get("wrong_sign_sure")) for r in mine)
        errors = sum(r["verdict"] is None for r in mine)
        robust = [r for r in judged if r.get("covers_median") is not None]
        against_median = (f" ({100 * sum(r['covers_median'] for r in robust) / len(robust):.0f} % of {len(robust)} "
                          "against the robust truth)") if robust else ""
        shares = [r["truth_width_share"] for r in mine if r.get("truth_width_share") is not None]
        share = (f", the truth's CI {statistics.median(shares):.2f} of its width (median; at most 0.25 in "
                 f"{sum(x <= 0.25 for x in shares)} of {len(shares)})") if shares else ""
        lines.append(f"{design}: {len(mine)} pairs, coverage {coverage} (of {len(judged)} with a CI){against_median}; consistent with the "
                     f"truth, both intervals counted, in {fits}; its CI meets the truth's in {agree}; "
                     f"wrong-sign verdicts {wrong} ({sure} against the truth's whole CI), errors {errors}, "
                     f"median {statistics.median(r['seconds'] for r in mine):.1f} s{share}")
    return "\n".join(lines)


NUMBER_PAIR = re.compile(r"\[\s+(-?[\d.e+-]+),\s+(-?[\d.e+-]+)\s+\]")


def save(path, record):
    """The record as indented JSON, each pair of numbers (a truth's pair) on one line."""
    temporary = path.with_suffix(".tmp")
    temporary.write_text(NUMBER_PAIR.sub(r"[\1, \2]", json.dumps(record, indent=2)))
    temporary.replace(path)


def summarize(paths):
    """The table of recorded sittings, judged again, their rows together (python
    benchmarks/designs_truth.py --table FILE [FILE...]): the summary lines count over all of them."""
    rows = []
    for path in paths:
        for r in json.loads(Path(path).read_text())["rows"]:
            rows.append(judge(r, Truth(**r["truth"])))
    return table({"rows": rows})


def measure_pair(pair, order, pairs, threshold, budget):
    """(the rows of one pair, its truth's pairs [(cpu_a, cpu_b)]): its truth in segments of `pairs`
    pairs, one before the first design and one after each (the machine changes within minutes on a
    shared VM: the truth is pooled over the same window as the designs' runs), every design judged
    against the pooled truth. ([], []) where the truth could not be measured."""
    threads = pair.cls == "threads"
    try:
        measured = truth_pairs(pair.a, pair.b, pairs, threads=threads)
        runs = []
        for design in order:
            r = timekit_ab(pair.a, pair.b, design, threshold, budget)
            load = loadavg()
            log(f"  {design} -> {r['ran']}: {_ci(r['ratio'], r['ci_low'], r['ci_high'])} {r['verdict']}, "
                f"exit {r['exit']}, {r['seconds']:.1f} s" + (f", error: {r['error']}" if r["error"] else "")
                + f"; load {load}")
            runs.append((r, load))
            measured += truth_pairs(pair.a, pair.b, pairs, threads=threads)
    except RuntimeError as e:
        log(f"{pair.cls} {_change(pair.change)}: no truth: {e}")
        return [], []
    t = truth_of(measured)
    log(f"{pair.cls} {_change(pair.change)}: truth {_ci(t.ratio, t.ci_low, t.ci_high)}, robust "
        f"{_ci(t.median, t.median_low, t.median_high)} "
        f"(A {1e3 * t.cpu_a:.1f} ms, B {1e3 * t.cpu_b:.1f} ms, {t.n} pairs in {len(order) + 1} segments)")
    rows = []
    for r, load in runs:
        judge(r, t)
        log(f"  {r['design']}: covers {r['covers']} (robust truth: {r['covers_median']}), "
            f"truth width share {r['truth_width_share']}")
        rows.append({"class": pair.cls, "change": pair.change, "a": pair.a, "b": pair.b, "truth": asdict(t), **r,
                     "load": load})
    return rows, measured


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--classes", nargs="+", choices=CLASSES, default=list(CLASSES))
    parser.add_argument("--changes", nargs="+", type=int, help="percent more work for B, for every class (default: "
                        "two a class, rotated through " + ", ".join(f"{c:+d}" for c in CHANGE_CYCLE) + ")")
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, help="default: " + " ".join(DEFAULT_DESIGNS))
    parser.add_argument("--tries", type=int, default=1, help="run every pair this many times (a truth of its own each)")
    parser.add_argument("--pairs", type=int, default=40, help="truth: pairs of executions per segment, one segment "
                        "before the first design and one after each (at least 30; default 40)")
    parser.add_argument("--threshold", type=float, default=0.02, help="timekit ab --threshold (default 0.02)")
    parser.add_argument("--budget", help="timekit ab --budget per run (default 40s; 20s with --quick)")
    parser.add_argument("--units", type=int, default=UNITS,
                        help=f"A's UNITS in the workload classes (default {UNITS}, about 30 ms; 250: the 250/275 pair at +10 %%)")
    parser.add_argument("--offset", type=int, default=0, help="start the rotation of changes this many further "
                        "(a second sitting: 2, so that every class meets other changes)")
    parser.add_argument("--quick", action="store_true", help="smoke test: compute +5 %%, design auto")
    parser.add_argument("--table", metavar="FILE", nargs="+", help="print the table of recorded sittings, judged "
                        "again (their rows together), and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(summarize(args.table))
        return 0
    if args.pairs < 30:
        parser.error("--pairs must be at least 30")
    if args.quick:
        args.classes, args.changes = ["compute"], args.changes[:1] if args.changes else [5]
        args.designs = args.designs[:1] if args.designs else ["auto"]
    designs = list(args.designs or DEFAULT_DESIGNS)
    budget = args.budget or ("20s" if args.quick else "40s")
    subprocess.run(["make", "-s", "-C", str(REPO / "programs")], check=True)
    WORKDIR.mkdir(parents=True, exist_ok=True)
    pairs = pairs_of(args.classes, args.changes, units=args.units, offset=args.offset)
    record = {"date": datetime.datetime.now().isoformat(timespec="minutes"), "machine": machine(),
              "settings": {"pairs": args.pairs, "threshold": args.threshold, "budget": budget, "tries": args.tries,
                           "designs": designs, "units": args.units,
                           "offset": args.offset},
              "truths": [], "rows": []}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}-designs-truth{'-quick' if args.quick else ''}.json"
    k = 0
    for pair in pairs:
        for _ in range(args.tries):
            order = designs[k % len(designs):] + designs[:k % len(designs)]
            k += 1
            rows, measured = measure_pair(pair, order, args.pairs, args.threshold, budget)
            if rows:
                # the truth's pairs once a pair, its rows pointing at them (truth_index)
                index = len(record["truths"])
                record["truths"].append({"class": pair.cls, "change": pair.change,
                                         "pairs": [[round(x, 6), round(y, 6)] for x, y in measured]})
                record["rows"] += [{**r, "truth_index": index} for r in rows]
                save(path, record)   # after every pair: a sitting cut short keeps what it measured
    save(path, record)
    if record["rows"]:
        print(table(record))
    log(f"written: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
