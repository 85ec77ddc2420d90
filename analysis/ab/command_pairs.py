"""
`timekit ab 'CMD A' 'CMD B' [more]`: shell commands as ab's sides, pair by pair (A against B,
then against each further command; a run definition per -L assignment). A pair runs under a
paired design (analysis.ab.paired) or, with --design separate, as two generated definitions through
separate.start and separate.measure. DIR/commands.json records the commands, options and plan. The loop over
the pairs is analysis.ab.api's; what is printed, analysis.ab.report's.
"""

import json
from pathlib import Path
from typing import NamedTuple

from analysis.sweep.model import now
from analysis.ab import designs, separate
from analysis.tools.commands import cli as commands_cli
from analysis.tools.commands import definition, progress, spec
from analysis.tools.commands.pair_record import MANIFEST, labels_of, pair_commands  # noqa: F401 (ab's names too)
from analysis.ab import paired
from analysis.ab.record import AbPlan

SIDES = ("base", "new")


class Measured(NamedTuple):
    """One pair measured: its record, the run (separate.ABRun or paired.PairedRun), its directory,
    compare's rows, the sequential report, and the columns compared (the first is the gated one)."""

    pair: dict
    run: object
    directory: Path
    rows: list
    sequential: object
    columns: tuple


def commands_given(options):
    """The shell commands of `timekit ab` (None: benchmark definitions, the existing path);
    `options`: the AbOptions (or anything with its base, new, more and hyperfine's options)."""
    given = [a for a in (options.base, options.new, *(getattr(options, "more", None) or [])) if a is not None]
    kinds = {spec.is_definition(a) for a in given}
    if kinds == {True, False}:
        raise spec.CommandError("give two benchmark definitions or two or more shell commands, not a mix")
    if False not in kinds:
        if len(given) > 2:
            raise spec.CommandError(f"ab compares two benchmark definitions, got {len(given)}; "
                                    "more than two are possible for shell commands only")
        named = commands_cli.given_command_options(options)
        if named:
            raise spec.CommandError(f"{', '.join(named)}: for shell commands only; a benchmark definition "
                                    "sets its runs, options and tasks itself")
        return None
    return given


def letter(k):
    """The automatic label of the k-th command (from 0): A, B, C, ..."""
    return chr(ord("A") + k) if k < 26 else f"#{k + 1}"


def command_labels(commands, names=None):
    """Each command's label: its -n/--command-name, else its letter."""
    labels = [name or letter(k) for k, name in enumerate(spec.names_given(names, len(commands)))]
    spec.check_labels(labels)
    return labels


def pairs(commands, options, names=None):
    """One record per pair (A and each further command): its directory, its sides' labels
    (command_labels) and its run definitions, each {"name", "assignment", "base", "new",
    "prepare"} (the concrete commands of both sides); `options`: spec.Options."""
    spec.check_parameters(commands, options)
    labels = command_labels(commands, names)
    planned = []
    for k, other in enumerate(commands[1:], start=2):
        used = [[name, values] for name, values in options.parameters
                if any("{" + name + "}" in text for text in (commands[0], other, options.prepare))]
        rundefinitions = [{"name": spec.assignment_label(a) or "command", "assignment": a,
                           "base": spec.substitute(commands[0], a), "new": spec.substitute(other, a),
                           "prepare": spec.substitute(options.prepare, a)} for a in spec.combinations(used)]
        planned.append({"directory": "." if len(commands) == 2 else f"{k}-{spec.slug(other)}",
                        "base": commands[0], "new": other, "labels": {"base": labels[0], "new": labels[k - 1]},
                        "rundefinitions": rundefinitions})
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


def prepare(commands, options):
    """What a new run of `commands` needs, every wrong option of the AbOptions found before anything
    is written (one line): (spec.Options, the pairs)."""
    run_options = commands_cli.options_from(options, container=options.container)
    planned = pairs(commands, run_options, options.command_name)
    columns(options, run_options, designs.before_choice(options.design).name)   # a column no design compares
    paired.check_cpus(options.design)
    commands_cli.check_exports(options)
    return run_options, planned


def new_record(commands, options, run_options, planned):
    """What DIR/commands.json records of a new run."""
    return {"commands": commands, "options": run_options.to_dict(), "pairs": planned, "plan": plan_of(options).to_dict(),
            "command_line": options.command_line, "created": now()}


def load_record(outdir):
    """(the record, its spec.Options) of the run in `outdir` that --resume continues."""
    try:
        record = json.loads((Path(outdir) / MANIFEST).read_text())
        for pair in record["pairs"]:   # a record from before labels: the letters of its commands
            pair.setdefault("labels", {side: letter(record["commands"].index(pair[side])) for side in SIDES})
        return record, spec.Options(**record["options"])
    except (OSError, ValueError, TypeError, KeyError) as e:
        raise separate.ABError(f"{Path(outdir) / MANIFEST}: not a readable A/B record ({e}); start anew without --resume") from None


