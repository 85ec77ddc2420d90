"""Where results land: results/ in the current directory, unless BenchExec's container hides it."""

import subprocess
import sys

import pytest

from analysis.core import paths

pytestmark = pytest.mark.unit


def test_results_go_to_the_current_directory(scratch):
    where = paths.user_results(scratch)
    assert where.root == scratch / "results" and where.note() == ""
    assert paths.user_results("/srv/data").root == paths.Path("/srv/data/results")


def test_a_directory_the_container_hides_falls_back_to_the_checkout_and_says_so():
    where = paths.user_results("/tmp/timekit-not-the-checkout/sub")
    assert where.root == paths.RESULTS and where.hidden == "/tmp"
    assert "hides /tmp" in where.note()
    assert paths.hidden_in_container("/run/user") == "/run"
    assert paths.hidden_in_container(paths.REPO / "results") is None   # the checkout is overlaid, even under /tmp


@pytest.mark.parametrize("command", [["ab", "--resume"], ["bench", "--resume"], ["run", "memory-bandwidth", "--resume"]])
def test_resume_looks_in_the_current_directory(command, scratch):
    done = subprocess.run([sys.executable, "-m", "analysis.cli", *command], cwd=scratch,
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert str(scratch / "results") in done.stderr and "Traceback" not in done.stderr


def test_help_says_where_results_go():
    for command in ("ab", "bench", "run"):
        done = subprocess.run([sys.executable, "-m", "analysis.cli", command, "--help"], capture_output=True, text=True,
                              env={"COLUMNS": "1000", "PATH": "/usr/bin:/bin"})
        assert "in the current directory" in done.stdout, command
