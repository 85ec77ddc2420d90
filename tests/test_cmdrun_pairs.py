"""Pairs of commands in one run: programs/cmdrun's `-- A --- B` (back to back in seeded orders, or
--duet: side by side on two cores) and tool_info.command's --versus, --seed, --duet and --task-name.
Real cmdrun, real processes; only one test judges a measured ratio (marked timing)."""

import math
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
import zlib

import pytest
from benchexec import tooladapter
from benchexec.tools.template import UnsupportedFeatureException
from benchexec.util import ProcessExitCode

from analysis.core.tasks import write_repetitions
from tests.helpers import REPO, run_isolated
from tool_info import command as command_tool

CMDRUN = REPO / "programs" / "bin" / "cmdrun"
SPIN = REPO / "programs" / "bin" / "spin"
LINE = re.compile(r"cmdrun-execution (\d+) side=([ab]) wall=(\S+) user=(\S+) sys=(\S+) status=(\d+)(?: core=(\d+))?(?: mode=\w+)?")
DUET_MESSAGE = ("cmdrun: --duet needs two cores in the run's CPU set, it has 1 (give the run 2 cores, "
                'e.g. cpuCores="2", or leave out --duet)')


def cmdrun(*argv, cwd=None, prefix=()):
    done = subprocess.run([*prefix, str(CMDRUN), *map(str, argv)], capture_output=True, text=True, cwd=cwd)
    return done.returncode, done.stdout, done.stderr


def parsed(out):
    """([execution lines as dicts, in output order], {summary key: value})."""
    executions = [dict(pair=int(m[1]), side=m[2], wall=float(m[3]), cpu=float(m[4]) + float(m[5]), status=int(m[6]),
                       core=None if m[7] is None else int(m[7]))
                  for m in map(LINE.fullmatch, out.splitlines()) if m]
    summary = dict(line.split("=", 1) for line in out.splitlines() if "=" in line and not line.startswith("cmdrun-"))
    return executions, summary


def splitmix_orders(seed, pairs):
    """The side that starts each pair, as cmdrun draws it: pairs in couples of opposite orders, the
    c-th couple's first pair from the low bit of the c-th splitmix64 value."""
    mask, state, orders = 2**64 - 1, seed, []
    for k in range(pairs):
        if k % 2:
            orders.append("a" if orders[-1] == "b" else "b")
            continue
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        orders.append("b" if (z ^ (z >> 31)) & 1 else "a")
    return orders


def cmdrun_starts(*options):
    code, out, _ = cmdrun(*options, "--", "true", "---", "true")
    assert code == 0
    return [e["side"] for e in parsed(out)[0][::2]]


def mean_logratio(executions, key):
    by_pair = {}
    for e in executions:
        by_pair.setdefault(e["pair"], {})[e["side"]] = e[key]
    return sum(math.log(p["b"] / p["a"]) for p in by_pair.values()) / len(by_pair)


def spin(units):
    return f"{SPIN} {units}"


# ---------------------------------------------------------------------------------------------
# cmdrun, back to back


