"""CPU topology and caches from /sys, on recorded layouts and on this machine."""

from pathlib import Path

import pytest

from analysis.machine import topology

MACHINES = Path(__file__).parent / "data" / "machines"


@pytest.mark.parametrize("text, cpus", [("0-3,8,10-11", [0, 1, 2, 3, 8, 10, 11]), ("5", [5]), ("", []), ("0-1\n", [0, 1])])
def test_cpu_lists(text, cpus):
    assert topology.parse_cpu_list(text) == cpus


@pytest.mark.parametrize("text, size", [("32K", 32768), ("1024K", 1 << 20), ("12M", 12 << 20), ("512", 512)])
def test_cache_sizes(text, size):
    assert topology.parse_size(text) == size


def test_baremetal_smt_siblings_and_shared_caches():
    cpus = topology.cpus(MACHINES / "baremetal")
    assert [c.id for c in cpus] == [0, 1, 2, 3]
    assert cpus[0].siblings == (0, 2) and cpus[3].siblings == (1, 3)
    assert cpus[2].core == 0 and cpus[2].package == 0
    l3 = [c for c in cpus[1].caches if c.level == 3][0]
    assert l3.shared_with == (0, 1, 2, 3) and l3.size == 12 << 20
    assert topology.data_cache_sizes(0, MACHINES / "baremetal") == {1: 48 << 10, 2: 1280 << 10, 3: 12 << 20}


def test_vm_without_smt():
    cpus = topology.cpus(MACHINES / "vm-2core")
    assert [c.siblings for c in cpus] == [(0,), (1,)]
    assert topology.last_level_cache(1, MACHINES / "vm-2core") == 32 << 20


def test_missing_files_are_none_not_guesses(tmp_path):
    (tmp_path / "sys/devices/system/cpu").mkdir(parents=True)
    (tmp_path / "sys/devices/system/cpu/online").write_text("0\n")
    [cpu] = topology.cpus(tmp_path)
    assert cpu.package is None and cpu.core is None and cpu.caches == () and cpu.siblings == (0,)
    assert topology.last_level_cache(0, tmp_path) is None


def test_this_machine_has_a_data_cache():
    assert topology.cpus() and topology.last_level_cache() > 0
