"""The fleet: SLURM jobs per node on a real (throw-away, one-host) SLURM cluster, and the fleet
report judging nodes that are known to differ (generated from the recorded demo sweeps)."""

import gzip
import json
import os
import shutil
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from analysis import cli, pipeline
from analysis.core.report import write_report
from analysis.experiments import EXPERIMENTS
from analysis.experiments.core_heterogeneity.analyse import CoresError
from analysis.experiments.core_heterogeneity.pinning import pin_command
from analysis.sweep.model import Sweep
from analysis.tools.fleet import cores as fleet_cores
from analysis.tools.fleet import machines, outliers, status, submit
from analysis.tools.fleet import claims as fleet_claims
from analysis.tools.fleet.claims import claim_key
from analysis.tools.fleet import slurm as slurm_commands
from analysis.tools.fleet.collect import Node, NodeSweep, environment_differences
from analysis.tools.fleet.manifest import Fleet, FleetError, Job
from analysis.tools.fleet.report import GOLDEN_FILE, fleet_report
from tests import fleet_data, slurm
from tests.helpers import figures_not_drawn

REPO = Path(__file__).resolve().parent.parent
RECORDED = REPO / "tests" / "data" / "recorded-demo"
INTEL = REPO / "tests" / "data" / "machines" / "intel-vm-2026-11-25"
SCRATCH = REPO / ".pytest-tmp" / "scratch"
# one worker runs every test of this file (tox: --dist loadgroup): the SLURM tests share one simulated
# cluster, the module's fixture, started once and not once per worker
pytestmark = pytest.mark.xdist_group("fleet")


# ---------------------------------------------------------------------------------------------
# unit: the pieces


@pytest.mark.unit
def test_robust_z_flags_the_one_node_that_differs_and_needs_three_nodes():
    z = outliers.robust_z([10.0, 10.1, 9.9, 10.05, 10.8])
    assert abs(z[-1]) > outliers.THRESHOLD and np.all(np.abs(z[:-1]) < outliers.THRESHOLD)
    # more than half agree exactly: the mean absolute deviation stands in for MAD = 0
    z = outliers.robust_z([5.0, 5.0, 5.0, 5.0, 9.0])
    assert np.isfinite(z).all() and z[-1] > outliers.THRESHOLD and np.all(z[:-1] == 0)
    assert np.isnan(outliers.robust_z([1.0, 2.0])).all()
    # a floor on the spread: 0.8 % among near-identical nodes is no outlier beside a 2 % floor
    close = [1.000, 1.001, 0.999, 1.000, 1.008]
    assert abs(outliers.robust_z(close)[-1]) > outliers.THRESHOLD
    assert abs(outliers.robust_z(close, floor=outliers.MIN_CHANGE / outliers.THRESHOLD)[-1]) < outliers.THRESHOLD


def _fleet(**overrides):
    values = dict(experiment="memory-bandwidth", preset="quick", nodes=["n1", "n2"], created="2026-01-01T00:00:00+00:00",
                  kit_commit="abc", kit_path=str(REPO), python="/opt/kit venv/bin/python", time_limit_minutes=17,
                  time_estimate="test")
    return Fleet(**{**values, **overrides})


@pytest.mark.unit
def test_job_script_is_exclusive_on_its_node_marks_its_start_and_runs_the_sweep_in_place_of_the_shell(tmp_path):
    fleet_dir = tmp_path / "my fleet"
    script = submit.job_script(_fleet(partition="bench"), fleet_dir, "n2", resume=True)
    lines = script.splitlines()
    for option in ("--nodelist=n2", "--exclusive", "--nodes=1", "--time=17", "--partition=bench", f"--chdir={REPO}"):
        assert f"#SBATCH {option}" in lines
    assert f"#SBATCH --output={fleet_dir}/slurm/n2.%j.out" in lines
    marker = next(i for i, line in enumerate(lines) if line.startswith("printf"))
    run = lines[-1]
    assert marker < len(lines) - 1 and "'" + str(fleet_dir / "slurm" / "n2") + "'" in lines[marker]
    assert run.startswith("exec '/opt/kit venv/bin/python' -m analysis.cli run memory-bandwidth --preset quick")
    assert run.endswith(f"--output '{fleet_dir / 'n2'}' --resume")
    assert "--resume" not in submit.job_script(_fleet(), fleet_dir, "n2", resume=False)