@pytest.mark.unit
def test_cmdrun_pairs_run_each_side_once_per_pair_in_the_seeds_orders(programs):
    code, out, err = cmdrun("--repeat", "6", "--seed", "11", "--", spin(5000), "---", spin(10000))
    assert code == 0, err
    executions, summary = parsed(out)
    assert len(executions) == 12 and [e["side"] for e in executions].count("a") == 6
    assert [e["pair"] for e in executions] == [k for k in range(1, 7) for _ in range(2)]   # a pair's lines are adjacent
    assert all({e["side"] for e in executions if e["pair"] == k} == {"a", "b"} for k in range(1, 7))
    starts = [e["side"] for e in executions[::2]]
    assert starts == splitmix_orders(11, 6)
    assert all(starts[k] != starts[k + 1] for k in (0, 2, 4))         # couples of opposite orders: a first in half
    assert summary["pairs"] == "6" and summary["executions"] == "12" and "duet" not in summary
    assert not any(key.startswith("exec-") for key in summary)
    for side in "ab":
        mine = [e for e in executions if e["side"] == side]
        assert float(summary[f"{side}-walltime"].rstrip("s")) == pytest.approx(sum(e["wall"] for e in mine) / 6, abs=1e-8)
        assert float(summary[f"{side}-cputime"].rstrip("s")) == pytest.approx(sum(e["cpu"] for e in mine) / 6, abs=1e-6)
    assert all(e["cpu"] > 0 for e in executions), out   # else the summary would be nan
    assert float(summary["logratio-cputime"]) == pytest.approx(mean_logratio(executions, "cpu"), abs=1e-6)
    assert float(summary["logratio-walltime"]) == pytest.approx(mean_logratio(executions, "wall"), abs=1e-6)

    def orders(seed):
        code, out, _ = cmdrun("--repeat", "6", "--seed", seed, "--", "true", "---", "true")
        assert code == 0
        return [e["side"] for e in parsed(out)[0][::2]]

    assert orders(11) == starts                                          # the same seed, the same orders
    assert orders(0) == orders("0") == splitmix_orders(0, 6)
    assert any(orders(seed) != starts for seed in (1, 2, 3, 4, 5))       # 1 in 8 for each seed to match by chance
    assert orders("3")[:5] == cmdrun_starts("--repeat", "5", "--seed", "3")   # an odd last pair draws its own
    assert orders(2**64 - 1) == splitmix_orders(2**64 - 1, 6)


@pytest.mark.timing
def test_cmdrun_pair_where_b_does_twice_the_work_has_a_logratio_near_ln_2(programs):
    code, out, err = cmdrun("--repeat", "20", "--", spin(20000), "---", spin(40000))
    assert code == 0, err
    executions, summary = parsed(out)
    # ln 2 = 0.69; wide bounds: the shared VM moves short CPU times by 10 to 25 %, and on a loaded CI
    # host one side's 10 ms ran 8 to 45 ms within 6 pairs (20 pairs now)
    assert 0.4 < float(summary["logratio-cputime"]) < 1.0, out
    assert float(summary["b-cputime"].rstrip("s")) > float(summary["a-cputime"].rstrip("s")), out


@pytest.mark.unit
def test_cmdrun_pairs_build_both_sides_alike(programs, scratch):
    code, out, err = cmdrun("--shell", "none", "--", SPIN, "1000", "---", SPIN, "2000")
    assert code == 0, err
    executions, summary = parsed(out)
    assert sorted(e["side"] for e in executions) == ["a", "b"] and summary["pairs"] == "1"
    assert all(e["status"] == 0 for e in executions)
    # each side its own arguments; --escaped unescapes both; --prepare before each side
    code, out, err = cmdrun("--output", "inherit", "--cwd", scratch, "--escaped", "--repeat", "3", "--prepare", "echo p >> log", "--",
                            "echo A%24(echo 1) $1", "x", "---", "echo B%24(echo 2) $1", "y")
    assert code == 0, err
    printed = [line for line in out.splitlines() if line and not line.startswith("cmdrun-") and "=" not in line]
    assert sorted(printed) == ["A1 x"] * 3 + ["B2 y"] * 3
    assert (scratch / "log").read_text() == "p\n" * 6


@pytest.mark.unit
def test_cmdrun_pairs_exit_with_the_first_failing_execution(programs):
    code, out, _ = cmdrun("--", "true", "---", "exit 5")
    assert code == 5 and [e["status"] for e in parsed(out)[0] if e["side"] == "b"] == [5]
    code, out, _ = cmdrun("--", "kill -9 $$", "---", "true")
    assert code == 128 + 9
    # both fail: the first one started (seed 0 starts pair 1 with splitmix_orders(0, 1))
    code, out, _ = cmdrun("--", "exit 3", "---", "exit 5")
    assert code == {"a": 3, "b": 5}[splitmix_orders(0, 1)[0]]
    code, _, err = cmdrun("--prepare", "false", "--", "true", "---", "true")
    assert code == 2 and "--prepare command failed (exit code 1) before execution 1 side=" in err