def design_of(record):
    plan = recorded_plan(record)
    return plan.design if plan else "separate"


def columns(options, run_options, design, only=None):
    """The columns compared: cmdrun's per-execution times under a paired design, else BenchExec's
    (or cmdrun's means, where --repeat or --prepare make BenchExec's hold more than the command);
    the first is the one the outcome is told by (CPU time unless --column says otherwise)."""
    from analysis.tools.commands import figures as figures_mod

    if design in paired.DESIGNS:
        return paired.columns_of(options.columns, design, only)
    wall, cpu = figures_mod.time_columns(run_options)
    return tuple(options.columns or (cpu, wall))


def start_pair(pair, directory, record, run_options, options, design, note, out):
    """The run of one pair, started (its definitions written, for auto its design piloted) or, on
    --resume, as recorded; a line on `out` says which design and where."""
    plan = recorded_plan(record) or plan_of(options)  # the plan as given, also for a pair a kill kept from starting
    if not designs.before_choice(design).holds_both:
        if (directory / separate.MANIFEST).exists():
            run = separate.ABRun.load(directory)
        else:
            base, new = _write_sides(pair, run_options, directory, record["command_line"])
            run = separate.start(base, new, directory, plan.reruns, plan.seed, plan.until, plan.max_reruns,
                                 plan.load, plan.container, design=design)
        run.ask_until_decided(options, directory)
        print(f"A/B: {pair['base']} against {pair['new']}, {run.reruns} reruns per side (design {run.design}); results in "
              f"{directory}{note}", file=out, flush=True)
        return run
    if (directory / paired.MANIFEST).exists():
        run = paired.PairedRun.load(directory)
    else:
        run = paired.start(pair, run_options, directory, plan.design, plan, options.runs, options.repeat,
                              record["command_line"], options.columns)
    fits = paired.invocations_in(run, options.budget) if options.budget_sets_max and options.budget else 0
    run.ask_until_decided(options, directory, fits)
    b = run.batch
    chosen = f" ({run.design_why})" if run.design_why else ""
    if run.design_why.startswith("auto:") and not options.verbose:   # the reason is in the JSON and --verbose
        chosen = " (auto; --verbose says why)"
    alone = "" if options.columns else run.only_column_why()
    note += f"; {alone}" if alone else ""
    print(f"A/B: {pair['base']} against {pair['new']}, design {run.design}{chosen}: {run.reruns} invocations of {b.runs} run(s) "
          f"x {b.pairs_per_run} pair(s); results in {directory}{note}", file=out, flush=True)
    return run


def measure_pair(pair, run, directory, run_options, options, out):
    """One started pair measured (Measured): its invocations, and with --until-decided the looks."""
    compared = columns(options, run_options, run.design, run.only_column)
    result, sequential = run.measure(directory, compared, options, EtaLines(out))
    return Measured(pair, run, directory, result.rows, sequential, compared), result.not_compared


def plan_of(options):
    """The AbPlan of the AbOptions, kept in the record: a resume has no --reruns."""
    return AbPlan.of(options, separate.reruns_to_start(options))


def recorded_plan(record):
    """The AbPlan a record keeps (None: a record from before plans were kept)."""
    return AbPlan.from_dict(record["plan"]) if record.get("plan") else None


def side_commands(pair, side):
    label = pair_side_label(pair, side)
    return [spec.Command(r[side], pair[side], r["assignment"], r["prepare"], r["name"], spec.labelled(label, r["assignment"]))
            for r in pair["rundefinitions"]]


def pair_side_label(pair, side):
    """The label of one side of a pair (its full command in a pair recorded without labels)."""
    return pair.get("labels", {}).get(side) or pair[side]


def pair_labels(pair):
    """{run definition: 'A → B'}: the sides' labels, and the parameters where the labels do not
    name them (what the table's rows say; the blocks above it name each command in full)."""
    base, new = (pair_side_label(pair, side) for side in SIDES)
    out = {}
    for r in pair["rundefinitions"]:
        a = r["assignment"]
        named = spec.substitute(base, a) != base or spec.substitute(new, a) != new
        out[r["name"]] = (f"{spec.substitute(base, a)} → {spec.substitute(new, a)}"
                          + (f" ({r['name']})" if a and not named else ""))
    return out


def pair_label(pair):
    """'A → B': a pair in the lines about it (busy, the design changed)."""
    return f"{pair_side_label(pair, 'base')} → {pair_side_label(pair, 'new')}"
