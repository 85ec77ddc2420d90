"""
The benchmark definition the kit writes for shell commands, and its repetition tasks.

An ordinary BenchExec definition for tool_info.command: one run definition per command (its
`--command` and `--prepare` options), the shared options on the benchmark (`--cwd`, `--shell`,
`--repeat`), a task set `warmup` (option `--warmup`, runs that every statistic skips) and a task set
`runs` of N repetition tasks. BenchExec drops a task included twice, so a repetition is a task
file of its own (analysis.core.tasks), named `run.rNNN.yml`: the kit reads them all as one input,
`run`. cmdrun's per-execution columns are declared, so they are in the result files.
"""

import os
from pathlib import Path

from lxml import etree

from analysis.core.tasks import write_repetitions

DOCTYPE = ('<!DOCTYPE benchmark PUBLIC "+//IDN sosy-lab.org//DTD BenchExec benchmark 2.3//EN" '
           '"https://www.sosy-lab.org/benchexec/benchmark-2.3.dtd">')
TOOL = "tool_info.command"
COLUMNS = ("exec-walltime", "exec-cputime", "exec-user", "exec-sys", "executions")
RUNS, WARMUP = "run", "warmup"   # the inputs the tasks give (analysis.core.tasks.input_of)
INPUT_NOTE = ("A repetition of its run definition's command, written by timekit. The command gets this file's path "
              "as $1 and need not read it.\n")


def write_tasks(directory, options):
    """DIR/tasks/run.rNNN.yml (options.runs) and DIR/tasks/warmup/warmup.rNNN.yml (options.warmup);
    returns the directory."""
    tasks = Path(directory) / "tasks"
    for name, count, folder in ((RUNS, options.runs, tasks), (WARMUP, options.warmup, tasks / WARMUP)):
        if count:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(INPUT_NOTE)
            write_repetitions([folder / name], count, folder)
    return tasks


def _option(parent, name, value=None):
    element = etree.SubElement(parent, "option", name=name)
    if value is not None:
        element.text = value
    return element


def write_definition(path, rundefinitions, options, tasks, note):
    """Write the definition to `path`: `rundefinitions` is [(name, command, prepare)], `tasks` the
    directory write_tasks filled, `note` the comment on top (who wrote it, how to rerun it)."""
    path = Path(path)
    root = etree.Element("benchmark", tool=TOOL)
    root.addprevious(etree.Comment(f" {note} ".replace("--", "- -")))
    if options.cwd:
        _option(root, "--cwd", options.cwd)
    if options.shell != "sh":
        _option(root, "--shell", options.shell)
    if options.repeat > 1:
        _option(root, "--repeat", str(options.repeat))
    for name, command, prepare in rundefinitions:
        rundefinition = etree.SubElement(root, "rundefinition", name=name)
        _option(rundefinition, "--command", command)
        if prepare:
            _option(rundefinition, "--prepare", prepare)
    relative = Path(os.path.relpath(Path(tasks).resolve(), path.parent.resolve()))
    if options.warmup:
        warmup = etree.SubElement(root, "tasks", name=WARMUP)
        _option(warmup, "--warmup")
        etree.SubElement(warmup, "include").text = (relative / WARMUP / f"{WARMUP}.r*.yml").as_posix()
    runs = etree.SubElement(root, "tasks", name="runs")
    etree.SubElement(runs, "include").text = (relative / f"{RUNS}.r*.yml").as_posix()
    columns = etree.SubElement(root, "columns")
    for title in COLUMNS:
        etree.SubElement(columns, "column", title=title).text = title
    etree.indent(root, space="  ")
    text = etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8", doctype=DOCTYPE,
                          pretty_print=True).decode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
