"""Load BenchExec result files (``*.results.*.xml``, ``.xml.bz2``, ``.xml.gz``) as column arrays.

BenchExec's own reader (``benchexec.tablegenerator``) keeps the whole XML tree and builds an
object per run; statistics over 100,000 runs want one numpy array per column instead. So this
loader reads a file a chunk (about a thousand runs) at a time and hands each chunk's values to
one accumulator per column, which converts them at once: numbers to float64 in SI base units
(s, B, J, Hz), everything else to str. ``columns=`` keeps only the columns asked for; the others
are never converted. It reads what tablegenerator reads: legacy ``<sourcefile>`` elements,
unitless legacy values, the first of duplicate columns in a run.

Two readers fill the accumulators. The strict one streams the file through an lxml parser target:
one Python call per element, almost two million for 100,000 runs. The fast one reads the runs,
nearly all of the file, with compiled regular expressions: one ``findall`` (in C) per chunk and,
once it knows the file's columns, one match per run. It accepts only what BenchExec writes (UTF-8,
no DTD declarations; in the runs plain attributes in double quotes, no references, comments or
other elements), its expressions account for every character from the first run to the last,
and lxml reads the rest of the file (root, system information, totals) with a marker in the
runs' place, so that the whole file is still checked. Whenever the fast reader meets anything
else, an error included, the strict reader reads the file again: it decides what a file means,
and it raises the errors. The tests check that both readers give the same RunTable, bit for bit.

Anything wrong with a file is a ``ResultFileError`` with one line: the path, what is wrong,
what to do.
"""

from __future__ import annotations

import bz2
import collections
import concurrent.futures
import contextlib
import dataclasses
import fcntl
import functools
import gzip
import os
import pathlib
import re
import string
import subprocess
import sys
import zlib

import numpy as np
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

# numpy >= 2 has string ufuncs in np.strings; np.char has the same functions, slower.
_np_strings = getattr(np, "strings", np.char)

_RESULT_SUFFIXES = (".xml", ".xml.bz2", ".xml.gz")

# Bytes read at a time: about a thousand runs, few numpy calls per run and little memory.
_CHUNK_SIZE = 1 << 20
# What the child process that decompresses bz2 for the fast reader runs.
_DECOMPRESS = "import bz2, shutil, sys; shutil.copyfileobj(bz2.BZ2File(sys.stdin.buffer), sys.stdout.buffer, 1 << 20)"
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # Linux's number; Python < 3.10 lacks the name
# Smaller bz2 files decompress in a thread: a child process takes longer to start than they take.
_CHILD_MIN_BYTES = 1 << 18
# Runs the strict reader collects before it hands them to the column accumulators.
_BATCH_RUNS = 1000

# Joins the values of a chunk into one string: XML text can hold every character but NUL.
_SEPARATOR = "\x00"

# <systeminfo> children: tag -> {attribute: key in RunTable.systeminfo}
_SYSTEMINFO = {
    "os": {"name": "os"},
    "cpu": {"model": "cpu_model", "cores": "cpu_cores", "frequency": "cpu_frequency",
            "turboboostActive": "turboboost"},
    "ram": {"size": "ram"},
}
_SYSTEMINFO_KEYS = ["hostname"] + [key for keys in _SYSTEMINFO.values() for key in keys.values()]

# The run attributes a RunTable keeps: tasks, files, run_options.
_RUN_ATTRIBUTES = ("name", "files", "options")

# -- what the fast reader accepts: the runs exactly as BenchExec writes them ----------------------
_WS = r"[ \t\r\n]*"
_SPACE = r"[ \t\r\n]+"  # between a run's attributes, which the corpus also splits across lines
# An attribute value that lxml returns as it stands: no reference ('&'), no '<' (an error in
# XML), no tab or line break (lxml turns them into spaces) and no other control character.
_VALUE = r'[^"<&\x00-\x1f]*'
_NAME = r"[A-Za-z_][A-Za-z0-9_.-]*"
# Anything not whitespace where a run should start: the rest of the chunk, for a slower reader.
_REST = r"([^ \t\r\n].*)"
# BenchExec 1.x writes hidden="true" first; then nothing may follow value (no second hidden).
_HIDDEN_FIRST = rf'(?:hidden="{_VALUE}" (?=title="{_VALUE}" value="{_VALUE}"{_WS}/>))?'


