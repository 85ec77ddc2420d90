"""samples.csv: one row per run of every result file a report reads, whatever the experiment."""

import bz2
import csv
import json
from collections import Counter
from pathlib import Path

from lxml import etree

from analysis import pipeline
from analysis.core.report import write_report
from analysis.experiments import EXPERIMENTS
from analysis.sweep import run_rows
from tests.helpers import figures_not_drawn

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "recorded-demo"


def _runs_in_results(sweep_dir):
    """{result file name: (run definition as the file names it, <run> elements)} of the files the
    sweep's steps list, counted from the XML itself, not by the kit's loader."""
    counted = {}
    for step in json.loads((sweep_dir / "sweep.json").read_text())["steps"]:
        for name in step["result_files"]:
            root = etree.fromstring(bz2.decompress((sweep_dir / name).read_bytes()))
            counted[name] = (root.get("name"), sum(1 for _ in root.iter("run")))
    return counted


def test_samples_csv_has_one_row_per_run_of_every_sweep_with_its_experiment_and_run_definition(tmp_path):
    sweeps = sorted(p for p in RECORDED.iterdir() if p.is_dir())
    expected = {name: (sweep.name, *counted) for sweep in sweeps for name, counted in _runs_in_results(sweep).items()}
    with figures_not_drawn():
        paths = write_report(pipeline.build_report(sweeps), tmp_path)
    with open(paths["csv"], newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == sum(runs for _, _, runs in expected.values()) > 800
    assert set(run_rows.IDENTITY) <= set(rows[0])
    assert {r["experiment"] for r in rows} == set(EXPERIMENTS) == {e for e, _, _ in expected.values()}
    per_file = Counter(r["result_file"] for r in rows)
    assert per_file == {name: runs for name, (_, _, runs) in expected.items()}
    for row in rows:  # each run says which experiment and run definition it belongs to, as its file does
        experiment, run_set, _ = expected[row["result_file"]]
        assert row["experiment"] == experiment and run_set.split(".")[0] == row["run_definition"] != ""
        assert row["task"] and row["status"] and row["rerun"].isdigit()
    discipline = [r for r in rows if r["experiment"] == "discipline"]
    assert len(discipline) == 250 and all(r["cputime"] not in ("", "nan") for r in discipline if r["status"] == "done")
    assert f"{len(rows)} runs in samples.csv" in paths["html"].read_text()


def test_no_runs_no_rows():
    assert run_rows.columns([], {}) == {}
