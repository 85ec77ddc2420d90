"""
`timekit ab 'CMD A' 'CMD B' [more]`: shell commands as the two sides of ab.

An argument that is not a benchmark definition (spec.is_definition) is a shell command. For each
pair (A against B, then A against each further command) the kit writes two definitions,
DIR/base/A.xml and DIR/new/B.xml, with the same run definition names (`command`, or one per
assignment of the -L parameter lists, `size=10`) and the same repetition tasks (DIR/tasks), and
hands them to ab's own path unchanged: ab.start, ab.measure (reruns in a seeded order, --until,
--resume); the paired designs run through analysis.tools.commands.paired_ab. Before anything is
written, every wrong option is one line (`prepare`) and each command is executed once
(analysis.tools.commands.first_run). What is printed is labelled by the commands; DIR/commands.json
records them. With more than two commands each further pair has its own directory DIR/K-NAME (A is
measured in each, so every pair is interleaved).
"""

import contextlib
import json
import os
import sys
from pathlib import Path

from analysis.core import paths
from analysis.sweep import runner, steps_loop
from analysis.sweep.model import now, write_atomically
from analysis.tools import ab
from analysis.tools.commands import cli as commands_cli
from analysis.tools.commands import definition, first_run, output, paired_ab, progress, report, spec

MANIFEST = "commands.json"


def _arguments(args):
    return [a for a in (args.base, args.new, *(getattr(args, "more", None) or [])) if a is not None]


def commands_given(args):
    """The shell commands of `timekit ab` (None: benchmark definitions, the existing path)."""
    given = _arguments(args)
    kinds = {spec.is_definition(a) for a in given}
    if kinds == {True, False}:
        raise spec.CommandError("give two benchmark definitions or two or more shell commands, not a mix")
    if False not in kinds:
        if len(given) > 2:
            raise spec.CommandError(f"ab compares two benchmark definitions, got {len(given)}; "
                                    "more than two are possible for shell commands only")
        options = commands_cli.given_command_options(args)
        if options:
            raise spec.CommandError(f"{', '.join(options)}: for shell commands only; a benchmark definition "
                                    "sets its runs, options and tasks itself")
        return None
    return given


def pairs(commands, options):
    """One record per pair (A and each further command): its directory and its run definitions,
    each {"name", "assignment", "base", "new", "prepare"} (the concrete commands of both sides)."""
    spec.check_parameters(commands, options)
    planned = []
    for k, other in enumerate(commands[1:], start=2):
        used = [[name, values] for name, values in options.parameters
                if any("{" + name + "}" in text for text in (commands[0], other, options.prepare))]
        rundefinitions = [{"name": spec.assignment_label(a) or "command", "assignment": a,
                           "base": spec.substitute(commands[0], a), "new": spec.substitute(other, a),
                           "prepare": spec.substitute(options.prepare, a)} for a in spec.combinations(used)]
        planned.append({"directory": "." if len(commands) == 2 else f"{k}-{spec.slug(other)}",
                        "base": commands[0], "new": other, "rundefinitions": rundefinitions})
    return planned


def _write_sides(pair, options, directory, line):
    """DIR/tasks and the two definitions of a pair; returns their paths."""
    tasks = definition.write_tasks(directory, options)
    paths = []
    for side in ("base", "new"):
        note = (f"Written by `{line}` on {now()}: the {side} side of an A/B run of shell commands ({pair[side]}). "
                "An ordinary BenchExec definition: from the kit's checkout, `benchexec THIS.xml` reruns this side.")
        rundefinitions = [(r["name"], r[side], r["prepare"]) for r in pair["rundefinitions"]]
        paths.append(definition.write_definition(directory / side / f"{spec.slug(pair[side])}.xml", rundefinitions,
                                                 options, tasks, note))
    return paths


