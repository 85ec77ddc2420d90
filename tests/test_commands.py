"""Shell commands as benchmarks: `timekit bench`, `timekit ab 'CMD A' 'CMD B'`, tool_info.command and
programs/cmdrun. The benchexec tests compile two builds of a small C loop (B does 10 % more work)
and run them under the real benchexec; they assert verdicts and shapes, never times."""

import json
import math
import os
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import pytest
from benchexec import tooladapter
from benchexec.tools.template import UnsupportedFeatureException
from benchexec.util import ProcessExitCode

from analysis.sweep import lint
from analysis.tools.commands import definition, export, figures, output, spec
from tests.helpers import REPO, run_isolated
from tool_info import command as command_tool

LOOP = REPO / "tests" / "data" / "commands" / "loop.c"
MILLIONS = 600   # about 0.2 s of one CPU here; the tests assert verdicts, not times


def timekit(*argv, cwd):
    """`timekit ARGV` started in `cwd` (the commands run there); (exit code, stdout + stderr)."""
    return run_isolated([sys.executable, "-m", "analysis.cli", *map(str, argv)], cwd=cwd)


def build(directory, name, millions):
    subprocess.run(["cc", "-O2", f"-DMILLIONS={millions}", "-o", str(directory / name), str(LOOP)], check=True)
    return f"./{name}"


# ---------------------------------------------------------------------------------------------
# arguments, parameters, names


@pytest.mark.unit
def test_an_argument_that_is_not_one_word_ending_in_xml_is_a_command(scratch):
    (scratch / "base.xml").write_text("<benchmark/>")
    assert spec.is_definition(scratch / "base.xml") and spec.is_definition("missing.xml")
    assert not spec.is_definition("./loop-a") and not spec.is_definition("cat results.xml")
    assert not spec.is_definition("make -C build all")


@pytest.mark.unit
def test_parameter_lists_expand_only_the_commands_that_use_them():
    options = spec.Options(parameters=spec.parse_parameters([("size", "10,100"), ("mode", "a,b")]),
                           prepare="rm -f cache.{size}")
    commands = spec.expand(["./prog -s {size} -m {mode}", "./other"], options)
    assert [c.text for c in commands[:4]] == ["./prog -s 10 -m a", "./prog -s 10 -m b", "./prog -s 100 -m a",
                                              "./prog -s 100 -m b"]
    # ./other does not contain {size}, but --prepare does: it runs once per size, with its own prepare
    assert [(c.text, c.prepare) for c in commands[4:]] == [("./other", "rm -f cache.10"), ("./other", "rm -f cache.100")]
    assert commands[0].assignment == {"size": "10", "mode": "a"} and commands[0].prepare == "rm -f cache.10"
    assert len({c.name for c in commands}) == len(commands)           # unique run definition names
    assert all(spec._UNSAFE.search(c.name) is None for c in commands)  # safe in BenchExec's file names


@pytest.mark.unit
def test_bad_parameter_lists_are_one_line():
    with pytest.raises(spec.CommandError, match="no command contains {n}"):
        spec.expand(["./prog"], spec.Options(parameters=spec.parse_parameters([("n", "1,2")])))
    with pytest.raises(spec.CommandError, match="an empty value"):
        spec.parse_parameters([("n", "1,,2")])
    with pytest.raises(spec.CommandError, match="given twice"):
        spec.parse_parameters([("n", "1"), ("n", "2")])
    with pytest.raises(spec.CommandError, match="letters, digits"):
        spec.parse_parameters([("a b", "1")])


@pytest.mark.unit
def test_names_are_safe_and_unique():
    assert spec.slug("./build/prog --size 10 'x y'") == "build-prog-size-10-x-y"
    assert spec.slug("   ") == "command" and len(spec.slug("x" * 500)) == spec.NAME_LENGTH
    assert spec.unique(["a", "b", "a", "a"]) == ["a", "b", "a-2", "a-3"]


# ---------------------------------------------------------------------------------------------
# the generated definition