def _column_pattern(title, value):
    """A <column title=... value=.../> element, its title and value given as patterns."""
    return rf'<column {_HIDDEN_FIRST}title="{title}" value="{value}"(?: hidden="{_VALUE}")?{_WS}/>'


# One run per match: tag, attributes, the columns' text, or the rest of the chunk if not a run.
_ANY_RUN = re.compile(
    rf"{_WS}(?:<(run|sourcefile)((?:{_SPACE}{_NAME}=\"{_VALUE}\")*){_WS}"
    rf"(?:/>|>((?:{_WS}{_column_pattern(_VALUE, _VALUE)})*){_WS}</\1>)|{_REST})",
    re.S,
)
_ATTRIBUTE = re.compile(rf'{_SPACE}({_NAME})="({_VALUE})"')
_COLUMN = re.compile(_column_pattern(f"({_VALUE})", f"({_VALUE})"))
_FIRST_RUN = re.compile(rb"<(?:run|sourcefile)[ \t\r\n/>]")
# The fast reader decodes the runs itself, as UTF-8: a file must be XML 1.0 in UTF-8, which is
# what BenchExec writes (with or without this declaration).
_UTF8_PROLOG = re.compile(
    rb"(?:\xef\xbb\xbf)?(?:<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*([\"'])1\.0\1"
    rb"(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*([\"'])(?i:utf-?8)\2)?"
    rb"(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*([\"'])(?:yes|no)\3)?[ \t\r\n]*\?>|(?!<\?xml))[ \t\r\n]*<"
)
# The processing instruction that stands in for the runs when lxml reads the rest of the file.
_MARKER = "timekit-runs"
# XML forbids these two characters; everything else _VALUE lets through is allowed.
_NONCHARACTERS = ("\ufffe", "\uffff")


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
        # imported here: benchexec.result imports urllib and http.client (9 MB), which loading
        # a file does not need
        from benchexec import result as bx_result

        error_statuses = {status for status in set(self.status.tolist()) if _is_error_status(bx_result, status)}
        error = [
            category == bx_result.CATEGORY_ERROR or (not category and status in error_statuses)
            for category, status in zip(self.category, self.status)
        ]
        return (self.status != "") & ~np.array(error, dtype=bool)

    def status_counts(self) -> dict[str, int]:
        """Runs per status, most frequent first; '' counts runs without status."""
        return dict(collections.Counter(self.status.tolist()).most_common())


def _is_error_status(bx_result, status):
    """Whether BenchExec's get_result_category would call this status an error."""
    classification = bx_result.get_result_classification(status)
    return classification == bx_result.RESULT_CLASS_OTHER and status not in (
        bx_result.RESULT_DONE,
        bx_result.RESULT_UNKNOWN,
    )


def without_duplicate_blocks(tables):
    """BenchExec writes a run definition's runs once in total and again per task set (files with a
    `block` attribute), but only the per-task-set files when just one task set ran. Keep each run once."""
    def key(t):
        return (t.benchmark, t.date, t.rundefinition)

    combined = {key(t) for t in tables if "block" not in t.attributes}
    return [t for t in tables if "block" not in t.attributes or key(t) not in combined]


