"""Every tool-info module passes BenchExec's own check, and the wrapper works on upstream modules."""

import subprocess
import sys
from pathlib import Path

import pytest

from analysis.core import results
from tests.helpers import run_isolated

REPO = Path(__file__).resolve().parent.parent
MODULES = sorted(f"tool_info.{p.stem}" for p in (REPO / "tool_info").glob("*.py")
                 if p.stem not in ("__init__", "keyvalue", "timer", "sizing"))  # shared helpers, no Tool
# the warnings a workload of one input file and no property cannot avoid
WRAPPED_UPSTREAM = {"tool_info.timed_calculatepi": "benchexec.tools.calculatepi"}
ALLOWED = ("ignores property file", "ignores all but first input file", "Path to executable is absolute")


def check_tool_info(module):
    code, output = run_isolated([sys.executable, "-m", "benchexec.test_tool_info", module])
    warnings = {line.strip() for line in output.splitlines() if line.startswith("WARNING")}
    return code, output, warnings


@pytest.mark.parametrize("module", [m for m in MODULES if m not in WRAPPED_UPSTREAM])
@pytest.mark.benchexec
def test_tool_info_module_passes_benchexec_check(module, programs):
    code, output, warnings = check_tool_info(module)
    assert code == 0, output
    unexpected = [w for w in warnings if not any(a in w for a in ALLOWED)]
    assert not unexpected, output
    version = output.split("Version:")[1].splitlines()[0]
    assert version.strip(" “”")[0].isdigit(), version


@pytest.mark.parametrize("module,upstream", WRAPPED_UPSTREAM.items())
def test_wrapper_adds_no_warning_to_the_upstream_module(module, upstream):
    """An upstream module keeps its own quirks (calculatepi needs a number, not a file) but the
    wrapper must not add any."""
    *_, wrapped = check_tool_info(module)
    *_, original = check_tool_info(upstream)
    assert wrapped <= original | {w for w in wrapped if any(a in w for a in ALLOWED)}


def test_modules_found():
    assert {"tool_info.divisors", "tool_info.timed_divisors", "tool_info.timed_calculatepi"} <= set(MODULES)


BENCHMARK = """<?xml version="1.0"?>
<!DOCTYPE benchmark PUBLIC "+//IDN sosy-lab.org//DTD BenchExec benchmark 2.3//EN" "https://www.sosy-lab.org/benchexec/benchmark-2.3.dtd">
<benchmark tool="tool_info.timed_calculatepi" timelimit="20 s" memlimit="100 MB">
  <rundefinition name="bash"><option name="--timer">bash</option></rundefinition>
  <rundefinition name="gnu"><option name="--timer">gnu</option></rundefinition>
  <tasks name="pi"><withoutfile>800</withoutfile></tasks>
</benchmark>
"""
# BenchExec 3.35 cannot expand <columns> for tasks without a file (IndexError in model.py), so
# the timer columns come from table-generator, which asks the tool-info module to read each log.
TABLE = """<?xml version="1.0"?>
<table>
  <column title="status"/>
  <column title="walltime"/>
  <column title="timer-real">timer-real</column>
  <column title="timer-user">timer-user</column>
</table>
"""


def test_upstream_calculatepi_wrapped_unchanged_under_real_benchexec(scratch):
    """benchexec.tools.calculatepi (an old-style BaseTool module) under bash and GNU time."""
    definition = scratch / "pi.xml"
    definition.write_text(BENCHMARK)
    code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(definition), "-o", str(scratch) + "/"])
    assert code == 0, output
    result_files = [next(scratch.glob(f"pi.*.results.{timer}.pi.xml.bz2")) for timer in ("bash", "gnu")]
    for timer, path in zip(("bash", "gnu"), result_files):
        table = results.load_result(path)
        assert table.status.tolist() == ["done"]
        assert table.options == f"--timer {timer}"
    (scratch / "table.xml").write_text(TABLE)
    done = subprocess.run(["table-generator", "-x", str(scratch / "table.xml"), "-o", str(scratch), "-n", "pi",
                           "-f", "csv", *map(str, result_files)],
                          cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    rows = [line.split("\t") for line in (scratch / "pi.table.csv").read_text().splitlines()]
    data = rows[-1]  # one task: header rows, then the row of task 800 (~0.2 s, above GNU time's 10 ms steps)
    # per run set: status, walltime, timer-real, timer-user
    for offset in (1, 5):
        status, walltime, real, user = data[offset:offset + 4]
        assert status == "done"
        assert 0 < float(real) <= float(walltime) + 0.01  # the timer's line was found in the log
        assert float(user) >= 0
