"""
A paired run in words: the design that ran (in a line, or with why its verdict holds), why it
stopped, and under duet how far this machine's duet of a command against itself lies from 1
(recorded by such a run, quoted by every other duet run here).
"""

import json
from pathlib import Path

from analysis.ab import designs
from analysis.sweep.model import now


def summary(run, verbose=True):
    """One line: the design that ran (verbose: and why its verdict holds), and why it stopped."""
    b = run.batch
    how = designs.get(run.design).how(run, verbose)
    if not verbose:
        chosen = " (auto)" if run.design_why.startswith("auto: ") else f" ({run.design_why})" if run.design_why else ""
        return (f"design: {run.design}{chosen}: {run.reruns} invocations, each {b.runs} BenchExec run(s) of "
                f"{b.pairs_per_run} pair(s), {how}" + run.ending())
    chosen = f" ({run.design_why})" if run.design_why else ""
    text = (f"design: {run.design}{chosen}: {run.reruns} invocations, each {b.runs} BenchExec run(s) of {b.pairs_per_run} "
            f"pair(s) of base and new ({how}); a pair's log ratio cancels what the machine did to both, and the t "
            f"interval over the invocations' median log ratios keeps the invocation as the unit. Batch: {b.why}")
    return text + run.ending()


DUET_AA = "duet-aa.json"   # under results/: this machine's last duet of a command against itself


def duet_note(run, pair, rows, root=None):
    """Under duet, how far this machine's duet A/A ratio lies from 1: recorded by a duet of a
    command against itself (this run, when it is one), quoted by every other duet run here."""
    if not designs.get(run.design).quotes_machine_aa:
        return ""
    import socket

    from analysis.core import paths

    path = Path(root or paths.user_results().root) / DUET_AA
    if pair["base"] == pair["new"] and rows:
        record = {"date": now(), "host": socket.gethostname(), "command": pair["base"],
                  "rows": [{"column": r.column, "ratio": r.ratio, "ci_low": r.ci_low, "ci_high": r.ci_high,
                            "invocations": r.reruns_base} for r in rows]}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(record, indent=2))
        what = "this run is a duet A/A: recorded in " + str(path) + " for later duet runs here"
    else:
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            record = None
        if not record or record.get("host") != socket.gethostname():
            return (f"duet A/A: none recorded on this machine; `timekit ab '{pair['base']}' '{pair['base']}' --duet` "
                    "measures how far a duet of a command against itself lies from 1 here, and whether duet helps "
                    "(compare it with --design blocks)")
        what = f"recorded {record['date']} with {record['command']}"
    ratios = "; ".join(f"{r['column']} {r['ratio']:.4f} (95 % CI {r['ci_low']:.4f} … {r['ci_high']:.4f}, "
                       f"{r['invocations']} invocations)" for r in record["rows"])
    return f"duet A/A on this machine: {ratios}; {what}"
