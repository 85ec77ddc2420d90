"""The environment probes, on recorded copies of a bare-metal machine and of this 2-core VM."""

from pathlib import Path

import pytest

from analysis.core.lists import parse_int_list
from analysis.machine import environment, settings

DATA = Path(__file__).resolve().parent / "data" / "machines"


def probes(machine):
    return {p.name: p for p in environment.check(DATA / machine)}


def test_bare_metal_layout():
    p = probes("baremetal")
    assert p["CPU model"].value == "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz"
    assert p["online CPUs"].value == "4 (0-3)"
    assert p["virtualization"].verdict == "good" and "Dell Inc. OptiPlex 7060" in p["virtualization"].value
    assert (p["SMT"].value, p["SMT"].verdict) == ("on", "noisy")
    # mixed governors are listed, and not good
    assert (p["frequency governor"].value, p["frequency governor"].verdict) == ("performance, powersave", "noisy")
    assert (p["turbo/boost"].value, p["turbo/boost"].verdict) == ("on", "noisy")
    assert (p["ASLR"].value, p["ASLR"].verdict) == ("2", "noisy")
    assert p["load average"].value == "3.52 2.10 1.05 (5 runnable)" and p["load average"].verdict == "noisy"
    assert p["kernel"].value == "6.1.0-18-amd64"
    assert (p["frequency range"].value, p["frequency range"].verdict) == ("0.8-4.6 GHz", "noisy")
    assert p["isolated CPUs"].value == "isolated: 2-3, nohz_full: 2-3" and p["isolated CPUs"].verdict == "good"
    assert (p["transparent huge pages"].value, p["transparent huge pages"].verdict) == ("always", "noisy")
    assert p["swap"].value == "2047 MiB, 1023 MiB used, 12288 pages swapped since boot" and p["swap"].verdict == "noisy"
    assert p["perf sample rate"].value == "50000 Hz"
    assert (p["IRQ balancing"].value, p["IRQ balancing"].verdict) == ("irqbalance running", "noisy")
    assert (p["clock source"].value, p["clock source"].verdict) == ("hpet", "noisy")


def test_this_vm_layout():
    p = probes("vm-2core")
    assert p["virtualization"].value.startswith("virtual machine") and p["virtualization"].verdict == "noisy"
    assert p["SMT"].value == "not supported"
    assert p["frequency governor"].value == "no cpufreq" and p["frequency governor"].verdict == "unknown"
    assert p["turbo/boost"].value == "unknown"
    assert p["ASLR"].value == "2"
    assert p["online CPUs"].value.startswith("2 ")
    assert p["frequency range"].value == "unknown"
    assert p["isolated CPUs"].value == "isolated: none, nohz_full: unknown"
    assert p["transparent huge pages"].value == "madvise"
    assert p["swap"].verdict == "good" and p["IRQ balancing"].value == "no irqbalance"
    assert p["clock source"].value == "tsc"


def test_unreadable_files_say_unknown_never_guess(tmp_path):
    p = probes(tmp_path)  # an empty root: nothing readable
    for name in ("CPU model", "online CPUs", "kernel", "virtualization", "SMT", "ASLR", "load average", "turbo/boost",
                 "frequency range", "isolated CPUs", "transparent huge pages", "swap", "perf sample rate",
                 "IRQ balancing", "clock source"):
        assert p[name].value == "unknown", name


def test_odd_content_is_unknown_not_a_crash(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "loadavg").write_text("garbage\n")
    (tmp_path / "proc" / "meminfo").write_text("MemTotal: 1 kB\n")  # no swap lines
    (tmp_path / "proc" / "vmstat").write_text("pswpin 0\n")
    p = probes(tmp_path)
    assert p["load average"].value == "unknown" and p["swap"].value == "unknown"


def test_the_kernels_list_syntax():
    assert parse_int_list("0-3,8,10-11") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_int_list("") == [] and parse_int_list("5\n") == [5]
    with pytest.raises(ValueError):
        parse_int_list("3-1")


def test_every_tunable_setting_is_also_checked_under_the_same_name():
    """One description per setting: what env tune changes, env check reports."""
    checked = {p.name for p in environment.check(DATA / "baremetal")}
    tunable = [s.name for s in settings.SETTINGS if s.knobs]
    assert {"SMT", "frequency governor", "turbo/boost", "ASLR", "perf sample rate"} <= set(tunable) <= checked
