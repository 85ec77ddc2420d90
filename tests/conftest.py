"""Shared fixtures: the built programs, and scratch directories BenchExec's container can see."""

import fcntl
import inspect
import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if os.environ.get("PYTEST_XDIST_WORKER"):
    # tests on every CPU at once are outside work to each other's sweeps: nothing is set aside for
    # it there; the timing pass runs one test at a time with the kit's level (analysis.machine.disturbance)
    os.environ.setdefault("TIMEKIT_OUTSIDE_LEVEL", "inf")
SCRATCH = REPO / ".pytest-tmp" / "scratch"


@pytest.fixture(scope="session")
def programs():
    """programs/ built with its Makefile (the real build, warnings as errors); under a lock, as
    pytest-xdist's workers (tox -e unit) would otherwise run make in the same folder at once."""
    SCRATCH.mkdir(parents=True, exist_ok=True)
    with open(SCRATCH.parent / "programs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "-C", str(REPO / "programs")], check=True)
    return REPO / "programs" / "bin"


@pytest.fixture
def scratch():
    """A fresh directory inside the checkout: nothing under /tmp is visible in BenchExec's container."""
    path = SCRATCH / uuid.uuid4().hex[:12]
    path.mkdir(parents=True)
    yield path
    shutil.rmtree(path, ignore_errors=True)



def pytest_configure(config):
    config.addinivalue_line("markers", "unit: fast and deterministic: no benchexec, no timing (tox -e unit)")
    config.addinivalue_line("markers", "benchexec: runs the real tools (benchexec, runexec, table-generator, the programs) "
                            "but asserts only on what ran (files, columns, statuses, counts, structure): runs in "
                            "parallel with other tests")
    config.addinivalue_line("markers", "timing: asserts on measured times, ratios or statistical verdicts: runs alone "
                            "(tox's second pass; may need a rerun on a loaded machine)")


_REAL_TOOLS = re.compile(r"run_isolated|benchexec\.benchexec|runexec|table-generator|table_generator|run_sweep|tables_and_report")


def pytest_collection_modifyitems(items):
    """Every test gets exactly one of the three markers. An explicit one wins; otherwise a test
    that needs the built programs or a container-visible scratch directory is `benchexec` when it
    starts BenchExec's tools and `timing` when it runs the programs itself; the rest is `unit`.
    The guess is only a default: a test that starts BenchExec and judges times or verdicts says
    `@pytest.mark.timing`, one that runs a program and checks only what it printed says
    `@pytest.mark.benchexec`. tox runs everything but `timing` on every CPU at once (tests that
    share a resource carry `pytest.mark.xdist_group`), then the `timing` tests one at a time."""
    for item in items:
        if any(item.get_closest_marker(m) for m in ("unit", "benchexec", "timing")):
            continue
        needs_programs = {"programs", "scratch"} & set(getattr(item, "fixturenames", ()))
        try:
            source = inspect.getsource(item.function)
        except (OSError, TypeError, AttributeError):
            source = ""
        if _REAL_TOOLS.search(source):
            item.add_marker(pytest.mark.benchexec)
        elif needs_programs:
            item.add_marker(pytest.mark.timing)
        else:
            item.add_marker(pytest.mark.unit)


def pytest_runtest_setup(item):
    """Under `--dist loadgroup` a test of an xdist_group runs only where its group runs: pytest-xdist
    marks its node id with `@group`. Where it does not (pytest 9.2 with pytest-xdist 3.8), the group's
    tests would run on several workers at once, each with its own copy of what they share."""
    group = item.get_closest_marker("xdist_group")
    if group and getattr(item.config.option, "loadgroup", False) and "@" not in item.nodeid.rsplit("]", 1)[-1]:
        name = group.args[0] if group.args else group.kwargs.get("name", "default")
        pytest.fail(f"pytest-xdist did not group this test (xdist_group {name!r}): this pytest "
                    f"{pytest.__version__} breaks --dist loadgroup (pytest-xdist issue 1386); install pytest<9.2",
                    pytrace=False)


def pytest_sessionfinish(session, exitstatus):
    """tox runs the suite in two passes selected by marker (`-m "not timing"`, then `-m timing`); a
    pass that selects nothing from the files given is not a failure."""
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and session.config.getoption("markexpr"):
        session.exitstatus = pytest.ExitCode.OK