@pytest.mark.unit
def test_cmdrun_pairs_refuse_bad_usage_with_exit_2(programs):
    for argv in (["--", "---", "true"], ["--", "true", "---"], ["--seed", "1", "--", "true"], ["--duet", "--", "true"],
                 ["--interleave", "--", "true"], ["--duet", "--interleave", "--", "true", "---", "true"],
                 ["--seed", "-1", "--", "true", "---", "true"], ["--seed", "x", "--", "true", "---", "true"],
                 ["--seed", str(2**64), "--", "true", "---", "true"]):
        code, out, err = cmdrun(*argv)
        assert code == 2 and out == "" and len(err.splitlines()) == 1, (argv, err)


# ---------------------------------------------------------------------------------------------
# cmdrun --duet


def two_cpus():
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("--duet needs two CPUs")
    return cpus[:2]


@pytest.mark.unit
def test_cmdrun_duet_runs_the_sides_at_once_on_two_cores_that_alternate(programs):
    c0, c1 = two_cpus()
    where = "echo {} $(grep Cpus_allowed_list /proc/self/status | cut -f2)"
    code, out, err = cmdrun("--output", "inherit", "--duet", "--repeat", "4", "--", where.format("a"), "---", where.format("b"))
    assert code == 0, err
    executions, summary = parsed(out)
    assert [(e["pair"], e["side"]) for e in executions] == [(k, s) for k in range(1, 5) for s in "ab"]   # a first
    assert [e["core"] for e in executions if e["side"] == "a"] == [c0, c1, c0, c1]
    assert [e["core"] for e in executions if e["side"] == "b"] == [c1, c0, c1, c0]
    assert all(e["wall"] > 0 for e in executions)
    assert summary["duet"] == "1" and summary["pairs"] == "4" and summary["executions"] == "8"
    # each side ran pinned to its core: what the commands saw is what the lines say
    for side in "ab":
        seen = [int(line.split()[1]) for line in out.splitlines() if line.startswith(f"{side} ")]
        assert seen == [e["core"] for e in executions if e["side"] == side], out


@pytest.mark.timing
def test_cmdrun_duet_sides_overlap(programs):
    two_cpus()
    # side by side: 3 pairs of two 0.3 s sleeps take about 0.9 s, not the 1.8 s of back to back
    start = time.monotonic()
    code, out, err = cmdrun("--duet", "--repeat", "3", "--", "sleep 0.3", "---", "sleep 0.3")
    took = time.monotonic() - start
    assert code == 0 and took < 1.5, (took, err)
    executions, _ = parsed(out)
    assert all(0.25 < e["wall"] < 0.6 for e in executions), out


@pytest.mark.timing
def test_cmdrun_duet_keeps_the_shorter_sides_core_busy_until_the_other_ends(programs, tmp_path):
    """The shorter side runs again, untimed, until the longer one ends, so neither runs its tail
    alone; the extra run is killed then, and its output is not the command's."""
    two_cpus()
    marks = tmp_path / "marks"
    short = f"echo started >> {marks}; echo short; sleep 0.2345"
    code, out, err = cmdrun("--output", "inherit", "--duet", "--repeat", "2", "--", short, "---", "sleep 0.5")
    assert code == 0, err
    executions, _ = parsed(out)
    a = [e for e in executions if e["side"] == "a"]
    assert all(0.2 < e["wall"] < 0.45 for e in a), out            # timed alone, not with its filler
    assert out.count("short") == 2                                  # the fillers' output is discarded
    assert marks.read_text().count("started") >= 4                  # each pair: the timed run and a filler
    time.sleep(0.1)
    left = subprocess.run(["pgrep", "-f", "sleep 0.2345"], capture_output=True, text=True).stdout
    assert left == "", left                                         # killed once the longer side ended


@pytest.mark.unit
def test_cmdrun_duet_on_one_core_is_exit_2_with_one_line(programs):
    if shutil.which("taskset") is None:
        pytest.skip("taskset (util-linux) is not installed")
    code, out, err = cmdrun("--duet", "--", "true", "---", "true", prefix=("taskset", "-c", str(min(os.sched_getaffinity(0)))))
    assert code == 2 and out == "" and err.splitlines() == [DUET_MESSAGE]


# ---------------------------------------------------------------------------------------------
# cmdrun --interleave


