"""
What `timekit ab` on shell commands prints and exports, rendered last from the measured pairs
(command_pairs.Measured): hyperfine's block per command, compare's table, the design's line and the
gate's verdict line (--verbose adds the method and why the design holds, which the JSON always
holds), and the exit code the gate gives.
"""

from dataclasses import asdict

from analysis.tools.commands import output, report
from analysis.ab import command_pairs, layout, verdict


def in_full(pair):
    """'base command → new command': a pair as a caller and the JSON name it (the text: its labels)."""
    return f"{pair['base']} → {pair['new']}"


def design_changed(measured, name=in_full):
    """['base → new: why'] of the pairs whose co-located design the sentinel flagged without a
    blocks continuation: their verdict is undecided, and the gate must not pass on it."""
    return [f"{name(m.pair)}: {why}" for m in measured for why in [m.run.design_changed()] if why]


def busy(measured, name=in_full):
    """['base → new: why'] of the pairs with too many invocations disturbed from outside to set
    them aside (analysis.sweep.disturbed): their verdict is undecided whatever the rows say."""
    return [f"{name(m.pair)}: {why}" for m in measured for why in [m.run.busy_from_outside(m.directory)] if why]


def gate(measured, threshold):
    """The gate's verdict on the measured pairs (analysis.ab.verdict.judge), naming each row as the
    text does: by its commands' labels."""
    rows = []
    for m in measured:
        labels = command_pairs.pair_labels(m.pair)
        rows += [verdict.Gated(labels.get(r.rundefinition, r.rundefinition), r.column, r.verdict, r.ratio, r.ci_low,
                               r.ci_high, bool(m.run.until_decided)) for r in m.rows]
    name = command_pairs.pair_label
    return verdict.judge(rows, threshold, busy(measured, name), design_changed(measured, name))


def comparison_entry(row, commands, labels, directory, run):
    """A row of the JSON's `comparison`: compare's row, what it compares in full and in the text's
    labels, where its results are, and whether the sequential rule judged it."""
    return {**asdict(row), "command": commands.get(row.rundefinition, row.rundefinition),
            "label": labels.get(row.rundefinition, row.rundefinition), "directory": str(directory),
            "sequential": bool(run.until_decided)}


def run_entry(run, directory, summary, method, sequential):
    """A run's entry in the JSON's `ab`: its design, invocations, stopping and the lines that say them."""
    return {"directory": str(directory), "design": run.design, "design_why": getattr(run, "design_why", ""),
            "reruns": run.reruns, "checks": run.checks, "stopped": run.stopped, "summary": summary, "method": method,
            "sequential": sequential.to_dict()}


def render(measured, run_options, options, judged, not_compared=()):
    """(text in options.format, figures of every command, the export's extra fields); `judged`: the
    gate's verdict (gate), whose line ends the text and which the JSON holds. The text is
    hyperfine's blocks, the table and the verdict; --verbose adds the method and the design's
    paragraph, which the JSON always holds. Nothing compared: the lines that say why come before
    the verdict line, which says it."""
    from analysis.tools.compare import repeated as compare_mod

    pairs, figures, comparison, costs, summaries, methods = [], [], [], [], [], []
    for k, m in enumerate(measured):
        commands = tuple(command_pairs.side_commands(m.pair, side) for side in command_pairs.SIDES)
        base, new, cost, summary, short, warning = m.run.sides(m.directory, m.pair, commands, m.rows, run_options)
        figures += (base if k == 0 else []) + new
        costs.append(cost)
        summaries.append(summary)
        methods.append(compare_mod.legend(m.rows, options.alpha, options.threshold))
        labels, commands = command_pairs.pair_labels(m.pair), command_pairs.pair_commands(m.pair)
        if options.format in ("text", "markdown"):
            pairs.append(layout.PairText(output.verdict_table(m.rows, labels, markdown=options.format == "markdown"),
                                         (methods[-1] + "\n" + summary) if options.verbose else short,
                                         m.sequential.text,
                                         report.blocks(base + new, [f"Base ({f.label})" for f in base] + [f"New ({f.label})" for f in new]), warning))
        comparison += [comparison_entry(r, commands, labels, m.directory, m.run) for r in m.rows]
    changed, outside = design_changed(measured), busy(measured)
    extra = {"verdict": judged.to_dict(), "comparison": comparison, "regression": judged.exit_code == 1,
             "design_changes_measure": changed, "not_compared": list(not_compared),
             "busy_from_outside": outside,
             "ab": [{**run_entry(m.run, m.directory, summary, method, m.sequential), **m.run.export(m.directory)}
                    for m, summary, method in zip(measured, summaries, methods)],
             "benchexec": {**costs[0].to_dict(), "definitions": [str(path) for m in measured
                                                                  for path in sorted(m.directory.glob("**/*.xml"))]},
             "options": run_options.to_dict()}
    if options.format == "json":
        from analysis.tools.commands.export import as_json

        text = as_json(figures, extra)
    else:
        batched = measured[0].run.batched(run_options)
        cost = "\n".join(output.cost_lines(costs[0], figures, batched, here=options.verbose, verbose=options.verbose))
        why_not = "" if any(m.rows for m in measured) else "\n".join(f"  {line}" for line in not_compared)
        text = layout.compose(pairs, "\n".join(filter(None, [why_not, judged.line])), cost)
    return text, figures, extra
