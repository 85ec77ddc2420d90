"""The activity tracer and analysis.experiments.scheduling_noise: gap detection on synthetic traces with known gaps (the
tracer's own detection, replayed), its output format, and real BenchExec runs turned into a section."""

import gzip
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from lxml import etree

from analysis.experiments.scheduling_noise import analyse as noise
from analysis.machine import kernel
from analysis.core import results
from analysis.core.tasks import input_of, write_repetitions
from tests.helpers import run_isolated
from tests.test_microbench import check_core_clock, parse

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "noise"
HZ = 1e9  # synthetic traces: one tick per ns


def values_of(output):
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def number(text):
    """A tracer value without its unit suffix."""
    return float(re.match(r"-?[0-9.]+(?:e[-+]?\d+)?|nan", text).group(0))


def synthetic(path, duration_ms, trains=(), random_gaps=0, blips=0, step=100, calibration=10000, seed=0):
    """Write a tick trace: a read every `step` (+0..2) ticks, `calibration` reads first, then
    `duration_ms` of tracing with gaps. trains: (period ms, phase ms, gap ticks), each gap placed
    at its planned time; random_gaps: that many 2000-tick gaps at random times; blips: 300-tick
    delays (below the threshold). Returns the expected gaps as sorted [(start tick relative to the
    trace start, length)]."""
    rng = np.random.default_rng(seed)
    n = int(duration_ms * 1e-3 * HZ / step)
    increments = step + rng.integers(0, 3, size=n)
    increments[rng.choice(np.arange(1, n), size=blips, replace=False)] = 300
    planned = [(t * 1e-3 * HZ, length) for period, phase, length in trains for t in np.arange(phase, duration_ms - 0.1, period)]
    planned += [(t, 2000) for t in rng.uniform(0.05e-3 * HZ, (duration_ms - 0.1) * 1e-3 * HZ, size=random_gaps)]
    gap_index = set()
    for when, length in sorted(planned):  # in time order: each gap delays the reads after it
        k = int(np.searchsorted(np.cumsum(increments), when))
        while k in gap_index:
            k += 1
        increments[k] = length
        gap_index.add(k)
    calibration_stamps = np.cumsum(step + rng.integers(0, 3, size=calibration)) + 1_000_000
    trace = calibration_stamps[-1] + step + np.concatenate([[0], np.cumsum(increments)])
    np.savetxt(path, np.concatenate([calibration_stamps, trace]), fmt="%d")
    return sorted((int(trace[k] - trace[0]), int(increments[k])) for k in gap_index)


def replay(programs, scratch, trace, extra=""):
    params = scratch / "replay.txt"
    params.write_text(f"mode=replay\nreplay-file={trace}\ntsc-hz={HZ:.0f}\ncalibration-reads=10000\n"
                      f"threshold-factor=10\nperiods-file={scratch / 'periods.csv'}\n{extra}")
    done = subprocess.run([str(programs / "tracer"), str(params)], capture_output=True, text=True, timeout=60)
    return done


@pytest.mark.benchexec
def test_replay_finds_exactly_the_gaps_above_the_threshold(programs, scratch):
    """Gaps of 3 us every 1 ms and 50 random ones of 2 us are found, at their ticks; 300-tick
    delays (3x the median read distance) are not; the threshold is 10 x the median."""
    expected = synthetic(scratch / "trace.txt", 40, trains=[(1.0, 0.3, 3000)], random_gaps=50, blips=200)
    done = replay(programs, scratch, scratch / "trace.txt")
    assert done.returncode == 0, done.stderr
    values = values_of(done.stdout)
    assert values["median-gap-cycles"] == "101"
    assert values["threshold-cycles"] == "1010"
    assert int(values["gaps"]) == len(expected) == 40 + 50
    periods = noise.read_periods(scratch / "periods.csv")
    found = sorted(zip(periods.start_cycles[periods.inactive].tolist(), periods.duration_cycles[periods.inactive].tolist()))
    assert found == expected
    # active and inactive periods alternate, start where the previous one ended, cover the trace
    ends = periods.start_cycles + periods.duration_cycles
    assert (periods.start_cycles[1:] == ends[:-1]).all()
    assert not (periods.inactive[1:] & periods.inactive[:-1]).any()
    assert not periods.inactive[0] and not periods.inactive[-1]
    assert number(values["dominant-period"]) == pytest.approx(1.0, rel=0.005)
    assert number(values["interruption-max"]) == pytest.approx(3.0, abs=0.01)


