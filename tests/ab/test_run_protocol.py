"""Every kind of run of shell commands implements the one Run protocol (analysis.ab.record.Run),
which the report, the api and the gate call instead of asking for the kind; the plan travels as
one typed AbPlan."""

import inspect
import subprocess

import pytest

from analysis.ab import merged, paired, separate
from analysis.ab.record import AbPlan, DefinitionsRun, Run
from analysis.tools.options import AbOptions
from tests.helpers import REPO

METHODS = [name for name, _ in inspect.getmembers(Run, inspect.isfunction) if not name.startswith("_")]


@pytest.mark.unit
@pytest.mark.parametrize("kind", [separate.ABRun, paired.PairedRun])
def test_each_kind_of_run_has_every_method_of_the_protocol_with_its_parameters(kind):
    assert set(METHODS) == {"measure", "busy_from_outside", "design_changed", "sides", "batched", "export"}
    for name in METHODS:
        assert list(inspect.signature(getattr(kind, name)).parameters) == list(inspect.signature(getattr(Run, name)).parameters)


@pytest.mark.unit
@pytest.mark.parametrize("kind", [separate.ABRun, merged.BlocksRun])
def test_each_kind_of_run_of_two_definitions_has_every_method_of_its_protocol(kind):
    methods = [name for name, _ in inspect.getmembers(DefinitionsRun, inspect.isfunction) if not name.startswith("_")]
    assert set(methods) == {"measure", "busy_from_outside", "design_changed", "described"}
    for name in methods:
        assert list(inspect.signature(getattr(kind, name)).parameters) == \
            list(inspect.signature(getattr(DefinitionsRun, name)).parameters)


@pytest.mark.unit
def test_nothing_in_ab_asks_which_kind_a_run_is():
    found = subprocess.run(["grep", "-rnE", r"isinstance\(.*Run\)", str(REPO / "analysis" / "ab")],
                           capture_output=True, text=True)
    assert found.stdout == ""


@pytest.mark.unit
def test_the_plan_is_taken_from_the_options_once_and_read_back_as_it_was_kept():
    options = AbOptions(base="./a", new="./b", threshold=0.01, seed=7, design="auto")
    plan = AbPlan.of(options, 3)
    assert (plan.reruns, plan.seed, plan.threshold, plan.design) == (3, 7, 0.01, "auto")
    assert AbPlan.from_dict(plan.to_dict()) == plan
    # a record from before the design and the threshold were kept (and with a field no longer read)
    old = AbPlan.from_dict({"reruns": 5, "seed": 0, "until": None, "max_reruns": 20, "load": 0, "container": True,
                            "gone": 1})
    assert (old.design, old.threshold) == ("separate", 0.02)
