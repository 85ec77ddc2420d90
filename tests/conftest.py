"""Shared fixtures: the built programs, and scratch directories BenchExec's container can see."""

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRATCH = REPO / ".pytest-tmp" / "scratch"


@pytest.fixture(scope="session")
def programs():
    """programs/ built with its Makefile (the real build, warnings as errors)."""
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
    config.addinivalue_line("markers", "benchexec: starts the real benchexec, runexec or table-generator")
    config.addinivalue_line("markers", "timing: asserts on measured times or ratios (may need a rerun on a loaded machine)")