@pytest.mark.parametrize("trains, random_gaps, period", [
    # the guest's 4 ms tick (long gaps) and an extra 8 ms source: the fundamental, not the highest peak
    ([(4.0, 0.5, 20000), (8.0, 2.2, 5000)], 300, 4.0),
    # a host source every 1.05 ms beside a 4 ms tick: the denser train dominates
    ([(4.0, 0.5, 20000), (1.05, 0.1, 3000)], 100, 1.05),
])
@pytest.mark.benchexec
def test_dominant_period_is_the_fundamental_and_python_agrees(programs, scratch, trains, random_gaps, period):
    synthetic(scratch / "trace.txt", 80, trains=trains, random_gaps=random_gaps, seed=3)
    done = replay(programs, scratch, scratch / "trace.txt")
    assert done.returncode == 0, done.stderr
    c_period = number(values_of(done.stdout)["dominant-period"])
    assert c_period == pytest.approx(period, rel=0.005)
    starts, _ = noise.read_periods(scratch / "periods.csv").gaps()
    assert noise.dominant_period(noise.pair_lags(starts)).period_ms == pytest.approx(c_period, abs=1e-4)
    mask = noise.periodic_mask(starts, period)
    assert mask.sum() >= 80 / period - 3  # the train's gaps, whatever the random ones add


@pytest.mark.benchexec
def test_replay_rejects_a_trace_that_runs_backwards(programs, scratch):
    (scratch / "trace.txt").write_text("\n".join(str(x) for x in [*range(0, 200000, 10), 5]) + "\n")
    done = replay(programs, scratch, scratch / "trace.txt")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "increasing" in done.stderr


@pytest.mark.benchexec
def test_tracer_rejects_unknown_parameters(programs, scratch):
    params = scratch / "p.txt"
    params.write_text("mode=trace\nduration=100\n")
    done = subprocess.run([str(programs / "tracer"), str(params)], capture_output=True, text=True)
    assert done.returncode == 2 and "p.txt:2: unknown key or bad value: duration=100" in done.stderr


