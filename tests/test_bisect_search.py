"""The bisect search against simulated steps (tests/bisect_model.py): the right commit, the error over
the steps held at alpha, undecided and skipped commits named as a range, spread slowdowns, resume."""

import hashlib
import json

import numpy as np
import pytest

from analysis.products.bisect import manifest as manifest_mod
from analysis.products.bisect.answer import make
from analysis.products.bisect.repo import Commit
from analysis.products.bisect.search import BadNotBuilt, Step, planned_steps, search, step_alpha
from tests.bisect_model import Flipping, Model, cumulative, noise_of, wrong_share
from tests.helpers import REPO

pytestmark = pytest.mark.unit

ALPHA, THRESHOLD = 0.05, 0.02
N = 33
SHAS = [hashlib.sha1(str(k).encode()).hexdigest() for k in range(1, N + 1)]
GOOD = Commit(hashlib.sha1(b"0").hexdigest(), "initial")
COMMITS = [Commit(s, f"commit {k + 1}") for k, s in enumerate(SHAS)]


def issue_truth(culprit=20, small=(7, 26), big=0.05, little=0.003):
    """The issue's repository: commit `culprit` adds 5 % of GOOD's cost, the two `small` 0.3 %."""
    adds = [0.0] * N
    adds[culprit - 1] = big
    for k in small:
        adds[k - 1] = little
    return dict(zip(SHAS, cumulative(adds)))


def run(truth, seed, sigma=0.005, compare=None, **kw):
    compare = compare or Model(truth, sigma, THRESHOLD, step_alpha(ALPHA, N), np.random.default_rng(seed))
    outcome = search(SHAS, compare, step_alpha(ALPHA, N), **kw)
    return make(GOOD, COMMITS, outcome, THRESHOLD)


def named_wrong(answer, culprit):
    """A named commit or range without the true culprit, or a sudden slowdown called spread."""
    if answer.kind == "not-slower":
        return False
    if answer.kind == "spread":
        return True
    return SHAS[culprit - 1] not in [c.sha for c in answer.candidates]


def test_planned_steps_and_step_alpha():
    assert [planned_steps(n) for n in (1, 2, 32, 33, 64)] == [2, 3, 7, 8, 8]
    assert step_alpha(0.05, 33) == pytest.approx(0.05 / 8)


def test_the_issue_repository_names_the_five_percent_commit_as_sudden():
    answer = run(issue_truth(), seed=1)
    assert answer.kind == "culprit" and answer.culprit.sha == SHAS[19] and answer.exit_code == 0
    assert answer.shape.kind == "sudden" and answer.shape.carried.rise == pytest.approx(0.05, abs=0.01)
    assert answer.outcome.steps[0].commit == SHAS[-1]   # BAD confirmed first
    assert answer.outcome.decided_steps <= answer.outcome.planned
    last = answer.to_dict()["answer"]
    assert last.startswith(f"culprit: {SHAS[19][:12]} commit 20 (+") and " of +" in last and "CI" in last


def test_named_commit_is_wrong_at_most_alpha_of_the_time_over_seeds():
    """2000 seeds at each of three noise levels (0.3 %, 1 % and 2 % a look, up to 4 looks a step),
    the 5 % commit and the two 0.3 % ones at random places, alpha 0.05: the named commit or range
    missed the culprit in 0, 58 and 56 of 2000 (0 %, 2.9 %, 2.8 %, measured), all below alpha. The
    misses are "slower" verdicts on commits 0.3-0.6 % above GOOD, which the kit's rule calls slower
    when the estimate happens to lie beyond the threshold: each at most at its alpha / 8. One commit
    was named exactly in 2000, 1134 and 54 of 2000; the rest is mostly a named range (undecided steps,
    the planned steps spent). Every verdict turned with probability exactly alpha / 8 (what the bound
    allows each step): the name missed in 3.05 % of 4000 seeds (measured), below alpha."""
    for sigma, exact in ((0.003, 1999), (0.01, 1000), (0.02, 40)):
        wrong = found = 0
        for seed in range(2000):
            rng = np.random.default_rng([seed, int(sigma * 1000)])
            culprit = int(rng.integers(1, N + 1))
            small = tuple(int(k) for k in rng.choice(np.arange(1, N + 1), 2, replace=False) if k != culprit)
            truth = issue_truth(culprit, small)
            answer = run(truth, seed, compare=Model(truth, sigma, THRESHOLD, step_alpha(ALPHA, N), rng))
            wrong += named_wrong(answer, culprit)
            found += answer.kind == "culprit" and answer.culprit.sha == SHAS[culprit - 1]
            assert answer.outcome.bound <= ALPHA + 1e-12 and answer.outcome.measured_steps <= answer.outcome.planned
        assert wrong / 2000 <= ALPHA * 0.7, sigma
        assert found >= exact, sigma
    wrong = 0
    for seed in range(4000):
        rng = np.random.default_rng(seed)
        culprit = int(rng.integers(1, N + 1))
        truth = issue_truth(culprit)
        answer = run(truth, seed, compare=Flipping(truth, THRESHOLD, step_alpha(ALPHA, N), rng))
        wrong += named_wrong(answer, culprit)
    assert wrong / 4000 <= ALPHA


