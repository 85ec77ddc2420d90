"""`timekit ab`: base and new in alternation under real benchexec, interruptible and resumable, then
the rerun-aware compare."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from analysis.core.tasks import write_repetitions
from analysis.ab import separate, merged
from tests.helpers import REPO

DEFINITION = """<?xml version="1.0"?>
<benchmark tool="tool_info.divisors" timelimit="20 s" memlimit="100 MB">
  <rundefinition name="runexec"/>
  <tasks name="x"><include>{side}/tasks/*.yml</include></tasks>
</benchmark>
"""


def definitions(scratch, base_input="4343434", new_input="4343434", runs=2):
    """base.xml and new.xml: `runs` repetitions of one task named x, each side with its own input."""
    for side, number in (("base", base_input), ("new", new_input)):
        (scratch / side / "in").mkdir(parents=True)
        (scratch / side / "in" / "x.txt").write_text(number + "\n")
        write_repetitions([scratch / side / "in" / "x.txt"], runs, scratch / side / "tasks")
        (scratch / f"{side}.xml").write_text(DEFINITION.format(side=side))
    return scratch / "base.xml", scratch / "new.xml"


def start(*argv, log):
    """`timekit ab ARGV` under the separate design unless ARGV names one (these tests are about it)."""
    design = [] if "--design" in argv else ["--design", "separate"]
    return subprocess.Popen([sys.executable, "-m", "analysis.cli", "ab", *map(str, argv), *design], cwd=REPO,
                            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)


def finish(process, timeout=300):
    try:
        return process.wait(timeout=timeout)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # anything it left behind (it should leave nothing)
        except ProcessLookupError:
            pass


def interrupt_after(process, manifest, done, signum):
    """Send `signum` once `done` invocations are finished, i.e. while the next one runs."""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and process.poll() is None:
        try:
            steps = json.loads(manifest.read_text())["steps"]
        except (OSError, ValueError):
            steps = []
        if sum(s["status"] == "done" for s in steps) >= done:
            time.sleep(0.3)  # into the next invocation
            process.send_signal(signum)
            return finish(process)
        time.sleep(0.05)
    raise AssertionError(f"ab did not finish {done} invocations in time")


def finished(manifest):
    steps = json.loads(manifest.read_text())["steps"]
    return [s for s in steps if s["status"] == "done"], steps


@pytest.mark.benchexec
def test_ab_alternates_under_benchexec_survives_two_interrupts_and_resumes(programs, scratch):
    base, new = definitions(scratch)
    out, log_path = scratch / "ab", scratch / "ab.log"
    manifest = out / separate.MANIFEST
    with open(log_path, "w") as log:
        # 2 reruns, then --until an unreachable CI width: one more pair, up to --max-reruns 3
        code = interrupt_after(start(base, new, "--reruns", "2", "--until", "0.001", "--max-reruns", "3",
                                     "--output", out, "--column", "cputime", "--format", "json", log=log),
                               manifest, 1, signal.SIGINT)
    assert code == 130, log_path.read_text()
    assert "timekit ab --resume --output" in log_path.read_text()
    done, steps = finished(manifest)
    assert len(done) >= 1 and len(steps) == 4
    kept = {name for s in done for name in s["result_files"]}
    assert all((out / s["condition"] / name).exists() for s in done for name in s["result_files"])

    with open(log_path, "w") as log:
        code = interrupt_after(start("--resume", "--output", out, "--format", "json", "--column", "cputime", log=log),
                               manifest, len(done) + 1, signal.SIGTERM)
    assert code == 130, log_path.read_text()
    done_again, _ = finished(manifest)
    assert kept <= {name for s in done_again for name in s["result_files"]} and len(done_again) > len(done)

    with open(log_path, "w") as log:
        code = finish(start("--resume", "--output", out, "--format", "json", "--column", "cputime", log=log))
    text = log_path.read_text()
    assert code in (0, 1, 3), text   # 3: a few fixed reruns leave the answer open (undecided), no error
    result = json.loads(text[text.index("{"):])
    record = json.loads(manifest.read_text())
    assert all(s["status"] == "done" for s in record["steps"]) and len(record["steps"]) == 6
    # each rerun ran base and new once, in the order recorded; interrupted partial output was set aside
    for rerun in (1, 2, 3):
        assert sorted(s["condition"] for s in record["steps"] if s["rerun"] == rerun) == ["base", "new"]
    # whatever an interrupted invocation had written was set aside: one result file per rerun and side
    assert [len(list((out / side).glob("*.results.*.xml.bz2"))) for side in ("base", "new")] == [3, 3]
    [row] = result["comparison"]
    assert (row["unit"], row["reruns_base"], row["reruns_new"], row["n_base"], row["n_new"]) == ("rerun", 3, 3, 6, 6), row
    assert [c["reruns"] for c in result["ab"][0]["checks"]] == [2, 3] and "--max-reruns 3 reached" in result["ab"][0]["stopped"]
    assert (code == 1) == (row["verdict"] == "slower")
    # the directories are ordinary result directories: compare gives the same row
    again = subprocess.run([sys.executable, "-m", "analysis.cli", "compare", out / "base", out / "new", "--column",
                            "cputime", "--format", "json"], cwd=REPO, capture_output=True, text=True)
    [same] = json.loads(again.stdout)["rows"]
    assert same == {k: v for k, v in row.items() if k in same}


@pytest.mark.timing
def test_ab_finds_a_heavier_input_slower_and_stops_when_the_ci_is_narrow(programs, scratch):
    base, new = definitions(scratch, "4343434", "8686868", runs=3)   # twice the trial divisions
    out, log_path = scratch / "ab", scratch / "ab.log"
    with open(log_path, "w") as log:
        code = finish(start(base, new, "--reruns", "3", "--until", "50", "--output", out, "--column", "cputime", log=log))
    text = log_path.read_text()
    assert code == 1, text
    assert "slower" in text and "CI half-width" in text and "< 50 % after 3 reruns per side" in text, text
    [verdict] = [line for line in text.splitlines() if line.startswith("verdict:")]   # one answer, last
    assert verdict.startswith("verdict: slower: runexec: cputime +") and verdict.endswith("(exit 1)"), verdict


@pytest.mark.benchexec
def test_ab_of_definitions_takes_paths_relative_to_where_it_runs(programs, scratch):
    """benchexec runs in the kit's checkout; a relative --output, like the definitions, is the user's."""
    definitions(scratch, runs=1)
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "ab", "base.xml", "new.xml", "--reruns", "2",
                           "--output", "rel", "--column", "cputime"], cwd=scratch, capture_output=True, text=True,
                          timeout=300)
    # an A/A of 2 fixed invocations: a verdict, or an answer still open (exit 3, undecided), no error
    assert done.returncode in (0, 1, 3) and "timekit: error" not in done.stderr, done.stderr
    assert f"results in {scratch / 'rel'}" in done.stderr
    assert len(list((scratch / "rel").glob("blocks.rerun*.results.base.runexec.x.xml.bz2"))) == 2
    assert not (REPO / "rel").exists()


@pytest.mark.unit
def test_the_order_within_reruns_is_seeded_and_opposite_in_every_couple():
    run = separate.ABRun("b.xml", "n.xml", ["r"], seed=3, reruns=0)
    for rerun in range(1, 21):
        run.plan(rerun)
    orders = ["".join(s.condition[0] for s in run.steps if s.rerun == k) for k in range(1, 21)]
    assert all(orders[k + 1] == orders[k][::-1] for k in range(0, 20, 2))   # base first in half the reruns
    assert len(set(orders[0::2])) == 2   # the couples' first orders are drawn, not fixed
    blocks = merged.BlocksRun("b.xml", "n.xml", ["x", "y"], seed=3, reruns=0)
    for rerun in range(1, 5):
        blocks.plan(rerun)
    assert blocks.steps[1].order == blocks.steps[0].order[::-1] and blocks.steps[3].order == blocks.steps[2].order[::-1]
    assert sorted(blocks.steps[0].order) == ["base.x", "base.y", "new.x", "new.y"]
    chunked = separate.ABRun("b.xml", "n.xml", ["r"], seed=3, reruns=0, chunks=4)
    chunked.plan(1)
    firsts = [s.condition for s in chunked.steps[0::2]]
    assert firsts.count("base") == 2 and firsts[1] != firsts[0]
    again = separate.ABRun("b.xml", "n.xml", ["r"], seed=3, reruns=0)
    for rerun in range(1, 21):
        again.plan(rerun)
    assert [s.name for s in again.steps] == [s.name for s in run.steps]


@pytest.mark.unit
def test_bad_input_is_one_line(scratch):
    base, new = definitions(scratch)
    (scratch / "other.xml").write_text(DEFINITION.replace('name="runexec"', 'name="other"').format(side="new"))

    def timekit(*argv):
        done = subprocess.run([sys.executable, "-m", "analysis.cli", "ab", *map(str, argv)], cwd=REPO,
                              capture_output=True, text=True)
        return done.returncode, done.stderr.strip()

    code, err = timekit(base, scratch / "other.xml", "--output", scratch / "x")
    assert code == 2 and "share no run definition name" in err and len(err.splitlines()) == 1, err
    code, err = timekit(base, scratch / "missing.xml", "--output", scratch / "y")
    assert code == 2 and "missing.xml" in err and "Traceback" not in err, err
    code, err = timekit(base, new, "--reruns", "1", "--output", scratch / "z")
    assert code == 2 and "--reruns must be 2 or more" in err, err
    code, err = timekit("--resume", "--output", scratch / "nothing")
    assert code == 2 and "not a readable A/B manifest" in err, err
