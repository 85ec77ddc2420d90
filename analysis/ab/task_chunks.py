"""
Two benchmark definitions that cannot share an invocation alternate over chunks of their task
set: a rerun runs both sides' chunk 1, then chunk 2, ..., so that a task of base and the same task
of new run seconds apart, not a whole task set apart. Each chunk is one invocation of a copy of
the side's definition naming only its tasks (as BenchExec expands <include>, <exclude>, ...);
a rerun's chunk result files are then merged into the one file a whole invocation would have
written, so compare and the looks read them as any rerun.
"""

from __future__ import annotations

import bz2
import os
import re
from pathlib import Path

from lxml import etree

CHUNKS = 4            # chunks a rerun, where the task set has as many tasks
SELECTORS = ("include", "includesfile", "exclude", "excludesfile")
WITHOUT_FILE = "withoutfile"
_PARSER = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False, remove_blank_text=True)
_RESULT = re.compile(r"^(?P<stem>.+?)\.(?P<step>[^.]+)\.(?P<date>\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d)\.results\.(?P<rest>.+)$")


class Withoutfile(str):
    """A task without a file (<withoutfile>): its identifier, told apart from a task file's path."""


class _Patterns:
    """What RunSet.get_task_def_files_from_xml needs of its RunSet: patterns expanded as BenchExec does."""

    def expand_filename_pattern(self, pattern, base_dir, sourcefile=None):
        from benchexec import util

        return sorted(util.expand_filename_pattern(pattern, base_dir))


def task_files(definition):
    """[(tasks element index, [task files, then Withoutfile identifiers])] of a definition whose
    paths are absolute (a side's copy), in document order; None where a selector holds a variable
    (BenchExec's to expand)."""
    from benchexec.model import RunSet

    root = etree.parse(str(definition), _PARSER).getroot()
    out = []
    for k, tasks in enumerate(root.iter("tasks")):
        if any("${" in (e.text or "") for e in tasks if e.tag in SELECTORS):
            return None
        files = RunSet.get_task_def_files_from_xml(_Patterns(), tasks, os.path.dirname(str(definition)))
        out.append((k, [*files, *(Withoutfile(e.text) for e in tasks.findall(WITHOUT_FILE))]))
    return out


def restricted(tasks, entries):
    """A copy of a <tasks> element that names only `entries` (task_files' items) and keeps its
    other children (options, property files)."""
    copy = etree.fromstring(etree.tostring(tasks))
    for element in [e for e in copy if e.tag in (*SELECTORS, WITHOUT_FILE)]:
        copy.remove(element)
    for position, entry in enumerate(entries):
        element = etree.Element(WITHOUT_FILE if isinstance(entry, Withoutfile) else "include")
        element.text = str(entry) if isinstance(entry, Withoutfile) else str(Path(entry).resolve())
        copy.insert(position, element)
    return copy


def count(definition, wanted=CHUNKS):
    """How many chunks the definition's task set takes (1: not chunked, also where a run definition
    has task sets of its own: a chunk could leave it without a task, and benchexec without its file)."""
    root = etree.parse(str(definition), _PARSER).getroot()
    if root.find("rundefinition/tasks") is not None:
        return 1
    found = task_files(definition)
    if not found:
        return 1
    return max(1, min(wanted, sum(len(files) for _, files in found)))


def slices(found, chunks):
    """[{tasks element index: [task_files' items]}] per chunk: the task list in document order, cut into
    `chunks` runs of consecutive tasks of nearly one size."""
    flat = [(k, f) for k, files in found for f in files]
    out = []
    for c in range(chunks):
        part = flat[len(flat) * c // chunks: len(flat) * (c + 1) // chunks]
        chunk = {}
        for k, f in part:
            chunk.setdefault(k, []).append(f)
        out.append(chunk)
    return out


def write(definition, chunks, directory):
    """The chunk definitions of a side's copy, DIRECTORY/STEM.chunkC.xml for C = 1..chunks."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    parts = slices(task_files(definition), chunks)
    paths = []
    for c, chunk in enumerate(parts, start=1):
        tree = etree.parse(str(definition), _PARSER)
        for k, tasks in reversed(list(enumerate(tree.getroot().iter("tasks")))):
            if k in chunk:
                tasks.addprevious(restricted(tasks, chunk[k]))
            tasks.getparent().remove(tasks)
        etree.indent(tree.getroot(), space="  ")
        path = directory / f"{Path(definition).stem}.chunk{c}.xml"
        path.write_text(etree.tostring(tree, xml_declaration=True, encoding="UTF-8", doctype=tree.docinfo.doctype,
                                       pretty_print=True).decode())
        paths.append(path)
    return paths


def merge(chunk_files, stem, step_name, directory):
    """Merge one rerun's chunk result files of a side into the files one invocation would have
    written (DIRECTORY/STEM.STEP.DATE.results.REST, DATE of the first chunk): the runs of every
    chunk under the first chunk's <result>, its end time the last chunk's. `chunk_files`: (chunk,
    path) pairs, the chunk its step's (Step.chunk), or paths already in chunk order. Written
    atomically; returns the paths."""
    groups = {}
    numbered = [item if isinstance(item, tuple) else (0, item) for item in chunk_files]
    for _, path in sorted(numbered, key=lambda item: item[0]):   # stable: paths keep their order
        m = _RESULT.match(Path(path).name)
        if m:
            groups.setdefault(m.group("rest"), []).append((Path(path), m.group("date")))
    written = []
    for rest, members in groups.items():
        roots = [etree.fromstring(bz2.decompress(p.read_bytes()), _PARSER) for p, _ in members]
        merged = roots[0]
        for other in roots[1:]:
            for run in other.findall("run"):
                merged.append(run)
            if other.get("endtime"):
                merged.set("endtime", other.get("endtime"))
        out = Path(directory) / f"{stem}.{step_name}.{members[0][1]}.results.{rest}"
        temporary = out.with_name(out.name + ".tmp")
        temporary.write_bytes(bz2.compress(etree.tostring(merged, xml_declaration=True, encoding="UTF-8")))
        temporary.replace(out)
        written.append(out)
    return written
