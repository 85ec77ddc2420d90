"""The strict reader: lxml's parser, with a target that collects the runs, reads the whole file.

It decides what a file means and raises the errors: one Python call per element, almost two
million for 100,000 runs, but it reads any well-formed XML as tablegenerator does (legacy
<sourcefile> elements, the first of duplicate columns in a run). The fast reader uses its
Collector for everything but the runs.
"""

from __future__ import annotations

import contextlib

from lxml import etree

from analysis.core.results.columns import RUN_ATTRIBUTES, Runs
from analysis.core.results.files import prefetched
from analysis.core.results.model import ResultFileError

# <sourcefile> is what BenchExec wrote before <run>; tablegenerator still reads both.
_RUN_TAGS = ("run", "sourcefile")

# Runs the strict reader collects before it hands them to the column accumulators.
_BATCH_RUNS = 1000

# <systeminfo> children: tag -> {attribute: key in RunTable.systeminfo}
_SYSTEMINFO = {
    "os": {"name": "os"},
    "cpu": {"model": "cpu_model", "cores": "cpu_cores", "frequency": "cpu_frequency",
            "turboboostActive": "turboboost"},
    "ram": {"size": "ram"},
}
_SYSTEMINFO_KEYS = ["hostname"] + [key for keys in _SYSTEMINFO.values() for key in keys.values()]

# The processing instruction that stands in for the runs when lxml reads the rest of the file.
MARKER = "timekit-runs"


def xml_parser(collector):
    """An lxml parser that calls the collector and never loads anything from elsewhere."""
    return etree.XMLParser(target=collector, resolve_entities=False, no_network=True, load_dtd=False)


def collect(pieces, path, wanted):
    """Feed the whole XML to lxml's parser, whose target collects everything."""
    collector = Collector(path, Runs(wanted))
    parser = xml_parser(collector)
    with contextlib.closing(prefetched(pieces)) as chunks:  # on error, stop the reader first
        for chunk in chunks:
            parser.feed(chunk)
    parser.close()
    return collector


class Collector:
    """lxml parser target: takes the result's attributes, runs and system information.

    A target gets each element's tag and attributes as the parser meets them, without a tree:
    memory stays flat and no element objects are made, which makes loading twice as fast as
    iterparse with clear(). Runs go to the Runs in batches.
    """

    def __init__(self, path, runs):
        self.path = path
        self.depth = 0
        self.attributes = {}
        self.runs = runs
        self.batch = []  # (attributes, row) of runs read but not yet in self.runs
        self.run = None  # (name, files, options, properties) of the <run> being read
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
                self.run = tuple(attrib.get(name, "") for name in RUN_ATTRIBUTES)
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
        if target == MARKER:
            self.markers.append(self.depth)

    def close(self):
        """Called at the end of the document: the last runs go to the columns."""
        self._flush()
