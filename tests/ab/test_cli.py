"""The edge of `timekit ab`, `timekit bench` and `timekit compare`, tried as a new user would: a
wrong invocation is one line on stderr and exit 2 before anything is written; a command that
cannot run (a misspelled binary, a non-zero exit, an input the container hides, a failing
--prepare) stops at its first execution, before any invocation, within a few seconds;
--ignore-failure measures what exits non-zero; the output is compact unless --verbose."""

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from analysis import cli
from analysis.core.errors import UserError
from analysis.tools.commands import definition, failures, output, spec
from analysis.ab import command_pairs
from analysis.tools.commands import cli as commands_cli
from tests.helpers import REPO, run_isolated

SPIN = REPO / "programs" / "bin" / "spin"
ERROR_PATH_SECONDS = 3.0   # an error path, not a speed target: hyperfine takes 0.08 s, the kit took 15-20 s


def timekit(cwd, *argv):
    """(exit code, stdout, stderr, seconds) of `timekit ARGV` started in `cwd`."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "analysis.cli", *map(str, argv)], cwd=cwd, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def listing(directory):
    return sorted(str(p.relative_to(directory)) for p in Path(directory).rglob("*"))


def assert_one_line_and_nothing_written(scratch, argv, expected=""):
    before = listing(scratch)
    code, out, err, seconds = timekit(scratch, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and not out.strip(), (argv, code, out, err)
    assert lines[0].startswith("timekit") and ": error: " in lines[0] and "Traceback" not in err, err
    assert expected in lines[0], (expected, lines[0])
    assert listing(scratch) == before, (argv, set(listing(scratch)) - set(before))
    return lines[0], seconds


# ---------------------------------------------------------------------------------------------
# wrong invocations: argparse's and the kit's own checks


WRONG = [
    (["ab"], "give the two commands to compare"),
    (["ab", "./a"], "one command given (./a); ab compares two"),
    (["ab", "a.xml"], "one benchmark definition given"),
    (["ab", "./a", "./b", "--nosuch"], "timekit ab: error: unrecognized arguments: --nosuch"),
    (["ab", "./a", "./b", "--threshold", "2"], "--threshold: '2' is not a fraction between 0 and 1: write 0.02 or 2%"),
    (["ab", "./a", "./b", "--threshold", "x"], "--threshold"),
    (["ab", "./a", "./b", "--alpha", "0"], "--alpha"),
    (["ab", "./a", "./b", "--design", "nope"], "invalid choice: 'nope'"),
    (["ab", "./a", "./b", "--reruns", "1"], "--reruns must be 2 or more"),
    (["ab", "./a", "./b", "--reruns", "0"], "is not a positive integer"),
    (["ab", "./a", "./b", "--load", "-1"], "--load 0 or more"),
    (["ab", "./a", "./b", "--runs", "0"], "--runs"),
    (["ab", "./a", "./b", "--warmup", "x"], "--warmup"),
    (["ab", "./a", "./b", "--until", "0"], "--until"),
    (["ab", "./a", "./b", "--until-decided", "--budget", "soon"], "is not a duration"),
    (["ab", "./a", "./b", "--reruns", "4", "--budget", "5m"], "--budget bounds the run until decided"),
    (["ab", "./a", "./b", "--until", "5", "--until-decided"], "give one of them"),
    (["ab", "./a", "./b", "--reruns", "4", "--max-reruns", "9"], "--max-reruns bounds the run until decided"),
    (["ab", "", "./b"], "an empty command"),
    (["ab", "./a", "b.xml"], "not a mix"),
    (["ab", "a.xml", "b.xml", "c.xml"], "two benchmark definitions, got 3"),
    (["ab", "a.xml", "b.xml", "--runs", "3"], "--runs: for shell commands only"),
    (["ab", "missing-a.xml", "missing-b.xml"], "missing-a.xml"),
    (["ab", "a.xml", "b.xml", "--design", "interleaved"], "--design interleaved runs two shell commands"),
    (["ab", "./a", "./b", "--per-task"], "--per-task: for benchmark definitions"),
    (["ab", "./a", "./b", "--column", "memory"], "--design separate"),
    (["ab", "./a", "./b", "--design", "interleaved", "--column", "walltime"], "only exec-cputime compares them"),
    (["ab", "./a", "./b", "-L", "n", "1,2"], "-L n: no command contains {n}"),
    (["ab", "./a {n}", "./b", "-L", "n"], "expected 2 arguments"),
    (["ab", "./a", "./b", "--export-json", "."], "--export-json .: a directory"),
    (["ab", "./a", "./b", "--output", "a-file"], "a file, not a directory"),
    (["ab", "./a", "./b", "--resume"], "give none with it"),
    (["ab", "--resume"], "no A/B run to resume under"),
    (["ab", "--resume", "--output", "nothing"], "not a readable A/B manifest"),
    (["bench"], "give one or more commands"),
    (["bench", "--nosuch", "./a"], "timekit bench: error: unrecognized arguments: --nosuch"),
    (["bench", "./a", "--reruns", "0"], "--reruns"),
    (["bench", "./a", "--resume"], "give none with it"),
    (["bench", "./a", "-L", "n", "1"], "-L n: no command contains {n}"),
    (["bench", "./a {n}", "-L", "n", "1,,2"], "an empty value"),
    (["bench", "./a", "--export-csv", "."], "--export-csv .: a directory"),
    (["bench", "./a", "--shell"], "expected one argument"),
    (["bench", "--resume", "--output", "nothing"], "not a readable bench manifest"),
    (["compare"], "timekit compare: error: the following arguments are required: base, new"),
    (["compare", "a"], "required: new"),
    (["compare", "a", "b"], "a: no such file"),
    (["compare", "a", "b", "--threshold", "5"], "--threshold: '5' is not a fraction between 0 and 1: write 0.05 or 5%"),
    (["compare", "a", "b", "--format", "x"], "invalid choice: 'x'"),
    (["compare", "a", "b", "--nosuch"], "timekit compare: error: unrecognized arguments: --nosuch"),
    (["compare", "ab/base", "ab/new"], "ran under a paired design, which holds base and new in every invocation"),
    (["compare", REPO / "docs" / "calibration-between" / "base", REPO / "docs" / "calibration-between" / "new",
      "--column", "cputiem"], "--column cputiem: no result file of"),
    (["ab", "./a", "./b", "--seed", "-1"], "--seed: '-1' is not a seed"),
    ([], "the following arguments are required: COMMAND"),
    (["nosuch"], "invalid choice: 'nosuch'"),
]


@pytest.mark.unit
@pytest.mark.parametrize("argv,expected", WRONG, ids=[" ".join(map(str, a)) or "(none)" for a, _ in WRONG])
def test_a_wrong_invocation_is_one_line_exit_2_and_writes_nothing(argv, expected, scratch):
    (scratch / "a-file").write_text("not a directory\n")
    (scratch / "ab").mkdir()
    (scratch / "ab" / "paired.json").write_text("{}")   # an A/B run of a paired design: no base/ and new/
    assert_one_line_and_nothing_written(scratch, argv, expected)


@pytest.mark.unit
def test_options_may_stand_between_the_commands_as_in_hyperfine():
    args = cli.build_parser().parse_args(["bench", "./prog", "-L", "n", "10,100", "./prog {n}"])
    assert args.commands == ["./prog", "./prog {n}"] and args.parameter_list == [["n", "10,100"]]
    args = cli.build_parser().parse_args(["ab", "./a", "--runs", "3", "./b", "./c", "--verbose"])
    assert (args.base, args.new, args.more, args.runs, args.verbose) == ("./a", "./b", ["./c"], 3, True)


@pytest.mark.unit
def test_a_run_that_fails_before_its_first_invocation_leaves_nothing(scratch):
    outdir = scratch / "results" / "ab" / "DATE"
    with pytest.raises(UserError):
        with commands_cli.new_directory(outdir):
            outdir.mkdir(parents=True)
            (outdir / "commands.json").write_text("{}")
            raise spec.CommandError("the pilot could not run")
    assert listing(scratch) == []
    (scratch / "kept").mkdir()   # a directory given that was there before stays, with what it held
    (scratch / "kept" / "mine.txt").write_text("x")
    with pytest.raises(UserError):
        with commands_cli.new_directory(scratch / "kept"):
            raise spec.CommandError("no")
    assert listing(scratch) == ["kept", "kept/mine.txt"]
    with pytest.raises(UserError):
        with commands_cli.new_directory(scratch / "kept"):
            (scratch / "kept" / "commands.json").write_text("{}")
            (scratch / "kept" / "tasks").mkdir()
            raise spec.CommandError("no")
    assert listing(scratch) == ["kept", "kept/mine.txt"]


@pytest.mark.unit
def test_a_failure_names_the_way_out_where_there_is_one():
    failed = failures.Failure("./prog --fast", None, {"ERROR (exit code 3)": 1}, ['"oops"'])
    line = failed.line()
    assert line.startswith("./prog --fast: no run finished normally in its first execution, before any measurement "
                           "(1 run: 1 ERROR (exit code 3))")
    assert line.endswith("; --ignore-failure measures runs that exit non-zero")
    missing = failures.Failure("./porg", None, {"ERROR (exit code 127)": 1}, ["cmdrun: cannot execute ./porg"])
    assert "--ignore-failure" not in missing.line()   # not there: measuring it would not help
    prepare = failures.Failure("./prog", None, {"ERROR (exit code 2)": 1}, timed=False)   # --prepare failed
    assert "--ignore-failure" not in prepare.line()
    hidden = failures.Failure("cat /tmp/in.txt", None, {"ERROR (exit code 1)": 1}).find_hidden()
    assert "lies under /tmp, which BenchExec's container hides" in hidden.line() and "--ignore-failure" not in hidden.line()


@pytest.mark.unit
def test_ignore_failure_reaches_the_definition_and_cmdrun(scratch):
    from benchexec import tooladapter

    from tool_info import command as command_tool

    options = spec.Options(runs=2, cwd=str(scratch), ignore_failure=True)
    tasks = definition.write_tasks(scratch, options)
    text = definition.write_definition(scratch / "d.xml", [("command", "exit 3", "")], options, tasks, "t").read_text()
    assert '<option name="--ignore-failure"/>' in text and f">{definition.EXIT_CODE}</column>" in text
    tool = tooladapter.adapt_to_current_version(command_tool.Tool())
    task = SimpleNamespace(input_files=["/kit/run"], input_files_or_identifier=["/kit/run"])
    line = tool.cmdline("cmdrun", ["--ignore-failure", "--command", "exit 3"], task, None)
    assert line[:line.index("--")].count("--ignore-failure") == 1
    assert "--ignore-failure" not in definition.write_definition(scratch / "e.xml", [("command", "x", "")], spec.Options(),
                                                                 tasks, "t").read_text()


@pytest.mark.unit
def test_progress_and_verdicts_travel_as_data_not_text():
    """The kit reads none of its own output back in the A/B path: no regex on its progress line, no
    json.loads of compare's rendered JSON, and no module handed in to hide an import cycle."""
    sources = {p: p.read_text() for p in [*(REPO / "analysis" / "ab").glob("*.py"),
                                          *(REPO / "analysis" / "tools" / "commands").glob("*.py")]}
    for path, text in sources.items():
        assert "sys.modules" not in text and "invocations\\)" not in text, path
        assert "json.loads(text" not in text and "json.loads(compare" not in text, path


