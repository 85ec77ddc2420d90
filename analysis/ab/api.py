"""
`timekit ab` on shell commands as a function, for the command itself and for tools that compare
in-process (a bisect step): compare_commands runs what `timekit ab BASE NEW` runs (each command
executed once, auto's pilot and choice of design, the invocations, --until-decided, the sentinel,
invocations that met outside work set aside) and returns an AbOutcome: the gate's verdict, the
gated row's ratio and CI, the exit code ab gives, why it is undecided, and what it cost. The
command prints the outcome's text and writes the exports; a caller reads the fields.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Optional

from analysis.core import paths
from analysis.sweep import runner, steps_loop
from analysis.sweep.model import write_atomically
from analysis.ab import command_pairs, designs, report, separate
from analysis.ab import runner as ab_runner
from analysis.tools.commands import cli as commands_cli
from analysis.tools.commands import first_run, spec
from analysis.tools.options import AbOptions

VERDICTS = ("slower", "same", "faster", "undecided")


@dataclass(frozen=True)
class AbRow:
    """One row of the comparison: new / base of one run definition's commands in one column."""

    pair: str          # 'base → new', the run definition's concrete commands
    column: str
    ratio: float
    ci_low: float      # its 95 % CI
    ci_high: float
    verdict: str       # compare's (with --until-decided the sequential rule's): slower, faster, ~, undecided


@dataclass(frozen=True)
class AbOutcome:
    """What an A/B run of shell commands found: one of VERDICTS, the gate's over every row
    (analysis.ab.verdict.judge, what `timekit ab` says last): "slower" where it fails (exit 1);
    "faster" (a row is) or "same" where it passes; else "undecided", and `reason` says why.
    `ratio`, `ci_low`, `ci_high`: the first row of the first column compared (CPU time unless
    options.columns says otherwise)."""

    verdict: str
    ratio: float
    ci_low: float
    ci_high: float
    column: str
    exit_code: int          # what `timekit ab` exits with: 1 slower, 3 no verdict, 0 otherwise
    reason: str             # why undecided ('' otherwise)
    invocations: int        # benchexec invocations run (a paired design: one per M; separate: two)
    seconds: float          # wall time of the call
    directory: Path
    design: str
    rows: tuple = ()        # every row (AbRow) of every pair
    text: str = field(default="", repr=False)          # what `timekit ab` prints, in options.format
    figures: tuple = field(default=(), repr=False)     # each command's figures, for --export-*
    export: dict = field(default_factory=dict, repr=False)   # the export's fields besides the figures
    busy_from_outside: tuple = ()   # a line per pair that gives no verdict because the machine was busy


def compare_commands(base: Optional[str], new: Optional[str], options: AbOptions, outdir: Optional[Path] = None,
                     out=sys.stderr) -> AbOutcome:
    """Measure shell command NEW against BASE (and against each of options.more) as `timekit ab`
    does, progress on `out`; the results go to `outdir` (None: options.output, else results/ab/DATE).
    With options.resume, continue the run in `outdir` (base and new: None, or its commands).
    A wrong option raises a UserError before anything is written; an interrupt keeps every
    finished invocation, says how to resume on `out`, and raises runner.Interrupted."""
    started = time.monotonic()
    if options.resume:
        if not (outdir or options.output):
            raise separate.ABError("resume: give the directory of the A/B run to continue")
        outdir = Path(outdir or options.output).resolve()
        record, run_options = command_pairs.load_record(outdir)
        given = [c for c in (base, new, *options.more) if c is not None]
        if given and given != record["commands"]:
            raise separate.ABError(f"{outdir}: holds an A/B run of {', '.join(record['commands'])}, not of {', '.join(given)}")
        note, fresh = "", False
        runner.build_programs()  # programs/bin/cmdrun
        steps_loop.hold(outdir)  # one timekit per directory, from here to the verdicts
    else:
        commands = [base, new, *options.more]
        options = replace(options, base=base, new=new,
                          command_line=options.command_line or "timekit ab " + shlex.join(commands))
        check(commands, options)
        run_options, planned = command_pairs.prepare(commands, options)
        where, chosen = paths.user_results(), outdir or options.output
        outdir = Path(chosen or where.root / "ab" / commands_cli.stamp()).resolve()
        note = "" if chosen else where.note()
        commands_cli.check_new(outdir, command_pairs.MANIFEST, "an A/B")
        runner.build_programs()  # programs/bin/cmdrun
        first_run.check([(r[side], r["prepare"]) for pair in planned for r in pair["rundefinitions"]
                         for side in ("base", "new")], run_options, container=options.container)
        record, fresh = command_pairs.new_record(commands, options, run_options, planned), True
    try:
        measured, not_compared = _measure(record, outdir, run_options, options, fresh, note, out)
    finally:
        steps_loop.release(outdir)   # the directory's lock, taken once from the first invocation on
    judged = report.gate(measured, options.threshold)
    text, figures, extra = report.render(measured, run_options, options, judged, not_compared)
    return outcome(measured, judged, time.monotonic() - started, outdir, text, tuple(figures), extra,
                   extra["busy_from_outside"])