def load_results(paths, columns=None) -> list[RunTable]:
    """Load result files; a directory stands for its ``*.results*.xml[.bz2|.gz]`` files, sorted."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [load_result(file, columns) for path in paths for file in _result_files(path)]


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


def load_result(path, columns=None) -> RunTable:
    """Load one result file; any problem with it becomes a one-line ResultFileError.

    columns: the titles of the columns to keep (status and category are always kept), for
    analyses that need a few of many; the others are skipped while reading. None keeps all.
    """
    return _load(path, columns, fast=True)


def _load(path, columns, fast):
    """load_result, with or without trying the fast reader first (the tests compare both)."""
    if isinstance(columns, str):
        columns = [columns]
    wanted = None if columns is None else set(columns) | set(_TEXT_ONLY)
    try:
        with open(path, "rb") as raw:
            return _run_table(path, _collect(raw, path, wanted, fast))
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


class _NotSimple(Exception):
    """The fast reader met something it does not read itself; the strict reader takes over."""


class _TextAfterNumbers(_NotSimple):
    """A column has text after numbers whose text the fast reader did not keep: read again."""


# Whatever stops the fast reader makes the strict one read the file from the start: it raises
# its own error for a broken file, so that both give the same message.
_FALLBACK = (_NotSimple, UnicodeDecodeError, ResultFileError, etree.LxmlError, EOFError, OSError, zlib.error)


def _collect(raw, path, wanted, fast):
    """The file's runs and attributes in a _Collector, read fast if the file allows it."""
    stream = _decompressed(raw, path)
    if fast:
        for keep_text in (False, True):
            try:
                return _collect_fast(_fast_pieces(raw, stream, path), path, wanted, keep_text)
            except _FALLBACK as problem:
                raw.seek(0)
                stream = _decompressed(raw, path)
                if not isinstance(problem, _TextAfterNumbers):
                    break
    return _collect_strict(_pieces(stream), path, wanted)


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


def _xml_parser(collector):
    """An lxml parser that calls the collector and never loads anything from elsewhere."""
    return etree.XMLParser(target=collector, resolve_entities=False, no_network=True, load_dtd=False)


def _collect_strict(pieces, path, wanted):
    """Feed the whole XML to lxml's parser, whose target collects everything."""
    collector = _Collector(path, _Runs(wanted))
    parser = _xml_parser(collector)
    with contextlib.closing(_chunks(pieces)) as chunks:  # on error, stop the reader first
        for chunk in chunks:
            parser.feed(chunk)
    parser.close()
    return collector


def _collect_fast(pieces, path, wanted, keep_text):
    """Read the runs with regular expressions and the rest of the file with lxml.

    The runs lie between the head (XML declaration, root start tag, columns, system
    information) and the tail (totals, root end tag). Each chunk is cut after its last
    complete run; the text after it waits for the next chunk.
    """
    scanner = _RunScanner(_Runs(wanted, keep_text))
    with contextlib.closing(_chunks(pieces)) as chunks:  # on error, stop the reader first
        head, pending = _head(chunks)
        _check_prolog(head)
        for chunk in chunks:
            pending += chunk
            end = _end_of_runs(pending)
            if end:
                scanner.scan(pending[:end].decode("utf-8"))
                pending = pending[end:]
    end = _end_of_runs(pending)  # the first chunk may hold all runs
    if end:
        scanner.scan(pending[:end].decode("utf-8"))
        pending = pending[end:]
    collector = _Collector(path, _Runs(None))
    parser = _xml_parser(collector)
    for part in (head, f"<?{_MARKER}?>".encode(), pending):
        if part:
            parser.feed(part)
    parser.close()
    # the marker must stand right inside <result>, and the runs must all be the scanner's
    if collector.markers != [1] or collector.runs.count:
        raise _NotSimple("runs outside the part of the file read as runs")
    collector.runs = scanner.runs
    return collector


def _chunks(pieces):
    """The pieces' bytes chunk by chunk, the next chunk read in a thread meanwhile.

    Reading and decompressing release the GIL, so they overlap with parsing on two cores.
    """
    with contextlib.closing(pieces), concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(next, pieces, b"")
        while chunk := pending.result():
            pending = pool.submit(next, pieces, b"")
            yield chunk


