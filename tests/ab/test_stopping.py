"""`timekit ab --until-decided`: looks after every pair, stops when every row is decided, and says
what each verdict cost and what would decide an undecided row."""

import json

import pytest

from analysis.tools.plan import ab_looks
from tests.helpers import REPO
from tests.ab.test_separate import definitions, finish, start

RECORDED = REPO / "docs" / "calibration-between"


@pytest.mark.unit
def test_a_look_at_the_recorded_ab_run_decides_the_slowdown_and_advises_on_walltime():
    looks = ab_looks.look(RECORDED, ("cputime", "walltime"), 0.05, 0.02, 24)
    cputime, walltime = looks
    assert cputime.row == "runexec / x (cputime)" and cputime.decision.verdict == "slower"
    assert 3 <= cputime.decision.reruns < 24 and cputime.runs == 2 * 10 * cputime.decision.reruns
    assert not walltime.decision.decided and walltime.decision.reruns == 24
    would = ab_looks.advice(RECORDED, walltime, ("cputime", "walltime"), 0.05, 0.02)
    assert would.goal in ("change", "within") and would.invocations > walltime.decision.reruns and would.runs > 0
    text = ab_looks.render_advice(would, 0.02, RECORDED)
    assert f"M = {would.invocations} invocations a side" in text and "timekit plan" in text


@pytest.mark.timing
def test_until_decided_stops_once_a_doubled_input_is_slower(programs, scratch):
    base, new = definitions(scratch, "4343434", "8686868", runs=3)   # twice the trial divisions
    out, log_path = scratch / "ab", scratch / "ab.log"
    with open(log_path, "w") as log:
        code = finish(start(base, new, "--until-decided", "--max-reruns", "6", "--output", out, "--column", "cputime", log=log))
    text = log_path.read_text()
    assert code == 1, text
    manifest = json.loads((out / "ab.json").read_text())
    m = manifest["reruns"]
    # a doubling is decided at the first look, or the second when the machine is busy (the first
    # look's boundary is the strictest), well before --max-reruns 6
    assert m in (3, 4) and manifest["until_decided"], m
    assert f"every row decided after {m} reruns per side" in text and f"runexec / x (cputime): slower at M = {m}" in text, text
    assert f"cost: {m} invocations and {3 * m} runs a side" in text, text


@pytest.mark.timing
def test_until_decided_within_a_budget_ends_inconclusive_and_says_what_would_decide(programs, scratch):
    base, new = definitions(scratch, runs=3)   # the same input: nothing to find
    out, log_path = scratch / "ab", scratch / "ab.log"
    with open(log_path, "w") as log:
        code = finish(start(base, new, "--until-decided", "--budget", "1s", "--output", out, "--column", "cputime", log=log))
    text = log_path.read_text()
    assert code == 3, text   # an open answer at the budget is undecided, never a pass
    assert "verdict: undecided:" in text and "the budget ran out first" in text, text
    assert "does not fit another pair" in text and "inconclusive at M = 3" in text, text
    assert "would decide it:" in text and "invocations a side" in text, text


@pytest.mark.unit
def test_remembered_looks_decide_as_the_plain_sequence_also_after_an_invocation_is_set_aside():
    """stopping.decide remembers each prefix's decision (every look replays the looks before it);
    where an invocation set aside later changes a prefix, the look decides it anew."""
    import types

    import numpy as np

    from analysis.ab import stopping
    from analysis.tools.plan import sequential

    rng = np.random.default_rng(7)
    run = types.SimpleNamespace(max_reruns=40)
    logs = rng.normal(0.02, 0.03, 30)
    for m in range(3, 31):   # as the loop looks: one invocation more each time
        [look] = stopping.decide([("row", logs[:m], [10] * m)], run, 0.05, 0.01)
        plain = sequential.run_paired_sequence(logs[:m], 0.05, 0.01, 40)
        assert vars(look.decision) == vars(plain)
    aside = np.delete(logs, 4)   # the fifth invocation set aside: every prefix from it on differs
    [look] = stopping.decide([("row", aside, [10] * aside.size)], run, 0.05, 0.01)
    assert vars(look.decision) == vars(sequential.run_paired_sequence(aside, 0.05, 0.01, 40))


@pytest.mark.unit
def test_a_run_says_same_only_where_every_row_does_each_at_alpha_and_errs_at_most_alpha():
    """Slower or faster: alpha / rows a row (any slower row fails the gate). "~": the run says it only
    where every row does, an intersection-union test, so each row's two one-sided tests keep all
    of alpha. Its worst case, one row exactly at the threshold and the other at no change, is
    called "~" in at most alpha of the runs."""
    import types

    import numpy as np

    from analysis.ab import stopping
    from analysis.tools.plan import sequential

    alpha, threshold, top = 0.05, 0.01, 8
    run = types.SimpleNamespace(max_reruns=top)
    rng = np.random.default_rng(21)
    quiet = rng.normal(0.0, 0.004, top)
    looks = stopping.decide([("cpu", quiet, [10] * top), ("wall", quiet + rng.normal(0, 0.001, top), [10] * top)],
                            run, alpha, threshold)
    same_levels = sequential.boundaries(alpha, top, paired=True)
    assert all(look.decision.verdict == "~" for look in looks), [vars(look.decision) for look in looks]
    assert [look.decision.level for look in looks] == [same_levels[look.decision.reruns] for look in looks]
    slower = stopping.decide([("cpu", quiet + 0.05, [10] * top), ("wall", quiet + 0.05, [10] * top)], run, alpha, threshold)
    assert {look.decision.verdict for look in slower} == {"slower"}
    assert slower[0].decision.level == sequential.boundaries(alpha / 2, top, paired=True)[slower[0].decision.reruns]
    runs, called_same = 600, 0
    for _ in range(runs):
        at_threshold = np.log1p(threshold) + rng.normal(0, 0.004, top)
        unchanged = rng.normal(0, 0.004, top)
        rows = stopping.decide([("cpu", at_threshold, [10] * top), ("wall", unchanged, [10] * top)], run, alpha, threshold)
        called_same += all(r.decision.verdict == "~" for r in rows)
    assert called_same / runs <= alpha + 0.02, called_same / runs