class EtaLines(progress.InvocationLines):
    """ab's progress lines ('... (k/N invocations)') with an ETA from the time per invocation so far."""

    def __init__(self, stream):
        super().__init__(stream, eta=True)


def prepare(commands, args):
    """What a new run of `commands` needs, every wrong option found before anything is written (one
    line): (spec.Options, the pairs)."""
    options = commands_cli.options_from(args, container=not args.no_container)
    planned = pairs(commands, options)
    _columns(args, options, "blocks" if args.design == "auto" else args.design)   # a column no design compares
    if args.design == "duet" and len(os.sched_getaffinity(0)) < 2:
        raise paired_ab.PairedError(f"--design duet runs the two sides at once on two cores; this process may use "
                                    f"{len(os.sched_getaffinity(0))}: use --design blocks")
    commands_cli.check_exports(args)
    return options, planned


def run(args, commands=None, outdir=None):
    """Measure every pair (of `commands`, or of the run in `outdir` that --resume continues) through
    ab's own path or a paired design, then print and export by the commands."""
    fresh = outdir is None
    if not fresh:
        steps_loop.hold(outdir)
        note = ""
        try:
            record = json.loads((outdir / MANIFEST).read_text())
        except (OSError, ValueError) as e:
            raise ab.ABError(f"{outdir / MANIFEST}: not a readable A/B record ({e}); start anew without --resume") from None
        options = spec.Options(**record["options"])
        runner.build_programs()  # programs/bin/cmdrun
    else:
        options, planned = prepare(commands, args)
        where = paths.user_results()
        outdir = Path(args.output or where.root / "ab" / commands_cli.stamp()).resolve()
        note = "" if args.output else where.note()
        commands_cli.check_new(outdir, MANIFEST, "an A/B")
        runner.build_programs()  # programs/bin/cmdrun
        first_run.check([(r[side], r["prepare"]) for pair in planned for r in pair["rundefinitions"] for side in ("base", "new")],
                        options, container=not args.no_container)
        record = {"commands": commands, "options": options.to_dict(), "pairs": planned, "plan": _plan(args),
                  "command_line": commands_cli.command_line(), "created": now()}
    design = record["plan"].get("design", "separate") if record.get("plan") else "separate"
    _columns(args, options, "blocks" if design == "auto" else design)   # a column no design can compare: said now
    measured, not_compared = [], []
    for k, pair in enumerate(record["pairs"]):
        directory = outdir / pair["directory"]
        try:
            with commands_cli.new_directory(outdir) if fresh and k == 0 else contextlib.nullcontext():
                if fresh and k == 0:   # up to the first invocation, a failure leaves nothing behind
                    steps_loop.hold(outdir)  # one timekit per directory, from here to the verdicts
                    write_atomically(outdir / MANIFEST, json.dumps(record, indent=2))
                started = _start(pair, directory, record, options, args, design, note)
            result, sequential = _measure(started, directory, options, args)
        except runner.Interrupted:
            print(f"timekit: interrupted; finished invocations are kept, continue with: timekit ab --resume --output {outdir}",
                  file=sys.stderr)
            return 130
        measured.append((pair, started, directory, result.rows, sequential))
        not_compared += [f"{pair['base']} → {pair['new']}: {line}" for line in result.not_compared]
    from analysis.tools.compare import repeated as compare_mod  # scipy: once measured (paired_ab imports it meanwhile)

    text, figures, extra = _report(measured, options, args, compare_mod)
    print(text)
    report.export(args, figures, extra)
    if busy(measured):
        return compare_mod.NOTHING_COMPARED
    if any(compare_mod.regressed(rows) for _, _, _, rows, _ in measured):
        return 1
    if design_changed(measured):
        return compare_mod.NOTHING_COMPARED
    if not any(rows for _, _, _, rows, _ in measured):
        print(f"{compare_mod.NOTHING}" + "".join(f"\n  {line}" for line in not_compared))
        return compare_mod.NOTHING_COMPARED
    return 0