def _pieces(stream):
    """The stream's bytes, _CHUNK_SIZE at a time."""
    yield from iter(functools.partial(stream.read, _CHUNK_SIZE), b"")


def _fast_pieces(raw, stream, path):
    """The decompressed bytes for the fast reader: those of a large bz2 file from a child process."""
    if isinstance(stream, bz2.BZ2File) and sys.executable and os.fstat(raw.fileno()).st_size >= _CHILD_MIN_BYTES:
        return _bz2_pieces(path)
    return _pieces(stream)


def _bz2_pieces(path):
    """The bz2 file's bytes, decompressed by a child process, _CHUNK_SIZE at a time.

    bz2 decompresses slower than the fast reader reads, and in a thread of this process the two
    would take turns at the GIL: bz2 releases it while it decompresses but must wait for it
    every few hundred KiB, which made loading take as long as decompressing and reading one
    after the other. A child process (Python's own bz2 again) has a GIL of its own. Errors are
    the strict reader's to report: a failing child only makes the fast reader give up.
    """
    with open(path, "rb") as source:  # a file offset of its own
        child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _DECOMPRESS], stdin=source, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    try:
        output = child.stdout.fileno()
        with contextlib.suppress(OSError):  # Linux: a chunk fits in the pipe, fewer handovers
            fcntl.fcntl(output, _F_SETPIPE_SZ, _CHUNK_SIZE)
        while chunk := _read_fully(output, _CHUNK_SIZE):
            yield chunk
        if child.wait():
            raise _NotSimple("bz2 data the bz2 module cannot decompress")
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def _read_fully(descriptor, size):
    """size bytes from a pipe, fewer only at its end."""
    data = b""
    while len(data) < size and (more := os.read(descriptor, size - len(data))):
        data += more
    return data


def _head(chunks):
    """The bytes before the first run, and the bytes read after them."""
    data = b""
    for chunk in chunks:
        start = max(0, len(data) - 16)  # a run's start tag may straddle two chunks
        data += chunk
        match = _FIRST_RUN.search(data, start)
        if match:
            return data[: match.start()], data[match.start():]
    raise _NotSimple("no runs")  # nothing to gain; the strict reader also checks the whole file


def _check_prolog(head):
    """Raise _NotSimple unless the runs mean what they say: UTF-8, and no declarations.

    A DTD in the file may declare entities, or attribute types that make lxml normalize values
    ('1  2' becomes '1 2'); BenchExec writes only the DTD's name.
    """
    if not _UTF8_PROLOG.match(head):
        raise _NotSimple("not XML 1.0 in UTF-8")
    if b"<!ATTLIST" in head or b"<!ENTITY" in head:
        raise _NotSimple("declarations in the DTD")


def _end_of_runs(data):
    """Where the last complete run in data ends, 0 if none does."""
    end = 0
    for tag in (b"</run>", b"</sourcefile>"):
        position = data.rfind(tag)
        if position >= 0:
            end = max(end, position + len(tag))
    return end


