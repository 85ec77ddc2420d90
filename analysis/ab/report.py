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
    """(the exit code, why there is no verdict: '' where there is one) of the measured pairs."""
    open_rows = [f"{command_pairs.pair_label(m.pair)} {r.column}: its 95 % CI reaches {100 * (r.ci_high - 1):+.2f} %"
                 for m in measured for r in m.rows
                 if verdict.is_open(r.verdict, r.ci_high, threshold, bool(m.run.until_decided))]
    return verdict.gate([r for m in measured for r in m.rows], busy(measured), design_changed(measured), open_rows)


def render(measured, run_options, options, not_compared=()):
    """(text in options.format, figures of every command, the export's extra fields). The text is
    hyperfine's blocks, the table and the verdict; --verbose adds the method and the design's
    paragraph, which the JSON always holds. Nothing compared: the lines that say why follow."""
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
        comparison += [{**asdict(r), "command": commands.get(r.rundefinition, r.rundefinition),
                        "label": labels.get(r.rundefinition, r.rundefinition), "directory": str(m.directory),
                        "sequential": bool(m.run.until_decided)}
                       for r in m.rows]
    regressed = any(compare_mod.regressed(m.rows) for m in measured)
    changed, outside = design_changed(measured), busy(measured)
    if options.format in ("text", "markdown"):
        name = command_pairs.pair_label   # the text names a pair by its labels, the JSON in full
        changed_text, outside_text = design_changed(measured, name), busy(measured, name)
        first = measured[0].run
        batched = first.batched(run_options)
        cost = "\n".join(output.cost_lines(costs[0], figures, batched, here=options.verbose, verbose=options.verbose))
        last = (verdict.busy_line(outside_text, compare_mod.NOTHING_COMPARED) if outside
                else verdict.design_changed_line(changed_text, compare_mod.NOTHING_COMPARED) if changed and not regressed
                else verdict.verdict_line(comparison, regressed, options.threshold))
    extra = {"comparison": comparison, "regression": regressed, "design_changes_measure": changed,
             "busy_from_outside": outside,
             "ab": [{"directory": str(m.directory), "design": m.run.design,
                     "design_why": getattr(m.run, "design_why", ""), "reruns": m.run.reruns,
                     **m.run.export(m.directory),
                     "checks": m.run.checks, "stopped": m.run.stopped, "summary": summary, "method": method,
                     "sequential": m.sequential.to_dict()}
                    for m, summary, method in zip(measured, summaries, methods)],
             "benchexec": {**costs[0].to_dict(), "definitions": [str(path) for m in measured
                                                                  for path in sorted(m.directory.glob("**/*.xml"))]},
             "options": run_options.to_dict()}
    if options.format == "json":
        from analysis.tools.commands.export import as_json

        text = as_json(figures, extra)
    else:
        text = layout.compose(pairs, last, cost)
    if not any(m.rows for m in measured) and not outside and not changed:
        text += f"\n{compare_mod.NOTHING}" + "".join(f"\n  {line}" for line in not_compared)
    return text, figures, extra
