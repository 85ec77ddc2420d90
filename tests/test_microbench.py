"""The os-microbench experiment: osbench's output for every measurement (run directly on small
parameters), its tool-info module, the benchmark definition's columns, the real benchexec on a
scratch copy with small parameters, and analysis.experiments.os_microbench turning the results into a section.

The assertions are about consistency and physics that could be false (latency grows from
1 KiB to 4x the last-level cache, one minor fault per anonymous page, fork+exec costs more
than fork+exit, the core clock's estimates agree or say that they do not), never about timing
targets or one CPU's figures.
"""

import io
import json
import math
import re
import platform
import subprocess
import sys
from pathlib import Path

import matplotlib.image
import pytest
from benchexec.util import parse_memory_value
from lxml import etree

from analysis.experiments.os_microbench import analyse, levels
from analysis.experiments.os_microbench import output as printed  # what osbench.c prints
from analysis.core import instruments, report
from analysis.core import results
from analysis.core import tasks
from analysis.machine import topology
from tests.helpers import run_isolated
from tool_info import sizing
from tool_info.osbench import Tool
from tests.test_sizing import largest_grid_point

REPO = Path(__file__).resolve().parent.parent
INPUTS = REPO / "programs" / "inputs" / "os-microbench"
BENCHMARK = REPO / "benchmark-defs" / "os-microbench.xml"
RECORDED = REPO / "tests" / "data" / "microbench"
# small parameters: every measurement in well under a second
SMALL = {
    "timer": {"pairs": 2000, "samples": 21, "iterations": 200},
    "loop": {"samples": 11, "iterations": 100000},
    "call": {"samples": 7, "iterations": 20000},
    "syscall": {"samples": 11, "iterations": 1000},
    "process": {"samples": 20, "warmup": 2},
    "thread": {"samples": 200, "warmup": 5},
    "ctxsw-process": {"samples": 11, "iterations": 200},
    "ctxsw-thread": {"samples": 11, "iterations": 200},
    "mem-latency": {"samples": 3, "loads": 16000},
    "mem-bandwidth": {"samples": 3, "sample-bytes": "2M"},
    "page-fault": {"samples": 5, "pages": 1024, "warmup": 1},
}


def write_params(directory, measure, **params):
    path = Path(directory) / f"{measure}.txt"
    path.write_text(f"measure={measure}\n" + "".join(f"{k}={v}\n" for k, v in params.items()))
    return path


def parse(text):
    values = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        assert key and _ == "=", f"not a key=value line: {line!r}"
        assert key not in values, f"key {key} printed twice"
        try:
            values[key] = float(value)
        except ValueError:
            values[key] = value
    return values


def committed_budget():
    """The budget tool_info.osbench gives a run of the committed definition: its memlimit, MemAvailable now."""
    limit = parse_memory_value(etree.parse(str(BENCHMARK)).getroot().get("memlimit"))
    return sizing.budget(int(limit), sizing.read_mem_available())