class _RunScanner:
    """Reads the text of whole runs with regular expressions, learning their layout as it goes.

    Runs of one file share their columns' order (BenchExec sorts them), so after the first
    runs one expression with a slot per known column reads a whole run per match, values in
    their slots, without a Python call per column. A run it cannot match (a new column, another
    order, a duplicate column) and the runs after it in the chunk go to a general expression
    that reads any run of BenchExec's form, one match per column, and teaches the scanner the
    new layout.
    """

    def __init__(self, runs):
        self.runs = runs
        self.attribute_names = []  # all run attributes, in the order the file writes them
        self.titles = []  # all column titles, in the order the file writes them
        self.layout = None  # (expression, what each of its groups holds) for the above

    def scan(self, text):
        """Read the runs of text, which holds nothing but whole runs and whitespace."""
        if any(character in text for character in _NONCHARACTERS):
            raise _NotSimple("character that XML forbids")
        if self.layout is not None:
            text = self._scan_known(text)
        if text:
            if self._scan_any(text):
                self.layout = _layout(self.attribute_names, self.titles, self.runs.wanted)

    def _scan_known(self, text):
        """Read runs whose layout is known; return the text from the first other run on."""
        expression, groups = self.layout
        matches = expression.findall(text)
        rest = matches.pop()[-1] if matches and matches[-1][-1] else ""
        if matches:
            fields = dict(zip(groups, zip(*matches)))
            self.runs.add(
                *(fields.get(("attribute", name)) for name in _RUN_ATTRIBUTES),
                {title: fields[("column", title)] for title in self.runs.columns},
                len(matches),
            )
        return rest

    def _scan_any(self, text):
        """Read runs of any layout, or raise _NotSimple; return whether the layout grew."""
        attributes, rows, grew = [], [], False
        for _tag, attribute_text, columns, rest in _ANY_RUN.findall(text):
            if rest:
                raise _NotSimple(f"not a run: {rest[:40]!r}")
            attribute = _unique_pairs(_ATTRIBUTE.findall(attribute_text))
            if attribute is None or "xmlns" in attribute:  # a namespace would rename the run
                raise _NotSimple("run attributes")
            pairs = _COLUMN.findall(columns)
            row = dict(pairs)
            if len(row) < len(pairs):  # the first of duplicate titles counts, as in tablegenerator
                row = {}
                for title, value in pairs:
                    row.setdefault(title, value)
            grew |= _learn(self.attribute_names, attribute)
            grew |= _learn(self.titles, row)
            attributes.append(tuple(attribute.get(name, "") for name in _RUN_ATTRIBUTES))
            rows.append(row)
        self.runs.add_rows(attributes, rows)
        return grew


def _unique_pairs(pairs):
    """The (name, value) pairs as a dict, None if a name repeats (not well-formed XML)."""
    result = dict(pairs)
    return result if len(result) == len(pairs) else None


def _learn(order, names):
    """Put the names that order lacks right after the name before them; True if any was new.

    The order of runs' columns then matches every run seen so far, unless two runs disagree;
    a run that does not fit the order only makes the scanner use its slower expression.
    """
    if all(name in order for name in names):
        return False
    position = 0
    for name in names:
        if name in order:
            position = order.index(name) + 1
        else:
            order.insert(position, name)
            position += 1
    return True


def _layout(attribute_names, titles, wanted):
    """An expression for a whole run with these attributes and columns (each optional, in this
    order), and what each of its groups holds; only the values a RunTable keeps are groups."""
    groups = ["tag"]
    pattern = [rf"{_WS}(?:<(run|sourcefile)"]
    for name in attribute_names:
        value = _VALUE
        if name in _RUN_ATTRIBUTES:
            value = f"({_VALUE})"
            groups.append(("attribute", name))
        pattern.append(rf'(?:{_SPACE}{re.escape(name)}="{value}")?')
    pattern.append(rf"{_WS}(?:/>|>{_WS}")
    for title in titles:
        value = _VALUE
        if wanted is None or title in wanted:
            value = f"({_VALUE})"
            groups.append(("column", title))
        # whitespace after each column, so that a column the run lacks fails at once
        pattern.append(rf"(?:{_column_pattern(re.escape(title), value)}{_WS})?")
    pattern.append(rf"</\1>)|{_REST})")
    groups.append("rest")
    return re.compile("".join(pattern), re.S), groups


