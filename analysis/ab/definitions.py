"""
`timekit ab BASE.xml NEW.xml`: two benchmark definitions, from the AbOptions to the verdict. The
blocks design (analysis.ab.merged) where one invocation can hold both, else the separate one
(analysis.ab.separate), chunk by chunk of the task set where it can be cut; a new run or one that
--resume continues; then compare's table, the design's line and the verdict, or compare's JSON.
"""

import datetime
import json
import sys
from pathlib import Path

from analysis.core import paths
from analysis.sweep import runner, steps_loop
from analysis.ab import designs, layout, merged, report, separate, task_chunks, verdict
from analysis.ab.record import AbPlan
from analysis.ab import runner as ab_runner
from analysis.ab.separate import ABError
from analysis.tools.commands import cli as commands_cli


def start(options):
    """A new A/B run of options.base and options.new, measured and printed; the exit code."""
    reruns = separate.reruns_to_start(options)
    where = paths.user_results()
    note = "" if options.output else where.note()
    outdir = Path(options.output or where.root / "ab" / datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")).resolve()
    for manifest in (separate.MANIFEST, merged.MANIFEST):
        commands_cli.check_new(outdir, manifest, "an A/B")
    with commands_cli.new_directory(outdir):
        blocks_run = _start_blocks(options, outdir, reruns)
        if blocks_run is None:
            separate_run = separate.start(options.base, options.new, outdir, reruns, options.seed, options.until,
                                          options.max_reruns_limit, options.load, options.container,
                                          chunks=_chunks(options), design=_one_side(options.design))
    if blocks_run is not None:
        return _run(blocks_run, outdir, options, note)
    return _run(separate_run, outdir, options, note)


def resume(options, outdir):
    """Continue the A/B run of two definitions in `outdir`; the exit code."""
    if (outdir / merged.MANIFEST).exists():
        steps_loop.hold(outdir)
        return _run(merged.BlocksRun.load(outdir), outdir, options, "")
    if not (outdir / separate.MANIFEST).exists():
        separate.ABRun.load(outdir)   # its one line, before the lock would create the directory
    steps_loop.hold(outdir)
    return _run(separate.ABRun.load(outdir), outdir, options, "")


def _start_blocks(options, outdir, reruns):
    """The blocks design's run of two definitions (None: they cannot share an invocation, which is
    said on stderr, or --design separate)."""
    if not designs.before_choice(options.design).holds_both:
        return None
    reason = merged.why_not_mergeable(options.base, options.new)
    if reason:
        print(f"design: separate: {reason}", file=sys.stderr, flush=True)
        return None
    names = [n for n in separate.rundefinitions(options.base) if n in separate.rundefinitions(options.new)]
    if not names:
        raise ABError(f"{options.base} and {options.new} share no run definition name; compare lines base and new up by it")
    return merged.start(options.base, options.new, outdir, names, AbPlan.of(options, reruns))


def _one_side(design):
    """The design of invocations that hold one side each: the one asked for, else separate."""
    return design if design in designs.names() and not designs.get(design).holds_both else "separate"


def _chunks(options):
    """Chunks of the task set for definitions that the default design could not merge (1: none)."""
    if not designs.before_choice(options.design).holds_both or not merged.why_not_mergeable(options.base, options.new):
        return 1
    chunks = min(task_chunks.count(options.base), task_chunks.count(options.new))
    if chunks > 1:
        print(f"design: separate in {chunks} chunks of the task set: base and new alternate chunk by chunk in every "
              "rerun, so that the drift within a rerun cancels too", file=sys.stderr, flush=True)
    return chunks


def _interrupted(e, outdir):
    return e.continuing(ab_runner.resume_command(outdir))


def _run(run, outdir, options, note):
    """Measure two definitions under the run's design (separate: an invocation a side; blocks: both
    merged into every invocation) and print compare's table, the design's line and the verdict."""
    steps_loop.hold(outdir)  # one timekit per directory, from here to the verdicts
    try:
        return _measure_and_print(run, outdir, options, note)
    finally:
        steps_loop.release_all(under=outdir)   # what start or resume took too: the command ends here


def _measure_and_print(run, outdir, options, note):
    from analysis.tools.compare import repeated as compare_mod  # scipy: once the input is known to be good

    one_side = not designs.get(run.design).holds_both
    run.ask_until_decided(options, outdir)
    held = f"{run.reruns} reruns per side" if one_side else f"{run.reruns} invocations holding both"
    print(f"A/B: {run.base} against {run.new}, design {run.design}: {held}; results in {outdir}{note}",
          file=sys.stderr, flush=True)
    columns = tuple(options.columns or compare_mod.DEFAULT_COLUMNS)
    try:
        result, sequential = run.measure(outdir, columns, options, sys.stderr)
    except runner.Interrupted as e:
        raise _interrupted(e, outdir) from None
    outside = run.busy_from_outside(outdir)   # too much outside work: no verdict
    several = len({r.input for r in result.rows}) > 1   # task sets: a row each, named with its input
    judged = verdict.judge([verdict.Gated(f"{r.rundefinition} / {r.input}" if several else r.rundefinition, r.column,
                                          r.verdict, r.ratio, r.ci_low, r.ci_high, bool(run.until_decided))
                            for r in result.rows],
                           options.threshold, [outside] if outside else ())
    if options.format == "json":
        names = {r.rundefinition: r.rundefinition for r in result.rows}
        method = compare_mod.legend(result.rows, options.alpha, options.threshold)
        data = {"results": [], "verdict": judged.to_dict(),
                "comparison": [report.comparison_entry(r, names, names, outdir, run) for r in result.rows],
                "regression": judged.exit_code == 1, "design_changes_measure": [],
                "busy_from_outside": [outside] if outside else [], "not_compared": result.not_compared,
                "ab": [report.run_entry(run, outdir, run.described(outdir), method, sequential)]}
        print(json.dumps(data, indent=2, default=str))
        return judged.exit_code
    table = compare_mod.render(result, options.format, options.alpha, options.threshold, method=options.verbose)
    pair = layout.PairText(table, run.described(outdir, verbose=options.verbose), sequential.text,
                           warning=separate.machines_warning(outdir) if one_side else "")
    print(layout.compose([pair], judged.line))
    return judged.exit_code