@pytest.mark.unit
def test_time_limit_comes_from_earlier_sweeps_else_from_the_definitions_bound(tmp_path):
    experiment = EXPERIMENTS["os-microbench"]
    preset = experiment.presets["full"]
    minutes, how = submit.time_limit(experiment, preset, cpus=2, roots=[RECORDED])
    recorded = json.loads((RECORDED / "os-microbench" / "sweep.json").read_text())
    per_run = recorded["steps"][0]["seconds"] / len(experiment.inputs)  # the quick preset: 1 run per input
    runs = len(experiment.plan(preset)) * preset.reps * len(experiment.inputs)  # full: 5 invocations
    assert minutes == int(np.ceil((2 * runs * per_run + submit.MARGIN_SECONDS) / 60)) and "earlier sweeps" in how
    bound, how = submit.time_limit(experiment, preset, cpus=2, roots=[tmp_path])
    assert bound == int(np.ceil((runs * 90 + submit.MARGIN_SECONDS) / 60)) and "time limit per run" in how
    # core-heterogeneity: one step per core of the node, so more CPUs take longer
    cores = EXPERIMENTS["core-heterogeneity"]
    assert (submit.time_limit(cores, cores.presets["quick"], 64, [tmp_path])[0]
            > submit.time_limit(cores, cores.presets["quick"], 2, [tmp_path])[0])
    # memory-bandwidth: one run definition per (CPU node, memory node) pair of the node, 16 on 4 sockets
    stream = EXPERIMENTS["memory-bandwidth"]
    one, how_one = submit.time_limit(stream, stream.presets["quick"], 2, [tmp_path], sockets=1)
    four, how_four = submit.time_limit(stream, stream.presets["quick"], 2, [tmp_path], sockets=4)
    assert how_one.startswith("3 runs x") and how_four.startswith("48 runs x") and four > one  # 1 rep x 3 reruns a pair


def _node(name, probes):
    class Recorded:
        environment = {"probes": [{"name": p, "value": v, "verdict": "info", "why": ""} for p, v in probes.items()]}
        machine = {"hostname": name}

    node = Node(name)
    node.sweeps["x"] = type("S", (), {"sweep": Recorded})()
    return node


@pytest.mark.unit
def test_environment_differences_name_the_odd_node_and_ignore_the_load_average():
    common = {"kernel": "6.1", "frequency governor": "performance", "load average": "0.1"}
    nodes = [_node(f"n{i}", {**common, "load average": f"{i}.0"}) for i in range(1, 4)]
    nodes.append(_node("n4", {**common, "frequency governor": "powersave"}))
    differences = environment_differences(nodes)
    assert differences == {"n1": [], "n2": [], "n3": [], "n4": [("frequency governor", "powersave", "performance")]}


@pytest.mark.unit
def test_a_node_without_usable_core_runs_is_left_out_of_the_fleet_ranking_with_the_reason(tmp_path):
    nodes = []
    for name in ("n1", "n2", "n3"):
        directory = tmp_path / name
        fleet_data.make_node_sweep("core-heterogeneity", directory, name, fleet_data.Machine())
        nodes.append(Node(name, {"core-heterogeneity": NodeSweep("core-heterogeneity", directory, Sweep.load(directory),
                                                                  {}, directory / "report.html")}))
    for result in (tmp_path / "n2").glob("*.xml.bz2"):  # the sweep ran, its results are gone
        result.unlink()
    groups, skipped = fleet_cores.pairs(nodes)
    assert [node for node, _ in skipped] == ["n2"] and str(tmp_path / "n2") in skipped[0][1], skipped
    assert {node for by_pair in groups.values() for node, _ in by_pair} == {"n1", "n3"}


