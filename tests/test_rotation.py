"""Conditions that one invocation (or one rerun) measures one after another rotate per rerun, so
drift over time is not taken for a difference between them."""

import shutil

import pytest
from lxml import etree

from analysis.experiments import EXPERIMENTS
from analysis.sweep import lint
from analysis.sweep.model import Preset, Sweep, rotated
from analysis.sweep.runner import order_rundefinitions

pytestmark = pytest.mark.unit


def test_rotation_puts_every_item_first_once_per_cycle():
    assert [rotated("abc", r) for r in range(4)] == [list("abc"), list("bca"), list("cab"), list("abc")]
    assert rotated([], 3) == []


def test_time_apis_loads_and_timers_rotate_per_rerun():
    experiment = EXPERIMENTS["time-apis"]
    sweep = Sweep.plan(experiment, "x", Preset(reps=2, loads=(0, 1, 2), reruns=3), container=True)
    loads = [[s.load for s in sweep.steps if s.rerun == r] for r in (1, 2, 3)]
    assert loads == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    firsts = {s.order[0] for s in sweep.steps}
    assert len(firsts) == min(3, len(sweep.rundefinitions)) and all(sorted(s.order) == sorted(sweep.rundefinitions)
                                                                    for s in sweep.steps)


def test_the_sweeps_definition_is_reordered_and_stays_valid(tmp_path):
    copy = tmp_path / "time-apis.xml"
    shutil.copy(EXPERIMENTS["time-apis"].benchmark, copy)
    order_rundefinitions(copy, ["gnu", "runexec", "fish", "bash"])
    names = [r.get("name") for r in etree.parse(str(copy)).iter("rundefinition")]
    assert names == ["gnu", "runexec", "fish", "bash"]
    assert lint.check([copy]) == []
