"""Benchmark definitions and table configs are valid against BenchExec's DTDs.

BenchExec silently ignores a misspelled element, so only the DTD catches one.
"""

from pathlib import Path

import pytest
from lxml import etree

REPO = Path(__file__).resolve().parent.parent
DTDS = REPO.parent / "shared" / "benchexec-dtd"
VENDORED = REPO / "tests" / "data" / "dtd"


def dtd(kind):
    path = DTDS / f"{kind}.dtd" if (DTDS / f"{kind}.dtd").exists() else VENDORED / f"{kind}.dtd"
    return etree.DTD(str(path))


def files(directory):
    return sorted((REPO / directory).glob("*.xml"))


@pytest.mark.parametrize("kind,directory", [("benchmark", "benchmark-defs"), ("table", "table-configs")])
def test_every_file_is_valid(kind, directory):
    checker = dtd(kind)
    assert files(directory), f"no XML files in {directory}"
    parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
    for path in files(directory):
        tree = etree.parse(str(path), parser)
        assert tree.getroot().tag == kind, path
        assert checker.validate(tree), f"{path}: {checker.error_log.filter_from_errors()[0]}"


def test_a_misspelled_element_is_caught():
    bad = etree.fromstring(b'<benchmark tool="x"><rundefinition name="a"><optoin name="--timer">bash</optoin></rundefinition></benchmark>')
    assert not dtd("benchmark").validate(bad)