@pytest.mark.unit
def test_time_api_measurements_and_noise_come_from_a_node_report():
    data = json.loads(gzip.decompress((RECORDED / "report.before.json.gz").read_bytes()))["data"]
    measures = outliers.MEASUREMENTS["time-apis"](data["time-apis"])
    assert {f"43434343 {api} CPU, load 0 (ms)" for api in ("runexec", "bash", "fish", "gnu")} <= set(measures)
    runexec = next(r for r in data["time-apis"]["inputs"]["43434343"]["cpu_summary"] if r["api"] == "runexec" and r["load"] == 0)
    assert measures["43434343 runexec CPU, load 0 (ms)"] == pytest.approx(runexec["median"] * 1e3)
    cvs = outliers.NOISE["core-heterogeneity"](data["core-heterogeneity"])
    assert set(cvs) == {f"{w}, CPU {c}" for w in ("cachestress", "cg", "isort") for c in (0, 1)}


@pytest.mark.unit
def test_status_a_job_that_ran_but_left_no_marker_here_points_at_the_filesystem(tmp_path, monkeypatch):
    """A filesystem the nodes do not share cannot be made here: SLURM's answer is faked."""
    fleet = _fleet()
    fleet.add_job("n1", Job(id="7", submitted="now"))
    fleet.add_job("n2", Job(id="8", submitted="now"))
    (tmp_path / "slurm").mkdir()
    (tmp_path / "slurm" / "n2.8.started").write_text("8 n2 host now\n")
    monkeypatch.setattr(status.slurm, "job_states", lambda ids: {"7": "COMPLETED", "8": "PENDING"})
    states = {s.node: s for s in status.node_states(fleet, tmp_path)}
    assert states["n1"].state == "failed" and "shared" in states["n1"].note
    assert states["n2"].state == "pending"


@pytest.mark.unit
def test_status_a_node_whose_report_is_written_is_finished_while_its_job_ends(tmp_path, monkeypatch):
    """The node report is the job's last act: `fleet report --wait` need not wait for SLURM to
    clear the job. A finished sweep without its report yet is still running."""
    fleet = _fleet()
    for node, job in (("n1", "7"), ("n2", "8")):
        fleet.add_job(node, Job(id=job, submitted="now"))
        fleet_data.make_node_sweep("os-microbench", tmp_path / node, node, fleet_data.Machine())
    (tmp_path / "n1" / "report").mkdir()
    (tmp_path / "n1" / "report" / "report.json").write_text("{}")
    os.utime(tmp_path / "n1" / "sweep.json", (1, 1))
    monkeypatch.setattr(status.slurm, "job_states", lambda ids: {"7": "COMPLETING", "8": "RUNNING"})
    states = {s.node: s for s in status.node_states(fleet, tmp_path)}
    assert (states["n1"].state, states["n2"].state) == ("finished", "running")


@pytest.mark.unit
def test_nodes_down_drained_or_not_responding_get_no_work():
    assert [s for s in ("idle", "mix", "alloc", "idle~", "down", "down*", "drain", "drng", "idle*", "fail", "maint")
            if slurm_commands.usable(s)] == ["idle", "mix", "alloc", "idle~"]


