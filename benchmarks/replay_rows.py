"""When would recorded paired runs have stopped under another gate: every row, or CPU time alone?

Each directory is a finished `timekit ab` run of a paired design that compared both CPU and wall
time (code before CPU time alone, or `--column cputime --column walltime`). Its invocations'
log ratios are replayed through the kit's own sequential rule (analysis.tools.plan.sequential)
twice: both rows (slower or faster at alpha / 2 a row, "~" at alpha a row, the run stopping once
every row is decided) and CPU time alone (alpha). Both read the same invocations, so the machine's
noise between tries does not enter the difference; a rule that stops later than the run did is
"open" at the recorded M.

    python benchmarks/replay_rows.py --threshold 0.02 DIR...
Results: benchmarks/results/DATE-replay-rows.json and a Markdown table on stdout.
"""

import argparse
import datetime
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.ab import paired  # noqa: E402
from analysis.products.plan import paired_plan  # noqa: E402
from analysis.tools.plan import sequential  # noqa: E402

RESULTS_DIR = Path(__file__).resolve().parent / "results"
ALPHA = 0.05


def stop(rows, threshold, max_reruns):
    """(M at which the rule over `rows` stops, or None where it is still open, [verdict per row])."""
    decisions = [sequential.run_paired_sequence(logs, ALPHA / len(rows), threshold, max_reruns, same_alpha=ALPHA)
                 for logs in rows]
    verdicts = [d.verdict if d.decided else "open" for d in decisions]
    slower = [d.reruns for d in decisions if d.decided and d.verdict == "slower"]
    if slower:
        return min(slower), verdicts   # the gate fails: its answer cannot change
    return (max(d.reruns for d in decisions) if all(d.decided for d in decisions) else None), verdicts


def replay(directory, threshold):
    run = paired.PairedRun.load(Path(directory))
    _, series, _ = paired_plan.series_of(directory, ("exec-cputime", "exec-walltime"))
    logs = {("cpu" if "cputime" in label else "wall"): np.asarray(values) for label, values in series}
    both, both_verdicts = stop([logs["cpu"], logs["wall"]], threshold, run.max_reruns)
    alone, alone_verdicts = stop([logs["cpu"]], threshold, run.max_reruns)
    return {"directory": str(directory), "recorded_m": int(logs["cpu"].size), "both_rows_m": both,
            "both_rows_verdicts": both_verdicts, "cpu_alone_m": alone, "cpu_alone_verdict": alone_verdicts[0],
            "cpu_log_ratios": logs["cpu"].tolist(), "wall_log_ratios": logs["wall"].tolist()}


def table(rows):
    lines = ["| run | M recorded | both rows: M (CPU, wall) | CPU time alone: M (verdict) |", "|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {Path(r['directory']).name} | {r['recorded_m']} | {r['both_rows_m'] or 'open'} "
                     f"({', '.join(r['both_rows_verdicts'])}) | {r['cpu_alone_m'] or 'open'} ({r['cpu_alone_verdict']}) |")
    stopped = [(r["both_rows_m"], r["cpu_alone_m"]) for r in rows if r["both_rows_m"] and r["cpu_alone_m"]]
    if stopped:
        lines.append(f"| median | | {statistics.median(b for b, _ in stopped):g} | {statistics.median(a for _, a in stopped):g} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--threshold", type=float, required=True, help="the runs' --threshold")
    parser.add_argument("directories", nargs="+", type=Path)
    args = parser.parse_args(argv)
    rows = [replay(d, args.threshold) for d in args.directories]
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{datetime.datetime.now():%Y-%m-%d_%H-%M-%S}-replay-rows.json"
    path.write_text(json.dumps({"date": datetime.datetime.now().isoformat(timespec="minutes"), "alpha": ALPHA,
                                "threshold": args.threshold, "runs": rows}, indent=2))
    print(table(rows))
    print(f"written: {path}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