class _Collector:
    """lxml parser target: takes the result's attributes, runs and system information.

    A target gets each element's tag and attributes as the parser meets them, without a tree:
    memory stays flat and no element objects are made, which makes loading twice as fast as
    iterparse with clear(). Runs go to the _Runs in batches.
    """

    def __init__(self, path, runs):
        self.path = path
        self.depth = 0
        self.attributes = {}
        self.runs = runs
        self.batch = []  # (attributes, row) of runs read but not yet in self.runs
        self.run = None  # (name, files, options) of the <run> being read
        self.row = None  # its columns, title -> value
        self.systeminfo = []
        self.host = None  # the <systeminfo> being read
        self.markers = []  # depth of each of the fast reader's markers

    def start(self, tag, attrib):
        """Called per start tag; a run is a child of the root, its values are grandchildren."""
        self.depth += 1
        if self.depth == 3:
            if self.row is not None and tag == "column":
                title = attrib.get("title")
                if title is None or self.runs.wants(title):
                    # the first of duplicate titles counts, as in tablegenerator
                    self.row.setdefault(title, attrib.get("value"))
            elif self.host is not None:
                for attribute, key in _SYSTEMINFO.get(tag, {}).items():
                    self.host[key] = attrib.get(attribute, "")
        elif self.depth == 2:
            if tag in _RUN_TAGS:
                self.run = tuple(attrib.get(name, "") for name in _RUN_ATTRIBUTES)
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
                self._finish_run()
            elif self.host is not None:
                self.systeminfo.append(self.host)
                self.host = None
        self.depth -= 1

    def _finish_run(self):
        """Queue the run just read; hand the queue over to the columns when it is full."""
        if None in self.row:
            raise ResultFileError(
                self.path, f"run '{self.run[0]}' has a <column> without title; "
                "pass a result file written by BenchExec"
            )
        self.batch.append((self.run, self.row))
        self.run = self.row = None
        if len(self.batch) >= _BATCH_RUNS:
            self._flush()

    def _flush(self):
        if self.batch:
            self.runs.add_rows(*zip(*self.batch))
            self.batch = []

    def _root(self, tag, attrib):
        """Refuse anything but <result> before reading further."""
        if tag != "result":
            raise ResultFileError(
                self.path, f"root element is <{tag}>, not <result>; pass a BenchExec result "
                "file, not a benchmark or table definition"
            )
        self.attributes = dict(attrib)

    def pi(self, target, data):
        """Called per processing instruction: note where the fast reader's marker stands."""
        if target == _MARKER:
            self.markers.append(self.depth)

    def close(self):
        """Called at the end of the document: the last runs go to the columns."""
        self._flush()


class _Runs:
    """The runs read so far: their attributes and one _Column per column title kept."""

    def __init__(self, wanted, keep_text=True):
        self.wanted = wanted  # titles to keep, None for all
        self.keep_text = keep_text  # of numbers too (see _Column)
        self.count = 0
        self.attributes = {name: _Column(name, numeric=False) for name in _RUN_ATTRIBUTES}
        self.columns: dict[str, _Column] = {}  # in order of first appearance, as in the file
        self.seen = set()  # every title met, kept or not

    def wants(self, title):
        return self.wanted is None or title in self.wanted

    def add_rows(self, attributes, rows):
        """Add runs given as (name, files, options) and {title: value} (None: no value)."""
        if not rows:
            return
        for row in rows:
            if not self.seen.issuperset(row):
                self._new_titles(row)
        columns = {title: [row.get(title) or "" for row in rows] for title in self.columns}
        self.add(*zip(*attributes), columns, len(rows))

    def _new_titles(self, titles):
        """Start a column for each new title kept; the runs before lack its value."""
        for title in titles:
            if title not in self.seen:
                self.seen.add(title)
                if self.wants(title):
                    self.columns[title] = column = _Column(title, title not in _TEXT_ONLY, self.keep_text)
                    if self.count:
                        column.add(("",) * self.count)

    def add(self, names, files, options, columns, count):
        """Add count runs: their attributes (None: all '') and the values of every column."""
        for column, values in zip(self.attributes.values(), (names, files, options)):
            column.add(values or ("",) * count)
        for title, column in self.columns.items():
            column.add(columns[title])
        self.count += count