@pytest.mark.unit
def test_fleet_commands_refuse_bad_input_in_one_line(tmp_path, capsys):
    assert _timekit("fleet", "submit", "os-microbench") == cli.EXIT_ERROR
    assert _timekit("fleet", "submit", "os-microbench", "--count", "2") == cli.EXIT_ERROR
    assert _timekit("fleet", "status", tmp_path) == cli.EXIT_ERROR
    assert _timekit("fleet", "report", tmp_path) == cli.EXIT_ERROR
    assert _timekit("fleet", "report", f"a={RECORDED}", f"a={RECORDED / 'time-apis'}") == cli.EXIT_ERROR
    assert _timekit("fleet", "report", f"recorded-demo={INTEL}", RECORDED, RECORDED / "time-apis") == cli.EXIT_ERROR
    half = json.loads((RECORDED / "discipline" / "sweep.json").read_text())
    half["steps"][-1]["status"] = "pending"
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "sweep.json").write_text(json.dumps(half))
    assert _timekit("fleet", "report", tmp_path / "half") == cli.EXIT_ERROR
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 7 and all(e.startswith("timekit: error: ") for e in errors)
    assert errors[6].endswith("has a finished sweep (vm: discipline: sweep unfinished (24/25 steps; "
                              f"timekit run discipline --resume --output {tmp_path / 'half'} finishes it))")
    assert "--nodes LIST or --partition" in errors[0] and "--count needs --partition" in errors[1]
    assert "not a fleet directory" in errors[2]
    assert errors[3].endswith("neither a fleet (fleet.json), nor a sweep (sweep.json), nor a folder whose sub-folders are sweeps")
    assert "machine a has two sweeps of time-apis" in errors[4]
    assert "two machines would both be called 'recorded-demo'; name them: NAME=DIR" in errors[5]


@pytest.mark.unit
def test_a_machine_given_by_folder_is_named_by_its_recorded_host_else_by_its_folder():
    # both recordings say host 'vm': each is called by its folder
    assert [m.name for m in machines.machines([machines.Given(RECORDED), machines.Given(INTEL)])] == \
        ["recorded-demo", "intel-vm-2026-11-25"]
    # alone, the recorded host name; NAME=DIR names a machine, and one NAME joins its folders
    joined = machines.machines([machines.given(f"amd={RECORDED / 'time-apis'}"), machines.given(str(INTEL)),
                                machines.given(f"amd={RECORDED / 'discipline'}")])
    assert [(m.name, [s.experiment for _, s in m.sweeps]) for m in joined] == [
        ("amd", ["time-apis", "discipline"]), ("vm", sorted(EXPERIMENTS))]
    assert machines.given(str(INTEL)) == machines.Given(INTEL) and machines.given("x=/no/such").name == "x"


# ---------------------------------------------------------------------------------------------
# a fleet of distinct machines: one 8 % slower, one with a noisy CPU


def _report_without_table_pages(paths, outdir):
    """A node's report as the pipeline builds it, without the table-generator pages (12 of them
    here) and without drawing its figures (two thirds of its time): the fleet sections read
    report.json alone; the fleet report draws its own figures, and the SLURM tests below make real
    node reports."""
    with figures_not_drawn():
        return write_report(pipeline.build_report(paths), outdir)


@pytest.fixture(scope="module")
def generated_fleet():
    root = SCRATCH / f"fleet-generated-{os.getpid()}"
    shutil.rmtree(root, ignore_errors=True)
    dirs = [fleet_data.make_fleet(root, e, fleet_data.MACHINES) for e in ("os-microbench", "core-heterogeneity")]
    paths = fleet_report(dirs, _report_without_table_pages, root / "report")
    yield root, dirs, json.loads(paths["json"].read_text()), paths["html"].read_text()
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.benchexec
def test_fleet_report_names_exactly_the_slower_node_and_the_noisy_core(generated_fleet):
    _, _, report, _ = generated_fleet
    data = report["data"]
    assert data["nodes"] == list(fleet_data.MACHINES)
    outlying = data["measurements"]["os-microbench"]["outliers"]
    assert list(outlying) == [fleet_data.SLOW] and len(outlying[fleet_data.SLOW]) >= 9  # nearly every measurement
    assert data["noise"]["noisy_nodes"] == [fleet_data.NOISY]
    flagged = next(r for r in data["noise"]["ranking"] if r["node"] == fleet_data.NOISY)["flagged"]
    assert flagged and all(f["workload"].endswith("CPU 1") for f in flagged)
    assert data["noise"]["ranking"][-1]["node"] == fleet_data.NOISY  # the noisiest
    noisy_cores = {tuple(p) for entry in data["cores"]["ranking"].values() for p in entry["noisy"]}
    assert noisy_cores == {(fleet_data.NOISY, 1)}
    # the slower node's environment check differs (its governor), and no one else's
    assert {n: d for n, d in data["environment_differences"].items() if d} == {
        fleet_data.SLOW: [["frequency governor", "powersave", "no cpufreq"]]}


