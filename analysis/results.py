"""Load BenchExec result files (``*.results.*.xml``, ``.xml.bz2``, ``.xml.gz``) as column arrays.

BenchExec's own reader (``benchexec.tablegenerator``) keeps the whole XML tree and builds an
object per run; statistics over 100,000 runs want one numpy array per column instead. So this
loader streams the file through an lxml parser target (no tree is built), collects one plain
list per column, and converts every column once at the end: numbers to float64 in SI base
units (s, B, J, Hz), everything else to str. It reads what tablegenerator reads: legacy
``<sourcefile>`` elements, unitless legacy values, the first of duplicate columns in a run.

Anything wrong with a file is a ``ResultFileError`` with one line: the path, what is wrong,
what to do.
"""

from __future__ import annotations

import bz2
import collections
import concurrent.futures
import contextlib
import dataclasses
import gzip
import math
import os
import pathlib
import string
import zlib

import numpy as np
from benchexec import result as bx_result
from lxml import etree

# <sourcefile> is what BenchExec wrote before <run>; tablegenerator still reads both.
_RUN_TAGS = ("run", "sourcefile")

# Unit suffix -> (SI unit, factor). The prefixes BenchExec and its tool-info modules write
# (tablegenerator's UNIT_CONVERSION, outputhandler's suffixes); 'kB' is 1000 B as in BenchExec.
_UNITS = {
    "s": ("s", 1.0), "ms": ("s", 1e-3), "us": ("s", 1e-6), "ns": ("s", 1e-9),
    "min": ("s", 60.0), "h": ("s", 3600.0),
    "B": ("B", 1.0), "kB": ("B", 1e3), "MB": ("B", 1e6), "GB": ("B", 1e9), "TB": ("B", 1e12),
    "KiB": ("B", 2.0**10), "MiB": ("B", 2.0**20), "GiB": ("B", 2.0**30), "TiB": ("B", 2.0**40),
    "B/s": ("B/s", 1.0),
    "J": ("J", 1.0), "mJ": ("J", 1e-3), "kJ": ("J", 1e3), "Ws": ("J", 1.0), "kWs": ("J", 1e3),
    "mWh": ("J", 3.6), "Wh": ("J", 3600.0), "kWh": ("J", 3.6e6),
    "Hz": ("Hz", 1.0), "kHz": ("Hz", 1e3), "MHz": ("Hz", 1e6), "GHz": ("Hz", 1e9),
    "W": ("W", 1.0),
    "%": ("", 0.01),
}
_KNOWN_UNITS = " ".join(_UNITS)

# Units of columns whose values carry none: BenchExec before 2.0 wrote unitless seconds and
# bytes, and the kit's timer columns are seconds by convention (DESIGN.md).
_UNITLESS_DEFAULTS = {
    "cputime": "s", "walltime": "s", "memUsage": "B", "memory": "B", "cpuenergy": "J",
    "timer-user": "s", "timer-sys": "s", "timer-real": "s", "self-clock": "s", "self-cputime": "s",
}

# Always text, even when a tool's status looks like a number (tablegenerator does the same).
_TEXT_ONLY = ("status", "category")

# What may follow a number as its unit; rstrip() with these splits '0.5s' into '0.5' and 's'.
_UNIT_CHARS = string.ascii_letters + "/% "
# What rstrip() leaves of 'NaN', '-Inf', '+Infinity': then the whole text is the number.
_SIGNS = ("", "-", "+")

_RESULT_SUFFIXES = (".xml", ".xml.bz2", ".xml.gz")

_CHUNK_SIZE = 1 << 16

# <systeminfo> children: tag -> {attribute: key in RunTable.systeminfo}
_SYSTEMINFO = {
    "os": {"name": "os"},
    "cpu": {"model": "cpu_model", "cores": "cpu_cores", "frequency": "cpu_frequency",
            "turboboostActive": "turboboost"},
    "ram": {"size": "ram"},
}
_SYSTEMINFO_KEYS = ["hostname"] + [key for keys in _SYSTEMINFO.values() for key in keys.values()]


class ResultFileError(Exception):
    """A result file that cannot be loaded; str(e) is one line: '<path>: <what>; <what to do>'."""

    def __init__(self, path, problem):
        super().__init__(" ".join(f"{path}: {problem}".splitlines()))


