"""The per-column accumulators: a chunk of runs' values at a time, converted at once.

Numbers become float64 in SI base units (s, B, J, Hz), everything else str; a column is numeric
only if all its values are, as in tablegenerator. Both readers fill a Runs, and run_table turns
it into a RunTable.
"""

from __future__ import annotations

import pathlib
import re
import string

import numpy as np

from analysis.core.results.model import ResultFileError, RunTable, TextAfterNumbers

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
TEXT_ONLY = ("status", "category")

# What may follow a number as its unit; rstrip() with these splits '0.5s' into '0.5' and 's'.
_UNIT_CHARS = string.ascii_letters + "/% "

# NaN or an infinity with a unit, as BenchExec writes a float it measured ('nans', '-Infs', 'NaNB'):
# the word is the number, the rest its unit (only a known one: 'Info' is text, not inf 'o').
_NONFINITE_WITH_UNIT = re.compile(r"^\s*([+-]?(?:nan|inf(?:inity)?))\s*(\S+)\s*$", re.IGNORECASE)

# numpy >= 2 has string ufuncs in np.strings; np.char has the same functions, slower.
_np_strings = getattr(np, "strings", np.char)

# Joins the values of a chunk into one string: XML text can hold every character but NUL.
_SEPARATOR = "\x00"

# The run attributes a RunTable keeps: tasks, files, run_options, properties.
RUN_ATTRIBUTES = ("name", "files", "options", "properties")


class Runs:
    """The runs read so far: their attributes and one Column per column title kept."""

    def __init__(self, wanted, keep_text=True):
        self.wanted = wanted  # titles to keep, None for all
        self.keep_text = keep_text  # of numbers too (see Column)
        # a run's `files` only when all is kept or 'files' is asked for: at a million runs they
        # are 80 MB that only a reader of the tasks' source files needs
        self.keep_files = wanted is None or "files" in wanted
        self.count = 0
        self.attributes = {name: Column(name, numeric=False) for name in RUN_ATTRIBUTES}
        self.columns: dict[str, Column] = {}  # in order of first appearance, as in the file
        self.seen = set()  # every title met, kept or not

    def wants(self, title):
        return self.wanted is None or title in self.wanted

    def add_rows(self, attributes, rows):
        """Add runs given as (name, files, options, properties) and {title: value} (None: no value)."""
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
                    self.columns[title] = column = Column(title, title not in TEXT_ONLY, self.keep_text)
                    if self.count:
                        column.add(("",) * self.count)

    def add(self, names, files, options, properties, columns, count):
        """Add count runs: their attributes (None: all '') and the values of every column."""
        kept = (names, files if self.keep_files else None, options, properties)
        for column, values in zip(self.attributes.values(), kept):
            column.add(values or ("",) * count)
        for title, column in self.columns.items():
            column.add(columns[title])
        self.count += count


class Column:
    """One column's values, added a chunk of runs at a time and converted at once.

    The numbers of each chunk are converted when it comes, while the next chunk is still being
    decompressed. A column is numeric only if all its values are, so a value that is text
    needs the text of all values before it: the strict reader keeps it, joined into one string
    per chunk; the fast reader keeps only the text of text columns and reads the file again,
    keeping all, in the rare case that a column has text after numbers (TextAfterNumbers).
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
                    raise TextAfterNumbers(self.title)
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


def run_table(path, collector):
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
    tasks, files, run_options, properties = (column.strings() for column in runs.attributes.values())
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
        properties=properties,
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
        return _parse_with_nonfinite(text, heads, whole, present)
    suffixes = _suffixes(text, heads)
    suffixes[whole] = ""  # missing values are whole too
    return numbers, suffixes


def _parse_with_nonfinite(text, heads, whole, present):
    """_parse_numbers for values of which some are NaN or an infinity followed by a unit; None if
    a value is text after all."""
    numbers = np.full(len(text), np.nan)
    suffixes = _suffixes(text, heads)
    suffixes[whole] = ""
    for i in present.tolist():
        value = str(text[i])
        if whole[i]:
            match = _NONFINITE_WITH_UNIT.match(value)
            if match and match.group(2) in _UNITS:
                value, suffixes[i] = match.group(1), match.group(2)
        else:
            value = str(heads[i])
        try:
            numbers[i] = float(value)
        except ValueError:
            return None
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
