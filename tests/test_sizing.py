"""Sizes that fit the run (tool_info/sizing.py): the pure rule on recorded machines (the Intel VM
that reports a 480 MiB L3, the AMD EPYC VM the kit is developed on, a small fake machine), the
programs computing the same sizes, the sweep's raised memory limit, and real benchexec runs
whose LLC is too large for their limit: they finish, and the section says what they reached."""

import json
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import pytest
from benchexec.util import parse_memory_value
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from analysis.core import fmt, results
from analysis.core.tasks import write_repetitions
from analysis.experiments.memory_bandwidth import analyse as bandwidth
from analysis.sweep import lint, memory
from tests.helpers import run_isolated
from tool_info import sizing

REPO = Path(__file__).resolve().parent.parent
INTEL = REPO / "tests" / "data" / "machines" / "intel-vm-2026-11-25"
MiB, GB = 2**20, 10**9


def committed_limit(name):
    return int(parse_memory_value(etree.parse(str(REPO / "benchmark-defs" / f"{name}.xml")).getroot().get("memlimit")))


STREAM_LIMIT, CURVES_LIMIT = committed_limit("memory-bandwidth"), committed_limit("os-microbench")


def intel_facts():
    """(LLC, MemAvailable) of the Intel VM as its demo recorded them: the sweep's caches, caches.txt's meminfo."""
    caches = json.loads((INTEL / "memory-bandwidth" / "sweep.json").read_text())["machine"]["caches"]
    return caches[max(caches, key=int)], sizing.mem_available((INTEL / "caches.txt").read_text())


# the AMD EPYC VM the kit is developed on (2 vCPUs, L3 32 MiB, 24 GiB), recorded 2026-11-25
EPYC_LLC, EPYC_AVAILABLE = 32 * MiB, 23909784 * 1024
# a small machine: a 64 MiB LLC, 300 MiB available
SMALL_LLC, SMALL_AVAILABLE = 64 * MiB, 300 * MiB


def test_intel_vm_facts_are_the_recorded_ones():
    llc, available = intel_facts()
    assert llc == 480 * MiB and available == 24173840 * 1024


def test_intel_vm_under_the_committed_limits_runs_what_fits_and_says_it_is_short_of_memory():
    """Plain benchexec on the committed definitions: 4 x 480 MiB arrays (5.6 GiB) did not fit 2 GB
    and every run ended OUT OF MEMORY; now the arrays are what the budget holds."""
    llc, available = intel_facts()
    budget = sizing.budget(STREAM_LIMIT, available)
    assert budget == STREAM_LIMIT - sizing.reserve(STREAM_LIMIT)  # the limit binds, not the machine
    stream = sizing.fit(sizing.STREAM, llc, budget)
    assert stream.wanted == 4 * llc and stream.size < stream.wanted and not stream.reached
    assert 3 * stream.size <= budget < 3 * stream.size + 3 * sizing.LINE  # all of the budget, in whole lines
    curves = sizing.fit(sizing.CURVES, llc, sizing.budget(CURVES_LIMIT, available))
    assert curves.size * Fraction(17, 16) + 2 * MiB <= curves.budget and not curves.reached


def test_intel_vm_sweep_raises_the_limit_to_what_4x_the_llc_needs():
    llc, available = intel_facts()
    for buffers, committed in ((sizing.STREAM, STREAM_LIMIT), (sizing.CURVES, CURVES_LIMIT)):
        limit = sizing.limit_for(buffers, llc, available, committed)
        fit = sizing.fit(buffers, llc, sizing.budget(limit, available))
        assert committed < limit and fit.size == fit.wanted == 4 * llc and fit.reached
        assert buffers.need(llc) <= fit.budget  # what the buffers take fits the budget of the raised limit
        assert sizing.budget(limit - 1, available) < buffers.need(llc)  # and not one byte of limit more than needed
    assert sizing.limit_for(sizing.STREAM, llc, available, STREAM_LIMIT) < available / 2 + 200 * MiB


def test_this_machine_keeps_the_committed_limits_and_reaches_memory():
    for buffers, committed in ((sizing.STREAM, STREAM_LIMIT), (sizing.CURVES, CURVES_LIMIT)):
        assert sizing.limit_for(buffers, EPYC_LLC, EPYC_AVAILABLE, committed) == committed
        fit = sizing.fit(buffers, EPYC_LLC, sizing.budget(committed, EPYC_AVAILABLE))
        assert fit.size == 4 * EPYC_LLC == 128 * MiB and fit.reached


