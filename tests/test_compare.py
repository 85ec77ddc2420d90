"""`timekit compare` on real result sets: an A/A pair is '~', a 5 % slower input is 'slower'."""

import json
import subprocess
import sys

from analysis.tasks import write_repetitions
from tests.helpers import REPO, run_isolated

DEFINITION = """<?xml version="1.0"?>
<benchmark tool="tool_info.timed_divisors" timelimit="20 s" memlimit="100 MB">
  <rundefinition name="runexec"><option name="--timer">runexec</option></rundefinition>
  <tasks name="x"><include>tasks/*.yml</include></tasks>
</benchmark>
"""


def benchexec(scratch, name):
    out = scratch / name
    code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(scratch / "def.xml"),
                                 "-o", str(out) + "/"])
    assert code == 0, output
    return out


def compare(base, new, *extra):
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "compare", str(base), str(new), "--column", "cputime",
                           "--format", "json", *extra], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return done.returncode, json.loads(done.stdout) if done.stdout.startswith("{") else done.stdout


def test_aa_is_unchanged_and_a_five_percent_slower_input_is_slower(programs, scratch):
    number = scratch / "in" / "x.txt"
    number.parent.mkdir()
    number.write_text("43434343\n")
    write_repetitions([number], 20, scratch / "tasks")
    (scratch / "def.xml").write_text(DEFINITION)
    base = benchexec(scratch, "base")
    again = benchexec(scratch, "again")
    number.write_text("45606060\n")  # 5 % more trial divisions, same task names
    slower = benchexec(scratch, "slower")

    code, aa = compare(base, again)
    assert code == 0, aa
    [row] = aa["rows"]
    assert (row["input"], row["n_base"], row["n_new"], row["verdict"]) == ("x", 20, 20, "~")

    code, ab = compare(base, slower)
    assert code == 1, ab  # the CI gate fails
    [row] = ab["rows"]
    assert row["verdict"] == "slower" and 1.03 < row["ratio"] < 1.08 and row["p_holm"] < 0.05
    assert ab["regression"] is True

    code, lenient = compare(base, slower, "--threshold", "0.2")  # a 5 % change is below a 20 % noise floor
    assert code == 0 and lenient["rows"][0]["verdict"] == "~"


def test_compare_refuses_unrelated_or_missing_input(scratch):
    code, out = compare(scratch / "nothing-here", scratch / "nothing-here")
    assert code == 2 and "nothing-here" in out and "Traceback" not in out