@dataclasses.dataclass(eq=False)
class RunTable:
    """The runs of one result file (one run set), one array entry per run in file order.

    ``benchmark`` is ``benchmarkname``, which BenchExec writes as the benchmark file's name plus
    ``.<--name>``. ``name`` is the result's ``name`` attribute (or ``benchmark`` when the file has
    none): the run definition, plus ``.<tasks name>`` in the per-task-set files BenchExec writes.
    ``rundefinition`` is that run-definition name alone (``name`` without the ``.<block>`` that
    BenchExec appends for a ``block`` attribute, as tablegenerator strips it), '' if unnamed.

    String arrays have dtype object. ``text_columns`` holds every non-numeric column, including
    ``status`` and ``category``. ``nonfinite`` counts, per numeric column, the values the file
    writes as NaN or (-)Inf; they stay nan/inf in ``columns``, like missing values stay nan.
    """

    path: pathlib.Path
    benchmark: str
    name: str
    rundefinition: str
    tool: str
    toolmodule: str
    version: str
    date: str
    options: str
    attributes: dict[str, str] = dataclasses.field(repr=False)
    systeminfo: list[dict] = dataclasses.field(repr=False)
    tasks: np.ndarray = dataclasses.field(repr=False)
    files: np.ndarray = dataclasses.field(repr=False)
    run_options: np.ndarray = dataclasses.field(repr=False)
    status: np.ndarray = dataclasses.field(repr=False)
    category: np.ndarray = dataclasses.field(repr=False)
    columns: dict[str, np.ndarray] = dataclasses.field(repr=False)
    units: dict[str, str] = dataclasses.field(repr=False)
    text_columns: dict[str, np.ndarray] = dataclasses.field(repr=False)
    nonfinite: dict[str, int] = dataclasses.field(repr=False)

    def __len__(self) -> int:
        return len(self.tasks)

    def valid(self) -> np.ndarray:
        """Mask of runs that finished normally, the only ones whose times mean anything.

        BenchExec gives a timeout, out-of-memory, crash or kill the category 'error'. Files
        older than categories get the category BenchExec would give their status. A run
        without status did not finish at all.
        """
        error = [
            category == bx_result.CATEGORY_ERROR or (not category and _is_error_status(status))
            for category, status in zip(self.category, self.status)
        ]
        return (self.status != "") & ~np.array(error, dtype=bool)

    def status_counts(self) -> dict[str, int]:
        """Runs per status, most frequent first; '' counts runs without status."""
        return dict(collections.Counter(self.status.tolist()).most_common())


def _is_error_status(status):
    """Whether BenchExec's get_result_category would call this status an error."""
    classification = bx_result.get_result_classification(status)
    return classification == bx_result.RESULT_CLASS_OTHER and status not in (
        bx_result.RESULT_DONE,
        bx_result.RESULT_UNKNOWN,
    )


def load_results(paths) -> list[RunTable]:
    """Load result files; a directory stands for its ``*.results*.xml[.bz2|.gz]`` files, sorted."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [load_result(file) for path in paths for file in _result_files(path)]


def _result_files(path):
    """The file itself, or a directory's result files (not its .logfiles.zip or .txt)."""
    path = pathlib.Path(path)
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.glob("*.results*") if p.name.endswith(_RESULT_SUFFIXES))
    if not files:
        raise ResultFileError(
            path, "directory holds no *.results*.xml[.bz2|.gz] file; run benchexec first "
            "or pass the result files themselves"
        )
    return files


def load_result(path) -> RunTable:
    """Load one result file; any problem with it becomes a one-line ResultFileError."""
    try:
        with open(path, "rb") as raw:
            return _parse(_decompressed(raw, path), path)
    except FileNotFoundError:
        raise ResultFileError(path, "no such file; check the path") from None
    except IsADirectoryError:
        raise ResultFileError(path, "is a directory; use load_results for directories") from None
    except EOFError:
        raise ResultFileError(
            path, "compressed data ends early, the file is truncated; copy it again "
            "or re-run benchexec"
        ) from None
    except (OSError, zlib.error) as e:
        raise ResultFileError(
            path, f"cannot be read ({e}); check that it is a complete BenchExec result file"
        ) from None
    except etree.LxmlError as e:
        raise ResultFileError(
            path, f"is not well-formed XML ({getattr(e, 'msg', e)}); pass a BenchExec result "
            "file (*.results.*.xml.bz2), complete and unmodified"
        ) from None


