"""
--export-json, --export-markdown, --export-csv in hyperfine's shapes, with the kit's fields beside.

JSON: {"results": [...]} with hyperfine's keys per command (command, mean, stddev, median, user,
system, min, max, times, exit_codes, parameters; seconds; command in full) and the kit's: the label
tables and summaries give it (-n/--command-name, else A, B, ... or #1, #2, ...), the invocations
(reruns, rerun_means, rerun_sizes, rerun_ci), the variance components (cv_within, cv_between,
between_share, between_p), runs, left_out, executions_per_run, cputime, which column the times
are (time_column) and, for `ab`, the runs its table leaves out (uncompared, uncompared_why).
Beside the results: what BenchExec costs here (benchexec), the definition, and for `ab` the
verdict rows (comparison: each with its commands in full and their labels). NaN is written as null.
"""

import csv
import io
import json
import math

from analysis.tools.commands.output import duration, relative, unit_for

HYPERFINE = ("command", "mean", "stddev", "median", "user", "system", "min", "max", "times", "exit_codes", "parameters")
KIT = ("label", "name", "column", "runs", "left_out", "executions_per_run", "cputime", "reruns", "rerun_means", "rerun_sizes",
       "rerun_ci", "cv_within", "cv_between", "between_share", "between_p", "uncompared", "uncompared_why")


def _clean(value):
    """NaN -> None, recursively (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def result(f):
    data = f.to_dict()
    entry = {key: data[key] for key in HYPERFINE}
    entry.update({("time_column" if key == "column" else key): data[key] for key in KIT})
    return entry


def as_json(figures, extra):
    return json.dumps(_clean({"results": [result(f) for f in figures], **extra}), indent=2)


def as_markdown(figures, paired=False):
    """hyperfine's table (mean ± sd, min, max, relative to the fastest) with the invocations' CV;
    `paired`: every invocation ran every command (output.relative)."""
    unit = unit_for(min(f.mean for f in figures))
    ratios = {id(other): (ratio, low, high) for _, other, ratio, low, high, _ in relative(figures, paired)}
    name = unit[0]
    lines = [f"| Command | Mean [{name}] | Min [{name}] | Max [{name}] | Relative (95 % CI) | Invocations | CV between invocations |",
             "|:---|---:|---:|---:|---:|---:|---:|"]
    for f in figures:
        number = lambda s: duration(s, unit).split()[0]  # noqa: E731 (the unit is in the header)
        ratio, low, high = ratios.get(id(f), (1.0, math.nan, math.nan))
        rel = f"{ratio:.2f}" + (f" ({low:.2f} … {high:.2f})" if math.isfinite(low) else "")
        cv = f"{100 * f.cv_between:.1f} %" if math.isfinite(f.cv_between) else "–"
        command = f.command.replace("|", "\\|")
        lines.append(f"| `{command}` | {number(f.mean)} ± {number(f.stddev)} | {number(f.min)} | {number(f.max)} | "
                     f"{rel} | {f.reruns} | {cv} |")
    return "\n".join(lines) + "\n"


def as_csv(figures):
    """hyperfine's columns (seconds), then the kit's, then parameter_<name> per parameter."""
    names = list(dict.fromkeys(k for f in figures for k in f.parameters))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    kit = ["reruns", "runs", "cv_within", "cv_between", "between_share"]
    writer.writerow(["command", "mean", "stddev", "median", "user", "system", "min", "max", *kit,
                     *(f"parameter_{n}" for n in names)])
    for f in figures:
        d = f.to_dict()
        writer.writerow([f.command, *(d[k] for k in ("mean", "stddev", "median", "user", "system", "min", "max")),
                         *(d[k] for k in kit), *(f.parameters.get(n, "") for n in names)])
    return out.getvalue()


def write(options, figures, extra):
    """The files asked for with --export-json/--export-markdown/--export-csv (an AbOptions' or
    BenchOptions' export_* fields); returns their paths."""
    written = []
    paired = extra.get("paired", False)
    for path, text in ((options.export_json, lambda: as_json(figures, extra)),
                       (options.export_markdown, lambda: as_markdown(figures, paired)), (options.export_csv, lambda: as_csv(figures))):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text())
            written.append(path)
    return written