@pytest.mark.parametrize("mode", ["trace", "context-switch"])
def test_live_tracer_output_format(programs, scratch, mode):
    params = scratch / "p.txt"
    params.write_text(f"mode={mode}\nduration-ms=150\ncalibration-reads=20000\nperiods-file={scratch / 'periods.csv'}\n")
    done = subprocess.run([str(programs / "tracer"), str(params)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    values = values_of(done.stdout)
    for key in ("tsc-frequency", "kernel-tsc"):
        assert values[key].endswith("MHz") and number(values[key]) > 0, key
    check_core_clock(parse(done.stdout))  # the probe osbench uses too, self-consistent on any CPU
    assert values["kernel-tsc-source"] in ("kernel-log-refined", "kernel-log-detected", "proc-cpuinfo")
    assert int(values["threshold-cycles"]) >= 50 * int(values["median-gap-cycles"])
    assert number(values["trace-duration"]) == pytest.approx(0.15, rel=0.2)
    periods = noise.read_periods(scratch / "periods.csv")
    processes = ["tracer"] if mode == "trace" else ["parent", "child"]
    assert periods.processes == processes
    assert int(values["gaps"]) == int(periods.inactive[periods.process == processes[0]].sum())
    assert (periods.duration_cycles[periods.inactive] > int(values["threshold-cycles"])).all()
    if mode == "context-switch":
        # 150 ms on one CPU: the scheduler hands over at least once (with or without a third task)
        assert int(values["switches"]) + int(values["third-party-gaps"]) > 0
        if int(values["switches"]):
            assert number(values["context-switch"]) > 0


@pytest.mark.benchexec
def test_periods_file_errors_are_one_line(scratch):
    bad = scratch / "periods.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(noise.PeriodsError, match=r"periods.csv: header \['a', 'b'\]"):
        noise.read_periods(bad)
    bad.write_text(",".join(noise.PERIODS_HEADER) + "\ntracer,active,0,x,1,0,0\n")
    with pytest.raises(noise.PeriodsError, match="a row is not"):
        noise.read_periods(bad)


@pytest.mark.benchexec
def test_kernel_tick_from_a_recorded_config_and_from_config_gz(scratch):
    assert kernel.kernel_hz(DATA / "bare-metal-hz1000") == (1000, "/boot/config-6.1.0-21-amd64 (nohz_full)")
    (scratch / "proc/sys/kernel").mkdir(parents=True)
    (scratch / "proc/sys/kernel/osrelease").write_text("6.18.0-vm\n")
    hz, why = kernel.kernel_hz(scratch)
    assert hz is None and why.startswith("unknown")
    (scratch / "proc/config.gz").write_bytes(gzip.compress(b"CONFIG_NO_HZ_IDLE=y\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"))
    assert kernel.kernel_hz(scratch) == (250, "/proc/config.gz (nohz idle)")


def test_kernel_log_refined_calibration_wins():
    text = (DATA / "kernel-log.txt").read_text()
    assert kernel.kernel_log_tsc(text) == (2893.202, "kernel log, refined calibration")
    assert kernel.kernel_log_tsc("[0.0] tsc: Detected 2596.130 MHz processor") == (2596.13, "kernel log, detected")
    assert kernel.kernel_log_tsc("nothing here") == (None, None)


def test_pair_lags_and_periodic_mask():
    starts = np.array([0.0, 1.0, 2.0, 3.0, 3.3, 4.0])
    assert sorted(noise.pair_lags(starts, min_ms=0.5, max_ms=2.0).round(6).tolist()) == [
        0.7, 1.0, 1.0, 1.0, 1.0, 1.3, 2.0, 2.0, 2.0]
    mask = noise.periodic_mask(starts, 1.0)
    assert mask.tolist() == [True, True, True, True, False, True]


def scheduling_noise_copy(scratch):
    """The benchmark definition with 200 ms traces and one run per mode, in a scratch directory."""
    inputs = []
    for source in sorted((REPO / "programs/inputs/scheduling-noise").glob("*.txt")):
        text = re.sub(r"duration-ms=\d+", "duration-ms=200", source.read_text())
        (scratch / source.name).write_text(text)
        inputs.append(scratch / source.name)
    write_repetitions(inputs, 1, scratch / "reps")
    tree = etree.parse(str(REPO / "benchmark-defs/scheduling-noise.xml"))
    for include in tree.iter("include"):
        include.text = "reps/" + include.text.rsplit("/", 1)[1]
    tree.write(str(scratch / "scheduling-noise.xml"), xml_declaration=True, encoding="UTF-8")
    return scratch / "scheduling-noise.xml"


@pytest.mark.timing
def test_benchexec_runs_become_a_section_with_figures(programs, scratch):
    definition = scheduling_noise_copy(scratch)
    code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(definition), "-o", str(scratch / "out") + "/"],
                                timeout=300)
    assert code == 0, output
    combined = [p for p in (scratch / "out").glob("*.results.tracer.xml.bz2")]
    assert len(combined) == 1, output
    tables = results.load_results(combined, columns=noise.COLUMNS)
    assert sorted(input_of(t) for t in tables[0].tasks) == ["context-switch", "trace"]
    assert (noise.result_files_dir(tables[0]) / "trace.r001.yml" / "periods.csv").is_file()

    section, data = noise.section(tables)
    assert section.id == "scheduling-noise"
    assert len(section.figures) == 3 and all(f.png.startswith(b"\x89PNG") for f in section.figures)
    assert not section.warnings or all("kernel log" in w for w in section.warnings), section.warnings
    assert [r["mode"] for r in data["runs"]] == ["trace", "context-switch"]
    assert all(r["periods_file"] for r in data["runs"])
    trace = data["runs"][0]
    c_period = trace["values"]["dominant-period"] * 1e3
    if math.isfinite(c_period):  # the Python reading of periods.csv gives the tracer's own value
        assert trace["dominant_period_ms_python"] == pytest.approx(c_period, abs=1e-3)
    claims = {f.claim.split(" (")[0]: f.verdict for f in section.findings}
    assert "The timer interrupts the process every 1 ms" in claims
    assert any(c.startswith("The TSC counts the CPU's cycles") for c in claims)
    # the TSC against the kernel's own value: the issue asks for 1 %
    assert abs(data["tsc_reference"]["deviation"]) < 0.01

    # without the kept periods files the summary values still make a section, with a warning
    shutil.rmtree(noise.result_files_dir(tables[0]))
    section, data = noise.section(tables)
    assert any("periods.csv: cannot be read" in w for w in section.warnings)
    assert not any(r["periods_file"] for r in data["runs"])
