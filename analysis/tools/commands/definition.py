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
from analysis.sweep.model import write_atomically

DOCTYPE = ('<!DOCTYPE benchmark PUBLIC "+//IDN sosy-lab.org//DTD BenchExec benchmark 2.3//EN" '
           '"https://www.sosy-lab.org/benchexec/benchmark-2.3.dtd">')
TOOL = "tool_info.command"
COLUMNS = ("exec-walltime", "exec-cputime", "exec-user", "exec-sys", "executions")
EXIT_CODE = "exit-code"   # with --ignore-failure cmdrun exits 0 and says the command's code here
PAIRED_COLUMNS = ("a-walltime", "a-cputime", "b-walltime", "b-cputime", "logratio-walltime", "logratio-cputime", "pairs")
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


def write_definition(path, rundefinitions, options, tasks, note, paired=None):
    """Write the definition to `path`: `rundefinitions` is [(name, command, prepare)], `tasks` the
    directory write_tasks filled, `note` the comment on top (who wrote it, how to rerun it).
    `paired` (analysis.ab.paired.cmdrun_settings: the seed, the cores, cmdrun's option for the
    design, the sentinel): every run pairs two commands, [(name, command, prepare, versus)],
    --repeat K being K pairs (tool_info.command's --versus)."""
    path = Path(path)
    root = etree.Element("benchmark", tool=TOOL)
    if paired:
        root.set("cpuCores", str(paired.get("cores", 1)))
    root.addprevious(etree.Comment(f" {note} ".replace("--", "- -")))
    if options.cwd:
        _option(root, "--cwd", options.cwd)
    if options.shell != "sh":
        _option(root, "--shell", options.shell)
    if options.repeat > 1:
        _option(root, "--repeat", str(options.repeat))
    if options.ignore_failure:
        _option(root, "--ignore-failure")
    if options.output != "null":
        _option(root, "--output", options.output)
    if paired:
        _option(root, "--seed", str(paired["seed"]))
        _option(root, "--task-name", "${taskdef_name}")   # each run's repetition number: its own orders
        if paired.get("option"):
            _option(root, paired["option"])
        if paired.get("sentinel"):
            _option(root, "--sentinel", str(paired["sentinel"]))
    for name, command, prepare, *versus in rundefinitions:
        rundefinition = etree.SubElement(root, "rundefinition", name=name)
        _option(rundefinition, "--command", command)
        if versus:
            _option(rundefinition, "--versus", versus[0])
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
    for title in PAIRED_COLUMNS if paired else COLUMNS + ((EXIT_CODE,) if options.ignore_failure else ()):
        etree.SubElement(columns, "column", title=title).text = title
    etree.indent(root, space="  ")
    text = etree.tostring(root.getroottree(), xml_declaration=True, encoding="UTF-8", doctype=DOCTYPE,
                          pretty_print=True).decode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def set_seed(path, seed):
    """Set the benchmark's --seed option (a paired definition draws each invocation's orders from it)."""
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    tree = etree.parse(str(path), parser)
    for option in tree.getroot().findall("option"):
        if option.get("name") == "--seed":
            option.text = str(seed)
    text = etree.tostring(tree, xml_declaration=True, encoding="UTF-8", doctype=tree.docinfo.doctype).decode()
    write_atomically(Path(path), text)   # a kill mid-write must not leave the definition empty for --resume
