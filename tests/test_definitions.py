"""Benchmark definitions and table configs are valid against BenchExec's DTDs.

BenchExec silently ignores a misspelled element, so only the DTD catches one.
"""

from pathlib import Path

import pytest
from lxml import etree

REPO = Path(__file__).resolve().parent.parent
DTDS = REPO / "analysis" / "sweep" / "dtd"  # BenchExec 3.35's own, unchanged (NOTICE.md there)


def dtd(kind):
    return etree.DTD(str(DTDS / f"{kind}.dtd"))


def files(directory):
    return sorted((REPO / directory).glob("*.xml"))


@pytest.mark.parametrize("kind,directory", [("benchmark", "benchmark-defs"), ("table", "table-configs"),
                                            ("benchmark", "benchmarks")])
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


def test_default_time_apis_tasks_give_30_distinct_runs_per_input():
    """Plain `benchexec benchmark-defs/time-apis.xml` runs the committed repetitions: 30 per input,
    each its own task name (BenchExec drops duplicate includes), and they match what the kit writes."""
    import yaml

    from analysis.experiments.time_apis import EXPERIMENT as TIME_APIS
    from analysis.core.tasks import TASK_TEMPLATE

    tree = etree.parse(str(TIME_APIS.benchmark))
    for include in tree.iter("include"):
        tasks = sorted(TIME_APIS.benchmark.parent.glob(include.text))
        assert len(tasks) == TIME_APIS.default_reps == 30, include.text
        assert len({t.name for t in tasks}) == len(tasks)
        for rep, task in enumerate(tasks, start=1):
            content = yaml.safe_load(task.read_text())
            assert content["format_version"] == "2.0"
            assert (task.parent / content["input_files"]).resolve().is_file()
            assert task.read_text() == TASK_TEMPLATE.format(rep=rep, count=30, input=content["input_files"])