def _columns(args, options, design):
    """The columns compared: cmdrun's per-execution times under a paired design, else BenchExec's
    (or cmdrun's means, where --repeat or --prepare make BenchExec's hold more than the command)."""
    from analysis.tools.commands import figures as figures_mod

    if design in paired_ab.DESIGNS:
        return paired_ab.columns_of(args.columns, design)
    wall, cpu = figures_mod.time_columns(options)
    return tuple(args.columns or (cpu, wall))


def _start(pair, directory, record, options, args, design, note):
    """The run of one pair, started (its definitions written, for auto its design piloted) or, on
    --resume, as recorded; a line on stderr says which design and where."""
    plan = record.get("plan") or _plan(args)  # the plan as given, also for a pair a kill kept from starting
    if design == "separate":
        if (directory / ab.MANIFEST).exists():
            run = ab.ABRun.load(directory)
        else:
            base, new = _write_sides(pair, options, directory, record["command_line"])
            run = ab.start(base, new, directory, plan["reruns"], plan["seed"], plan["until"], plan["max_reruns"],
                           plan["load"], plan["container"])
        ab.make_sequential(run, directory, args)
        print(f"A/B: {pair['base']} against {pair['new']}, {run.reruns} reruns per side (design separate); results in "
              f"{directory}{note}", file=sys.stderr, flush=True)
        return run
    if (directory / paired_ab.MANIFEST).exists():
        run = paired_ab.PairedRun.load(directory)
    else:
        run = paired_ab.start(pair, options, directory, plan["design"], plan, args.runs, args.repeat,
                              record["command_line"], args.columns)
    if args.until_decided:
        run.until_decided, run.budget = True, args.budget if args.budget is not None else run.budget
        fits = paired_ab.invocations_in(run, args.budget) if args.budget_sets_max and args.budget else 0
        run.max_reruns = max(run.max_reruns, args.max_reruns, fits)
        run.save(directory)
    b = run.batch
    chosen = f" ({run.design_why})" if run.design_why else ""
    print(f"A/B: {pair['base']} against {pair['new']}, design {run.design}{chosen}: {run.reruns} invocations of {b['runs']} run(s) "
          f"x {b['pairs_per_run']} pair(s); results in {directory}{note}", file=sys.stderr, flush=True)
    return run


def _measure(run, directory, options, args):
    """(compare's Result, the sequential report) of one started pair."""
    if isinstance(run, ab.ABRun):
        columns = _columns(args, options, "separate")
        result = ab.measure(run, directory, columns, args.alpha, args.threshold, out=EtaLines(sys.stderr))
        return result, ab.sequential_verdicts(run, directory, result.rows, columns, args.alpha, args.threshold)
    columns = _columns(args, options, run.design)
    result, looks = paired_ab.measure(run, directory, columns, args.alpha, args.threshold, out=EtaLines(sys.stderr))
    return result, paired_ab.sequential_report(run, result, looks, args.alpha, args.threshold, directory)


def _plan(args):
    """What ab.start needs of the command line, kept in the record: a resume has no --reruns."""
    return {"reruns": ab.reruns_to_start(args), "seed": args.seed, "until": args.until, "max_reruns": args.max_reruns,
            "load": args.load, "container": not args.no_container, "design": args.design, "threshold": args.threshold}


def _side_commands(pair, side):
    return [spec.Command(r[side], pair[side], r["assignment"], r["prepare"], r["name"]) for r in pair["rundefinitions"]]


def labels_of(base, new):
    """{run definition: 'base command → new command'} where BASE and NEW are the sides of one pair of
    an A/B run of shell commands (their folder, or the one above, holds its record); else {}."""
    base, new = Path(base).resolve(), Path(new).resolve()
    if base.parent != new.parent or not base.is_dir():
        return {}
    for folder in (base.parent, base.parent.parent):
        try:
            record = json.loads((folder / MANIFEST).read_text())
        except (OSError, ValueError):
            continue
        for pair in record.get("pairs", []):
            if (folder / pair["directory"]).resolve() == base.parent:
                return _labels(pair)
    return {}


