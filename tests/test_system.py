"""The one list of Debian packages: what is missing, and what a user without root is told."""

import io
import subprocess
import sys

from analysis.machine import packages as system
from tests.helpers import REPO


def test_this_machine_has_every_package():
    assert system.missing_packages() == {}


def test_missing_package_is_named_with_the_exact_command(monkeypatch):
    monkeypatch.setattr(system, "REQUIREMENTS", {"no-such-timer-xyz": ("xyz-time", "the xyz timing API"),
                                                 "python:no_such_module_xyz": ("python3-xyz", "nothing")})
    monkeypatch.setattr(system.os, "geteuid", lambda: 1000)  # not root: nothing is installed
    out = io.StringIO()
    assert set(system.ensure_packages(out)) == {"xyz-time", "python3-xyz"}
    assert "sudo apt-get install -y --no-install-recommends xyz-time" in out.getvalue()
    assert "the xyz timing API is unavailable" in out.getvalue()


def test_list_for_ci_runs_without_the_kit_installed():
    done = subprocess.run([sys.executable, "-S", "-m", "analysis.machine.packages", "--list"], cwd=REPO,
                          stdout=subprocess.PIPE, text=True, check=True)
    assert done.stdout.split() == [package for package, _ in system.REQUIREMENTS.values()]
