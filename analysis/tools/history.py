"""
`timekit history RESULTS...`: where in a sequence of result sets did a measurement change?

Result sets are put in the order of BenchExec's `date` attribute, never in argument order. Per run
definition and input, the series of per-result-set means of one column (for one run per task, the
geometric mean over the tasks valid in every set) is searched for changepoints
(analysis.core.changepoints). What a result set is and which values count: docs/calibration.md,
"Changepoints over many invocations".
"""

from __future__ import annotations

import datetime
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import scipy.stats

from analysis.tools.compare import repeated as compare_mod
from analysis.tools.compare import pairing
from analysis.core.errors import UserError
from analysis.sweep.load import load_tables
from analysis.core import results
from analysis.core import stats, validity
from analysis.core.changepoints import MIN_SIZE, PERMUTATIONS, P_THRESHOLD, SEED, Split, e_divisive  # noqa: F401 (history's API)

DEFAULT_COLUMN = "cputime"


class HistoryError(UserError):
    """History cannot be computed from the given input (one line for the user)."""


@dataclass
class ResultSet:
    """One benchexec invocation or one sweep, with the date it started."""

    label: str
    date: datetime.datetime
    date_text: str
    tables: list = field(repr=False)
    conditions: dict = field(repr=False)


_DATE = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2})?)\s*(\S*)\s*$")