def run_osbench(programs, scratch, measure, **overrides):
    params = {**SMALL[measure], **overrides}
    path = write_params(scratch, measure, **params)
    done = subprocess.run([str(programs / "osbench"), f"budget-bytes={committed_budget()}", str(path)], cwd=scratch,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return parse(done.stdout)


def check_variant(out, variant, samples=None):
    median, p10, p90, low = (out[f"{variant}-{s}-ns"] for s in ("median", "p10", "p90", "min"))
    assert 0 < low <= p10 <= median <= p90, (variant, low, p10, median, p90)
    if samples is not None:
        assert out[f"{variant}-n"] == samples
    return median


ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def check_core_clock(out, arch=None):
    """The core-clock probe (programs/kit.h), self-consistent on any CPU: both chains' estimates and
    perf's (or a note why there is none) printed; `core-ghz` exactly where every estimate agrees
    with the others within CLOCK_AGREE and lies in the physical range (and cpufreq's, with its
    margin), and then it is the add chain's figure; otherwise a note that names the figures. The
    analysis (instruments.core_clock) judges the printed figures the same way. Returns its Reading."""
    assert out["arch"] == (arch or ARCH.get(platform.machine(), out["arch"]))
    chains = [k for k in out if k.startswith("core-ghz-") and k not in ("core-ghz-perf", "core-ghz-perf-note")]
    assert chains[0] == "core-ghz-add" and len(chains) == 2, chains
    assert ("core-ghz-perf" in out) != ("core-ghz-perf-note" in out)
    estimates = [out[k] for k in chains] + ([out["core-ghz-perf"]] if "core-ghz-perf" in out else [])
    assert all(e > 0 for e in estimates), estimates
    low, high = min(estimates), max(estimates)
    fmin, fmax = out.get("cpufreq-min-ghz", 0), out.get("cpufreq-max-ghz", math.inf)
    trusted = ((high - low) / low <= instruments.CLOCK_AGREE and instruments.GHZ_MIN <= low and high <= instruments.GHZ_MAX
               and fmin / instruments.CPUFREQ_MARGIN <= low and high <= fmax * instruments.CPUFREQ_MARGIN)
    reading = instruments.core_clock(out)
    if trusted:
        assert out["core-ghz"] == out["core-ghz-add"] and "core-clock-note" not in out
        assert instruments.usable(instruments.CORE_CLOCK, reading) == out["core-ghz"]
    else:
        # %.3f GHz of the figure printed with %.4f; outside any core's range, the chain's steps per ns (%.4g)
        cited = re.search(r"add chain ([0-9.]+) (GHz|steps per ns)", out["core-clock-note"])
        assert "core-ghz" not in out and cited and abs(float(cited.group(1)) - out["core-ghz-add"]) <= 0.00051 * max(1, out["core-ghz-add"]), out
        assert instruments.usable(instruments.CORE_CLOCK, reading) is None
    return reading


def check_common(out, measure, arch=None):
    assert out["measure"] == measure
    assert out["migrations"] == 0 and out["regions"] > 0
    assert out["cpu"] >= 0 and out["allowed-cpus"] >= 1
    check_core_clock(out, arch)
    if out["timer-source"] == "tsc":  # a TSC ticks at a nominal core clock: inside the same physical range
        assert out["tsc-invariant"] == 1 and instruments.GHZ_MIN < out["tsc-ghz"] < instruments.GHZ_MAX
    assert 0 < out["min"] <= out["p10"] <= out["median"] <= out["p90"]
    assert set(out) <= set(printed.COLUMNS) | set(printed.NOTES), set(out) - set(printed.COLUMNS) - set(printed.NOTES)
    main = out["variant"]
    if f"{main}-median-ns" in out:  # the main columns repeat the main variant
        assert out["median"] == pytest.approx(out[f"{main}-median-ns"], abs=1e-3)


@pytest.fixture(scope="module")
def osbench(programs):
    assert (programs / "osbench_exit").exists()
    return programs


# ---------------------------------------------------------------------------------------------
# the program, one measurement at a time


def test_timer(osbench, scratch):
    out = run_osbench(osbench, scratch, "timer")
    check_common(out, "timer")
    gettime = check_variant(out, "clock-gettime", 21)
    clock = check_variant(out, "clock", 21)
    assert clock > gettime  # clock() enters the kernel, the vDSO does not
    if out["timer-source"] == "tsc":
        floor = check_variant(out, "tsc-cpuid", 2000)
        check_variant(out, "tsc-lfence", 2000)
        assert check_variant(out, "tsc-cpuid-cost") > floor  # the CPUIDs lie outside the timed interval
        assert out["variant"] == "tsc-lfence"


@pytest.mark.parametrize("measure", ["timer", "ctxsw-thread"])
@pytest.mark.benchexec
def test_clock_gettime_path_where_the_tsc_is_not_used(osbench, scratch, measure):
    """use-tsc=0 takes the path of a machine without an invariant TSC: clock_gettime and
    sched_getcpu time every region, and the output says so."""
    out = run_osbench(osbench, scratch, measure, **{"use-tsc": 0})
    check_common(out, measure)
    assert out["timer-source"] == "clock_gettime" and "tsc-ghz" not in out
    assert "clock_gettime" in out["tsc-note"]
    assert not [k for k in out if k.startswith("tsc-cpuid") or k.startswith("tsc-lfence")]
    if measure == "timer":
        assert out["variant"] == "clock-gettime"


def test_loop_and_the_core_clock(osbench, scratch):
    out = run_osbench(osbench, scratch, "loop")
    check_common(out, "loop")
    check_variant(out, "loop", 11)
    add = check_variant(out, "add", 51)
    # the run's core clock and its own samples of the same add chain measure the same thing
    if "core-ghz" in out:
        assert 1 / add == pytest.approx(out["core-ghz"], rel=0.25)


def test_call_with_0_to_7_arguments(osbench, scratch):
    out = run_osbench(osbench, scratch, "call")
    check_common(out, "call")
    for k in range(8):
        assert check_variant(out, f"call{k}", 7) < 100  # a call, not a system call


def test_syscall_costs_more_than_vdso(osbench, scratch):
    out = run_osbench(osbench, scratch, "syscall")
    check_common(out, "syscall")
    assert check_variant(out, "getppid", 11) > check_variant(out, "vdso", 11)


def test_process_and_thread_creation(osbench, scratch):
    out = run_osbench(osbench, scratch, "process")
    check_common(out, "process")
    fork_exit = check_variant(out, "fork-exit", 20)
    assert check_variant(out, "fork-exec", 20) > fork_exit  # exec loads a program on top
    thread = run_osbench(osbench, scratch, "thread")
    check_common(thread, "thread")
    assert check_variant(thread, "pthread", 200) < fork_exit  # no address space to copy


@pytest.mark.parametrize("kind", ["process", "thread"])
def test_context_switch_is_round_trip_minus_pipe_cost(osbench, scratch, kind):
    out = run_osbench(osbench, scratch, f"ctxsw-{kind}")
    check_common(out, f"ctxsw-{kind}")
    rt, own = check_variant(out, f"{kind}-roundtrip", 11), check_variant(out, f"{kind}-pipe", 11)
    switch = out[f"{kind}-switch-median-ns"]
    assert switch == pytest.approx((rt - 2 * own) / 2, abs=1e-3)
    assert rt > 2 * own  # a switch costs something: the blocking round trip beats two writes and reads


def test_latency_grows_from_1_kib_to_4x_llc(osbench, scratch):
    out = run_osbench(osbench, scratch, "mem-latency")
    check_common(out, "mem-latency")
    n = int(out["lat-points"])
    sizes = [out[f"lat-bytes-{i:02d}"] for i in range(n)]
    latency = [out[f"lat-median-ns-{i:02d}"] for i in range(n)]
    assert sizes[0] == 1024 and sizes == sorted(set(sizes))
    llc = out["llc-bytes"]
    assert sizes[-1] == largest_grid_point(sizing.fit(sizing.CURVES, llc, int(out["budget-bytes"])).size, 2)
    assert f"lat-bytes-{n:02d}" not in out
    for i in range(n):
        assert out[f"lat-p10-ns-{i:02d}"] <= latency[i] <= out[f"lat-p90-ns-{i:02d}"]
    assert latency[-1] > 3 * latency[0]  # beyond the caches every load misses
    found = levels.plateaus(sizes, latency)
    assert len(found) >= 2 and found[-1]["ns"] > found[0]["ns"]
    assert out["median"] == pytest.approx(out[f"lat-median-ns-{n - 1:02d}"], abs=1e-3)


def test_bandwidth_is_higher_in_cache_than_in_memory(osbench, scratch):
    out = run_osbench(osbench, scratch, "mem-bandwidth")
    check_common(out, "mem-bandwidth")
    n = int(out["bw-points"])
    largest = sizing.fit(sizing.CURVES, out["llc-bytes"], int(out["budget-bytes"])).size
    assert out["bw-bytes-00"] == 4096 and out[f"bw-bytes-{n - 1:02d}"] == largest_grid_point(largest, 1)
    for kind in ("read", "write"):
        for i in range(n):
            assert 0 < out[f"bw-{kind}-p10-gbs-{i:02d}"] <= out[f"bw-{kind}-median-gbs-{i:02d}"] <= out[f"bw-{kind}-p90-gbs-{i:02d}"]
        assert out[f"bw-{kind}-median-gbs-00"] > out[f"bw-{kind}-median-gbs-{n - 1:02d}"]
    assert out["unit"] == "GB/s"


def test_page_faults_one_per_anonymous_page(osbench, scratch):
    out = run_osbench(osbench, scratch, "page-fault")
    check_common(out, "page-fault")
    assert out["anon-write-faults-per-page"] == pytest.approx(1.0, rel=0.1)
    assert out["anon-read-faults-per-page"] == pytest.approx(1.0, rel=0.1)
    assert 0 < out["file-read-faults-per-page"] <= 1.0  # fault-around maps several pages per fault
    assert check_variant(out, "anon-write-fault", 5) > check_variant(out, "anon-read-fault", 5)  # zeroing a page
    per_page, per_fault = check_variant(out, "file-read-page", 5), check_variant(out, "file-read-fault", 5)
    assert per_fault >= per_page
    assert out["thp-mode"] in ("always", "madvise", "never", "unknown")
    assert not list(scratch.glob("osbench-pagefault.*")), "the file mapping's file was left behind"


@pytest.mark.parametrize("text,message", [
    ("measure=nothing\n", "must name a measurement"),
    ("measure=loop\nsamples=ten\n", "expected a non-negative integer"),
    ("measure=loop\nbogus=1\n", "unknown key 'bogus'"),
    ("measure=loop\npages=4\n", "does not use key 'pages'"),
    ("measure=loop\nsamples=0\n", "samples must be at least 1"),
    ("no equals sign\n", "expected key=value"),
])
@pytest.mark.benchexec
def test_bad_parameter_file_gives_one_line(osbench, scratch, text, message):
    path = scratch / "bad.txt"
    path.write_text(text)
    done = subprocess.run([str(osbench / "osbench"), str(path)], capture_output=True, text=True, timeout=10)
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


@pytest.mark.benchexec
def test_version_line(osbench):
    done = subprocess.run([str(osbench / "osbench"), "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("osbench 1.0 (") and "-O2" in done.stdout


# ---------------------------------------------------------------------------------------------
# definitions and the tool-info module


def test_benchmark_columns_are_exactly_what_the_analysis_reads():
    columns = [c.text for c in etree.parse(str(BENCHMARK)).iter("column")]
    titles = [c.get("title") for c in etree.parse(str(BENCHMARK)).iter("column")]
    assert columns == titles == list(printed.COLUMNS)


def test_committed_tasks_are_one_repetition_per_measurement():
    inputs = sorted(INPUTS.glob("*.txt"))
    assert sorted(p.stem for p in inputs) == sorted(printed.MEASURES)
    committed = sorted((REPO / "programs" / "tasks" / "os-microbench" / "reps").glob("*.yml"))
    assert [p.name for p in committed] == [f"{p.stem}.r001.yml" for p in inputs]
    for task in committed:
        assert task.read_text() == tasks.TASK_TEMPLATE.format(rep=1, count=1, input=f"../../../inputs/os-microbench/{tasks.input_of(task.name)}.txt")


@pytest.mark.benchexec
def test_tool_info_reads_the_output(osbench):
    lines = ["programs/bin/osbench programs/inputs/os-microbench/loop.txt", "", "-" * 80, "", "measure=loop",
             "loop-median-ns=0.2707", "median=0.2707", "variant=loop", "lat-bytes-03=4096"]
    tool = Tool()
    assert tool.get_value_from_output(lines, "median") == "0.2707"
    assert tool.get_value_from_output(lines, "variant") == "loop"
    assert tool.get_value_from_output(lines, "lat-bytes-03") == "4096"
    assert tool.get_value_from_output(lines, "min") is None
    assert tool.get_value_from_output(lines, "os-microbench/loop.txt") is None  # the header cannot match
    files = tool.program_files(str(osbench / "osbench"))
    assert [Path(f).name for f in files] == ["osbench", "osbench_exit"]


# ---------------------------------------------------------------------------------------------
# the analysis on recorded results (no benchexec): plateaus, tables, findings


def test_plateaus_of_a_synthetic_curve():
    sizes = [2**k for k in range(10, 28)]
    latency = [1.0 if s <= 32 * 2**10 else 4.0 if s <= 2**20 else 15.0 if s <= 4 * 2**20 else 100.0 for s in sizes]
    latency = [x * (1.03 if i % 2 else 0.97) for i, x in enumerate(latency)]  # 3 % noise stays within a level
    found = levels.plateaus(sizes, latency)
    assert [(p["first_bytes"], p["last_bytes"]) for p in found] == [
        (2**10, 2**15), (2**16, 2**20), (2**21, 2**22), (2**23, 2**27)]
    matches = levels.label_plateaus(found, {1: 32 * 2**10, 2: 2**20, 3: 32 * 2**20})
    assert [p["label"] for p in found] == ["L1", "L2", "L3", "memory"]
    assert [m["match"] for m in matches] == [True, True, False]  # this curve's L3 ends at 4 MiB, not near 32 MiB


def test_section_from_recorded_results():
    paths = sorted(RECORDED.glob("*.results.*.xml.bz2"))
    assert paths, "tests/data/microbench holds a recorded benchexec result"
    tables = results.load_results(paths, columns=printed.COLUMNS)
    caches = json.loads((RECORDED / "caches.json").read_text())
    sec, data = analyse.section(tables, caches={int(k): v for k, v in caches.items()})
    assert set(data["runs"]) == set(printed.MEASURES) and not data["excluded"]
    assert len(sec.figures) == 4 and len(sec.findings) >= 12
    assert all(f.verdict in report.VERDICTS for f in sec.findings)
    assert [p["label"] for p in data["plateaus"]][:2] == ["L1", "L2"]
    assert data["plateaus"][-1]["label"] == "memory"
    rows = {r["key"]: r for r in data["measurements"]}
    assert rows["getppid"]["in_range"] in (True, False) and rows["getppid"]["sources"]
    assert {r["operation"] for r in data["predictions"]} >= {"system call (getppid)", "loop iteration", "fork + exec"}
    json.dumps(report.jsonable(data))  # report.json can hold it


def test_table_config_shows_every_measurement_row(scratch):
    """table-generator with table-configs/os-microbench.xml: one row per measurement, its main
    variant's median filled in (columns given by title only, read from the result file)."""
    paths = sorted(RECORDED.glob("*.results.*.xml.bz2"))
    done = subprocess.run(["table-generator", "-x", str(REPO / "table-configs" / "os-microbench.xml"), "-o", str(scratch),
                           "-n", "t", "-f", "csv", *map(str, paths)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [line.split("\t") for line in (scratch / "t.table.csv").read_text().splitlines()]
    header = lines[2]
    rows = {tasks.input_of(row[0]): dict(zip(header, row)) for row in lines[3:]}
    assert set(rows) == set(printed.MEASURES)
    for measure, row in rows.items():
        assert row["status"] == "done" and float(row["median"]) > 0 and row["variant"], (measure, row)
    assert rows["mem-bandwidth"]["unit"] == "GB/s" and rows["syscall"]["variant"] == "getppid"


# ---------------------------------------------------------------------------------------------
# the real benchexec, on a scratch copy with small parameters, and the report section


def test_benchexec_runs_every_measurement_and_the_section_has_figures(osbench, scratch):
    inputs = scratch / "inputs"
    inputs.mkdir()
    paths = [write_params(inputs, m, **SMALL[m]) for m in printed.MEASURES]
    broken = inputs / "broken.txt"
    broken.write_text("measure=loop\nbogus=1\n")  # a failing run must be kept out and counted
    reps = scratch / "reps"
    tasks.write_repetitions(paths + [broken], 1, reps)
    definition = BENCHMARK.read_text().replace("../programs/tasks/os-microbench/reps/*.yml", f"{reps}/*.yml")
    assert str(reps) in definition
    (scratch / "os-microbench.xml").write_text(definition)
    code, output = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(scratch / "os-microbench.xml"),
                                 "-o", str(scratch / "results") + "/"], timeout=300)
    assert code == 0, output
    tables = results.load_results(scratch / "results", columns=printed.COLUMNS)
    assert len(tables) == 1 and len(tables[0]) == len(printed.MEASURES) + 1
    status = dict(zip((tasks.input_of(t) for t in tables[0].tasks), tables[0].status))
    assert status.pop("broken").startswith("ERROR")
    assert set(status.values()) == {"done"}, status

    sec, data = analyse.section(tables)
    assert set(data["runs"]) == set(printed.MEASURES)
    assert [e["measure"] for e in data["excluded"]] == ["broken"] and "1 run(s) left out" in sec.warnings[0]
    assert data["info"]["page-fault"]["file-fs"] != "unknown"
    titles = [f.title for f in sec.figures]
    assert titles == ["Memory latency vs working-set size", "Memory bandwidth vs buffer size",
                      "Procedure-call cost vs argument count", "All operations on one time axis"]
    for figure in sec.figures:
        image = matplotlib.image.imread(io.BytesIO(figure.png), format="png")
        assert image.shape[0] > 300 and image.shape[1] > 600
    assert all(f.verdict in report.VERDICTS for f in sec.findings)
    caches = topology.data_cache_sizes()
    if caches:
        assert data["caches"] == {str(k): v for k, v in caches.items()}
    written = report.write_report(report.Report(title="os-microbench", sections=[sec], data={"os-microbench": data}),
                                  scratch / "report")
    page = Path(written["html"]).read_text()
    assert "Memory latency vs working-set size" in page and "Predicted vs measured" in page
    assert not math.isnan(data["variants"]["getppid"]["median"])