def test_every_commit_adding_one_percent_is_reported_as_spread():
    truth = dict(zip(SHAS, cumulative([0.01] * N)))
    for seed in range(20):
        answer = run(truth, seed, sigma=0.003)
        assert answer.kind == "spread" and answer.exit_code == 0
        assert answer.shape.total == pytest.approx(0.33, abs=0.02) and answer.shape.share < 0.5
        assert len(answer.shape.parts) >= 4 and all(p.low > 0 for p in answer.shape.parts)
    assert answer.to_dict()["answer"].startswith("spread: +3")
    assert any(line.startswith("  +") for line in answer.to_dict()["lines"])


class Fixed:
    """Right verdicts, except the commits in `undecided`; the ratios are the truth."""

    def __init__(self, truth, undecided=(), skipped=()):
        self.truth, self.undecided, self.skipped, self.calls = truth, set(undecided), set(skipped), []

    def __call__(self, commit):
        self.calls.append(commit)
        r = self.truth[commit]
        if commit in self.skipped:
            return Step("skipped")
        verdict = "undecided" if commit in self.undecided else ("slower" if r - 1 >= THRESHOLD else "same")
        return Step(verdict, r, r - 0.004, r + 0.004, 0.99)


def test_an_undecided_culprit_leads_to_the_named_range_around_it():
    truth = issue_truth(culprit=20)
    answer = run(truth, 0, compare=Fixed(truth, undecided={SHAS[19]}))
    assert answer.kind == "range" and [c.sha for c in answer.candidates] == SHAS[19:21]
    last = answer.to_dict()["answer"]
    assert last.startswith(f"culprit: one of {SHAS[19][:12]}..{SHAS[20][:12]} (2 commits), not narrowed "
                           f"(undecided: {SHAS[19][:12]})")


def test_an_undecided_middle_is_stepped_over_on_both_sides():
    truth = issue_truth(culprit=20)
    compare = Fixed(truth, undecided={SHAS[15]})     # position 15: the first middle
    answer = run(truth, 0, compare=compare)
    assert compare.calls[:3] == [SHAS[32], SHAS[15], SHAS[16]]   # then its neighbour, as git bisect skip
    assert answer.kind == "culprit" and answer.culprit.sha == SHAS[19]
    answer = run(issue_truth(culprit=8), 0, compare=Fixed(issue_truth(culprit=8), undecided={SHAS[15]}))
    assert answer.kind == "culprit" and answer.culprit.sha == SHAS[7]


def test_a_skipped_commit_is_stepped_over_or_named_with_the_culprit():
    truth = issue_truth(culprit=20)
    answer = run(truth, 0, compare=Fixed(truth, skipped={SHAS[4]}))
    assert answer.kind == "culprit" and answer.culprit.sha == SHAS[19]
    answer = run(truth, 0, compare=Fixed(truth, skipped={SHAS[18]}))
    assert answer.kind == "range" and [c.sha for c in answer.candidates] == SHAS[18:20]
    assert "skipped: " + SHAS[18][:12] in answer.to_dict()["answer"]
    with pytest.raises(BadNotBuilt, match="did not build"):
        run(truth, 0, compare=Fixed(truth, skipped={SHAS[-1]}))


def test_the_decided_steps_never_exceed_the_plan():
    """Every other commit undecided: the search spends its planned decided steps and names the range left."""
    truth = issue_truth(culprit=20)
    answer = run(truth, 0, compare=Fixed(truth, undecided=set(SHAS[0:32:2])))
    assert answer.outcome.decided_steps <= answer.outcome.planned
    assert SHAS[19] in [c.sha for c in answer.candidates]


def test_bad_not_slower_says_so_with_exit_3():
    truth = dict(zip(SHAS, cumulative([0.0002] * N)))
    answer = run(truth, 0, compare=Fixed(truth))
    assert answer.kind == "not-slower" and answer.exit_code == 3 and len(answer.outcome.steps) == 1
    assert answer.to_dict()["answer"].startswith(f"not slower: BAD {SHAS[-1][:12]} is not shown slower than GOOD")