def _labels(pair):
    return {r["name"]: f"{r['base']} → {r['new']}" for r in pair["rundefinitions"]}


def verdict_line(comparison, regressed, threshold):
    """The last line: the gate's answer. '~' only says that no slowdown was shown; where a row's
    CI still reaches beyond the threshold, a slowdown that large is not excluded either, and the
    line says so (on a noisy VM the default 5 invocations left +19 % open for a 10 % slower build)."""
    if regressed:
        slower = sorted({c["command"] for c in comparison if c["verdict"] == "slower"})
        return f"verdict: slower: {'; '.join(slower)} (exit 1)"
    line = "verdict: no significant slowdown beyond the threshold (exit 0)"
    open_rows = [c for c in comparison if c["verdict"] in ("~", "undecided") and c.get("ci_high", 0) > 1 + threshold]
    if not open_rows:
        return line
    undecided = any(c["verdict"] == "undecided" for c in open_rows)
    how = ("undecided: the lines above say what would decide it" if undecided
           else "more --reruns, or --until-decided, would tell")
    by_command = {}
    for c in sorted(open_rows, key=lambda c: -c["ci_high"]):
        by_command.setdefault(c["command"], []).append(f"{c['column']}'s CI reaches {(c['ci_high'] - 1) * 100:+.1f} %")
    reaches = "; ".join(f"for {command}, {', '.join(parts)}" for command, parts in by_command.items())
    return f"{line}; not excluded either: {reaches}, beyond the {threshold * 100:g} % threshold ({how})"


def design_changed(measured):
    """['base → new: why'] of the pairs whose co-located design the sentinel flagged without a
    blocks continuation: their verdict is undecided, and the gate must not pass on it."""
    return [f"{pair['base']} → {pair['new']}: {paired_ab.undecided_by_design(run)}" for pair, run, *_ in measured
            if isinstance(run, paired_ab.PairedRun) and paired_ab.undecided_by_design(run)]


def busy(measured):
    """['base → new: why'] of the pairs with too many invocations disturbed from outside to set
    them aside (analysis.sweep.disturbed): their verdict is undecided whatever the rows say."""
    return [f"{pair['base']} → {pair['new']}: {paired_ab.busy(run, directory)}" for pair, run, directory, *_ in measured
            if isinstance(run, paired_ab.PairedRun) and paired_ab.busy(run, directory)]


def busy_line(found, exit_code):
    return f"verdict: undecided: {'; '.join(found)}; rerun on a quiet machine (exit {exit_code})"


def design_changed_line(changed, exit_code):
    return (f"verdict: undecided: the design changes what it measures ({'; '.join(changed)}); --design blocks, or "
            f"--until-decided, which goes on as blocks, would decide it (exit {exit_code})")


def _sides(pair, run, directory, rows, options):
    """(base figures, new figures, BenchExec's Cost, the design's lines in full and in short, the
    machines warning)."""
    from analysis.tools.commands import figures as figures_mod

    if isinstance(run, paired_ab.PairedRun):
        found = paired_ab.tables(directory, run)   # once for both sides and the cost
        base = paired_ab.side_figures(found, directory, "a", _side_commands(pair, "base"), run.design)
        new = paired_ab.side_figures(found, directory, "b", _side_commands(pair, "new"), run.design)
        batch = spec.Options(**run.options)
        full = "\n".join(filter(None, [paired_ab.summary(run), *paired_ab.colocation_lines(run),
                                        paired_ab.duet_note(run, pair, rows)]))
        aside = paired_ab.disturbed_line(run, directory)
        full += f"\n{aside}" if aside else ""
        short = "\n".join(filter(None, [paired_ab.summary(run, verbose=False),
                                         *paired_ab.colocation_lines(run, flagged_only=True), aside]))
        return base, new, figures_mod.benchexec_cost(found, batch), full, short, ""
    base, cost = report.measured(directory / "base", _side_commands(pair, "base"), options)
    new, _ = report.measured(directory / "new", _side_commands(pair, "new"), options)
    why = ("design: separate: base and new in invocations of their own, in seeded orders opposite in every other rerun; the rerun is "
           "the unit, so the drift between invocations is in the comparison (--design blocks cancels it). ")
    return base, new, cost, why + ab.summary(run), ab.summary(run, verbose=False), ab.machines_warning(directory)