def parse_date(table):
    """BenchExec's `date` attribute ('2026-11-23 02:44:34 UTC') as an aware datetime. A zone
    name like CEST says no offset, so the offset of the `starttime` attribute (ISO, same instant)
    is used, else UTC is assumed."""
    text = table.date
    match = _DATE.match(text or "")
    if not match:
        raise HistoryError(f"{table.path}: date attribute {text!r} is not BenchExec's 'YYYY-MM-DD HH:MM:SS ZONE'; "
                           "history orders result sets by it")
    day, clock, zone = match.groups()
    when = datetime.datetime.fromisoformat(f"{day}T{clock}")
    offset = None
    if zone.upper() in ("UTC", "GMT", "Z", ""):
        offset = datetime.timezone.utc if zone else None
    elif re.fullmatch(r"[+-]\d{2}:?\d{2}", zone):
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = datetime.timezone(sign * datetime.timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
    if offset is None:
        try:
            offset = datetime.datetime.fromisoformat(table.attributes.get("starttime", "")).tzinfo
        except ValueError:
            offset = None
    return when.replace(tzinfo=offset or datetime.timezone.utc)


def load_result_sets(paths, columns):
    """Result sets of the given paths (result files, directories, sweep directories), by date."""
    wanted = {"status", "category", "host", *columns}
    sweeps, invocations, seen = [], {}, set()
    for path in map(Path, paths):
        if not path.exists():
            raise HistoryError(f"{path}: no such file or directory")
        try:
            tables, conditions, sweep = load_tables(path, wanted)
        except results.ResultFileError as e:
            raise HistoryError(str(e)) from None
        if sweep is not None:
            sweeps.append((path.name or str(path), tables, conditions))
            continue
        for table in tables:
            if table.path.resolve() in seen:
                continue
            seen.add(table.path.resolve())
            invocations.setdefault((table.benchmark, table.date), []).append(table)
    sets = []
    for label, tables, conditions in sweeps:
        if tables:
            first = min(tables, key=parse_date)
            sets.append(ResultSet(label, parse_date(first), first.date, tables, conditions))
    for (benchmark, date), tables in invocations.items():
        tables = results.without_duplicate_blocks(tables)
        label = tables[0].path.name if len(tables) == 1 else f"{benchmark} ({len(tables)} files)"
        sets.append(ResultSet(label, parse_date(tables[0]), date, tables, {}))
    sets.sort(key=lambda s: (s.date, s.label))
    return sets


# --------------------------------------------------------------------------------------------
# history: series per run definition and input, and their changepoints


@dataclass
class Point:
    """One result set's runs of one run definition and input."""

    result_set: int       # index into History.result_sets (date order)
    n: int
    left_out: dict        # reason -> runs (or tasks) left out (analysis.core.validity)
    mean: float
    ci_low: float
    ci_high: float


@dataclass
class Changepoint:
    rundefinition: str
    input: str
    position: int         # index in the series of the first result set after the change
    result_set: str       # its label
    date: str             # its date attribute
    mean_before: float    # mean of the per-result-set means from the previous changepoint on
    mean_after: float     # ... up to the next changepoint
    change: float         # mean_after / mean_before - 1
    p: float
    q: float


@dataclass
class Series:
    rundefinition: str
    input: str
    points: list
    changepoints: list = field(default_factory=list)


@dataclass
class History:
    column: str
    unit: str
    result_sets: list
    series: list
    skipped: list
    permutations: int
    p_threshold: float
    min_size: int
    seed: int
    left_out: list = field(default_factory=list)   # lines: values left out per series, points without a valid value

    @property
    def changepoints(self):
        return [c for s in self.series for c in s.changepoints]

    def method(self):
        return (f"E-Divisive means (Matteson & James 2014; energy statistic, alpha = 1; segments of at least "
                f"{self.min_size} result sets) over the per-result-set means of {self.column}; a changepoint when "
                f"its permutation p < {self.p_threshold} ({self.permutations} permutations within segments, seed "
                f"{self.seed}). p per series, not corrected over the {len(self.series)} series. Position: the first "
                "result set after the change, counted from 1 in date order (BenchExec's date attribute).")


def _mean_points(sets, column):
    """{(run definition, input): [Point]}: the mean of the valid repeated runs of each input per set;
    and a line for each set in which a series has no valid value (it is no point of the series)."""
    points, gone = {}, []
    for index, result_set in enumerate(sets):
        groups = compare_mod.groups(result_set.tables, result_set.conditions, (column,))
        for (rundefinition, name, _), (values, left_out) in groups.items():
            summary = stats.summarize(values)
            if summary.n:
                points.setdefault((rundefinition, name), []).append(
                    Point(index, summary.n, left_out, summary.mean, summary.ci_low, summary.ci_high))
            else:
                gone.append(validity.nothing_left(f"{rundefinition} / {name} in {result_set.label}", left_out)
                            + ": not a point of its series")
    return points, gone


def _left_out_lines(points):
    """Per series that left values out: how many, why, in how many of its result sets."""
    lines = []
    for (rundefinition, name), pts in sorted(points.items()):
        hit = [p.left_out for p in pts if p.left_out]
        if hit:
            lines.append(f"{rundefinition} / {name}: {validity.left_out_text(validity.merge(*hit))} "
                         f"(in {len(hit)} of its {len(pts)} result sets)")
    return lines


def _per_task_points(sets, column):
    """{(run definition, 'geometric mean over N common tasks'): [Point]} for result sets of one run
    per task (competition style): per run definition, the tasks that finished normally with a valid,
    positive value in every set that has the run definition, and per set their geometric mean with
    a 95 % Student t interval on the log values (spread over tasks, not measurement error)."""
    by_name, common = {}, {}  # common: per run definition, the properties its first set has most
    for index, result_set in enumerate(sets):
        for run_set in pairing.run_sets(result_set.tables, [column]):
            zero = run_set.usable[column] & ~(run_set.values[column] > 0)
            usable = run_set.usable[column] & ~zero
            common.setdefault(run_set.name, pairing.common_property(run_set.properties))
            keys = np.asarray(pairing.identities(run_set, common[run_set.name])[0], dtype=object)
            values = dict(zip(keys[usable].tolist(), run_set.values[column][usable].tolist()))
            left_out = {validity.NOT_FINISHED: int((~run_set.finished).sum()), **run_set.invalid[column],
                        "zero (no logarithm)": int(zero.sum())}
            by_name.setdefault(run_set.name, []).append((index, values, {k: n for k, n in left_out.items() if n}))
    points, gone = {}, []
    for name, per_set in by_name.items():
        common = set.intersection(*(set(values) for _, values, _ in per_set))
        if not common:
            gone.append(f"{name}: no task is finished with a valid value in every result set: no series")
            continue
        order = sorted(common)
        label = f"geometric mean over the {len(order)} tasks in every set"
        for index, values, left_out in per_set:
            logs = np.log([values[k] for k in order])
            mean, n = float(logs.mean()), logs.size
            half = float(scipy.stats.t.ppf(0.975, n - 1) * logs.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan
            if len(values) > n:
                left_out = {**left_out, "valid but not in every result set": len(values) - n}
            points.setdefault((name, label), []).append(
                Point(index, n, left_out, math.exp(mean), math.exp(mean - half), math.exp(mean + half)))
    return points, gone


def history(paths, column=DEFAULT_COLUMN, permutations=PERMUTATIONS, p_threshold=P_THRESHOLD,
            min_size=MIN_SIZE, seed=SEED):
    """Changepoints per run definition and input over the result sets in `paths`, by date."""
    if not 0 < p_threshold < 1:
        raise HistoryError(f"p threshold {p_threshold} is not between 0 and 1")
    if permutations < 1 or min_size < 1:
        raise HistoryError("permutations and minimum segment size must be at least 1")
    sets = load_result_sets(paths, [column])
    need = max(3, 2 * min_size)
    if len(sets) < need:
        raise HistoryError(f"history needs at least {need} result sets ({min_size} on each side of a change), "
                           f"got {len(sets)} from {', '.join(map(str, paths))}")
    tables = [t for s in sets for t in s.tables]
    if not any(column in t.columns for t in tables):
        available = sorted(results.load_result(tables[0].path).columns)
        raise HistoryError(f"column '{column}' is in none of the {len(sets)} result sets; "
                           f"{tables[0].path.name} has: {', '.join(available)}")
    units = {t.units.get(column, "") for t in tables if column in t.columns}
    if all(not s.conditions and pairing.one_run_per_task(s.tables) for s in sets):
        points, gone = _per_task_points(sets, column)
    else:
        points, gone = _mean_points(sets, column)
    if not points:
        raise HistoryError(f"no run in {', '.join(map(str, paths))} finished normally with a valid value for '{column}'"
                           + (f" ({'; '.join(gone)})" if gone else ""))
    series, skipped = [], []
    for (rundefinition, name), pts in sorted(points.items()):
        if len(pts) < 2 * min_size:
            skipped.append(f"{rundefinition} / {name}: in {len(pts)} result set(s) only, too few for a changepoint")
            continue
        one = Series(rundefinition, name, pts)
        means = np.array([p.mean for p in pts])
        splits = sorted(e_divisive(means, permutations, p_threshold, min_size, seed), key=lambda s: s.position)
        bounds = [0] + [s.position for s in splits] + [len(pts)]
        for i, split in enumerate(splits):
            before, after = means[bounds[i]:bounds[i + 1]].mean(), means[bounds[i + 1]:bounds[i + 2]].mean()
            first = sets[pts[split.position].result_set]
            one.changepoints.append(Changepoint(rundefinition, name, split.position, first.label, first.date_text,
                                                float(before), float(after), float(after / before - 1) if before else math.nan,
                                                split.p, split.q))
        series.append(one)
    if not series:
        raise HistoryError(f"no series is in at least {2 * min_size} of the {len(sets)} result sets: {'; '.join(skipped)} "
                           "(a series is one run definition and input, or a run definition's tasks in competition-style "
                           "sets; a sweep's run definitions are named with their load level, a plain result file's are not)")
    return History(column, "/".join(sorted(units)), sets, series, skipped, permutations, p_threshold, min_size, seed,
                   left_out=_left_out_lines(points) + gone)


# --------------------------------------------------------------------------------------------
# output


HEADER = ["run definition", "input", "position", "first result set after the change", "date", "mean before",
          "mean after", "change", "p"]


def _rows(h):
    unit = f" {h.unit}" if h.unit else ""
    rows = []
    for s in h.series:
        for c in s.changepoints:
            rows.append([s.rundefinition, s.input, f"{c.position + 1} of {len(s.points)}", c.result_set, c.date,
                         f"{c.mean_before:.6g}{unit}", f"{c.mean_after:.6g}{unit}", f"{100 * c.change:+.2f} %", f"{c.p:.3g}"])
    return rows


def _summary(h):
    quiet = [f"{s.rundefinition} / {s.input}" for s in h.series if not s.changepoints]
    lines = [f"{len(h.result_sets)} result sets from {h.result_sets[0].date_text} to {h.result_sets[-1].date_text}; "
             f"{len(h.changepoints)} changepoint(s) in {len(h.series)} series."]
    if quiet:
        lines.append(f"No changepoint in: {', '.join(quiet)}.")
    lines += [f"Skipped {s}." for s in h.skipped]
    lines += [f"{s}." for s in h.left_out]
    return lines


def render(h, fmt="text"):
    """The changepoints as a text or markdown table, or everything (series means too) as JSON."""
    if fmt == "json":
        return json.dumps({
            "column": h.column, "unit": h.unit, "method": h.method(), "permutations": h.permutations,
            "p_threshold": h.p_threshold, "min_size": h.min_size, "seed": h.seed,
            "result_sets": [{"label": s.label, "date": s.date_text} for s in h.result_sets],
            "series": [{"rundefinition": s.rundefinition, "input": s.input, "points": [asdict(p) for p in s.points],
                        "changepoints": [asdict(c) for c in s.changepoints]} for s in h.series],
            "skipped": h.skipped, "left_out": h.left_out,
        }, indent=2, default=str)
    rows = _rows(h)
    notes = "\n".join(_summary(h) + [h.method()])
    if not rows:
        return notes
    table = [HEADER] + rows
    if fmt == "markdown":
        lines = ["| " + " | ".join(row) + " |" for row in table]
        lines.insert(1, "|" + "---|" * len(HEADER))
        return "\n".join(lines) + "\n\n" + notes
    widths = [max(len(row[i]) for row in table) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    return "\n".join(lines) + "\n\n" + notes


def _scale(h):
    """(factor, unit label) for display: seconds below 1 s are shown in ms."""
    if h.unit != "s":
        return 1.0, h.unit
    means = [p.mean for s in h.series for p in s.points]
    return (1e3, "ms") if means and np.median(means) < 1 else (1.0, "s")


MAX_PANELS = 8


def figure(h, max_panels=MAX_PANELS):
    """Mean with 95 % CI per result set (date order), one panel per series, dashed lines at the
    changepoints and the mean of each segment; series with changepoints come first."""
    from analysis.core import plots

    chosen = sorted(h.series, key=lambda s: (not s.changepoints,))[:max_panels]
    factor, unit = _scale(h)
    with plots.styled_figure(8.0, 1.0 + 2.3 * max(1, len(chosen))) as fig:
        axes = fig.subplots(max(1, len(chosen)), 1, sharex=True, squeeze=False)[:, 0]
        ticks = np.arange(len(h.result_sets))
        for ax, s in zip(axes, chosen):
            x = np.array([p.result_set for p in s.points])
            mean = np.array([p.mean for p in s.points]) * factor
            low = np.array([p.ci_low for p in s.points]) * factor
            high = np.array([p.ci_high for p in s.points]) * factor
            bounded = np.isfinite(low) & np.isfinite(high)
            yerr = np.vstack([np.where(bounded, mean - low, 0), np.where(bounded, high - mean, 0)])
            ax.errorbar(x, mean, yerr=yerr, marker="o", markersize=4, capsize=3, linewidth=1, elinewidth=1,
                        color=plots._BAR_COLOUR, label="mean with 95 % CI")
            bounds = [0] + [c.position for c in s.changepoints] + [len(s.points)]
            for a, b in zip(bounds[:-1], bounds[1:]):
                ax.hlines(mean[a:b].mean(), x[a] - 0.3, x[b - 1] + 0.3, color="0.35", linewidth=1.2,
                          label="segment mean" if a == 0 else None)
            for c in s.changepoints:
                at = (x[c.position - 1] + x[c.position]) / 2
                ax.axvline(at, color=plots._MEAN_COLOUR, linestyle="--", linewidth=1.2)
                ax.annotate(f"{100 * c.change:+.1f} %\np = {c.p:.3g}", xy=(at, 0.97), xycoords=("data", "axes fraction"),
                            xytext=(4, 0), textcoords="offset points", ha="left", va="top", fontsize=8,
                            color=plots._MEAN_COLOUR)
            found = f"{len(s.changepoints)} changepoint(s)" if s.changepoints else "no changepoint"
            ax.set_title(f"{s.rundefinition} / {s.input}: {found}", loc="left")
            ax.set_ylabel(f"mean {h.column} ({unit})" if unit else f"mean {h.column}")
        axes[0].legend(loc="lower left", frameon=False)
        axes[-1].set_xticks(ticks)
        every = max(1, math.ceil(len(ticks) / 6))   # dates under every k-th number only, so they cannot collide
        axes[-1].set_xticklabels([f"{i + 1}\n{s.date_text[5:16]}" if i % every == 0 else f"{i + 1}"
                                  for i, s in enumerate(h.result_sets)], fontsize=7)
        axes[-1].set_xlabel("result set (number in date order; below some, its start: month-day hour:minute)")
        if len(h.series) > len(chosen):
            fig.suptitle(f"{len(h.series) - len(chosen)} more series without a panel (see the table)", fontsize=8)
    return fig


def section(h, **kwargs):
    """The history as a report Section (table of changepoints, figure); `h` is a History or the
    paths to compute one from (keyword arguments as for history())."""
    from analysis.core import plots
    from analysis.core.report import Figure, Section, Table

    if not isinstance(h, History):
        h = history(h, **kwargs)
    out = Section(id="history", title=f"History: changepoints in {h.column} over {len(h.result_sets)} result sets",
                  paragraphs=_summary(h) + [h.method()], warnings=list(h.skipped))
    out.tables.append(Table(title="Changepoints", columns=HEADER, rows=_rows(h),
                            caption="Change: mean of the per-result-set means after the changepoint over the one before."))
    out.figures.append(Figure(title=f"{h.column} per result set over time", png=plots.to_png(figure(h)),
                              caption="Dashed red lines: changepoints (p from the permutation test); grey: segment means."))
    return out


def history_command(paths, column=DEFAULT_COLUMN, format="text", plot_path=None, out=None, *,
                    permutations=PERMUTATIONS, p_threshold=P_THRESHOLD, min_size=MIN_SIZE, seed=SEED):
    """`timekit history`: print the changepoints, write the plot; 0 when done (bad input raises
    HistoryError, a PipelineError, which the CLI turns into one line and exit 2)."""
    import sys

    from analysis.core import plots

    h = history(paths, column, permutations, p_threshold, min_size, seed)
    if plot_path is not None:
        try:
            Path(plot_path).write_bytes(plots.to_png(figure(h)))
        except OSError as e:
            raise HistoryError(f"{plot_path}: cannot write the plot: {e.strerror}") from None
    from analysis.core.results import machines

    warning = machines.changes([(s.label, machines.of_tables(s.tables)) for s in h.result_sets])
    if warning:  # before the table; on stderr where the output is JSON
        print(warning, file=sys.stderr if format == "json" else out or sys.stdout)
    print(render(h, format), file=out or sys.stdout)
    return 0
