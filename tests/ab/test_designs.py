"""The Design protocol (analysis.ab.designs): what each design promises, how the records and the
generated definition read it, and a fifth design added as one class and run for real."""

import json
from dataclasses import dataclass

import pytest

from analysis.ab import designs, merged, paired, separate
from analysis.ab.designs import Separate
from analysis.sweep import steps_loop
from analysis.sweep.model import Step
from analysis.tools.options import AbOptions
from tests.ab.test_separate import definitions


def records():
    """A record of every design, as its path makes it: separate -> ABRun, the paired ones -> PairedRun."""
    yield separate.ABRun("b.xml", "n.xml", ["r"], seed=3, reruns=0)
    for name in designs.PAIRED:
        yield paired.PairedRun(name, [], {}, {}, seed=3, reruns=0)


@pytest.mark.unit
def test_each_design_lays_out_its_reruns_as_it_says():
    for record in records():
        design = designs.get(record.design)
        record.plan_reruns(1, 6)
        for rerun in range(1, 7):
            steps = [s for s in record.steps if s.rerun == rerun]
            if design.holds_both:
                assert len(steps) == 1 and steps[0].condition == "pairs", design
            else:
                assert sorted(s.condition for s in steps) == ["base", "new"], design
        names = [s.name for s in record.steps]
        assert len(set(names)) == len(names), design   # benchexec's --name: unique in the run


@pytest.mark.unit
def test_the_fields_of_a_design_are_what_the_rest_reads():
    assert designs.names() == ("separate", "blocks", "interleaved", "duet")
    assert designs.PAIRED == ("blocks", "interleaved", "duet") and designs.CO_LOCATED == ("interleaved", "duet")
    with pytest.raises(ValueError, match="no design 'abab'"):
        designs.get("abab")
    for name in designs.PAIRED:
        settings = paired.cmdrun_settings(name, 7, cores=3 if name == "blocks" else 1)
        design = designs.get(name)
        assert settings["option"] == design.cmdrun_option and settings["cores"] == max(design.cpus, settings["cores"])
        assert bool(settings["sentinel"]) == design.co_located
        assert paired.columns_of(None, name) == design.columns
    assert paired.cmdrun_settings("blocks", 7, cores=3)["cores"] == 3 and paired.cmdrun_settings("duet", 7)["cores"] == 2


@pytest.mark.unit
def test_the_records_share_one_base_and_old_manifests_still_load(scratch):
    shared = {"seed", "reruns", "max_reruns", "until", "until_decided", "budget", "background", "container",
              "created", "steps", "checks", "stopped", "tasksets", "skipped"}
    for cls in (separate.ABRun, merged.BlocksRun, paired.PairedRun):
        assert shared <= set(cls.__dataclass_fields__), cls
    # an ab.json written before the records shared a base (and before it named its design)
    old = {"base": "b.xml", "new": "n.xml", "rundefinitions": ["r"], "seed": 1, "reruns": 1, "until": None,
           "max_reruns": 20, "background": 0, "container": True, "created": "", "checks": [], "stopped": "",
           "tasksets": [], "skipped": {}, "until_decided": False, "budget": None, "chunks": 1,
           "steps": [vars(Step(load=0, rerun=1, name="base-rerun1", condition="base"))]}
    (scratch / separate.MANIFEST).write_text(json.dumps(old))
    loaded = separate.ABRun.load(scratch)
    assert loaded.design == "separate" and loaded.steps[0].name == "base-rerun1"


@dataclass(frozen=True)
class ABBA(Separate):
    """An invocation a side, base new new base (new base base new in every other rerun): a drift
    that is linear within a rerun cancels in each side's mean of the rerun."""

    name: str = "abba"

    def plan(self, record, rerun):
        first, second = ("base", "new") if rerun % 2 else ("new", "base")
        return [Step(load=record.background, rerun=rerun, name=f"{side}-rerun{rerun}-{k}", condition=side)
                for k, side in enumerate((first, second, second, first), start=1)]


@pytest.fixture
def fifth_design(monkeypatch):
    monkeypatch.setitem(designs._BY_NAME, "abba", ABBA())


@pytest.mark.unit
def test_a_fifth_design_is_one_class_the_command_line_knows(fifth_design):
    from analysis import cli
    from analysis.ab import cli as ab_cli

    options = ab_cli.options(cli.build_parser().parse_args(["ab", "b.xml", "n.xml", "--design", "abba"]))
    assert options.design == "abba"
    record = separate.ABRun("b.xml", "n.xml", ["r"], design="abba", seed=0, reruns=0)
    record.plan_reruns(1, 2)
    assert [s.condition[0] for s in record.steps] == list("bnnbnbbn")


@pytest.mark.benchexec
def test_a_fifth_design_runs_under_benchexec_as_the_others_do(fifth_design, programs, scratch, capsys):
    """Two definitions under --design abba: the records, the runner and compare need nothing new."""
    from analysis.ab import definitions as definitions_path

    base, new = definitions(scratch, runs=1)
    out = scratch / "ab"
    code = definitions_path.start(AbOptions(base=str(base), new=str(new), design="abba", until_decided=False, budget=None, reruns=2, output=out,
                                            container=False))
    record = json.loads((out / separate.MANIFEST).read_text())
    assert record["design"] == "abba"
    assert [s["condition"][0] for s in record["steps"]] == list("bnnbnbbn")
    assert all(s["status"] == "done" for s in record["steps"])
    assert len(list((out / "base").glob("*.results.*.xml.bz2"))) == 4
    assert "verdict:" in capsys.readouterr().out and code != 2   # judged by compare (not a timing test)
    assert out.resolve() not in steps_loop._held   # the command let go of its directory