def _report(measured, options, args, compare_mod):
    """(text in args.format, figures of every command, the export's extra fields). The text is
    hyperfine's blocks, the table and the verdict; --verbose adds the method and the design's
    paragraph, which the JSON always holds."""
    from dataclasses import asdict

    parts, figures, comparison, costs, summaries, methods = [], [], [], [], [], []
    for k, (pair, run, directory, rows, sequential) in enumerate(measured):
        base, new, cost, summary, short, warning = _sides(pair, run, directory, rows, options)
        figures += (base if k == 0 else []) + new
        costs.append(cost)
        summaries.append(summary)
        methods.append(compare_mod.legend(rows, args.alpha, args.threshold))
        labels = _labels(pair)
        if args.format == "text" or args.format == "markdown":
            parts.append(report.blocks(base + new, ["Base"] * len(base) + ["New"] * len(new)))
            parts.append("\n".join(filter(None, [warning, output.verdict_table(rows, labels, markdown=args.format == "markdown")])))
            design = (methods[-1] + "\n" + summary) if args.verbose else short
            parts.append(design + ("\n\n" + sequential.text if sequential.text else ""))
        comparison += [{**asdict(r), "command": labels.get(r.rundefinition, r.rundefinition), "directory": str(directory)}
                       for r in rows]
    regressed = any(compare_mod.regressed(rows) for _, _, _, rows, _ in measured)
    if args.format in ("text", "markdown"):
        batched = options if not isinstance(measured[0][1], paired_ab.PairedRun) else spec.Options(**measured[0][1].options)
        parts.append("\n".join(output.cost_lines(costs[0], figures, batched, here=args.verbose, verbose=args.verbose)))
        changed, outside = design_changed(measured), busy(measured)
        parts.append(busy_line(outside, compare_mod.NOTHING_COMPARED) if outside
                     else design_changed_line(changed, compare_mod.NOTHING_COMPARED) if changed and not regressed
                     else verdict_line(comparison, regressed, args.threshold))
    extra = {"comparison": comparison, "regression": regressed, "design_changes_measure": design_changed(measured),
             "busy_from_outside": busy(measured),
             "ab": [{"directory": str(directory), "design": getattr(run, "design", "separate"),
                     "design_why": getattr(run, "design_why", ""), "reruns": run.reruns,
                     **({"cores": run.cores, "pilot": run.pilot, "colocation": run.colocation, "flagged": run.flagged,
                         "switched": run.switched, "disturbed": sorted(paired_ab.loaded(directory, run).disturbed.names)}
                        if isinstance(run, paired_ab.PairedRun) else {}),
                     "checks": run.checks, "stopped": run.stopped, "summary": summary, "method": method,
                     "sequential": sequential.to_dict()}
                    for (_, run, directory, _, sequential), summary, method in zip(measured, summaries, methods)],
             "benchexec": {**costs[0].to_dict(), "definitions": [str(path) for _, _, directory, _, _ in measured
                                                                  for path in sorted(directory.glob("**/*.xml"))]},
             "options": options.to_dict()}
    if args.format == "json":
        from analysis.tools.commands.export import as_json

        return as_json(figures, extra), figures, extra
    return "\n\n".join(p for p in parts if p), figures, extra