@pytest.mark.benchexec
def test_fleet_report_judges_every_claim_per_node_and_across_the_fleet(generated_fleet):
    _, _, report, html = generated_fleet
    claims = report["data"]["claims"]
    recorded = json.loads(gzip.decompress((RECORDED / "report.before.json.gz").read_bytes()))
    expected = {f["claim"] for f in recorded["findings"] if f["section"] in ("os-microbench", "core-heterogeneity")}
    assert {c["claim"] for c in claims} == expected
    assert all(c["nodes"] == 6 for c in claims)
    # the noisy core delays a third of its runs: its node's slowest/fastest ratio swings from round to
    # round, and over 3 rounds the verdict policy (round-level interval) cannot decide the 10 % claim
    # on any node; the noisy node is named by the noise ranking and the cores ranking instead
    differing = {n for c in claims for n in c["differing_nodes"]}
    assert differing == set()
    cachestress = next(c for c in claims if c["claim"].startswith("cachestress: some cores are more than 10%"))
    assert set(cachestress["verdicts"].values()) == {"inconclusive"} and cachestress["holds_on"] == 0
    assert "holds on 0 of 6 nodes" in html


@pytest.mark.unit
def test_claims_line_up_by_id_where_the_machines_words_differ_and_by_text_where_findings_have_no_id():
    def node(name, l1, with_id=True):
        findings = [{"section": "os-microbench", "claim": f"plateaus mark the cache sizes (here L1, {l1})",
                     "verdict": "confirmed", **({"id": "os-microbench.cache-plateau.L1"} if with_id else {})},
                    {"section": "os-microbench", "claim": "a syscall costs more than a call", "verdict": "refuted"}]
        report = {"findings": findings}
        return Node(name, {"os-microbench": NodeSweep("os-microbench", Path(name), None, report, Path(name, "report.html"))})

    tables, data = fleet_claims.claims_tables([node("amd", "32 KiB"), node("intel", "48 KiB")], {})
    assert [(c["id"], c["nodes"], c["holds_on"]) for c in data] == [
        ("os-microbench.cache-plateau.L1", 2, 2), ("a syscall costs more than a call", 2, 0)]
    assert data[0]["claims"] == {"amd": "plateaus mark the cache sizes (here L1, 32 KiB)",
                                 "intel": "plateaus mark the cache sizes (here L1, 48 KiB)"}
    assert tables[0].rows[0][1] == "plateaus mark the cache sizes (here L1, 32 KiB) (in amd's words)"
    _, data = fleet_claims.claims_tables([node("amd", "32 KiB", False), node("intel", "48 KiB", False)], {})
    assert len(data) == 3  # without ids the machines' numbers keep the cache claim apart
    twice = node("amd", "32 KiB")
    twice.sweeps["os-microbench"].report["findings"][1]["id"] = "os-microbench.cache-plateau.L1"
    with pytest.raises(FleetError, match="two os-microbench findings are both 'os-microbench.cache-plateau.L1'"):
        fleet_claims.claims_tables([twice], {})


# ---------------------------------------------------------------------------------------------
# machines given by folder, no fleet.json: the two in-repo recordings


