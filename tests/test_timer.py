"""The timer wrapper against the real bash, fish and GNU time, and its parsers on their output."""

import shutil
import subprocess

import pytest
from benchexec.tools.template import BaseTool2, UnsupportedFeatureException

from analysis.sweep.runner import container_dirs
from tool_info import timer
from tool_info.timed_divisors import Tool as TimedDivisors

NEEDS = {"bash": "bash", "fish": "fish", "gnu": "time"}


def task_for(path):
    return BaseTool2.Task(input_files=[str(path)], identifier=None, property_file=None, options=None)


def run_timed(timer_name, input_file, programs):
    tool = TimedDivisors()
    executable = tool.executable(BaseTool2.ToolLocator(None, True, True))
    command = tool.cmdline(executable, ["--timer", timer_name], task_for(input_file), BaseTool2.ResourceLimits())
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=programs.parent.parent)
    return command, done, BaseTool2.RunOutput([line + "\n" for line in done.stdout.splitlines()])


@pytest.mark.parametrize("name", ["bash", "fish", "gnu"])
def test_each_timer_measures_the_real_program(name, programs, scratch):
    if not shutil.which(NEEDS[name]):
        pytest.fail(f"{NEEDS[name]} must be installed for the tests (python3 -m analysis.machine.packages installs it)")
    input_file = scratch / "n.txt"
    input_file.write_text("43434343\n")
    command, done, output = run_timed(name, input_file, programs)
    assert done.returncode == 0, done.stdout
    values = {c: float(TimedDivisors().get_value_from_output(output, c)) for c in timer.COLUMNS}
    own = float(TimedDivisors().get_value_from_output(output, "self-cputime"))
    # the program works ~0.09 s here; every timer must see about that much CPU and wall time
    assert 0.5 * own <= values["timer-user"] + values["timer-sys"] <= 2 * own + 0.02
    assert values["timer-real"] >= 0.5 * own
    assert TimedDivisors().get_value_from_output(output, "divisors") == "16"


def test_fish_units_switch_and_are_converted():
    output = [
        "________________________________________________________",
        "Executed in    1.52 secs    fish           external",
        "   usr time  850.00 millis  120.00 micros  849.88 millis",
        "   sys time   12.50 micros    0.00 micros   12.50 micros",
    ]
    values = timer.FishTimer().values(output)
    assert values == {"timer-real": "1.52", "timer-user": "0.85", "timer-sys": "1.25e-05"}
    minutes = ["Executed in    2.50 mins    fish  external", "   usr time    1.00 mins  0 micros 1 mins",
               "   sys time    0.00 micros 0 micros 0 micros"]
    assert timer.FishTimer().values(minutes)["timer-real"] == "150"


def test_decimal_comma_of_a_foreign_locale_is_read():
    assert timer.BashTimer().values(["bash-time real=0,512 user=0,500 sys=0,004"])["timer-user"] == "0.5"


def test_header_line_with_the_command_cannot_match():
    """table-generator passes BenchExec's header: the command line holds the format strings."""
    header = ["/usr/bin/bash -c 'TIMEFORMAT=$'\"'\"'\\nbash-time real=%3R user=%3U sys=%3S'\"'\"'; time \"$@\"' bash x",
              "/usr/bin/time -f '\\ngnu-time real=%e user=%U sys=%S' -- prog in",
              "--------------------------------------------------------------------------------"]
    assert timer.timer_values(header) is None
    assert TimedDivisors().get_value_from_output(header, "timer-real") is None


def test_gnu_time_line_and_its_exit_notice():
    lines = ["Command exited with non-zero status 2", "gnu-time real=0.51 user=0.50 sys=0.01"]
    assert timer.GnuTimer().values(lines) == {"timer-real": "0.51", "timer-user": "0.5", "timer-sys": "0.01"}


def test_timer_lines_do_not_reach_the_inner_tools_result():
    tool = TimedDivisors()
    output = BaseTool2.RunOutput(["divisors=16\n", "\n", "bash-time real=0.1 user=0.1 sys=0.0\n"])
    run = BaseTool2.Run(["x"], _exit(0), output, None)
    assert tool.determine_result(run) == "done"
    failed = BaseTool2.Run(["x"], _exit(2), output, None)
    assert tool.determine_result(failed).startswith("ERROR")


def _exit(value):
    from benchexec.util import ProcessExitCode

    return ProcessExitCode(raw=value << 8, value=value, signal=None)


def test_unknown_timer_is_refused_with_the_choices():
    with pytest.raises(UnsupportedFeatureException, match="runexec, bash, fish, gnu"):
        timer.split_timer_option(["--timer", "zsh"])


def test_timer_option_is_removed_before_the_inner_tool_sees_options():
    chosen, rest = timer.split_timer_option(["-x", "--timer=gnu", "y"])
    assert chosen.name == "gnu" and rest == ["-x", "y"]


@pytest.mark.parametrize("name", ["bash", "fish", "gnu"])
@pytest.mark.benchexec
def test_no_shell_injection_through_file_names(name, programs, scratch):
    """A file name full of shell syntax reaches the program as one literal argument."""
    evil = scratch / "a b'c\";touch INJECTED;$(touch INJECTED2)`touch INJECTED3`.txt"
    evil.write_text("43434343\n")
    command, done, output = run_timed(name, evil, programs)
    assert done.returncode == 0, done.stdout
    assert TimedDivisors().get_value_from_output(output, "divisors") == "16"
    assert not list(programs.parent.parent.glob("INJECTED*")) and not list(scratch.glob("INJECTED*"))


@pytest.mark.parametrize("name", ["bash", "gnu"])
@pytest.mark.timing
def test_timer_agrees_with_runexec_cgroup_of_the_same_run(name, programs, scratch):
    """runexec measures the timed command line in a cgroup; the timer's CPU time is close to it."""
    input_file = scratch / "n.txt"
    input_file.write_text("43434343\n")
    tool = TimedDivisors()
    executable = tool.executable(BaseTool2.ToolLocator(None, True, True))
    command = tool.cmdline(executable, ["--timer", name], task_for(input_file), BaseTool2.ResourceLimits())
    log = scratch / "run.log"
    done = subprocess.run(["runexec", *container_dirs(), "--output", str(log), "--", *command], cwd=programs.parent.parent,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert done.returncode == 0, done.stdout
    measured = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert measured["returnvalue"] == "0"
    cgroup_cpu = float(measured["cputime"].rstrip("s"))
    lines = log.read_text().splitlines()
    values = timer.timer_values(lines)
    timer_cpu = float(values["timer-user"]) + float(values["timer-sys"])
    # the cgroup also counts the timer's own process; GNU time truncates to 10 ms
    assert cgroup_cpu - 0.03 <= timer_cpu <= cgroup_cpu + 0.002


@pytest.mark.benchexec
def test_missing_timer_program_is_one_clear_error(programs, scratch):
    """A machine without fish: the fish run definition fails with what to install, not a traceback."""
    tool = TimedDivisors()
    tool.executable(BaseTool2.ToolLocator(None, True, True))
    tool._locator = BaseTool2.ToolLocator(str(scratch), use_path=False, use_current=False)  # finds nothing
    with pytest.raises(UnsupportedFeatureException, match="apt-get install fish"):
        tool.cmdline("programs/bin/divisors", ["--timer", "fish"], task_for(scratch / "n.txt"), BaseTool2.ResourceLimits())