class _Column:
    """One column's values, added a chunk of runs at a time and converted at once.

    The numbers of each chunk are converted when it comes, while the next chunk is still being
    decompressed. A column is numeric only if all its values are, so a value that is text
    needs the text of all values before it: the strict reader keeps it, joined into one string
    per chunk; the fast reader keeps only the text of text columns and reads the file again,
    keeping all, in the rare case that a column has text after numbers (_TextAfterNumbers).
    """

    def __init__(self, title, numeric, keep_text=True):
        self.title = title
        self.keep_text = keep_text
        self.size = 0
        self.texts = []  # per chunk: its values joined by _SEPARATOR ('' is missing), or None
        self.numbers = [] if numeric else None  # per chunk: float64 in SI units; None once text
        self.suffixes = {}  # non-empty unit suffix -> (run, value) where it first appears
        self.missing = 0
        self.nonfinite = 0

    def add(self, values):
        """Add the values of the next runs ('' where a run lacks one)."""
        text = _SEPARATOR.join(values)
        if self.numbers is not None:
            measured = _numbers(values)
            if measured is None:
                if None in self.texts:
                    raise _TextAfterNumbers(self.title)
                self.numbers = None
            else:
                numbers, missing, nonfinite, first = measured
                self.numbers.append(numbers)
                self.missing += missing
                self.nonfinite += nonfinite
                for suffix, index in first.items():
                    self.suffixes.setdefault(suffix, (self.size + index, values[index]))
                if not self.keep_text and missing < len(values):
                    text = None
        self.texts.append(text)
        self.size += len(values)

    def value(self, run):
        """One run's value, for a message."""
        for text in self.texts:
            values = text.split(_SEPARATOR)
            if run < len(values):
                return values[run]
            run -= len(values)
        raise IndexError(run)

    def strings(self):
        """The values as an object array of str; the kept text is freed on the way.

        Where a chunk repeats values, equal values become one str object: 100,000 runs with
        status 'done' then hold one 'done', not 100,000 copies.
        """
        values, shared = [], {}
        texts, self.texts = self.texts[::-1], None
        while texts:
            chunk = texts.pop().split(_SEPARATOR)
            distinct = dict.fromkeys(chunk)
            if len(distinct) * 2 <= len(chunk):
                for value in distinct:
                    shared.setdefault(value, value)
                chunk = map(shared.__getitem__, chunk)
            values.extend(chunk)
        return _strings(values)

    def measured(self, path, names):
        """The numbers in the column's SI unit, and that unit; None if the column is text.

        Unitless values in a column with units count as its base unit, as tablegenerator treats
        them; a wholly unitless column gets its unit from _UNITLESS_DEFAULTS, else ''. A column
        without any value is text: nothing says it is numeric.
        """
        if self.numbers is None or self.missing == self.size:
            return None
        unknown = [suffix for suffix in self.suffixes if suffix not in _UNITS]
        if unknown:
            (run, value), suffix = min((self.suffixes[suffix], suffix) for suffix in unknown)
            raise ResultFileError(
                path, f"column '{self.title}' of run '{names.value(run)}' has value '{value}' with unknown "
                f"unit '{suffix}'; make the tool-info module report plain numbers or one of the "
                f"units {_KNOWN_UNITS}"
            )
        si_units = {_UNITS[suffix][0] for suffix in self.suffixes}
        if len(si_units) > 1:
            mixed = " and ".join(f"{suffix} (run '{names.value(run)}')" for suffix, (run, _) in self.suffixes.items())
            raise ResultFileError(
                path, f"column '{self.title}' mixes units {mixed}; give each column one kind of unit"
            )
        numbers = np.concatenate(self.numbers)
        self.numbers = self.texts = None
        return numbers, si_units.pop() if si_units else _UNITLESS_DEFAULTS.get(self.title, "")