def generated(scratch, **overrides):
    values = dict(runs=3, warmup=2, prepare="touch {n}.stamp", shell="bash", repeat=4, cwd=str(scratch),
                  parameters=spec.parse_parameters([("n", "1,2")]))
    options = spec.Options(**{**values, **overrides})
    commands = spec.expand(['./prog {n} && echo "a<b" & $HOME', "sleep 0"], options)
    tasks = definition.write_tasks(scratch, options)
    path = definition.write_definition(scratch / "bench.xml", [(c.name, c.text, c.prepare) for c in commands],
                                       options, tasks, "written by a test -- with dashes")
    return path, commands, options


@pytest.mark.unit
def test_the_generated_definition_is_valid_against_benchexecs_dtd(scratch):
    path, commands, options = generated(scratch)
    assert lint.check([path]) == []
    from lxml import etree

    root = etree.parse(str(path)).getroot()
    assert root.get("tool") == "tool_info.command"
    assert [r.get("name") for r in root.iter("rundefinition")] == [c.name for c in commands]
    assert [r.find("option").text for r in root.iter("rundefinition")] == [c.text for c in commands]  # verbatim
    assert {o.get("name"): o.text for o in root.findall("option")} == {"--cwd": str(scratch), "--shell": "bash",
                                                                      "--repeat": "4"}
    warmup, runs = root.findall("tasks")
    assert warmup.get("name") == "warmup" and warmup.find("option").get("name") == "--warmup"
    assert len(list(scratch.glob("tasks/run.r*.yml"))) == 3 and len(list(scratch.glob("tasks/warmup/warmup.r*.yml"))) == 2
    assert lint.check(sorted(scratch.glob("tasks/**/*.yml"))) == []


# ---------------------------------------------------------------------------------------------
# the tool-info module


def cmdline(options, inputs=("/kit/tasks/run",)):
    tool = tooladapter.adapt_to_current_version(command_tool.Tool())
    task = tooladapter.CURRENT_BASETOOL.Task(input_files=list(inputs), identifier=None, property_file=None, options=None)
    return tool.cmdline("programs/bin/cmdrun", list(options), task, tooladapter.CURRENT_BASETOOL.ResourceLimits())


@pytest.mark.unit
def test_the_command_reaches_the_shell_as_written_even_with_dollars():
    line = cmdline(["--cwd", "/src", "--command", "./prog --n 3"])
    assert line == ["programs/bin/cmdrun", "--shell", "sh", "--cwd", "/src", "--", "./prog --n 3", "/kit/tasks/run"]
    # BenchExec expands $VAR and a leading ~ in every argument (os.path.expandvars): escaped for cmdrun
    line = cmdline(["--command", "echo $HOME ${USER} 100%"])
    assert "--escaped" in line and line[line.index("--") + 1] == "echo %24HOME %24{USER} 100%25"
    # further options are arguments of the command; --shell none splits it into words
    assert cmdline(["--command", "./prog", "-v", "x y"])[-2] == "./prog -v 'x y'"
    line = cmdline(["--shell", "none", "--command", "./prog 'a b'", "--repeat", "5", "--warmup"])
    assert line[line.index("--"):] == ["--", "./prog", "a b"] and line[line.index("--repeat") + 1] == "5"
    assert "--warmup" in line
    # no --command: the task's first input file is a script
    assert cmdline([], ["/t/script.sh", "/t/data"])[-3:] == ["sh", "/t/script.sh", "/t/data"]
    with pytest.raises(UnsupportedFeatureException, match="--repeat must be a positive integer"):
        cmdline(["--command", "x", "--repeat", "0"])


@pytest.mark.unit
def test_a_warmup_run_gets_a_status_every_statistic_skips():
    tool = command_tool.Tool()

    def status(line, code=0):
        run = tooladapter.CURRENT_BASETOOL.Run(line, ProcessExitCode.create(value=code),
                                               tooladapter.CURRENT_BASETOOL.RunOutput([]), None)
        return tool.determine_result(run)

    assert status(["cmdrun", "--warmup", "--", "x"]) == "warmup"
    assert status(["cmdrun", "--", "x", "--warmup"]) == "done"       # an argument of the command
    assert status(["cmdrun", "--warmup", "--", "x"], 3) == "ERROR (exit code 3)"


# ---------------------------------------------------------------------------------------------
# cmdrun


def cmdrun(*argv, cwd=None, env=None):
    done = subprocess.run([str(REPO / "programs" / "bin" / "cmdrun"), *argv], capture_output=True, text=True, cwd=cwd,
                          env=env)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.unit