def check(commands, options):
    """The commands and the options' plan, in one line each, before anything is written."""
    if not all(isinstance(c, str) and c.strip() for c in commands):
        raise separate.ABError("an empty command; give each command as one quoted argument, e.g. "
                         "timekit ab './build-a/prog' './build-b/prog'")
    spec.check_text([*commands, options.prepare])
    if any(spec.is_definition(c) for c in commands):
        raise spec.CommandError("compare_commands compares shell commands; two benchmark definitions are "
                                "`timekit ab BASE.xml NEW.xml`")
    separate.reruns_to_start(options)
    separate.check_sequential(options)
    if options.per_task:
        raise separate.ABError("--per-task: for benchmark definitions with one run per task; shell commands have a row per "
                         "command and column already")


def _measure(record, outdir, run_options, options, fresh, note, out):
    """Every pair started (or continued) and measured: ([command_pairs.Measured], lines of rows not compared)."""
    design = command_pairs.design_of(record)
    command_pairs.columns(options, run_options, designs.before_choice(design).name)   # said now, not after the runs
    measured, not_compared = [], []
    for k, pair in enumerate(record["pairs"]):
        directory = outdir / pair["directory"]
        try:
            with commands_cli.new_directory(outdir) if fresh and k == 0 else contextlib.nullcontext():
                if fresh and k == 0:   # up to the first invocation, a failure leaves nothing behind
                    steps_loop.hold(outdir)  # one timekit per directory, from here to the verdicts
                    write_atomically(outdir / command_pairs.MANIFEST, json.dumps(record, indent=2))
                run = command_pairs.start_pair(pair, directory, record, run_options, options, design, note, out)
            found, lines = command_pairs.measure_pair(pair, run, directory, run_options, options, out)
        except runner.Interrupted as e:
            if (outdir / command_pairs.MANIFEST).exists():   # else nothing was kept (commands_cli.new_directory)
                raise e.continuing(ab_runner.resume_command(outdir)) from None
            raise
        measured.append(found)
        not_compared += [f"{command_pairs.pair_label(pair)}: {line}" for line in lines]
    return measured, not_compared


def outcome(measured, judged, seconds, directory, text="", figures=(), export=None, busy_from_outside=()):
    """The AbOutcome of the measured pairs and the gate's verdict on them (report.gate)."""
    rows, head = [], None
    for m in measured:
        labels = command_pairs.pair_commands(m.pair)
        for r in m.rows:
            row = AbRow(labels.get(r.rundefinition, r.rundefinition), r.column, r.ratio, r.ci_low, r.ci_high, r.verdict)
            rows.append(row)
            if head is None and r.column == m.columns[0]:
                head = row
    column = measured[0].columns[0] if measured else ""
    head = head or AbRow("", column, float("nan"), float("nan"), float("nan"), "")
    invocations = sum(s.status == "done" for m in measured for s in m.run.steps)
    design = measured[0].run.design if measured else ""
    return AbOutcome(judged.verdict, head.ratio, head.ci_low, head.ci_high, column, judged.exit_code, judged.reason,
                     invocations, seconds, Path(directory), design, tuple(rows), text, tuple(figures), export or {},
                     tuple(busy_from_outside))
