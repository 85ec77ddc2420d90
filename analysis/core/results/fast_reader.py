"""The fast reader: the runs, nearly all of a file, read with compiled regular expressions.

It accepts only what BenchExec writes, accounts for every character from the first run to the
last, and has lxml check the rest of the file; on anything else it raises NotSimple, and the
strict reader reads the file (docs/architecture.md, "Reading result files").
"""

from __future__ import annotations

import contextlib
import re

from analysis.core.results.columns import RUN_ATTRIBUTES, Runs
from analysis.core.results.files import prefetched
from analysis.core.results.model import NotSimple
from analysis.core.results.strict_reader import MARKER, Collector, xml_parser

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
# XML forbids these two characters; everything else _VALUE lets through is allowed.
_NONCHARACTERS = ("\ufffe", "\uffff")


def collect(pieces, path, wanted, keep_text):
    """Read the runs with regular expressions and the rest of the file with lxml.

    The runs lie between the head (XML declaration, root start tag, columns, system
    information) and the tail (totals, root end tag). Each chunk is cut after its last
    complete run; the text after it waits for the next chunk.
    """
    scanner = _RunScanner(Runs(wanted, keep_text))
    with contextlib.closing(prefetched(pieces)) as chunks:  # on error, stop the reader first
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
    collector = Collector(path, Runs(None))
    parser = xml_parser(collector)
    for part in (head, f"<?{MARKER}?>".encode(), pending):
        if part:
            parser.feed(part)
    parser.close()
    # the marker must stand right inside <result>, and the runs must all be the scanner's
    if collector.markers != [1] or collector.runs.count:
        raise NotSimple("runs outside the part of the file read as runs")
    collector.runs = scanner.runs
    return collector


def _head(chunks):
    """The bytes before the first run, and the bytes read after them."""
    data = b""
    for chunk in chunks:
        start = max(0, len(data) - 16)  # a run's start tag may straddle two chunks
        data += chunk
        match = _FIRST_RUN.search(data, start)
        if match:
            return data[: match.start()], data[match.start():]
    raise NotSimple("no runs")  # nothing to gain; the strict reader also checks the whole file


def _check_prolog(head):
    """Raise NotSimple unless the runs mean what they say: UTF-8, and no declarations.

    A DTD in the file may declare entities, or attribute types that make lxml normalize values
    ('1  2' becomes '1 2'); BenchExec writes only the DTD's name.
    """
    if not _UTF8_PROLOG.match(head):
        raise NotSimple("not XML 1.0 in UTF-8")
    if b"<!ATTLIST" in head or b"<!ENTITY" in head:
        raise NotSimple("declarations in the DTD")


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
            raise NotSimple("character that XML forbids")
        while text:
            if self.layout is not None:
                text = self._scan_known(text)
                if not text:
                    break
            # the slower expression reads a few runs only, to learn (or extend) the layout, and
            # the layout's one expression the rest: a file of 1,000 runs is often a single chunk,
            # which the slower expression alone read at about a third of the speed
            head, text = _first_runs(text, LEARN_RUNS)
            if self._scan_any(head) or self.layout is None:
                self.layout = _layout(self.attribute_names, self.titles, self.runs.wanted)

    def _scan_known(self, text):
        """Read runs whose layout is known; return the text from the first other run on."""
        expression, groups = self.layout
        matches = expression.findall(text)
        rest = matches.pop()[-1] if matches and matches[-1][-1] else ""
        if matches:
            fields = dict(zip(groups, zip(*matches)))
            self.runs.add(
                *(fields.get(("attribute", name)) for name in RUN_ATTRIBUTES),
                {title: fields[("column", title)] for title in self.runs.columns},
                len(matches),
            )
        return rest

    def _scan_any(self, text):
        """Read runs of any layout, or raise NotSimple; return whether the layout grew."""
        attributes, rows, grew = [], [], False
        for _tag, attribute_text, columns, rest in _ANY_RUN.findall(text):
            if rest:
                raise NotSimple(f"not a run: {rest[:40]!r}")
            attribute = _unique_pairs(_ATTRIBUTE.findall(attribute_text))
            if attribute is None or "xmlns" in attribute:  # a namespace would rename the run
                raise NotSimple("run attributes")
            pairs = _COLUMN.findall(columns)
            row = dict(pairs)
            if len(row) < len(pairs):  # the first of duplicate titles counts, as in tablegenerator
                row = {}
                for title, value in pairs:
                    row.setdefault(title, value)
            grew |= _learn(self.attribute_names, attribute)
            grew |= _learn(self.titles, row)
            attributes.append(tuple(attribute.get(name, "") for name in RUN_ATTRIBUTES))
            rows.append(row)
        self.runs.add_rows(attributes, rows)
        return grew


LEARN_RUNS = 16
_RUN_END = re.compile(r"</(?:run|sourcefile)>")


def _first_runs(text, count):
    """text split after its first `count` runs with an end tag (all of it if it has fewer)."""
    for number, end in enumerate(_RUN_END.finditer(text), 1):
        if number == count:
            return text[:end.end()], text[end.end():]
    return text, ""


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
        if name in RUN_ATTRIBUTES:
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
