"""`timekit run --until-decided`: the repeated intervals keep their level over many looks, and the
loop replays the recorded discipline sweep's real invocations round by round."""

import shutil

import numpy as np
import pytest

from analysis import pipeline
from analysis.core import replication
from analysis.experiments import EXPERIMENTS
from analysis.sweep.model import Sweep
from analysis.tools.plan import run_looks
from tests.test_cost import RECORDED

pytestmark = pytest.mark.unit


def _first_exclusion_rate(sequences, max_reruns, sequential):
    """Share of null sequences (per-rerun values with mean 1) whose 95 % interval over reruns
    excludes 1 at some look M = 3 .. max_reruns."""
    token = replication.SEQUENTIAL_LOOK.set(run_looks.look_function(max_reruns)) if sequential else None
    try:
        wrong = 0
        for values in sequences:
            for m in range(3, max_reruns + 1):
                est = replication.over_reruns(values[:m], n=10, confidence=0.95)
                if est.low > 1 or est.high < 1:
                    wrong += 1
                    break
        return wrong / len(sequences)
    finally:
        if token is not None:
            replication.SEQUENTIAL_LOOK.reset(token)


def test_looking_after_every_rerun_keeps_the_level_only_with_the_repeated_intervals():
    rng = np.random.default_rng(7)
    sequences = 1 + 0.02 * rng.standard_normal((1500, 10))
    naive = _first_exclusion_rate(sequences, 10, sequential=False)
    repeated = _first_exclusion_rate(sequences, 10, sequential=True)
    assert naive > 0.09            # fixed 95 % intervals looked at 8 times: about 2.5 x alpha
    assert repeated <= 0.05 + 0.015
    # at M_max the last look tests at nearly alpha: little power is lost against the fixed design
    last = run_looks.look_function(10)(0.95, 10)[0]
    assert 0.95 < last < 0.975  # measured: 97.2 %, i.e. the last look tests at alpha 2.8 %


def _replay(tmp_path, keep, budget):
    """The recorded discipline sweep cut to `keep` reruns; each added rerun 'runs' by revealing the
    recorded invocation of the same name (real BenchExec results, in the order they were measured)."""
    source = RECORDED / "discipline"
    directory = tmp_path / "discipline"
    shutil.copytree(source, directory)
    recorded = {s.name: s for s in Sweep.load(source).steps}
    sweep = Sweep.load(directory)
    sweep.steps, sweep.reruns = [s for s in sweep.steps if s.rerun <= keep], keep
    sweep.save(directory)

    def reveal(d):
        s = Sweep.load(d)
        for step in s.steps:
            if step.status != "done":
                r = recorded[step.name]
                step.status, step.result_files, step.seconds = r.status, r.result_files, r.seconds
        s.save(d)

    lines = []

    class Out:
        def write(self, text):
            lines.append(text)

        def flush(self):
            pass

    stop = run_looks.until_decided(EXPERIMENTS["discipline"], directory, budget, reveal,
                                   lambda d: pipeline.build_report([d]).sections[0].findings, out=Out())
    return directory, stop, "".join(lines)


def test_the_loop_adds_reruns_until_its_budget_and_records_every_look(tmp_path):
    directory, stop, text = _replay(tmp_path, keep=3, budget=110)   # 3 reruns took 57 s: room for 2 more
    record = Sweep.load(directory).sequential
    assert record["max_reruns"] == 5 and [look["reruns"] for look in record["looks"]] == [3, 4, 5]
    assert stop == "M_max = 5 reached" and "still undecided" in text and "of the budget left" in text
    findings = pipeline.build_report([directory]).sections[0].findings
    same_core = next(f for f in findings if f.claim.startswith("Two CPU-bound tasks on the same core"))
    reruns_differ = next(f for f in findings if f.claim.startswith("Reruns of the same benchmark"))
    assert run_looks.MARK in same_core.evidence and "look M = 5 of M_max = 5" in same_core.evidence
    assert same_core.verdict == "refuted"         # decided at the last look, as the fixed design at M = 5
    assert "cost: 25 benchexec invocations" in same_core.cost
    # the F interval of 'reruns differ' is not sequential: judged once, no repeated interval
    assert run_looks.MARK not in reruns_differ.evidence


def test_no_round_is_added_when_the_budget_is_spent(tmp_path):
    directory, stop, _ = _replay(tmp_path, keep=3, budget=30)
    sweep = Sweep.load(directory)
    assert sweep.reruns == 3 and len(sweep.steps) == 15
    assert sweep.sequential["max_reruns"] == 3 and stop.startswith("M_max = 3")
