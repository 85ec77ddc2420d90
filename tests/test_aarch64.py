"""The programs beyond x86-64: built for aarch64 with Debian's cross compiler (`make -C programs
cross-aarch64`, into programs/bin-aarch64) and run under qemu-user as `qemu-aarch64 -L
/usr/aarch64-linux-gnu PROGRAM` (binfmt_misc need not be set up). Their portable paths print every
key (the timing under an emulator is not judged), and the analysis of their real BenchExec results
marks the TSC findings `not testable here: not x86-64`."""

import fcntl
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.core import results, tasks
from analysis.experiments.os_microbench import analyse as microbench
from analysis.experiments.os_microbench import output as printed
from analysis.experiments.scheduling_noise import analyse as noise
from tests.helpers import SCRATCH, run_isolated
from tests.test_microbench import SMALL, check_common, parse, write_params
from tests.test_noise import scheduling_noise_copy

REPO = Path(__file__).resolve().parent.parent
SYSROOT = "/usr/aarch64-linux-gnu"
# an emulated curve needs no size beyond the L1 and L2
CURVES = {"mem-latency": {"max-bytes": "512K"}, "mem-bandwidth": {"max-bytes": "512K", "sample-bytes": "1M"}}


@pytest.fixture(scope="module")
def arm_programs():
    """programs/ built for aarch64 (under the lock the native build takes)."""
    for program, package in (("aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"), ("qemu-aarch64", "qemu-user")):
        if not shutil.which(program):
            pytest.fail(f"{program} must be installed for the tests (Debian package {package}; "
                        "python3 -m analysis.machine.packages installs it)")
    SCRATCH.mkdir(parents=True, exist_ok=True)
    with open(SCRATCH.parent / "programs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "-C", str(REPO / "programs"), "cross-aarch64"], check=True, capture_output=True)
    built = REPO / "programs" / "bin-aarch64"
    assert int.from_bytes((built / "osbench").read_bytes()[18:20], "little") == 183  # ELF e_machine: EM_AARCH64
    return built


def emulated(program, *args, cwd):
    return subprocess.run(["qemu-aarch64", "-L", SYSROOT, str(program), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("measure", printed.MEASURES)
@pytest.mark.benchexec
def test_every_measure_prints_its_keys_on_aarch64(arm_programs, scratch, measure):
    path = write_params(scratch, measure, **{**SMALL[measure], **CURVES.get(measure, {})})
    done = emulated(arm_programs / "osbench", path, cwd=scratch)
    assert done.returncode == 0, done.stderr
    out = parse(done.stdout)
    check_common(out, measure, arch="aarch64")
    assert "core-ghz-eor" in out  # the second chain of aarch64: eor (1 cycle), no multiply
    assert out["timer-source"] == "clock_gettime" and out["rdtscp"] == 0 and "tsc-ghz" not in out
    assert out["tsc-note"].startswith("not x86-64")
    variants = set(printed.VARIANTS[measure]) - {"tsc-lfence", "tsc-cpuid", "tsc-lfence-cost", "tsc-cpuid-cost"}
    if "exec-note" in out:  # qemu-user cannot exec an aarch64 program without binfmt_misc: said, not hidden
        assert measure == "process" and "Exec format error" in out["exec-note"] and out["variant"] == "fork-exit"
        variants -= {"fork-exec"}
    for variant in variants:
        assert all(f"{variant}-{s}-ns" in out for s in printed.STATS) and out[f"{variant}-n"] >= 1, variant
    if measure in CURVES:
        prefix = "lat" if measure == "mem-latency" else "bw"
        assert out[f"{prefix}-points"] >= 2 and f"{prefix}-bytes-00" in out


@pytest.mark.parametrize("mode", ["trace", "context-switch"])
@pytest.mark.benchexec
def test_the_tracer_prints_its_keys_on_aarch64(arm_programs, scratch, mode):
    params = scratch / "p.txt"
    params.write_text(f"mode={mode}\nduration-ms=100\ncalibration-reads=5000\nperiods-file=periods.csv\n")
    done = emulated(arm_programs / "tracer", params, cwd=scratch)
    assert done.returncode == 0, done.stderr
    values = parse(done.stdout)
    assert values["tick-source"] == "clock_gettime" and values["arch"] == "aarch64" and "core-ghz-eor" in values
    for key in ("tsc-frequency", "kernel-tsc", "gaps", "median-gap-cycles", "threshold-cycles", "dominant-period"):
        assert key in values, key
    assert noise.read_periods(scratch / "periods.csv").processes == (["tracer"] if mode == "trace" else ["parent", "child"])


def _wrappers(arm_programs, directory):
    """programs/bin/ of a tool directory for BenchExec (--tool-directory): each program a script
    that runs the aarch64 build under qemu-user."""
    bin_dir = directory / "programs" / "bin"
    bin_dir.mkdir(parents=True)
    for name in ("osbench", "osbench_exit", "tracer"):
        script = bin_dir / name
        script.write_text(f'#!/bin/sh\nexec qemu-aarch64 -L {SYSROOT} {arm_programs / name} "$@"\n')
        script.chmod(0o755)
    return directory


def test_the_report_of_aarch64_results_marks_the_tsc_findings_not_x86(arm_programs, scratch):
    """The real benchexec runs the aarch64 build (through the wrappers) for os-microbench and
    scheduling-noise; the sections are built from its result files."""
    tools = _wrappers(arm_programs, scratch / "tools")
    inputs, reps = scratch / "inputs", scratch / "reps"
    inputs.mkdir()
    paths = [write_params(inputs, m, **{**SMALL[m], **CURVES.get(m, {})}) for m in printed.MEASURES]
    tasks.write_repetitions(paths, 1, reps)
    definition = (REPO / "benchmark-defs" / "os-microbench.xml").read_text().replace(
        "../programs/tasks/os-microbench/reps/*.yml", f"{reps}/*.yml")
    (scratch / "os-microbench.xml").write_text(definition)
    noise_dir = scratch / "noise"
    noise_dir.mkdir()
    for xml in (scratch / "os-microbench.xml", scheduling_noise_copy(noise_dir)):
        code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(xml), "--tool-directory", str(tools),
                                     "-o", str(xml.parent / "results") + "/"], timeout=300)
        assert code == 0, output

    tables = results.load_results(scratch / "results", columns=printed.COLUMNS)
    section, data = microbench.section(tables, caches={})
    assert set(data["runs"]) == set(printed.MEASURES), data["excluded"]
    assert {p.get("arch") for p in data["probes"]} == {"aarch64"}
    findings = {f.claim: f for f in section.findings}
    tsc = [f for claim, f in findings.items() if "TSC" in claim]
    assert len(tsc) == 3  # cycles counted with the TSC, CPUID;RDTSC floor, CPUID serialises
    assert all(f.verdict == "not testable here" and f.evidence.startswith("not x86-64") for f in tsc)
    assert any(f.verdict != "not testable here" for f in findings.values())  # the rest is judged

    combined = list((noise_dir / "results").glob("*.results.tracer.xml.bz2"))
    section, data = noise.section(results.load_results(combined, columns=noise.COLUMNS))
    assert data["arch"] == "aarch64"
    tsc = [f for f in section.findings if "TSC" in f.claim]
    assert len(tsc) == 2 and all(f.verdict == "not testable here" and f.evidence.startswith("not x86-64") for f in tsc)


@pytest.mark.benchexec
def test_the_plain_c_chains_of_other_architectures(programs, scratch):
    """kit.h's fallback for an architecture without its own chains (KIT_PLAIN_C_CHAINS builds it
    here): dependent adds and xors in C with a register barrier after each; the probe's keys and
    its verdict on them stay self-consistent."""
    binary = scratch / "osbench"
    subprocess.run(["cc", "-O2", "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-DKIT_PLAIN_C_CHAINS",
                    f"-I{programs}", "-o", str(binary), str(REPO / "programs" / "osbench.c"), "-lm", "-lpthread"],
                   check=True)
    done = subprocess.run([str(binary), str(write_params(scratch, "loop", **SMALL["loop"]))], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = parse(done.stdout)
    check_common(out, "loop")
    assert "core-ghz-xor" in out and "plain C" in out["core-clock-chains"]