def test_a_small_machine_caps_by_its_available_memory_not_the_limit():
    budget = sizing.budget(STREAM_LIMIT, SMALL_AVAILABLE)
    assert budget == SMALL_AVAILABLE // 2  # half of MemAvailable, far below the 2 GB limit
    stream = sizing.fit(sizing.STREAM, SMALL_LLC, budget)
    assert stream.size == 50 * MiB and not stream.reached  # 150 MiB over 3 arrays, short of 4 x 64 MiB
    assert sizing.limit_for(sizing.STREAM, SMALL_LLC, SMALL_AVAILABLE, STREAM_LIMIT) == STREAM_LIMIT  # nothing to raise
    curves = sizing.fit(sizing.CURVES, SMALL_LLC, sizing.budget(CURVES_LIMIT, SMALL_AVAILABLE))
    assert 2 * SMALL_LLC <= curves.size < 4 * SMALL_LLC and curves.reached  # the curve still reaches memory
    assert sizing.budget(None, None) is None and sizing.fit(sizing.STREAM, SMALL_LLC, None).size == 4 * SMALL_LLC
    assert sizing.budget(16 * MiB, None) == 0  # a limit smaller than the reserve leaves nothing


@settings(max_examples=300, deadline=None)
@given(llc=st.integers(64 * 1024, 8 * 2**30), limit=st.one_of(st.none(), st.integers(1, 2**40)),
       available=st.one_of(st.none(), st.integers(1, 2**42)))