def test_cmdrun_runs_a_plain_command_without_the_shell(programs, scratch):
    """A command of plain words is executed as they are (no sh start-up in its time); anything the
    shell would read differently (a variable, quotes, a redirection, an assignment, a builtin)
    still goes through sh. An `sh` first on PATH records every start."""
    log = scratch / "sh-started"
    (scratch / "sh").write_text(f"#!/bin/dash\necho \"$2\" >> {log}\nexec /bin/dash \"$@\"\n")
    (scratch / "sh").chmod(0o755)
    env = {**os.environ, "PATH": f"{scratch}:{os.environ['PATH']}"}
    spin = str(REPO / "programs" / "bin" / "spin")
    plain = [f"{spin} 10", f"{spin}  --version", "spin 10"]
    shell = [f"{spin} 10 > /dev/null", f'{spin} "10"', "X=1 spin 10", "echo $1", "true", f"{spin} 10; true", "~/x"]
    env["PATH"] = f"{spin.rsplit('/', 1)[0]}:{env['PATH']}"
    for command in plain + shell:
        cmdrun("--", command, "/kit/task", env=env)
    started = log.read_text().splitlines() if log.exists() else []
    assert started == shell
    code, out, _ = cmdrun("--output", "inherit", "--", "echo $0 $1", "/kit/task", env=env)
    assert code == 0 and out.splitlines()[0] == "sh /kit/task"
    code, _, err = cmdrun("--", "/nonexistent/prog 1", env=env)
    assert code == 127 and "cannot execute /nonexistent/prog" in err
    code, _, err = cmdrun("--", f"{scratch} 1", env=env)
    assert code == 126 and "Permission denied" in err


def execution_lines(out):
    return [line for line in out.splitlines() if line.startswith("cmdrun-execution ")]


@pytest.mark.unit
def test_cmdrun_discards_the_commands_output_unless_asked_as_hyperfine_does(programs, scratch):
    """By default (null) nothing a command writes reaches cmdrun's output, binary or unterminated;
    inherit passes it through with every cmdrun-execution line on a line of its own; pipe drains it;
    a FILE receives it; stderr is kept only for the first failing execution's last lines."""
    binary = "head -c 200000 /dev/urandom; printf 'no newline'"
    done = subprocess.run([str(REPO / "programs" / "bin" / "cmdrun"), "--repeat", "2", "--", binary], capture_output=True)
    assert done.returncode == 0 and len(done.stdout) < 1000 and len(execution_lines(done.stdout.decode())) == 2
    done = subprocess.run([str(REPO / "programs" / "bin" / "cmdrun"), "--output", "inherit", "--repeat", "2", "--",
                           "printf 'no newline'"], capture_output=True, text=True)
    assert len(execution_lines(done.stdout)) == 2 and done.stdout.count("no newline") == 2
    code, out, _ = cmdrun("--output", "pipe", "--repeat", "3", "--", "seq 100000")
    assert code == 0 and "100000" not in out and len(execution_lines(out)) == 3
    code, out, _ = cmdrun("--output", str(scratch / "out.txt"), "--repeat", "2", "--", "echo one; echo two >&2")
    assert code == 0 and (scratch / "out.txt").read_text() == "one\n" * 2 and "two" not in out
    code, out, err = cmdrun("--repeat", "3", "--", "echo quiet >&2; echo say; exit 3")
    assert code == 3 and err == "quiet\n" and "say" not in out   # once, though all three failed
    code, out, err = cmdrun("--", "seq 100000 >&2; exit 1")
    assert err.splitlines()[-1] == "100000" and len(err) <= 4096 and err.splitlines()[0].isdigit()
    code, _, err = cmdrun("--output", str(scratch / "missing" / "out.txt"), "--", "true")
    assert code == 2 and "cannot write the commands' output" in err


