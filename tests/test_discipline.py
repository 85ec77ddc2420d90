"""The measurement-discipline experiment: its plan, the runner's pinned and niced competitor, a real
sweep under benchexec, and the within/between-run statistics and warnings."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from analysis.experiments.discipline import variation
from analysis.experiments import discipline as experiment
from analysis.machine import scheduling
from analysis.sweep import runner

REPO = Path(__file__).resolve().parent.parent
PRESET = experiment.EXPERIMENT.presets["quick"]


def test_plan_interleaves_conditions_in_every_rerun_and_pins_the_measured_runs():
    steps = experiment.plan(PRESET, [0, 1])
    assert len(steps) == 5 * PRESET.reruns
    assert [s.condition for s in steps[:5]] == ["unpinned", "alone", "separate-cores", "same-core", "same-core-niced"]
    assert [s.rerun for s in steps[::5]] == list(range(1, PRESET.reruns + 1))
    by = {s.condition: s for s in steps[:5]}
    assert by["unpinned"].benchexec_args == [] and by["unpinned"].load == 0
    assert by["alone"].benchexec_args == ["--allowedCores", "0", "--limitCores", "1"]
    assert by["separate-cores"].load_cpus == [1] and by["same-core"].load_cpus == [0]
    assert by["same-core-niced"].load_nice == 19 and by["same-core"].load_nice == 0
    assert len({s.name for s in steps}) == len(steps)


def test_conditions_rotate_per_rerun_so_none_always_runs_first():
    steps = experiment.plan(PRESET, [0, 1])
    firsts = [next(s.condition for s in steps if s.rerun == r) for r in range(1, PRESET.reruns + 1)]
    assert firsts == ["unpinned", "alone", "separate-cores", "same-core", "same-core-niced"][:PRESET.reruns]
    for r in range(1, PRESET.reruns + 1):
        assert sorted(s.condition for s in steps if s.rerun == r) == sorted(steps[i].condition for i in range(5))


def test_one_cpu_has_no_separate_cores_condition():
    steps = experiment.plan(PRESET, [3])
    assert "separate-cores" not in {s.condition for s in steps}
    assert steps[1].benchexec_args == ["--allowedCores", "3", "--limitCores", "1"]


@pytest.mark.benchexec
def test_background_load_is_pinned_and_niced(programs):
    with runner.BackgroundLoad(1, cpus=[1], nice=19) as load:
        pid = load.processes[0].pid
        time.sleep(0.1)
        status = Path(f"/proc/{pid}/status").read_text()
        nice = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
        # its own process group (killed as one), but the runner's session: the autogroup benchexec's runs get
        session, group = os.getsid(pid), os.getpgid(pid)
        place = scheduling.of_process(pid)
    assert "Cpus_allowed_list:\t1\n" in status
    assert nice == 19
    assert session == os.getsid(0) and group == pid != os.getpgid(0)
    assert place == scheduling.of_process(os.getpid())
    assert load.processes == [] and not Path(f"/proc/{pid}").exists()


# /proc/PID/cgroup as read on a cgroup-v1 host (hybrid: cgroup2 mounted too) and on a v2 one
V1_RUN = ("9:name=systemd:/\n7:blkio:/benchmark_x/delegate_y\n4:memory:/benchmark_z/delegate_w\n"
          "2:cpuacct:/benchmark_a/delegate_b\n1:cpu:/\n0::/\n")
V1_SHELL = "9:name=systemd:/\n7:blkio:/\n4:memory:/\n2:cpuacct:/\n1:cpu:/\n0::/\n"
V2 = "0::/user.slice/user-1000.slice/session-2.scope\n"


def test_scheduling_groups_are_read_from_proc():
    assert scheduling.parse(V1_RUN, "/autogroup-973 nice 0\n") == {"cpu_cgroup": "/", "cgroups": "v1",
                                                                   "autogroup": "/autogroup-973"}
    assert scheduling.parse("3:cpu,cpuacct:/user.slice\n", "")["cpu_cgroup"] == "/user.slice"
    assert scheduling.parse(V2, "") == {"cpu_cgroup": "/user.slice/user-1000.slice/session-2.scope", "cgroups": "v2",
                                        "autogroup": None}


def test_nice_can_act_only_between_tasks_of_one_scheduling_group():
    def step(switch, competitor, run):
        return {"sched_autogroup_enabled": switch, "competitor": scheduling.parse(*competitor),
                "run": scheduling.parse(*run)}

    same = step("1", (V1_SHELL, "/autogroup-5 nice 0"), (V1_RUN, "/autogroup-5 nice 0"))
    own_session = step("1", (V1_SHELL, "/autogroup-6 nice 0"), (V1_RUN, "/autogroup-5 nice 0"))
    autogroups_off = step("0", (V1_SHELL, "/autogroup-6 nice 0"), (V1_RUN, "/autogroup-5 nice 0"))
    own_cgroup = step("0", ("1:cpu:/runner\n", ""), (V1_RUN, ""))
    v2 = step("1", (V2, "/autogroup-5 nice 0"), ("0::/\n", "/autogroup-5 nice 0"))
    assert scheduling.nice_can_act(same)[0] is True
    can, why = scheduling.nice_can_act(own_session)
    assert can is False and "/autogroup-6" in why and "sched_autogroup_enabled = 1" in why
    assert scheduling.nice_can_act(autogroups_off)[0] is True  # autogroups matter only where they are on
    assert scheduling.nice_can_act(own_cgroup)[0] is False
    assert scheduling.nice_can_act(v2)[0] is None and scheduling.nice_can_act(None)[0] is None


def test_variation_separates_within_from_between_runs():
    rng = np.random.default_rng(1)
    same = np.concatenate([rng.normal(1.0, 0.01, 30) for _ in range(5)])
    shifted = np.concatenate([rng.normal(1.0 + 0.03 * k, 0.01, 30) for k in range(5)])
    reruns = np.repeat(np.arange(1, 6), 30)
    flat, drifting = variation.variation(same, reruns), variation.variation(shifted, reruns)
    # theta = 1 + n var(between) / var(within): its interval holds 1 for the flat reruns, not for the drifting ones
    assert flat["rerun_effect"]["low"] < 1 < flat["rerun_effect"]["high"]
    assert drifting["rerun_effect"]["low"] > 10 and drifting["rerun_effect"]["unit"] == "reruns"
    assert drifting["between_cv"] > 5 * flat["between_cv"]
    assert all(abs(s["cv"] - 0.01) < 0.005 for s in drifting["per_rerun"].values())


def test_rule_warnings_name_each_broken_rule():
    def condition(n, reruns, cv):
        return {"variation": {"per_rerun": {r: {"n": n} for r in range(1, reruns + 1)}}, "wall": {"cv": cv}}

    quiet = variation.rule_warnings({"alone": condition(30, 5, 0.01)}, {"alone": [1, 2, 3, 4, 5]})
    assert quiet == []
    loud = variation.rule_warnings({"alone": condition(10, 2, 0.2)}, {"alone": [1, 2]})
    assert len(loud) == 3
    assert "N = 30" in loud[0] and "M = 5" in loud[1] and "20.0%" in loud[2]


def test_sweep_under_benchexec_gives_the_section(programs, scratch):
    out = scratch / "discipline"
    done = subprocess.run([sys.executable, "-m", "analysis.cli", "run", "discipline", "--reps", "3", "--reruns", "2",
                           "--output", str(out)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    sweep = json.loads((out / "sweep.json").read_text())
    assert [s["status"] for s in sweep["steps"]] == ["done"] * 10
    assert (out / "tables" / "discipline.table.html").exists()
    report = json.loads((out / "report" / "report.json").read_text())
    data = report["data"]["discipline"]
    assert set(data["conditions"]) == {"unpinned", "alone", "separate-cores", "same-core", "same-core-niced"}
    alone = data["conditions"]["alone"]
    assert alone["wall"]["n"] == 6 and set(alone["variation"]["per_rerun"]) == {"1", "2"}
    # a competitor on the same CPU shares it by time slicing: wall time well above CPU time
    same = data["conditions"]["same-core"]
    assert same["wall"]["mean"] > 1.3 * same["cpu"]["mean"]
    warnings = [w["warning"] for w in report["warnings"] if w["section"] == "discipline"]
    assert any("N = 30" in w for w in warnings) and any("M = 5" in w for w in warnings)
    claims = {f["claim"][:30]: f["verdict"] for f in report["findings"] if f["section"] == "discipline"}
    assert claims["Disabling dynamic frequency sc"] == "not testable here"
    # every niced step records whether nice could act; the finding follows the record, not this machine
    niced = [s["scheduling"] for s in sweep["steps"] if s["condition"] == "same-core-niced"]
    assert len(niced) == 2 and all(set(s) == {"sched_autogroup_enabled", "competitor", "run"} for s in niced)
    assert niced[0]["competitor"]["cpu_cgroup"] and niced[0]["run"]["cpu_cgroup"]
    assert all(s["scheduling"] is None for s in sweep["steps"] if s["condition"] != "same-core-niced")
    testable = all(scheduling.nice_can_act(s)[0] for s in niced)
    assert (claims["Priority helps: a competitor a"] != "not testable here") == testable