def side_loop(letter, marks, rounds=150):
    """A shell command that appends its letter to `marks` between bits of work: the file shows
    which side had the core when."""
    return (f"i=0; while [ $i -lt {rounds} ]; do echo {letter} >> {marks}; j=0; "
            f"while [ $j -lt 300 ]; do j=$((j+1)); done; i=$((i+1)); done; "
            "grep Cpus_allowed_list /proc/self/status | cut -f2")


@pytest.mark.unit
def test_cmdrun_interleave_hands_one_core_to_each_side_in_turn(programs, tmp_path):
    marks = tmp_path / "marks"
    code, out, err = cmdrun("--output", "inherit", "--interleave", "--seed", "3", "--repeat", "2", "--", side_loop("a", marks), "---",
                            side_loop("b", marks))
    assert code == 0, err
    executions, summary = parsed(out)
    assert summary["interleave"] == "1" and summary["pairs"] == "2" and summary["executions"] == "4"
    assert all(e["core"] is None for e in executions)          # one core for both: no core to stratify by
    letters = marks.read_text().split()
    assert sorted(set(letters)) == ["a", "b"] and len(letters) >= 4 * 150   # more: the shorter side's filler
    # back to back the letters would change side once a pair (3 times in all); here the core changed
    # hands every one or two milliseconds while both ran
    changes = sum(x != y for x, y in zip(letters, letters[1:]))
    assert changes >= 12, letters
    cores = {line for line in out.splitlines() if re.fullmatch(r"\d+", line)}
    assert len(cores) == 1, out                                    # both sides pinned to the same core
    # each side's CPU time is its own work, its wall time includes the other's turns
    for e in executions:
        assert e["cpu"] > 0 and e["wall"] >= e["cpu"]


@pytest.mark.unit
def test_cmdrun_interleave_starts_each_side_first_in_half_the_pairs(programs, tmp_path):
    marks = tmp_path / "marks"
    code, out, err = cmdrun("--interleave", "--seed", "5", "--repeat", "4", "--", f"echo a >> {marks}", "---",
                            f"echo b >> {marks}")
    assert code == 0, err
    executions, _ = parsed(out)
    firsts = [e["side"] for e in executions][::2]
    assert firsts == splitmix_orders(5, 4)       # the lines come in the order the sides had their first turn
    assert sorted(firsts) == ["a", "a", "b", "b"]


@pytest.mark.timing   # the filler runs at SCHED_IDLE: other load on the core would keep it from starting
def test_cmdrun_interleave_gives_the_shorter_sides_turns_to_a_filler(programs, tmp_path):
    """Once the shorter side ends, its command runs again, untimed, in its turns, until the longer
    one ends: the longer side's tail is interleaved as the rest was, and the filler is killed then."""
    marks = tmp_path / "marks"
    short = f"echo started >> {marks}; echo short; {SPIN} 2345"
    code, out, err = cmdrun("--output", "inherit", "--interleave", "--repeat", "2", "--", short, "---", f"{SPIN} 200000")
    assert code == 0, err
    executions, _ = parsed(out)
    assert len(executions) == 4 and all(e["status"] == 0 for e in executions)
    assert out.count("short") == 2                                  # the fillers' output is discarded
    assert marks.read_text().count("started") >= 4                  # each pair: the timed run and a filler
    time.sleep(0.1)
    left = subprocess.run(["pgrep", "-f", f"{SPIN} 2345"], capture_output=True, text=True).stdout
    assert left == "", left                                         # killed once the longer side ended


@pytest.mark.timing
def test_cmdrun_interleave_charges_neither_side_of_a_null_pair_more(programs):
    """A 1 ms command against itself, interleaved: side a, always forked first, read 4.4 % (0.05 ms)
    dearer than side b (one-sample t on the pairs' log ratios of CPU time, n 600, p 3e-13); forked
    in the order of the turns, which alternates, neither side is (p 0.13 and 0.8 on the same host).
    One-sample t test, alpha 0.001, n 600 pairs in 5 seeded runs."""
    from scipy import stats

    workload = REPO / "programs" / "bin" / "workload"
    logs = []
    for seed in range(5):
        code, out, err = cmdrun("--shell", "none", "--interleave", "--repeat", "120", "--seed", seed, "--",
                                workload, "compute", "1", "---", workload, "compute", "1")
        assert code == 0, err
        executions, _ = parsed(out)
        cpu = {(e["pair"], e["side"]): e["cpu"] for e in executions}
        logs += [math.log(cpu[k, "a"] / cpu[k, "b"]) for k in range(1, 121)]
    test = stats.ttest_1samp(logs, 0)
    mean = 100 * sum(logs) / len(logs)
    assert test.pvalue > 0.001, f"mean log(a / b) {mean:+.2f} %, p {test.pvalue:.2g}"