@pytest.mark.unit
def test_the_invocations_line_says_within_and_between_in_words():
    from tests.test_commands import fake

    f = fake("./a", [0.20, 0.21, 0.20, 0.22, 0.21, 0.20], [3, 3])
    f.cv_within, f.cv_between, f.between_share, f.rerun_ci = 0.467, 0.0, 0.0, [0.19, 0.22]
    line = next(x for x in output.block("Base", f).splitlines() if "Invocations:" in x)
    assert "CV 46.7 % within an invocation, 0.0 % between invocations (0 % of the variance)" in line
    assert "CV between" not in line


@pytest.mark.unit
def test_commands_given_keeps_refusing_a_mix():
    args = SimpleNamespace(base="./a", new="b.xml", more=[], resume=False,
                           **{name: None for name in command_pairs.commands_cli.COMMAND_ONLY})
    with pytest.raises(spec.CommandError, match="not a mix"):
        command_pairs.commands_given(args)


# ---------------------------------------------------------------------------------------------
# a command that cannot run: stopped at its first execution, before any invocation


BAD_COMMANDS = [
    (["ab", "./no-such-build", "./other"], "no run finished normally in its first execution, before any measurement "
                                            '(1 run: 1 ERROR (exit code 127)); its output ends: "cmdrun: cannot execute '
                                            './no-such-build'),
    (["ab", "nosuchcommand --x", "true"], "nosuchcommand --x: no run finished normally in its first execution"),
    (["ab", "echo oops >&2; exit 1", "true"], '"oops"; --ignore-failure measures runs that exit non-zero'),
    (["ab", "true", "cat HIDDEN"], "HIDDEN lies under /tmp, which BenchExec's container hides"),   # it exists: by hand it works
    (["ab", "true", "true", "--prepare", "exit 1"], "the --prepare command failed"),
    (["ab", "true", "exit 4", "--design", "separate"], "ERROR (exit code 4)"),
    (["bench", "./no-such-build"], "cannot execute ./no-such-build"),
    (["bench", "true", "-L", "n", "1,2", "exit {n}"], "exit 1: no run finished normally in its first execution"),
    (["ab", "echo 'x", "true", "--shell", "none"], "echo 'x: command: cannot split"),   # refused by tool_info.command
]


