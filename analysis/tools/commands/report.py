"""From the result files of commands to what is printed and exported (bench and ab share it)."""

import dataclasses
import sys

from analysis.core.errors import UserError
from analysis.sweep.load import load_tables
from analysis.tools.commands import export as export_mod
from analysis.tools.commands import failures
from analysis.tools.commands import figures as figures_mod
from analysis.tools.commands import output


def measured(directory, commands, options):
    """(Figures of each command, BenchExec's Cost) from a result directory; a command none of whose
    runs finished is one line of error."""
    tables = load_tables(directory, figures_mod.COLUMNS)[0]
    found = []
    for command in commands:
        f = figures_mod.command_figures(tables, command, options)
        if f is None:
            raise UserError(failures.explain(tables, command, directory).line())
        found.append(f)
    return found, figures_mod.benchexec_cost(tables, options)


def blocks(figures, titles):
    """hyperfine's block of each command under its title: the one place the command is written in
    full; tables and summaries below name it by its label, which the title holds."""
    return "\n\n".join(output.block(title, f) for title, f in zip(titles, figures))


def bench_title(k, f):
    """'Benchmark k (LABEL)', as hyperfine's 'Benchmark k'; the automatic label #k adds nothing."""
    return f"Benchmark {k}" + ("" if f.label == f"#{k}" else f" ({f.label})")


def bench_text(directory, commands, options, verbose=True):
    """(text, figures, the export's extra fields) of a finished bench directory."""
    commands = [c if c.label else dataclasses.replace(c, label=f"#{k}") for k, c in enumerate(commands, start=1)]
    figures, cost = measured(directory, commands, options)
    parts = [blocks(figures, [bench_title(k, f) for k, f in enumerate(figures, start=1)])]
    if len(figures) > 1:
        parts.append(output.summary(figures, paired=True))
    parts.append("\n".join(output.cost_lines(cost, figures, options, verbose=verbose)))
    parts.append(f"definition: {directory}/bench.xml (an ordinary BenchExec definition: from the kit's checkout, "
                 f"benchexec {directory}/bench.xml reruns it)")
    extra = {"benchexec": {**cost.to_dict(), "definition": f"{directory}/bench.xml", "directory": str(directory)},
             "options": options.to_dict(), "paired": True}
    return "\n\n".join(p for p in parts if p), figures, extra


def export(options, figures, extra, out=sys.stderr):
    """The --export-* files the options ask for, a line each on `out`."""
    for path in export_mod.write(options, figures, extra):
        print(f"exported: {path}", file=out)