def test_the_buffers_never_take_more_than_the_limit_less_its_reserve_or_half_the_machine(llc, limit, available):
    for buffers in (sizing.STREAM, sizing.CURVES):
        budget = sizing.budget(limit, available)
        fit = sizing.fit(buffers, llc, budget)
        assert 0 <= fit.size <= fit.wanted and fit.size % sizing.LINE == 0
        if budget is not None and fit.size:
            assert fit.size * buffers.per_byte + buffers.slack <= budget
            assert limit is None or budget <= limit - sizing.reserve(limit)
            assert available is None or budget <= available // 2
        raised = sizing.limit_for(buffers, llc, available, limit)
        assert (raised is None) == (limit is None) and (raised is None or raised >= limit)
        if raised is not None and available and raised > limit:
            assert sizing.budget(raised, None) <= max(buffers.need(llc), available // 2)


def test_meminfo_is_read_in_bytes():
    assert sizing.mem_available("MemTotal:  100 kB\nMemAvailable:    2048 kB\n") == 2 * MiB
    assert sizing.mem_available("MemTotal:  100 kB\n") is None


def test_tool_info_passes_the_budget_of_the_runs_limit(monkeypatch):
    from tool_info import osbench

    monkeypatch.setattr(sizing, "read_mem_available", lambda: 24173840 * 1024)
    task = SimpleNamespace(input_files_or_identifier=["in.txt"])
    limits = SimpleNamespace(memory=CURVES_LIMIT)
    assert osbench.Tool().cmdline("osbench", [], task, limits) == [
        "osbench", f"budget-bytes={CURVES_LIMIT - sizing.reserve(CURVES_LIMIT)}", "in.txt"]
    monkeypatch.setattr(sizing, "read_mem_available", lambda: None)
    assert osbench.Tool().cmdline("osbench", [], task, None) == ["osbench", "in.txt"]  # nothing known, nothing capped


# ---------------------------------------------------------------------------------------------
# the programs compute the same sizes


def _values(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def _run(program, budget, params, scratch):
    path = scratch / "params.txt"
    path.write_text(params)
    return subprocess.run([str(program), f"budget-bytes={budget}", str(path)], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("llc,budget", [(16 * MiB, 30 * MiB), (1 * MiB, 12 * MiB + 100), (8 * MiB, 200_000_003)])
@pytest.mark.benchexec
def test_stream_arrays_are_what_sizing_says(programs, scratch, llc, budget):
    done = _run(programs / "stream", budget, f"trials=2\nllc-bytes={llc}\n", scratch)
    assert done.returncode == 0, done.stderr
    out = _values(done.stdout)
    assert int(out["array-bytes"].rstrip("B")) == sizing.fit(sizing.STREAM, llc, budget).size
    assert int(out["budget-bytes"].rstrip("B")) == budget and out["checksum-ok"] == "1"


@pytest.mark.benchexec
def test_stream_refuses_a_budget_that_holds_no_array_in_one_line(programs, scratch):
    done = _run(programs / "stream", 3000, "trials=2\nllc-bytes=1048576\n", scratch)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "budget-bytes=3000" in done.stderr
    done = subprocess.run([str(programs / "stream"), "budget-bytes=lots", "x"], capture_output=True, text=True)
    assert done.returncode == 2 and "expected budget-bytes=BYTES" in done.stderr


def largest_grid_point(limit, per_octave):
    """osbench's sizes: powers of two, and 1.5 x them at two sizes per octave."""
    best, p = 0, 1
    while p <= limit:
        best = p + p // 2 if per_octave == 2 and p + p // 2 <= limit else p
        p *= 2
    return best


@pytest.mark.parametrize("measure,steps", [("mem-latency", 2), ("mem-bandwidth", 1)])
@pytest.mark.parametrize("llc,budget", [(4 * MiB, 9 * MiB), (1 * MiB, 64 * MiB)])
@pytest.mark.benchexec
def test_osbench_curves_end_where_sizing_says(programs, scratch, measure, steps, llc, budget):
    params = (f"measure={measure}\nsamples=1\nllc-bytes={llc}\n"
              + ("loads=1600\n" if measure == "mem-latency" else "sample-bytes=1M\n"))
    done = _run(programs / "osbench", budget, params, scratch)
    assert done.returncode == 0, done.stderr
    out = _values(done.stdout)
    prefix = "lat" if measure == "mem-latency" else "bw"
    largest = int(out[f"{prefix}-bytes-{int(out[f'{prefix}-points']) - 1:02d}"])
    fit = sizing.fit(sizing.CURVES, llc, budget)
    assert largest == largest_grid_point(fit.size, steps)
    assert out["max-capped"] == str(int(fit.size < fit.wanted)) and int(out["budget-bytes"]) == budget


# ---------------------------------------------------------------------------------------------
# the sweep's copy of a definition


def test_a_sweep_raises_the_limit_in_its_copy_for_a_large_llc_and_keeps_it_for_a_small_one(tmp_path):
    llc, available = intel_facts()
    copy = tmp_path / "memory-bandwidth.xml"
    copy.write_text((REPO / "benchmark-defs" / "memory-bandwidth.xml").read_text())
    sizes = memory.plan(copy, llc, available)
    written = int(parse_memory_value(etree.parse(str(copy)).getroot().get("memlimit")))
    assert sizes["memlimit_committed_bytes"] == STREAM_LIMIT < written == sizes["memlimit_bytes"]
    assert sizes["planned_bytes"] == 4 * llc and sizes["memory_level_reached"] and lint.check([copy]) == []
    [line] = memory.describe(sizes)
    assert line.startswith("memory limit 2000 MB raised to ") and "480 MiB" in line

    copy.write_text((REPO / "benchmark-defs" / "memory-bandwidth.xml").read_text())
    sizes = memory.plan(copy, SMALL_LLC, SMALL_AVAILABLE)
    assert copy.read_text() == (REPO / "benchmark-defs" / "memory-bandwidth.xml").read_text()
    assert memory.describe(sizes) == ["warning: memory level not reached: LLC reported 64 MiB, budget 150 MiB "
                                      "(array 50 MiB = 0.78 × LLC; memory counts from 4 ×)"]
    copy.write_text((REPO / "benchmark-defs" / "time-apis.xml").read_text())
    assert memory.plan(copy, llc, available) == {}  # a workload that sizes nothing by the LLC


# ---------------------------------------------------------------------------------------------
# real benchexec: an LLC too large for the limit (the Intel VM's case, scaled down)


@pytest.mark.skipif(subprocess.run(["which", "numactl"], capture_output=True).returncode, reason="numactl is not installed")
def test_arrays_sized_for_an_llc_beyond_the_limit_finish_instead_of_running_out_of_memory(programs, scratch):
    """llc-bytes=64 MiB wants 3 arrays of 256 MiB; under memlimit 200 MB the old STREAM ended OUT
    OF MEMORY. Now every run finishes with what its budget holds, stays under the limit, and the
    section says the memory level was not reached."""
    (scratch / "stream.txt").write_text("trials=3\nllc-bytes=67108864\n")
    write_repetitions([scratch / "stream.txt"], 2, scratch / "reps")
    text = (REPO / "benchmark-defs" / "memory-bandwidth.xml").read_text()
    text = re.sub(r"<include>[^<]*</include>", "<include>reps/stream.r*.yml</include>", text)
    (scratch / "memory-bandwidth.xml").write_text(re.sub(r'memlimit="[^"]*"', 'memlimit="200 MB"', text))
    code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(scratch / "memory-bandwidth.xml"),
                                 "-o", str(scratch / "out") + "/"], timeout=300)
    assert code == 0, output
    [table] = results.load_results(scratch / "out", columns=[*bandwidth.COLUMNS, "memory"])
    assert table.status.tolist() == ["done", "done"], output
    [budget] = set(table.columns["budget-bytes"].astype(int).tolist())
    assert budget <= sizing.budget(200 * 10**6, None)  # the limit's, or half of MemAvailable where that is less
    assert set(table.columns["array-bytes"]) == {sizing.fit(sizing.STREAM, 64 * MiB, budget).size}
    assert max(table.columns["memory"]) < 200 * 10**6
    section, _ = bandwidth.section([table])
    [short] = [w for w in section.warnings if w.startswith("memory level not reached")]
    assert f"LLC reported 64 MiB, budget {fmt.binary_size(budget)} (array " in short
