"""From the result files of commands to what is printed and exported (bench and ab share it)."""

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
    return "\n\n".join(output.block(title, f) for title, f in zip(titles, figures))


def bench_text(directory, commands, options, verbose=True):
    """(text, figures, the export's extra fields) of a finished bench directory."""
    figures, cost = measured(directory, commands, options)
    parts = [blocks(figures, [f"Benchmark {k}" for k in range(1, len(figures) + 1)])]
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
