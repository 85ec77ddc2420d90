"""Core-to-core heterogeneity (seed 002): workloads, tool info, plan, statistics, ranking, pinning,
and a real benchexec run on one assigned core."""

import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse
import scipy.sparse.linalg
from benchexec.tools.template import BaseTool2, UnsupportedFeatureException
from benchexec.util import ProcessExitCode

from analysis.experiments.core_heterogeneity import analyse as cores
from analysis.experiments.core_heterogeneity import pinning as cores_pinning
from analysis.core import results
from analysis.machine import facts, topology
from analysis.machine.kernel import read_boot_time
from analysis.sweep.model import Experiment
from analysis.core.report import VERDICTS
from analysis.sweep.runner import write_sweep_benchmark
from tests.helpers import run_isolated

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "cores"
MACHINES = REPO / "tests" / "data" / "machines"
INPUTS = REPO / "programs" / "inputs" / "core-heterogeneity"
MASK = (1 << 64) - 1
TWO_CPUS = len(os.sched_getaffinity(0)) >= 2 and 1 in os.sched_getaffinity(0)


def run_program(programs, name, path, *prefix):
    done = subprocess.run([*prefix, str(programs / name), str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=60)
    values = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return done, values


def params(directory, name, **values):
    path = directory / f"{name}.txt"
    path.write_text("# test input\n" + "".join(f"{k} = {v}\n" for k, v in values.items()))
    return path


# ---------------------------------------------------------------------------------------------
# reference implementations of the workloads' deterministic parts


def splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def cg_reference(rows, per_row, shift, power_iterations, seed):
    """zeta of cg.c's inverse power iteration, with exact solves instead of CG."""
    state, entries = seed, []
    for i in range(rows):
        for _ in range(per_row):
            state, r = splitmix64(state)
            j = r % rows
            if j == i:
                j = (j + 1) % rows
            state, r = splitmix64(state)
            entries.append((i, j, (r >> 11) * 2.0**-53))
    i, j, v = (np.array(x) for x in zip(*entries))
    off = scipy.sparse.coo_matrix((np.concatenate([v, v]), (np.concatenate([i, j]), np.concatenate([j, i]))),
                                  shape=(rows, rows)).tocsr()
    a = (off + scipy.sparse.diags(np.asarray(off.sum(axis=1)).ravel() + shift)).tocsc()
    state, x = (~seed) & MASK, []
    for _ in range(rows):
        state, r = splitmix64(state)
        x.append((r >> 11) * 2.0**-53 - 0.5)
    x = np.array(x) / np.linalg.norm(x)
    for _ in range(power_iterations):
        z = scipy.sparse.linalg.spsolve(a, x)
        zeta = 1.0 / (x @ z)
        x = z / np.linalg.norm(z)
    return zeta


def isort_reference(keys, max_key, iterations, seed):
    state, key = seed, []
    for _ in range(keys):
        total = 0
        for _ in range(4):
            state, r = splitmix64(state)
            total += r % max_key
        key.append(total // 4)
    key = np.array(key, dtype=np.uint64)
    for it in range(1, iterations + 1):
        key[it] = it
        key[it + iterations] = max_key - it
    ordered = np.sort(key)
    return int((np.arange(1, keys + 1, dtype=np.uint64) * ordered).sum(dtype=np.uint64))


# ---------------------------------------------------------------------------------------------
# programs


@pytest.mark.benchexec
def test_cachestress_output_and_checksum(programs, scratch):
    done, values = run_program(programs, "cachestress", params(scratch, "cachestress", workload="cachestress",
                                                                 buffer=65536, repeats=300))
    assert done.returncode == 0, done.stderr
    assert {"self-seconds", "self-cputime", "checksum", "cpu-start", "cpu-end", "line", "lines"} <= set(values)
    lines = int(values["lines"])
    assert lines == -(-65536 // int(values["line"]))
    assert int(values["checksum"]) == lines * (300 % 256)  # every touched byte incremented 300 times, mod 256
    assert float(values["self-seconds"]) > 0
    assert int(values["cpu-start"]) in os.sched_getaffinity(0)


@pytest.mark.benchexec
def test_cg_matches_an_exact_solve(programs, scratch):
    setting = {"rows": 300, "per-row": 3, "shift": 2, "cg-iterations": 60, "power-iterations": 3, "seed": 7}
    done, values = run_program(programs, "cg", params(scratch, "cg", workload="cg", **setting))
    assert done.returncode == 0, done.stderr
    assert int(values["nonzeros"]) == 300 * (2 * 3 + 1)
    assert float(values["residual"]) < 1e-10
    expected = cg_reference(300, 3, 2.0, 3, 7)
    assert float(values["zeta"]) == pytest.approx(expected, rel=1e-9)
    assert values["checksum"] == f"{float(values['zeta']):.12e}"


@pytest.mark.benchexec
def test_isort_sorts_and_its_checksum_matches(programs, scratch):
    done, values = run_program(programs, "isort", params(scratch, "isort", keys=5000, **{"max-key": 1024},
                                                           iterations=10, seed=7))
    assert done.returncode == 0, done.stderr
    assert values["sorted"] == "1"
    assert int(values["checksum"]) == isort_reference(5000, 1024, 10, 7)


@pytest.mark.skipif(not shutil.which("taskset") or not TWO_CPUS, reason="needs taskset and CPU 1")
@pytest.mark.benchexec
def test_programs_report_the_cpu_they_ran_on(programs):
    for name in cores.WORKLOADS:
        done, values = run_program(programs, name, INPUTS / f"{name}.txt", "taskset", "--cpu-list", "1")
        assert done.returncode == 0, done.stderr
        assert (values["cpu-start"], values["cpu-end"]) == ("1", "1")


@pytest.mark.parametrize("content,message", [
    ("workload=cg\n", "parameter file for 'cg', not for cachestress"),
    ("buffer=12x\n", "buffer must be a positive integer"),
    ("bufer=1\n", "unknown key 'bufer'"),
    ("buffer\n", "expected key=value"),
])
@pytest.mark.benchexec
def test_bad_parameter_files_are_refused(programs, scratch, content, message):
    path = scratch / "bad.txt"
    path.write_text(content)
    done, _ = run_program(programs, "cachestress", path)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.benchexec
def test_without_clflush_cachestress_says_so_and_the_tool_info_gives_a_status(programs, scratch):
    binary = scratch / "cachestress"
    subprocess.run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-DCACHESTRESS_NO_CLFLUSH",
                    f"-I{programs}", "-o", str(binary), str(REPO / "programs" / "cachestress.c")], check=True)
    done, values = run_program(scratch, "cachestress", INPUTS / "cachestress.txt")
    assert done.returncode == 3
    assert "clflush" in values["unsupported"] and "self-seconds" not in values
    from tool_info.cores import Tool

    run = BaseTool2.Run(["cachestress"], ProcessExitCode(raw=3 << 8, value=3, signal=None), done.stdout.splitlines(), None)
    status = Tool().determine_result(run)
    assert status == "ERROR (clflush needs x86)"


# ---------------------------------------------------------------------------------------------
# tool info


@pytest.mark.benchexec
def test_tool_info_chooses_the_program_per_task_set(programs):
    from tool_info.cores import Tool

    tool = Tool()
    executable = str(programs / "cachestress")
    limits = BaseTool2.ResourceLimits()

    def cmdline(options, input_file):
        return tool.cmdline(executable, options, BaseTool2.Task([input_file], None, None, None), limits)

    assert cmdline(["--workload", "cg", "-x"], "in.txt") == [str(programs / "cg"), "-x", "in.txt"]
    assert cmdline(["--workload=isort"], "in.txt") == [str(programs / "isort"), "in.txt"]
    assert cmdline([], "dir/cg-small.txt")[0] == str(programs / "cg")
    assert cmdline([], "dir/cgx.txt")[0] == str(programs / "cachestress")
    with pytest.raises(UnsupportedFeatureException, match="unknown workload"):
        cmdline(["--workload", "bt"], "in.txt")
    assert set(tool.program_files(executable)) == {str(programs / w) for w in cores.WORKLOADS}


def test_committed_tasks_are_repetitions_in_run_order():
    """Plain `benchexec benchmark-defs/core-heterogeneity.xml` runs 10 repetitions per workload, each its own task
    (BenchExec drops duplicate includes), as analysis.core.tasks writes them; rNNN sorts in run order."""
    import yaml
    from lxml import etree

    from analysis.core.tasks import TASK_TEMPLATE

    definition = REPO / "benchmark-defs" / "core-heterogeneity.xml"
    tree = etree.parse(str(definition))
    assert tree.getroot().get("cpuCores") == "1"
    for block in tree.iter("tasks"):
        tasks = sorted(definition.parent.glob(block.find("include").text))
        assert [t.name for t in tasks] == [f"{block.get('name')}.r{i:03d}.yml" for i in range(1, 11)]
        assert block.find("option").text == block.get("name")  # --workload NAME
        for rep, task in enumerate(tasks, start=1):
            content = yaml.safe_load(task.read_text())
            assert (task.parent / content["input_files"]).resolve() == INPUTS / f"{block.get('name')}.txt"
            assert task.read_text() == TASK_TEMPLATE.format(rep=rep, count=10, input=content["input_files"])


# ---------------------------------------------------------------------------------------------
# plan


def test_plan_interleaves_cores_with_a_rotating_start():
    assert cores.plan([0, 1], 3) == [(1, 0), (1, 1), (2, 1), (2, 0), (3, 0), (3, 1)]
    order = cores.plan([0, 1, 2, 3], 4)
    for r in range(1, 5):
        assert sorted(c for rr, c in order if rr == r) == [0, 1, 2, 3]
    for core in range(4):  # over k rounds each core takes each position once
        positions = [[c for rr, c in order if rr == r].index(core) for r in range(1, 5)]
        assert sorted(positions) == [0, 1, 2, 3]
    assert cores.benchexec_arguments(2, 1) == ["--allowedCores", "1", "--limitCores", "1", "--name", "core1-round2"]
    for bad in (([], 1), ([0, 0], 1), ([0], 0)):
        with pytest.raises(cores.CoresError):
            cores.plan(*bad)


# ---------------------------------------------------------------------------------------------
# statistics on synthetic samples


def synthetic(means, n=300, seed=1, workloads=("cachestress", "cg", "isort"), slow_in=("cachestress", "cg")):
    """Kernel times around 50 ms, lognormal noise (CV 2 %); `means` scales each core in `slow_in`."""
    rng = np.random.default_rng(seed)
    return {w: {c: 0.05 * (m if w in slow_in else 1.0) * rng.lognormal(0, 0.02, n) for c, m in means.items()}
            for w in workloads}


def test_a_core_12_percent_slower_is_found_and_equal_cores_are_similar():
    groups = synthetic({0: 1.0, 1: 1.0, 2: 1.12, 3: 1.0})
    sim = cores.similarity(groups["cg"])
    assert sim.cores == [0, 1, 2, 3] and "Holm over the 6 pairs" in sim.correction
    for i, j in sim.pairs():
        assert sim.similar[i, j] == (2 not in (sim.cores[i], sim.cores[j])), (i, j, sim.p_adjusted[i, j])
    assert sim.ks[0, 2] > 0.9 and sim.ks[0, 1] < 0.2

    ranking = cores.rank(groups)
    entry = ranking["workloads"]["cg"]
    assert entry["order"][-1] == 2
    assert [p["significant"] for p in entry["adjacent"]] == [False, False, True]
    assert entry["slowest_vs_fastest"]["ci_low"] > 1.10
    assert not any(p["significant"] for p in ranking["workloads"]["isort"]["adjacent"])


def test_four_equal_cores_have_no_pair_different_after_correction():
    sim = cores.similarity(synthetic({0: 1.0, 1: 1.0, 2: 1.0, 3: 1.0}, seed=3)["cg"])
    assert all(sim.similar[i, j] for i, j in sim.pairs())
    assert np.all(sim.p_adjusted[~np.eye(4, dtype=bool)] >= cores.ALPHA)


def test_section_on_the_recorded_baremetal_layout_labels_smt_siblings():
    cpus = topology.cpus(MACHINES / "baremetal")
    assert {c.id: c.siblings for c in cpus} == {0: (0, 2), 1: (1, 3), 2: (0, 2), 3: (1, 3)}
    # siblings share a physical core and its caches: CPUs 0/2 fast, 1/3 12 % slower on cache-heavy code
    samples = cores.samples_from_groups(synthetic({0: 1.0, 1: 1.12, 2: 1.0, 3: 1.12}, n=150))
    sec, data = cores.analyse(samples, facts.record(MACHINES / "baremetal"))
    verdicts = {f.claim.split(":")[0] if ":" in f.claim[:12] else f.claim[:20]: f.verdict for f in sec.findings}
    assert verdicts["cachestress"] == verdicts["cg"] == "confirmed"
    assert verdicts["isort"] == "confirmed"
    smt = next(f for f in sec.findings if f.claim.startswith("SMT siblings"))
    assert smt.verdict == "confirmed" and "2 of 2 sibling pairs similar" in smt.evidence
    correlation = next(f for f in sec.findings if "correlate" in f.claim)
    assert correlation.verdict == "confirmed" and "4 cores" in correlation.evidence
    energy = next(f for f in sec.findings if "energy" in f.claim)
    assert energy.verdict == "not testable here" and "RAPL" in energy.evidence
    pairs = next(t for t in sec.tables if t.title.startswith("Core similarity"))
    siblings = {(r[1], r[2]) for r in pairs.rows if r[0] == "cg" and r[3] == "yes"}
    assert siblings == {(0, 2), (1, 3)}
    assert all(f.verdict in VERDICTS for f in sec.findings)
    assert data["ranking"]["workloads"]["cg"]["order"][:2] in ([0, 2], [2, 0])
    assert all(fig.png.startswith(b"\x89PNG") for fig in sec.figures) and len(sec.figures) == 4


def test_two_core_vm_layout_cannot_test_siblings_or_correlation():
    sec, _ = cores.analyse(cores.samples_from_groups(synthetic({0: 1.0, 1: 1.0})), facts.record(MACHINES / "vm-2core"))
    untestable = {f.claim[:20] for f in sec.findings if f.verdict == "not testable here"}
    assert any(c.startswith("SMT siblings") for c in untestable)
    assert any(c.startswith("cg and the cache") for c in untestable)
    assert any("virtual machine" in w for w in sec.warnings)  # the recorded VM's cpuinfo has the hypervisor flag


# ---------------------------------------------------------------------------------------------
# recorded real results (the quick preset on the 2-core VM)


def recorded_files():
    return sorted(DATA.glob("core-heterogeneity.core*-round*.results.pinned.xml.bz2"))


def test_section_from_recorded_results():
    files = recorded_files()
    assert len(files) == 6  # 2 cores x 3 rounds
    tables = results.load_results(files, cores.COLUMNS)
    samples = cores.collect(tables)
    assert set(samples.assigned.tolist()) == {0, 1}
    assert np.array_equal(samples.core[samples.reason == ""], samples.assigned[samples.reason == ""])
    sec, data = cores.section(tables, facts.record(MACHINES / "vm-2core"))
    assert data["cores"] == [0, 1] and data["rounds"] == [1, 2, 3]
    # 12 repetitions per invocation, 2 warm-ups dropped, 3 rounds: 30 per workload and core
    assert all(s["n"] + s["excluded"] == 30 for w in data["workloads"].values() for s in w["summary"])
    assert data["warmups_dropped"] == 2 * 3 * 2 * 3
    assert {f.verdict for f in sec.findings} <= set(VERDICTS)
    assert len(data["workloads"]["cg"]["similarity"]["pairs"]) == 1


def test_table_config_puts_cores_side_by_side(scratch):
    cg_files = sorted(DATA.glob("core-heterogeneity.core*-round1.*.results.pinned.cg.xml.bz2"))
    assert len(cg_files) == 2
    done = subprocess.run(["table-generator", "-x", str(REPO / "table-configs" / "core-heterogeneity.xml"), "-o",
                           str(scratch), "-n", "cg", "-f", "csv", "-q", *map(str, cg_files)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    rows = [line.split("\t") for line in (scratch / "cg.table.csv").read_text().splitlines()]
    header = next(r for r in rows if "CPU at start" in r)
    starts = [i for i, title in enumerate(header) if title == "CPU at start"]
    assert len(starts) == 2
    data = [r for r in rows if r[0].startswith("cg.r")]
    assert len(data) == 12
    assert {tuple(r[i] for i in starts) for r in data} == {("0", "1")}


# ---------------------------------------------------------------------------------------------
# ranking files and pinning


@pytest.mark.benchexec
def test_rank_command_writes_the_ranking(scratch, capsys):
    out = scratch / "ranking.json"
    assert cores_pinning.rank_command([str(f) for f in recorded_files()], out) == 0
    ranking = json.loads(out.read_text())
    assert set(ranking["workloads"]) == set(cores.WORKLOADS)
    assert sorted(ranking["workloads"]["cg"]["order"]) == [0, 1]
    assert ranking["boot_time"] == read_boot_time() and ranking["alpha"] == cores.ALPHA
    assert "ranking written to" in capsys.readouterr().out
    with pytest.raises(cores.CoresError, match="no such file"):
        cores_pinning.rank_command([str(DATA / "missing.xml.bz2")], scratch / "x.json")
    with pytest.raises(cores.CoresError, match="no counted runs of tool_info.cores"):
        cores_pinning.rank_command([str(REPO / "tests" / "data" / "calculatepi-real.results.xml.bz2")], scratch / "x.json")


def fresh_ranking(path, fastest_first):
    groups = {"cachestress": {c: 0.05 * (1 + 0.1 * i) * np.ones(5) + np.arange(5) * 1e-4
                              for i, c in enumerate(fastest_first)}}
    return cores_pinning.save_ranking(cores.rank(groups), path)


@pytest.mark.benchexec
def test_pin_refuses_without_a_ranking(scratch):
    with pytest.raises(cores.CoresError, match="no core ranking at .*timekit cores rank"):
        cores_pinning.pin_command(1, scratch / "none.json", ["true"])


@pytest.mark.benchexec
def test_pin_refuses_a_ranking_older_than_the_boot(scratch):
    path = fresh_ranking(scratch / "ranking.json", [0])
    created = json.loads(path.read_text())["created_epoch"]
    with pytest.raises(cores.CoresError, match="before this machine's boot"):
        cores_pinning.pin_command(1, path, ["true"], boot_time=created + 60)
    ranking = json.loads(path.read_text())
    ranking["measured_from"] = read_boot_time() - 3600  # results from before the boot
    path.write_text(json.dumps(ranking))
    with pytest.raises(cores.CoresError, match="before this machine's boot"):
        cores_pinning.pin_command(1, path, ["true"])


@pytest.mark.benchexec
def test_pin_refuses_bad_k_and_other_hosts(scratch):
    path = fresh_ranking(scratch / "ranking.json", [0])
    for k in (0, 2):
        with pytest.raises(cores.CoresError, match="-k must be between 1 and 1"):
            cores_pinning.pin_command(k, path, ["true"])
    with pytest.raises(cores.CoresError, match="no command"):
        cores_pinning.pin_command(1, path, [])
    ranking = json.loads(path.read_text())
    ranking["host"] = platform.node() + "-elsewhere"
    path.write_text(json.dumps(ranking))
    with pytest.raises(cores.CoresError, match="made on host"):
        cores_pinning.pin_command(1, path, ["true"])


@pytest.mark.skipif(not TWO_CPUS, reason="needs CPU 1")
@pytest.mark.benchexec
def test_run_pins_the_command_to_the_fastest_cores(scratch, capfd, monkeypatch):
    path = fresh_ranking(scratch / "ranking.json", [1, 0])
    argv = cores_pinning.pin_command(1, path, ["true"])
    assert argv[-1] == "true" and "1" in argv and "0" not in argv[:-1]
    monkeypatch.setattr(cores_pinning, "RANKING", path)
    probe = [sys.executable, "-c", "import os; print('affinity', sorted(os.sched_getaffinity(0)))"]
    assert cores_pinning.run_command(1, probe) == 0
    assert cores_pinning.run_command(2, probe) == 0
    out = capfd.readouterr().out.splitlines()
    assert out == ["affinity [1]", "affinity [0, 1]"]
    assert cores_pinning.run_command(1, [sys.executable, "-c", "raise SystemExit(7)"]) == 7


# ---------------------------------------------------------------------------------------------
# a real benchexec run on an assigned core


@pytest.mark.skipif(not TWO_CPUS, reason="needs CPU 1")
def test_benchexec_runs_every_run_on_the_allowed_core(programs, scratch):
    experiment = Experiment(name="core-heterogeneity", benchmark=REPO / "benchmark-defs" / "core-heterogeneity.xml",
                            table=REPO / "table-configs" / "core-heterogeneity.xml",
                            task_dir=REPO / "programs" / "tasks" / "core-heterogeneity" / "reps",
                            inputs=tuple(INPUTS / f"{w}.txt" for w in cores.WORKLOADS), rundefinitions=("pinned",))
    definition = write_sweep_benchmark(experiment, 3, scratch)
    code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(definition),
                                 *cores.benchexec_arguments(1, 1), "--outputpath", str(scratch) + "/",
                                 "--numOfThreads", "1"])
    assert code == 0, output
    files = sorted(scratch.glob("core-heterogeneity.core1-round1.*.results.pinned.xml.bz2"))
    assert len(files) == 1
    table = results.load_result(files[0])
    assert table.status.tolist() == ["done"] * 9
    assert table.columns["cpu-start"].tolist() == [1.0] * 9
    assert table.columns["cpu-end"].tolist() == [1.0] * 9
    sec, data = cores.section([table], facts.record(), warmups=1)
    assert data["cores"] == [1]
    assert [s["n"] + s["excluded"] for w in cores.WORKLOADS for s in data["workloads"][w]["summary"]] == [2, 2, 2]
    assert {f.verdict for f in sec.findings if "faster" in f.claim} == {"not testable here"}


def test_cli_cores_rank_and_run(tmp_path):
    """`timekit cores rank` on recorded results writes a ranking; `cores run` refuses without one
    (one line, exit 2) and runs a command on the fastest core with it."""
    import subprocess
    import sys

    def timekit(*args):
        return subprocess.run([sys.executable, "-m", "analysis.cli", "cores", *map(str, args)], cwd=REPO,
                              capture_output=True, text=True)

    ranking = tmp_path / "ranking.json"
    refused = timekit("run", "-k", "1", "--ranking", ranking, "--", "true")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    ranked = timekit("rank", Path(__file__).parent / "data" / "cores", "--output", ranking)
    assert ranked.returncode == 0 and ranking.exists(), ranked.stdout + ranked.stderr
    assert "cg:" in ranked.stdout
    # the recorded results may predate this machine's boot; make them look measured just now
    data = json.loads(ranking.read_text())
    import time

    data["created_epoch"] = data["measured_from"] = time.time()
    ranking.write_text(json.dumps(data))
    ran = timekit("run", "-k", "1", "--ranking", ranking, "--", "sh", "-c", "grep Cpus_allowed_list /proc/self/status")
    assert ran.returncode == 0, ran.stderr
    assert len(ran.stdout.split(":")[1].strip().split(",")) == 1