@pytest.mark.timing   # a bound on the kit's own time (generous: an error path), judged with nothing else running
@pytest.mark.parametrize("argv,expected", BAD_COMMANDS, ids=[" ".join(a) for a, _ in BAD_COMMANDS])
def test_a_command_that_cannot_run_stops_before_the_first_invocation(argv, expected, programs, scratch):
    with tempfile.NamedTemporaryFile(dir="/tmp", prefix="timekit-edge-", suffix=".txt") as hidden:
        argv, expected = [a.replace("HIDDEN", hidden.name) for a in argv], expected.replace("HIDDEN", hidden.name)
        line, seconds = assert_one_line_and_nothing_written(scratch, argv, expected)
    assert seconds < ERROR_PATH_SECONDS, (argv, seconds)


@pytest.mark.benchexec
def test_ignore_failure_measures_runs_that_exit_non_zero(programs, scratch):
    code, text = run_isolated([sys.executable, "-m", "analysis.cli", "bench", "echo half; exit 3", "--ignore-failure",
                               "--reruns", "2", "--runs", "2", "--output", scratch / "b", "--export-json",
                               scratch / "b.json"], cwd=scratch)
    assert code == 0 and "Exit codes:          4 of 4 run(s) exited non-zero (3), measured as --ignore-failure asks" in text, text
    [result] = json.loads((scratch / "b.json").read_text())["results"]
    assert result["exit_codes"] == [3, 3, 3, 3] and len(result["times"]) == 4