@pytest.mark.unit
def test_cmdrun_runs_prepare_before_each_execution_and_times_each(programs, scratch):
    code, out, _ = cmdrun("--output", "inherit", "--cwd", str(scratch), "--repeat", "3", "--prepare", "echo p >> log",
                          "--", 'echo "run $(wc -l < log) $1"', "arg")
    assert code == 0
    assert [line for line in out.splitlines() if line.startswith("run")] == ["run 1 arg", "run 2 arg", "run 3 arg"]
    assert [line.split()[1] for line in out.splitlines() if line.startswith("cmdrun-execution")] == ["1", "2", "3"]
    assert "executions=3" in out.splitlines() and float(out.split("exec-walltime=")[1].split("s")[0]) > 0
    code, out, _ = cmdrun("--output", "inherit", "--escaped", "--", "echo %24(echo ok) 5%25")
    assert out.splitlines()[0] == "ok 5%"


@pytest.mark.unit
def test_cmdrun_passes_on_the_commands_failure(programs):
    code, out, _ = cmdrun("--repeat", "2", "--", "exit 7")
    assert code == 7 and out.count("status=7") == 2
    code, _, err = cmdrun("--prepare", "false", "--", "true")
    assert code == 2 and "--prepare command failed" in err
    code, _, err = cmdrun("--shell", "none", "--", "/nonexistent/prog")
    assert code == 127 and "cannot execute /nonexistent/prog" in err
    code, _, err = cmdrun("--cwd", "/nonexistent", "--", "true")
    assert code == 2 and "cannot change to directory" in err


# ---------------------------------------------------------------------------------------------
# output and exports on given figures