def _files(*folders):
    return {p: p.stat().st_mtime for folder in folders for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def recorded_machines():
    out = SCRATCH / f"fleet-machines-{os.getpid()}"
    shutil.rmtree(out, ignore_errors=True)
    before = _files(RECORDED, INTEL)
    paths = fleet_report([RECORDED, INTEL], _report_without_table_pages, out)
    yield out, json.loads(paths["json"].read_text()), before
    shutil.rmtree(out, ignore_errors=True)


@pytest.mark.benchexec
def test_fleet_report_over_machines_given_by_folder_has_one_row_per_claim_with_each_machine_once(recorded_machines):
    out, report, before = recorded_machines
    data = report["data"]
    assert data["nodes"] == ["intel-vm-2026-11-25", "recorded-demo"]
    assert [m["node"] for m in data["machines"]] == ["recorded-demo", "intel-vm-2026-11-25"]
    # each machine's one report over its six sweeps, made beside the fleet report: the recordings stay as they were
    own = {n: json.loads((out / "machines" / n / "report.json").read_text())["findings"] for n in data["nodes"]}
    assert _files(RECORDED, INTEL) == before
    keys = {n: Counter((f["section"], claim_key(f)) for f in findings) for n, findings in own.items()}
    assert all(len(k) == len(own[n]) >= 35 for n, k in keys.items())  # no two findings of a machine share a key
    rows = Counter((c["experiment"], c["id"]) for c in data["claims"])
    assert set(rows.values()) == {1} and set(rows) == set(keys["recorded-demo"]) | set(keys["intel-vm-2026-11-25"])
    for claim in data["claims"]:  # every machine that has the claim is in its row, once
        key = (claim["experiment"], claim["id"])
        assert set(claim["verdicts"]) == {n for n in data["nodes"] if key in keys[n]}
        assert claim["nodes"] == len(claim["verdicts"])
    assert {c["experiment"] for c in data["claims"]} == set(EXPERIMENTS)
    both = [c for c in data["claims"] if c["nodes"] == 2]
    assert len(both) >= 30
    if all("id" in f for findings in own.values() for f in findings):  # findings with ids: every claim lines up
        assert len(both) == len(data["claims"])


@pytest.mark.benchexec
def test_golden_sample_is_the_fleets_fastest_cores_and_cores_run_accepts_it(generated_fleet, monkeypatch):
    root, _, report, _ = generated_fleet
    cores = report["data"]["cores"]
    order = cores["ranking"]["cachestress"]["order"]
    means = [r["mean"] for r in order]
    assert means == sorted(means) and len(order) == 12  # every (node, CPU) pair of the fleet
    assert cores["ranking"]["cachestress"]["slowest_vs_fastest"]["slowest"] == [fleet_data.NOISY, 1]
    golden = cores["golden"]["cachestress"]
    assert len(golden) == cores["k"] == 2 and not {fleet_data.SLOW, fleet_data.NOISY} & {n for n, _ in golden}
    path = root / "report" / GOLDEN_FILE
    node, core = golden[0]
    monkeypatch.setenv("SLURMD_NODENAME", node)
    monkeypatch.setattr("platform.node", lambda: f"host-{node}")
    argv = pin_command(1, path, ["true"], boot_time=0)
    assert str(core) in argv[:-1] and argv[-1] == "true"
    monkeypatch.setenv("SLURMD_NODENAME", fleet_data.SLOW)  # no golden core there
    with pytest.raises(CoresError, match="none of the fleet's golden cores is on this node"):
        pin_command(1, path, ["true"], boot_time=0)


# ---------------------------------------------------------------------------------------------
# a real SLURM: munged, slurmctld and two slurmd on this host


@pytest.fixture(scope="module")
def cluster():
    reason = slurm.missing_reason()
    if reason:
        pytest.skip(reason)
    root = SCRATCH / f"slurm-{os.getpid()}"
    with slurm.SimulatedCluster(root, nodes=2) as running:
        daemons = dict(running.pids)
        previous = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = str(running.conf)
        try:
            yield running
        finally:
            if previous is None:
                os.environ.pop("SLURM_CONF", None)
            else:
                os.environ["SLURM_CONF"] = previous
    # every daemon it started, and every job step daemon of its slurmds, is gone
    assert not [name for name, pid in daemons.items() if slurm._alive(pid)] and not slurm._step_daemons(running.conf)
    shutil.rmtree(root, ignore_errors=True)


def _timekit(*argv):
    return cli.main(list(map(str, argv)))


def _wait(condition, timeout=300, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.benchexec
def test_slurm_fleet_runs_each_node_in_its_own_job_and_reports_across_them(cluster, scratch, capsys):
    """memory-bandwidth's quick preset, two reruns, on n1 and n2, one node after another (--serial: the simulated
    nodes share this machine's 2 CPUs, so parallel benchexec runs would fight over them): the
    cheapest experiment whose fleet report has both claims and measurements across nodes. Reports
    over several experiments are the generated fleet's and the recorded machines' tests above."""
    fleets = []
    for experiment in ("memory-bandwidth",):
        directory = scratch / experiment
        assert _timekit("fleet", "submit", experiment, "--nodes", "n[1-2]", "--serial", "--reruns", "2",
                        "--output", directory) == 0
        assert _timekit("fleet", "status", directory, "--wait") == 0
        fleet = Fleet.load(directory)
        assert fleet.nodes == ["n1", "n2"] and fleet.serial and fleet.kit_path == str(REPO) and fleet.sizes == {"reruns": 2}
        for node in fleet.nodes:
            job = fleet.last_job(node)
            marker = (directory / "slurm" / f"{node}.{job.id}.started").read_text().split()
            assert marker[:2] == [job.id, node]  # that job ran on that node, and wrote where we see it
            assert json.loads((directory / node / "sweep.json").read_text())["reruns"] == 2   # the size given, on each node
            assert (directory / node / "report" / "report.json").exists()
            sections = json.loads((directory / node / "report" / "report.json").read_text())["sections"]
            assert [s["runs_missing"] for s in sections] == [0], sections  # sized to fit: no run OUT OF MEMORY
        fleets.append(directory)
    out = capsys.readouterr().out
    assert "finished" in out and "failed" not in out
    assert _timekit("fleet", "report", *fleets, "--output", scratch / "fleet-report") == 0
    report = json.loads((scratch / "fleet-report" / "report.json").read_text())
    assert report["data"]["nodes"] == ["n1", "n2"] and report["data"]["left_out"] == []
    assert {c["experiment"] for c in report["data"]["claims"]} == {"memory-bandwidth"}
    assert all(c["nodes"] == 2 for c in report["data"]["claims"])
    assert set(report["data"]["measurements"]) == {"memory-bandwidth"}
    assert "Only 2 node(s)" in json.dumps(report["warnings"])


@pytest.mark.benchexec
def test_slurm_cancelled_node_is_resumed_alone_and_the_other_nodes_results_stay(cluster, scratch):
    directory = scratch / "fleet"
    # scheduling-noise: the cheapest preset (~20 s a node); what is tested is SLURM's cancel and the resume
    assert _timekit("fleet", "submit", "scheduling-noise", "--nodes", "n1,n2", "--serial", "--output", directory) == 0
    fleet = Fleet.load(directory)
    first = fleet.last_job("n1").id
    _wait(lambda: list((directory / "n1").glob("benchexec.*.log")), what="n1's benchexec to start")
    cluster.run("scancel", first)
    assert _timekit("fleet", "status", directory, "--wait") == 1  # n1 failed, n2 ran after it
    states = {s.node: s for s in status.node_states(fleet, directory)}
    assert states["n1"].state == "failed" and states["n1"].slurm == "CANCELLED"
    assert states["n2"].state == "finished"
    kept = {p: p.read_bytes() for p in (directory / "n2").glob("*.xml.bz2")}
    assert kept

    assert _timekit("fleet", "submit", "scheduling-noise", "--resume", "--output", directory) == 0
    fleet = Fleet.load(directory)
    assert len(fleet.jobs["n1"]) == 2 and len(fleet.jobs["n2"]) == 1 and fleet.last_job("n1").resume
    assert "--resume" in (directory / "slurm" / "n1.sh").read_text()
    assert _timekit("fleet", "status", directory, "--wait") == 0
    assert {p: p.read_bytes() for p in (directory / "n2").glob("*.xml.bz2")} == kept
    sweep = json.loads((directory / "n1" / "sweep.json").read_text())
    assert all(step["status"] == "done" for step in sweep["steps"])