@pytest.mark.unit
def test_cmdrun_interleave_reports_a_failing_side_and_leaves_no_process(programs):
    code, out, err = cmdrun("--interleave", "--repeat", "2", "--", "exit 3", "---", f"{SPIN} 20011")
    executions, _ = parsed(out)
    assert code == 3 and [e["status"] for e in executions if e["side"] == "a"] == [3, 3], (out, err)
    assert [e["status"] for e in executions if e["side"] == "b"] == [0, 0]       # the other side ran to its end
    left = subprocess.run(["pgrep", "-f", f"{SPIN} 20011"], capture_output=True, text=True).stdout
    assert left == "", left
    code, out, err = cmdrun("--interleave", "--", "/nonexistent/cmd", "---", "true")
    assert code == 127 and "cannot execute /nonexistent/cmd" in err


# ---------------------------------------------------------------------------------------------
# tool_info.command


def cmdline(options, inputs=("/kit/tasks/run",)):
    tool = tooladapter.adapt_to_current_version(command_tool.Tool())
    task = tooladapter.CURRENT_BASETOOL.Task(input_files=list(inputs), identifier=None, property_file=None, options=None)
    return tool.cmdline(str(CMDRUN), list(options), task, tooladapter.CURRENT_BASETOOL.ResourceLimits())


@pytest.mark.unit
def test_tool_info_versus_gives_cmdrun_a_pair():
    line = cmdline(["--command", "./a --fast", "--versus", "./b", "--task-name", "run.r007.yml"])
    assert line == [str(CMDRUN), "--shell", "sh", "--seed", "7", "--", "./a --fast", "/kit/tasks/run",
                    "---", "./b", "/kit/tasks/run"]
    line = cmdline(["--cwd", "/src", "--prepare", "make", "--repeat", "3", "--warmup", "--seed", "2", "--duet",
                    "--task-name", "run.r012.yml", "--command", "./a", "--versus", "./b", "-v", "x y"])
    assert line == [str(CMDRUN), "--shell", "sh", "--cwd", "/src", "--prepare", "make", "--repeat", "3", "--warmup",
                    "--seed", str(2 * 1000003 + 12), "--duet", "--", "./a -v 'x y'", "/kit/tasks/run",
                    "---", "./b -v 'x y'", "/kit/tasks/run"]
    line = cmdline(["--interleave", "--command", "./a", "--versus", "./b", "--task-name", "run.r001.yml"])
    assert line[:line.index("--")] == [str(CMDRUN), "--shell", "sh", "--seed", "1", "--interleave"]
    # --shell none: both sides split into words, the same arguments appended
    line = cmdline(["--shell", "none", "--command", "./a 'p q'", "--versus", "./b", "-v"])
    assert line[line.index("--"):] == ["--", "./a", "p q", "-v", "---", "./b", "-v"]
    # escaped as a whole: a $ on either side escapes both
    line = cmdline(["--command", "echo a", "--versus", "echo $HOME 5%"])
    assert "--escaped" in line and line[line.index("---") + 1:] == ["echo %24HOME 5%25", "/kit/tasks/run"]


@pytest.mark.unit
def test_tool_info_seeds_differ_between_repetitions_and_repeat_in_a_rerun():
    def seed(*options):
        line = cmdline(["--command", "./a", "--versus", "./b", *options])
        return int(line[line.index("--seed") + 1])

    assert [seed("--task-name", f"run.r{k:03d}.yml") for k in (1, 2, 3)] == [1, 2, 3]
    assert seed("--task-name", "run.r1000.yml") == 1000 and seed("--seed", "5", "--task-name", "run.r001.yml") == 5000016
    assert seed("--task-name", "warmup.r002.yml") == 2
    assert seed() == zlib.crc32(b"run") and seed("--task-name", "plain.yml") == zlib.crc32(b"plain.yml")
    assert seed("--seed", str(2**64 - 1), "--task-name", "run.r001.yml") == ((2**64 - 1) * 1000003 + 1) % 2**64