def test_bad_undecided_because_the_machine_was_busy_says_so():
    """BAD's step left undecided by outside work: not a finding about the code, and the answer says what to do."""
    truth = issue_truth(culprit=20)

    def busy(commit):
        return Step("undecided", 1.027, 1.025, 1.028, 0.95, {"busy_from_outside": True})

    answer = run(truth, 0, compare=busy)
    assert answer.kind == "not-slower" and answer.exit_code == 3
    assert answer.to_dict()["answer"].endswith("busy from outside during its invocations: rerun on a quiet machine")
    quiet = run(truth, 0, compare=lambda commit: Step("undecided", 1.01, 0.99, 1.03, 0.95, {}))
    assert "busy" not in quiet.to_dict()["answer"]


def test_an_interrupted_search_resumes_from_its_manifest(scratch):
    truth = issue_truth(culprit=11)
    params = {"good": GOOD.sha, "bad": SHAS[-1], "alpha": ALPHA}

    class Stop(Exception):
        pass

    def stopping(after):
        compare = Fixed(truth)

        def call(commit):
            if len(compare.calls) == after:
                raise Stop
            return compare(commit)
        return call, compare

    call, first = stopping(3)
    with pytest.raises(Stop):
        search(SHAS, call, 0.01, manifest=manifest_mod.Manifest.open(scratch, params))
    record = manifest_mod.Manifest.open(scratch, params, resume=True)
    assert len(record.steps) == 3 and record.running is not None and record.running not in first.calls
    second = Fixed(truth)
    lines = []
    outcome = search(SHAS, second, 0.01, manifest=record, progress=lambda t, left, steps: lines.append((t, left)))
    assert [t.reused for t in outcome.steps[:3]] == [True] * 3 and not any(t.reused for t in outcome.steps[3:])
    assert second.calls == [t.commit for t in outcome.steps[3:]] and set(second.calls).isdisjoint(first.calls)
    assert make(GOOD, COMMITS, outcome, THRESHOLD).culprit.sha == SHAS[10]
    assert [left for _, left in lines][-1] == 1 and len(lines) == len(outcome.steps)
    with pytest.raises(manifest_mod.ManifestError, match="recorded with other alpha"):
        manifest_mod.Manifest.open(scratch, {**params, "alpha": 0.1}, resume=True)
    with pytest.raises(manifest_mod.ManifestError, match="--resume"):
        manifest_mod.Manifest.open(scratch, params)
    with pytest.raises(manifest_mod.ManifestError, match="nothing to resume"):
        manifest_mod.Manifest.open(scratch / "elsewhere", params, resume=True)


def test_noisy_ratios_leave_sudden_or_spread_unclear_but_keep_the_named_commit():
    truth = issue_truth(culprit=20)

    class Wide(Fixed):
        def __call__(self, commit):
            step = super().__call__(commit)
            return Step(step.verdict, step.ratio, step.ratio - 0.04, step.ratio + 0.04, 0.99)

    answer = run(truth, 0, compare=Wide(truth))
    assert answer.kind == "culprit" and answer.culprit.sha == SHAS[19] and answer.shape.kind == "unclear"
    assert any(line.startswith("sudden or spread is not clear: ") for line in answer.to_dict()["lines"])


RECORDED = REPO / "tests" / "data" / "recorded-bisect" / "steps.json"


def test_at_the_noise_of_real_steps_the_named_commit_is_wrong_at_most_alpha():
    """The simulation calibrated from real steps (tests/data/recorded-bisect: 35 steps of `timekit
    bisect` on 64 commits, one adding 3 % of a 20 ms run): each real verdict was right, and the
    search over 64 commits at their noise (and at 10 times it) names a wrong commit or range in at
    most alpha of 1000 seeds."""
    tries = json.loads(RECORDED.read_text())["tries"]
    steps = [s for t in tries for s in t["steps"]]
    for t in tries:
        for s in t["steps"]:
            assert s["verdict"] == ("slower" if s["commit"] >= t["culprit"] else "same"), (t["culprit"], s)
    sigma, looks = noise_of(steps)
    assert 0.0005 < sigma < 0.01 and 3 <= looks <= 5, (sigma, looks)
    for noise in (sigma, 10 * sigma):
        wrong = wrong_share(64, 0.03, noise, looks, 1000, THRESHOLD, ALPHA)
        assert wrong <= ALPHA, (noise, wrong)
