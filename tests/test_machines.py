"""Comparisons check their machines: each side's <systeminfo> and limits, a warning line before the
table where they differ, and the report's Environment rows."""

import json
import subprocess
import sys

import pytest

from analysis.core.results import load_results, machines
from tests.helpers import REPO

pytestmark = pytest.mark.unit
CORPUS = REPO / "tests" / "data" / "benchexec-results-corpus"
ZEUS = CORPUS / "integration-predicateAnalysis.2015-10-20_1355.results.xml.bz2"
FARM = CORPUS / "integration-predicateAnalysis.2015-10-22_1113.results.xml.bz2"
NODE = CORPUS / "integration-predicateAnalysis.2015-10-23_1348.results.xml.bz2"


def timekit(*argv):
    done = subprocess.run([sys.executable, "-m", "analysis.cli", *map(str, argv)], capture_output=True, text=True, cwd=REPO)
    return done.returncode, done.stdout, done.stderr


def test_compare_across_two_clusters_names_both_machines_before_the_table():
    code, out, err = timekit("compare", ZEUS, NODE)
    assert code in (0, 1) and "Traceback" not in err
    lines = out.splitlines()
    warning = next(k for k, line in enumerate(lines) if line.startswith("warning:"))
    assert "zeus05" in lines[warning] and "node-01" in lines[warning]
    assert "Intel Xeon E5-2650 v2" in lines[warning] and "Intel Xeon E7- 4870" in lines[warning]
    assert warning < next(k for k, line in enumerate(lines) if line.startswith("column"))


def test_limits_that_differ_are_named_and_one_machine_against_itself_is_no_warning():
    zeus, farm = machines.of_tables(load_results([ZEUS])), machines.of_tables(load_results([FARM]))
    assert "cpuCores 2 against 1" in machines.warning(zeus, farm) and "mt-farm01" in machines.warning(zeus, farm)
    assert machines.warning(zeus, zeus) == ""
    assert machines.warning(zeus, machines.Measured()) == ""   # nothing recorded: nothing to claim


def test_only_the_hosts_the_runs_ran_on_count():
    node = machines.of_tables(load_results([NODE]))
    assert {m.host[:5] for m in node.machines} == {"node-"}
    assert node.limits == {"timelimit": "60 s", "memlimit": "3000 MB", "cpuCores": "2"}


def test_the_reports_environment_shows_both_machines(scratch):
    code, out, err = timekit("report", ZEUS, NODE, "--output", scratch / "report")
    assert code == 0, err
    environment = json.loads((scratch / "report" / "report.json").read_text())["environment"]
    assert "zeus05" in environment[f"measured on ({ZEUS.name})"]
    assert "node-01" in environment["machines differ"]
    assert "Not recorded." not in (scratch / "report" / "report.html").read_text().split("tk-contents")[0]


def test_history_names_where_the_machine_changes():
    sides = [(p.name, machines.of_tables(load_results([p]))) for p in (ZEUS, ZEUS, FARM, NODE)]
    line = machines.changes(sides)
    assert line.startswith("warning:") and f"from {FARM.name} on mt-farm01" in line and f"from {NODE.name} on node-01" in line
    assert line.count("; from ") == 2 and machines.changes(sides[:2]) == ""