@pytest.mark.unit
def test_tool_info_refuses_pair_options_without_versus():
    for options, message in ((["--duet"], "--duet only with --versus"), (["--seed", "3"], "--seed only with --versus"),
                             (["--interleave"], "--interleave only with --versus"),
                             (["--versus", "./b", "--duet", "--interleave"], "give one of them"),
                             (["--task-name", "run.r001.yml"], "--task-name only with --versus"),
                             (["--versus", "./b", "--seed", "-1"], "--seed must be an unsigned 64-bit integer")):
        with pytest.raises(UnsupportedFeatureException, match=re.escape(message)):
            cmdline(["--command", "./a", *options])
    with pytest.raises(UnsupportedFeatureException, match="--versus CMD needs --command"):
        cmdline(["--versus", "./b"], ["/t/script.sh"])
    with pytest.raises(UnsupportedFeatureException, match="border between two commands"):
        cmdline(["--shell", "none", "--command", "./a --- x"])


@pytest.mark.unit
def test_tool_info_pair_line_runs_in_cmdrun_and_its_columns_are_read(programs, scratch):
    tool = command_tool.Tool()
    line = cmdline(["--cwd", str(scratch), "--repeat", "2", "--warmup", "--task-name", "run.r003.yml",
                    "--command", spin(1000), "--versus", spin(2000)], [str(scratch / "run")])
    done = subprocess.run(line, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    output = tooladapter.CURRENT_BASETOOL.RunOutput(done.stdout.splitlines())
    assert tool.get_value_from_output(output, "pairs") == "2" and tool.get_value_from_output(output, "executions") == "4"
    assert float(tool.get_value_from_output(output, "a-cputime").rstrip("s")) > 0
    assert math.isfinite(float(tool.get_value_from_output(output, "logratio-cputime")))
    run = tooladapter.CURRENT_BASETOOL.Run(line, ProcessExitCode.create(value=0), output, None)
    assert tool.determine_result(run) == command_tool.RESULT_WARMUP


@pytest.mark.benchexec
def test_benchexec_gives_each_repetition_its_seed_through_taskdef_name(programs, scratch):
    (scratch / "tasks").mkdir()
    (scratch / "tasks" / "run").write_text("a repetition\n")
    write_repetitions([scratch / "tasks" / "run"], 3, scratch / "tasks")
    (scratch / "pair.xml").write_text(f"""<?xml version="1.0"?>
<!DOCTYPE benchmark PUBLIC "+//IDN sosy-lab.org//DTD BenchExec benchmark 2.3//EN" "https://www.sosy-lab.org/benchexec/benchmark-2.3.dtd">
<benchmark tool="tool_info.command" cpuCores="2">
  <option name="--task-name">${{taskdef_name}}</option>
  <option name="--seed">4</option>
  <option name="--repeat">2</option>
  <rundefinition name="pair">
    <option name="--command">{spin(1000)}</option>
    <option name="--versus">{spin(2000)}</option>
  </rundefinition>
  <tasks name="runs"><include>tasks/run.r*.yml</include></tasks>
</benchmark>
""")
    code, log = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(scratch / "pair.xml"), "--outputpath",
                              str(scratch / "out") + "/", "--numOfThreads", "1"], cwd=REPO)
    assert code == 0, log
    [archive] = (scratch / "out").glob("*.logfiles.zip")
    with zipfile.ZipFile(archive) as logs:
        texts = {os.path.basename(name): logs.read(name).decode() for name in logs.namelist() if name.endswith(".log")}
    assert sorted(texts) == [f"pair.run.r00{k}.yml.log" for k in (1, 2, 3)]
    for k in (1, 2, 3):
        text = texts[f"pair.run.r00{k}.yml.log"]
        assert f" --seed {4 * 1000003 + k} -- " in text.splitlines()[0] and "pairs=2" in text.splitlines(), text