def _decompressed(raw, path):
    """A binary stream of the XML; compression is told by content, as tablegenerator does."""
    head = raw.read(4)
    raw.seek(0)
    if not head:
        raise ResultFileError(path, "file is empty; re-run the benchexec run that wrote it")
    if head.startswith(b"PK"):
        raise ResultFileError(
            path, "is a ZIP archive (BenchExec's .logfiles.zip), not a result file; "
            "pass the matching .results.*.xml.bz2 file"
        )
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw)
    return raw


def _parse(stream, path):
    """Feed the XML to lxml's parser, whose target collects the runs, and build the RunTable."""
    collector = _Collector(path)
    parser = etree.XMLParser(
        target=collector, resolve_entities=False, no_network=True, load_dtd=False
    )
    with contextlib.closing(_chunks(stream)) as chunks:  # on error, stop the reader first
        for chunk in chunks:
            parser.feed(chunk)
    parser.close()
    return _run_table(path, collector)


def _chunks(stream):
    """The stream's bytes chunk by chunk, the next chunk read in a thread meanwhile.

    Decompressing bz2 takes about as long as parsing, and bz2 and zlib release the GIL, so
    the two overlap on two cores.
    """
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(stream.read, _CHUNK_SIZE)
        while chunk := pending.result():
            pending = pool.submit(stream.read, _CHUNK_SIZE)
            yield chunk


class _Collector:
    """lxml parser target: takes the result's attributes, runs and system information.

    A target gets each element's tag and attributes as the parser meets them, without a tree:
    memory stays flat and no element objects are made, which makes loading twice as fast as
    iterparse with clear().
    """

    def __init__(self, path):
        self.path = path
        self.depth = 0
        self.attributes = {}
        self.runs = _RunLists()
        self.row = None  # columns of the <run> being read, title -> value
        self.systeminfo = []
        self.host = None  # the <systeminfo> being read

    def start(self, tag, attrib):
        """Called per start tag; a run is a child of the root, its values are grandchildren."""
        self.depth += 1
        if self.depth == 3:
            if self.row is not None and tag == "column":
                # the first of duplicate titles counts, as in tablegenerator
                self.row.setdefault(attrib.get("title"), attrib.get("value"))
            elif self.host is not None:
                for attribute, key in _SYSTEMINFO.get(tag, {}).items():
                    self.host[key] = attrib.get(attribute, "")
        elif self.depth == 2:
            if tag in _RUN_TAGS:
                self.runs.start(attrib)
                self.row = {}
            elif tag == "systeminfo":
                self.host = dict.fromkeys(_SYSTEMINFO_KEYS, "")
                self.host["hostname"] = attrib.get("hostname", "")
        elif self.depth == 1:
            self._root(tag, attrib)

    def end(self, tag):
        """Called per end tag: a finished run or systeminfo is stored."""
        if self.depth == 2:
            if self.row is not None:
                self.runs.finish(self.row, self.path)
                self.row = None
            elif self.host is not None:
                self.systeminfo.append(self.host)
                self.host = None
        self.depth -= 1

    def _root(self, tag, attrib):
        """Refuse anything but <result> before reading further."""
        if tag != "result":
            raise ResultFileError(
                self.path, f"root element is <{tag}>, not <result>; pass a BenchExec result "
                "file, not a benchmark or table definition"
            )
        self.attributes = dict(attrib)

    def close(self):
        """Required by lxml; the collected data stay in the collector."""


class _RunLists:
    """Run attributes and raw column values, one list entry per run (None: run lacks it)."""

    def __init__(self):
        self.tasks, self.files, self.options = [], [], []
        self.columns: dict[str, list] = {}

    def start(self, attrib):
        """Append a run's own attributes."""
        self.tasks.append(attrib.get("name", ""))
        self.files.append(attrib.get("files", ""))
        self.options.append(attrib.get("options", ""))

    def finish(self, row, path):
        """Append a run's column values (row: title -> value), None in columns it lacks."""
        index = len(self.tasks) - 1
        if None in row:
            raise ResultFileError(
                path, f"run '{self.tasks[index]}' has a <column> without title; "
                "pass a result file written by BenchExec"
            )
        if not self.columns.keys() >= row.keys():
            for title in row:
                self.columns.setdefault(title, [None] * index)
        for title, values in self.columns.items():
            values.append(row.get(title))


