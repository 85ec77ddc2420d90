"""env tune / env restore on a copy of a recorded bare-metal layout, and refusals on this VM."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from analysis import cli
from analysis.machine import tuning

MACHINES = Path(__file__).parent / "data" / "machines"


@pytest.fixture
def machine(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(MACHINES / "baremetal", root)
    return root


def read(root, path):
    return (root / path.lstrip("/")).read_text().strip()


def test_tune_saves_state_first_reports_each_change_and_restore_undoes_it(machine, tmp_path):
    state, lines = tmp_path / "state.json", []
    tuning.tune(machine, state, euid=0, out=lines.append)
    assert read(machine, "/sys/devices/system/cpu/smt/control") == "off"
    assert read(machine, "/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor") == "performance"
    assert read(machine, "/sys/devices/system/cpu/intel_pstate/no_turbo") == "1"
    assert read(machine, "/proc/sys/kernel/randomize_va_space") == "0"
    saved = json.loads(state.read_text())
    assert saved["/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"] == "powersave"
    assert saved["/proc/sys/kernel/randomize_va_space"] == "2"
    assert "/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor" not in saved  # was already performance
    assert any(line.startswith("set SMT: /sys/devices/system/cpu/smt/control on -> off") for line in lines)
    assert any("skipped turbo/boost: not on this machine: no cpufreq boost switch" in line for line in lines)

    tuning.restore(machine, state, euid=0, out=lines.append)
    assert read(machine, "/sys/devices/system/cpu/smt/control") == "on"
    assert read(machine, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") == "powersave"
    assert read(machine, "/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor") == "performance"
    assert read(machine, "/proc/sys/kernel/perf_event_max_sample_rate") == "50000"
    assert not state.exists()


def test_second_tune_keeps_the_original_state_and_restore_is_idempotent(machine, tmp_path):
    state = tmp_path / "state.json"
    tuning.tune(machine, state, euid=0, out=lambda line: None)
    (machine / "proc/sys/kernel/randomize_va_space").write_text("1\n")  # someone changed it in between
    tuning.tune(machine, state, euid=0, out=lambda line: None)
    assert json.loads(state.read_text())["/proc/sys/kernel/randomize_va_space"] == "2"
    tuning.restore(machine, state, euid=0, out=lambda line: None)
    lines = []
    tuning.restore(machine, state, euid=0, out=lines.append)
    assert lines == [f"nothing to restore: no saved state in {state}"]
    assert read(machine, "/proc/sys/kernel/randomize_va_space") == "2"


def test_tune_refuses_when_nothing_can_be_set(machine, tmp_path):
    state = tmp_path / "state.json"
    tuning.tune(machine, state, euid=0, out=lambda line: None)
    with pytest.raises(tuning.TuneError, match="nothing to tune"):
        tuning.tune(machine, state, euid=0, out=lambda line: None)


def test_needs_root(machine, tmp_path):
    with pytest.raises(tuning.TuneError, match="need root"):
        tuning.tune(machine, tmp_path / "state.json", euid=1000)


def test_this_vm_has_no_cpufreq_or_smt_to_tune():
    changes, left = tuning.plan("/")
    reasons = {knob.name: reason for knob, reason in left}
    assert "no cpufreq" in reasons["frequency governor"]
    assert "notsupported" in reasons["SMT"]
    assert all(setting.name not in ("frequency governor", "SMT") for setting, *_ in changes)


def test_cli_refuses_without_root_in_one_line(tmp_path):
    """A forked child drops to user nobody and runs the real CLI (the interpreter lives below
    /root here, so a fresh process as nobody could not even start Python)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to drop privileges")
    err = tmp_path / "stderr"
    pid = os.fork()
    if pid == 0:  # child
        code = 3
        try:
            with open(err, "w") as stream:
                sys.stderr = stream
                os.setgid(65534)
                os.setuid(65534)
                code = cli.main(["env", "tune"])
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2
    text = err.read_text()
    assert text.count("\n") == 1 and "need root" in text, text