def fake(command, times, sizes):
    f = figures.Figures(command=command, name=spec.slug(command), parameters={"n": "1"}, column="walltime",
                        times=times, mean=sum(times) / len(times), stddev=0.01, median=sorted(times)[len(times) // 2],
                        min=min(times), max=max(times), user=0.1, system=math.nan, cputime=0.1, exit_codes=[0] * len(times),
                        runs=len(times), left_out=0, executions_per_run=1, reruns=len(sizes), rerun_sizes=sizes)
    f.rerun_means = [float(sum(x) / len(x)) for x in f.by_rerun()]
    return f


@pytest.mark.unit
def test_exports_have_hyperfines_fields_and_the_kits(scratch):
    a = fake("./a", [0.20, 0.21, 0.20, 0.22, 0.21, 0.20], [3, 3])
    b = fake("./b", [0.30, 0.31, 0.30, 0.32, 0.31, 0.30], [3, 3])
    args = SimpleNamespace(export_json=scratch / "o.json", export_markdown=scratch / "o.md", export_csv=scratch / "o.csv")
    export.write(args, [a, b], {"benchexec": {"per_run": 0.2}})
    data = json.loads((scratch / "o.json").read_text())
    entry = data["results"][1]
    assert set(export.HYPERFINE) <= set(entry) and {"reruns", "rerun_means", "cv_between", "between_share"} <= set(entry)
    assert entry["command"] == "./b" and entry["times"] == b.times and entry["system"] is None  # NaN -> null
    assert data["benchexec"] == {"per_run": 0.2}
    markdown = (scratch / "o.md").read_text().splitlines()
    assert markdown[0].startswith("| Command | Mean [ms] |") and "`./a`" in markdown[2] and "| 1.00 |" in markdown[2]
    header, first, _ = (scratch / "o.csv").read_text().splitlines()
    assert header.startswith("command,mean,stddev,median,user,system,min,max,") and header.endswith("parameter_n")
    assert first.startswith("./a,")


@pytest.mark.unit
def test_a_command_shorter_than_benchexecs_cost_per_run_is_said_so():
    short, long = fake("./short", [0.003] * 4, [2, 2]), fake("./long", [0.5] * 4, [2, 2])
    cost = figures.Cost(per_run=0.2, in_walltime=0.006, gaps=10)
    lines = output.cost_lines(cost, [short, long], spec.Options())
    assert "200.0 ms around each run" in lines[0]
    [note] = lines[1:]
    assert note.startswith("note: ./short takes 3.0 ms a run") and "--repeat 67" in note and "trade-off" in note
    assert output.cost_lines(cost, [short], spec.Options(repeat=67))[1:] == []   # already repeated


# ---------------------------------------------------------------------------------------------
# under the real benchexec: small (3 reruns of 5 runs of a ~0.2 s loop), verdicts not times


@pytest.mark.benchexec
def test_bench_writes_a_definition_that_plain_benchexec_reruns(programs, scratch):
    loop = build(scratch, "loop-a", MILLIONS // 4)
    code, text = timekit("bench", loop, "echo {word}", "-L", "word", "x,y", "--reruns", "2", "--runs", "2", "-n", "loop",
                         "--warmup", "1", "--output", "bench", "--export-csv", "b.csv", cwd=scratch)   # relative to cwd
    assert code == 0, text
    assert [line for line in text.splitlines() if line.startswith("Benchmark ")] == [
        "Benchmark 1 (loop): ./loop-a", "Benchmark 2: echo x", "Benchmark 3: echo y"]   # #2, #3 below
    assert "Summary" in text and "BenchExec here:" in text and "note: #2 takes" in text  # shorter than a run's cost
    assert "times faster than loop (95 % CI" in text
    assert len((scratch / "b.csv").read_text().splitlines()) == 4
    code, again = timekit("bench", "--resume", "--output", scratch / "bench", cwd=scratch)   # nothing left to run
    assert code == 0 and again.count("Benchmark ") == 3, again
    definition_file = scratch / "bench" / "bench.xml"
    assert lint.check([definition_file]) == []
    code, log = run_isolated([sys.executable, "-m", "benchexec.benchexec", str(definition_file), "--outputpath",
                              str(scratch / "rerun") + "/", "--numOfThreads", "1"], cwd=REPO)
    assert code == 0, log
    from analysis.sweep.load import load_tables

    tables = load_tables(scratch / "rerun", {"status", "exec-walltime"})[0]
    assert sorted(t.rundefinition for t in tables) == ["echo-x", "echo-y", "loop-a"]
    for table in tables:
        assert list(table.status) == ["warmup", "done", "done"], table.path
        assert (table.columns["exec-walltime"] > 0).all()
    code, text = timekit("report", scratch / "bench", "--output", scratch / "report", cwd=REPO)
    assert code == 0 and (scratch / "report" / "report.html").exists(), text


@pytest.mark.unit
def test_bad_command_input_is_one_line():
    def timekit_in(cwd, *argv):
        done = subprocess.run([sys.executable, "-m", "analysis.cli", *argv], cwd=cwd, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        return done.returncode, done.stderr.strip()

    with tempfile.TemporaryDirectory(dir="/tmp") as under_tmp:   # the container hides /tmp (pytest's tmp_path may not be there)
        code, err = timekit_in(under_tmp, "bench", "true")
    assert code == 2 and "BenchExec's container hides /tmp" in err and len(err.splitlines()) == 1, err
    code, err = timekit_in(REPO, "bench", "./x {n}", "-L", "m", "1,2", "--output", REPO / ".pytest-tmp" / "never")
    assert code == 2 and "-L m: no command contains {m}" in err, err
    code, err = timekit_in(REPO, "ab", "base.xml", "./new")
    assert code == 2 and "not a mix" in err, err
    code, err = timekit_in(REPO, "bench")
    assert code == 2 and "give one or more commands" in err, err


@pytest.mark.benchexec
def test_a_command_that_always_fails_is_one_line_with_where_to_look(programs, scratch):
    code, text = timekit("bench", "echo oops >&2; exit 3", "--reruns", "2", "--runs", "1", "--output", scratch / "b",
                         cwd=scratch)
    assert code == 2 and "timekit: error: echo oops >&2; exit 3: no run finished normally" in text, text
    error = next(line for line in text.splitlines() if line.startswith("timekit: error:"))
    assert "ERROR (exit code 3)" in error and '"oops"' in error and "Traceback" not in text


@pytest.mark.benchexec
def test_an_input_under_tmp_is_named_as_hidden_by_the_container(programs, scratch):
    """The file exists (by hand the command works); inside BenchExec's container /tmp is empty."""
    with tempfile.NamedTemporaryFile(dir="/tmp", prefix="timekit-input-", suffix=".txt") as hidden:
        code, text = timekit("ab", f"cat {hidden.name}", f"cat {hidden.name}", "--reruns", "2", "--runs", "1",
                             "--output", scratch / "ab", cwd=scratch)
    errors = [line for line in text.splitlines() if line.startswith("timekit: error:")]
    assert code == 2 and len(errors) == 1, text
    assert "No such file" in errors[0] and f"{hidden.name} lies under /tmp, which BenchExec's container hides" in errors[0]