def _run_table(path, collector):
    """Convert the collected lists into a RunTable."""
    attributes, runs = collector.attributes, collector.runs
    columns, units, text_columns, nonfinite = {}, {}, {}, {}
    for title in list(runs.columns):
        raw = runs.columns.pop(title)  # free each raw list once converted
        measured = None if title in _TEXT_ONLY else _numbers(raw)
        if measured is None:
            text_columns[title] = _strings(raw)
            continue
        numbers, suffixes, count = measured
        columns[title], units[title] = _to_si(path, title, numbers, suffixes, raw, runs.tasks)
        if count:
            nonfinite[title] = count
    benchmark = attributes.get("benchmarkname", "")
    return RunTable(
        path=pathlib.Path(path),
        benchmark=benchmark,
        name=attributes.get("name") or benchmark,
        rundefinition=_rundefinition(attributes),
        tool=attributes.get("tool", ""),
        toolmodule=attributes.get("toolmodule", ""),
        version=attributes.get("version", ""),
        date=attributes.get("date", ""),
        options=attributes.get("options", ""),
        attributes=attributes,
        systeminfo=collector.systeminfo,
        tasks=_strings(runs.tasks),
        files=_strings(runs.files),
        run_options=_strings(runs.options),
        status=text_columns.get("status", _strings([None] * len(runs.tasks))),
        category=text_columns.get("category", _strings([None] * len(runs.tasks))),
        columns=columns,
        units=units,
        text_columns=text_columns,
        nonfinite=nonfinite,
    )


def _rundefinition(attributes):
    """The run-definition name: BenchExec writes name="<rundefinition>.<block>" per task set."""
    name, block = attributes.get("name", ""), attributes.get("block")
    if block is None:
        return name
    if name == block:
        return ""
    return name.removesuffix("." + block)


def _strings(values):
    """An object array of str, '' where a run lacks the value."""
    array = np.empty(len(values), dtype=object)
    array[:] = [value or "" for value in values]
    return array


def _numbers(raw):
    """Numbers, unit suffixes and count of NaN/Inf of a column, or None if any value is text.

    '0.5s' is 0.5 and 's', '12' is 12.0 and '', '-Inf' is -inf and ''. A column is numeric only
    if all its values are, as in tablegenerator: 'host' or BenchExec's 'cpuCores' of a multi-core
    run ('0,1') are text. Missing and empty values become nan.
    """
    heads = [text.rstrip(_UNIT_CHARS) if text else None for text in raw]
    missing = heads.count(None)
    if missing == len(raw):
        return None  # no value at all: nothing says the column is numeric
    try:
        numbers = np.array(
            [
                math.nan if head is None else float(text if head in _SIGNS else head)
                for text, head in zip(raw, heads)
            ],
            dtype=np.float64,
        )
    except ValueError:
        return None
    suffixes = [
        "" if head is None or head in _SIGNS else text[len(head):].strip()
        for text, head in zip(raw, heads)
    ]
    nonfinite = len(raw) - int(np.count_nonzero(np.isfinite(numbers))) - missing
    return numbers, suffixes, nonfinite


def _to_si(path, title, numbers, suffixes, raw, tasks):
    """The numbers converted in place to the column's SI unit, and that unit.

    Unitless values in a column with units count as its base unit, as tablegenerator treats
    them; a wholly unitless column gets its unit from _UNITLESS_DEFAULTS, else ''.
    """
    found = set(suffixes) - {""}
    if not found <= _UNITS.keys():
        run = next(run for run, suffix in enumerate(suffixes) if suffix and suffix not in _UNITS)
        raise ResultFileError(
            path, f"column '{title}' of run '{tasks[run]}' has value '{raw[run]}' with unknown "
            f"unit '{suffixes[run]}'; make the tool-info module report plain numbers or one of "
            f"the units {_KNOWN_UNITS}"
        )
    si_units = {_UNITS[suffix][0] for suffix in found}
    if len(si_units) > 1:
        first = {}
        for run, suffix in enumerate(suffixes):
            if suffix:
                first.setdefault(suffix, run)
        mixed = " and ".join(f"{suffix} (run '{tasks[run]}')" for suffix, run in first.items())
        raise ResultFileError(
            path, f"column '{title}' mixes units {mixed}; give each column one kind of unit"
        )
    if any(_UNITS[suffix][1] != 1.0 for suffix in found):
        numbers *= np.array([_UNITS[suffix][1] if suffix else 1.0 for suffix in suffixes])
    return numbers, si_units.pop() if si_units else _UNITLESS_DEFAULTS.get(title, "")