def _run_table(path, collector):
    """Convert the collected columns into a RunTable.

    Numeric columns come first: each frees the text it kept before the text columns take
    memory for their str objects.
    """
    attributes, runs = collector.attributes, collector.runs
    columns, units, nonfinite = {}, {}, {}
    for title, column in runs.columns.items():
        measured = column.measured(path, runs.attributes["name"])
        if measured is not None:
            columns[title], units[title] = measured
            if column.nonfinite:
                nonfinite[title] = column.nonfinite
    text_columns = {title: column.strings() for title, column in runs.columns.items() if title not in columns}
    tasks, files, run_options = (column.strings() for column in runs.attributes.values())
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
        tasks=tasks,
        files=files,
        run_options=run_options,
        status=text_columns.get("status", _strings([""] * runs.count)),
        category=text_columns.get("category", _strings([""] * runs.count)),
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
    """An object array of str."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _numbers(values):
    """Numbers, count of missing and of NaN/Inf, and where each unit suffix first appears, of a
    chunk of a column's values, or None if any value is text.

    '0.5s' is 0.5 and 's', '12' is 12.0 and '', '-Inf' is -inf and ''. A column is numeric only
    if all its values are, as in tablegenerator: 'host' or BenchExec's 'cpuCores' of a multi-core
    run ('0,1') are text. Missing ('') values become nan. Values with a known unit are converted
    to its SI unit here; an unknown unit is reported once the column turns out numeric.
    """
    distinct = dict.fromkeys(values)
    if len(distinct) * 4 <= len(values):  # exit codes, '0B', timer steps: each converted once
        parsed = _parse_numbers(list(distinct))
        if parsed is None:
            return None
        codes = dict(zip(distinct, range(len(distinct))))
        indices = np.fromiter(map(codes.__getitem__, values), np.intp, len(values))
        numbers, suffixes = parsed[0][indices], parsed[1][indices]
    else:
        parsed = _parse_numbers(values)
        if parsed is None:
            return None
        numbers, suffixes = parsed
    missing = values.count("")
    # counted as the file writes them: '1e308kJ' is finite, though inf in J
    nonfinite = len(values) - missing - int(np.count_nonzero(np.isfinite(numbers)))
    return numbers, missing, nonfinite, _first_suffixes(numbers, suffixes)


def _parse_numbers(values):
    """The values as float64 (nan where missing) and their unit suffixes, None if one is text."""
    text = np.array(values, dtype=str)
    heads = _np_strings.rstrip(text, _UNIT_CHARS)
    # What rstrip() leaves of 'NaN', '-Inf', '+Infinity': then the whole text is the number.
    whole = (heads == "") | (heads == "-") | (heads == "+")
    present = np.flatnonzero(text != "")
    numbers = np.full(len(text), np.nan)
    number_text = np.where(whole, text, heads)[present].tolist()
    try:
        numbers[present] = np.fromiter(map(float, number_text), np.float64, len(number_text))
    except ValueError:
        return None
    suffixes = _suffixes(text, heads)
    suffixes[whole] = ""  # missing values are whole too
    return numbers, suffixes


def _suffixes(text, heads):
    """What follows each number, without spaces: the unit suffix."""
    lengths = _np_strings.str_len(heads)
    if hasattr(_np_strings, "slice"):  # numpy >= 2.3
        tails = _np_strings.slice(text, lengths, None)  # from lengths to the end
    else:
        tails = np.array([value[length:] for value, length in zip(text.tolist(), lengths.tolist())], dtype=str)
    return _np_strings.strip(tails)


def _first_suffixes(numbers, suffixes):
    """{suffix: index of its first value} for the non-empty suffixes, in order of appearance;
    numbers with a known unit are converted to its SI unit on the way (in place)."""
    if (suffixes == suffixes[0]).all():
        distinct, first, inverse = [suffixes[0]], [0], None
    else:
        distinct, first, inverse = np.unique(suffixes, return_index=True, return_inverse=True)
    factors = [_UNITS[suffix][1] if suffix in _UNITS else 1.0 for suffix in distinct]
    if any(factor != 1.0 for factor in factors):
        with np.errstate(over="ignore"):  # '1e308h' is inf seconds
            numbers *= factors[0] if inverse is None else np.array(factors)[inverse]
    return {str(distinct[i]): int(first[i]) for i in np.argsort(first, kind="stable") if distinct[i]}