@pytest.mark.benchexec
def test_output_is_compact_unless_verbose_and_json_has_both(programs, scratch):
    base, new = f"{SPIN} 1000", f"{SPIN} 2000"
    code, text = run_isolated([sys.executable, "-m", "analysis.cli", "ab", base, new, "--design", "blocks", "--reruns",
                               "2", "--runs", "1", "--repeat", "3", "--output", scratch / "ab"], cwd=scratch)
    assert code in (0, 1, 3), text
    printed = text[text.index("Base (A): "):]   # stdout, after the progress lines
    assert "method:" not in printed and "keeps the invocation as the unit" not in printed and "BenchExec here" not in printed
    assert "design: blocks: 2 invocations, each 1 BenchExec run(s) of 3 pair(s), back to back" in printed
    assert printed.rstrip().splitlines()[-1].startswith("verdict: ")
    code, verbose = run_isolated([sys.executable, "-m", "analysis.cli", "ab", "--resume", "--output", scratch / "ab",
                                  "--verbose"], cwd=scratch)
    assert "method: one-sample t" in verbose and "keeps the invocation as the unit" in verbose, verbose
    code, data = run_isolated([sys.executable, "-m", "analysis.cli", "ab", "--resume", "--output", scratch / "ab",
                               "--format", "json"], cwd=scratch)
    ab = json.loads(data[data.index("{\n"):])["ab"][0]
    assert "keeps the invocation as the unit" in ab["summary"] and ab["method"].startswith("method: one-sample t")
