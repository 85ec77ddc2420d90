"""Fuzz (hypothesis, a bounded number of examples) `timekit ab` and `timekit bench` with the commands
users really time: output that is binary, huge, unterminated or absent, on stdout or stderr;
arguments that are not UTF-8 or hold quotes and shell metacharacters; commands that exit non-zero
or die of a signal. Whatever the command does, the kit answers with exit 0, 1, 2 or 3, never a
traceback, one `timekit: error:` line when it refuses, and no lock left held.

The bad-input half (wrong options and arguments of ab, bench and bisect) runs no measurement: each
case is one line and exit 2."""

import os
import shlex
import signal
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import REPO, no_lock_held

# each example starts BenchExec (a few seconds): few examples, the same ones on every run (CI)
FEW = settings(max_examples=int(os.environ.get("TIMEKIT_FUZZ_EXAMPLES", "6")), deadline=None,
               derandomize=not os.environ.get("TIMEKIT_FUZZ_RANDOM"),
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

OUTPUTS = [
    "",                                              # no output
    "head -c 300000 /dev/urandom",                   # binary, as a compressor's
    "head -c 30000000 /dev/zero",                    # huge (30 MB a run)
    "printf 'no newline at the end'",                # unterminated
    "head -c 2000 /dev/urandom >&2",                 # binary on stderr
    "printf '\\377\\376 not utf-8\\n'",              # bytes that are no text
    "printf 'cmdrun-execution 1 wall=9 user=9 sys=9 status=0'",   # looks like the kit's own lines
]
ENDINGS = ["", "exit 3", "kill -9 $$", "kill -SEGV $$", "exit 0"]
ARGUMENTS = ["", "'a b'", '"quoted \\" inside"', "$HOME", "`true`", "*", "a;b", "x | cat", "&& true", "'it''s'"]


@st.composite
def commands(draw):
    """One shell command (as bytes: an argument need not be UTF-8)."""
    parts = [draw(st.sampled_from(OUTPUTS)), draw(st.sampled_from(ENDINGS))]
    body = "; ".join(p for p in parts if p) or "true"
    argument = draw(st.sampled_from(ARGUMENTS))
    text = f"{body} # {argument}" if argument else body
    raw = text.encode()
    if draw(st.booleans()):
        raw += b" # \xff\xfe latin-1 \xe9"            # not UTF-8 (a file name from an old archive)
    return raw


def timekit(*args, cwd, timeout=600):
    done = subprocess.run([sys.executable.encode(), b"-m", b"analysis.cli", *[a if isinstance(a, bytes) else str(a).encode()
                                                                             for a in args]],
                          cwd=cwd, capture_output=True, timeout=timeout, start_new_session=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    return done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")


def check_answer(code, out, err, directory):
    assert code in (0, 1, 2, 3), (code, err)
    assert "Traceback" not in err + out, err
    errors = [line for line in err.splitlines() if line.startswith("timekit: error:")]
    if code == 2:
        assert len(errors) == 1, err
    assert no_lock_held(directory)


@pytest.mark.benchexec
@FEW
@given(base=commands(), new=commands(), ignore_failure=st.booleans())
def test_ab_answers_whatever_the_commands_write_or_do(programs, scratch, base, new, ignore_failure):
    flags = ["--ignore-failure"] if ignore_failure else []
    code, out, err = timekit("ab", base, new, "--reruns", "2", "--runs", "2", "--output", scratch / "ab", *flags,
                             cwd=scratch)
    check_answer(code, out, err, scratch)
    not_text = any(b"\xff" in c for c in (base, new))
    failing = any(e in c for c in (base, new) for e in (b"exit 3", b"kill"))
    if not_text:
        assert code == 2 and "is not UTF-8" in err, err
    elif failing and not ignore_failure:
        assert code == 2 and "first execution" in err, err
    if code in (0, 1, 3):
        assert "verdict:" in out, err
    subprocess.run(["rm", "-rf", str(scratch / "ab")])


@pytest.mark.benchexec
@FEW
@given(command=commands(), ignore_failure=st.booleans())
def test_bench_answers_whatever_the_command_writes_or_does(programs, scratch, command, ignore_failure):
    flags = ["--ignore-failure"] if ignore_failure else []
    code, out, err = timekit("bench", command, "--reruns", "2", "--runs", "2", "--output", scratch / "bench", *flags,
                             cwd=scratch)
    check_answer(code, out, err, scratch)
    if code == 0:
        assert "Time (mean" in out, err
    subprocess.run(["rm", "-rf", str(scratch / "bench")])


BAD_INPUT = [
    ["ab", "true"],
    ["ab", "true", "false", "--reruns", "1"],
    ["ab", "true", "false", "--threshold", "abc"],
    ["ab", "true", "false", "--threshold", "150%"],
    ["ab", "true", "", "--reruns", "2"],
    ["ab", "true", "false", "--design", "nonsense"],
    ["ab", "true", "false", "--budget", "forever"],
    ["ab", "true", "false", "--command-output", "/"],
    ["ab", "true", "false", "--command-output", "out.txt"],      # a file needs --no-container
    ["ab", "a.xml", "b.xml"],
    ["ab", "--resume", "--output", "nowhere"],
    ["bench"],
    ["bench", "true", "--runs", "0"],
    ["bench", "true", "-L", "n"],
    ["bench", "true", "--resume"],
    ["bench", "--resume", "--output", "nowhere"],
    ["bisect", "v1", "main", "true"],                             # --build missing
    ["bisect", "v1", "main", "true", "--build", "make"],          # not a repository
    ["bisect", "v1", "main", "true", "--build", "make", "--threshold", "2"],
    ["bisect", "--resume", "--output", "nowhere"],
]


@pytest.mark.unit
@pytest.mark.parametrize("args", BAD_INPUT, ids=lambda a: shlex.join(a)[:60])
def test_bad_input_is_one_line_and_exit_2(scratch, args):
    code, out, err = timekit(*args, cwd=scratch, timeout=120)
    assert code == 2, (code, out, err)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and ": error: " in lines[0], err
    assert list(scratch.iterdir()) == [], "a wrong invocation wrote something"


@pytest.mark.benchexec
def test_a_command_that_is_not_utf8_runs_as_the_error_suggests(programs, scratch):
    """The refusal of a non-UTF-8 command names a way that works: the command in a script."""
    command = b"printf '%s' caf\xe9 > /dev/null"
    code, _, err = timekit("bench", command, "--reruns", "2", "--runs", "2", cwd=scratch)
    assert code == 2 and "put the command in a script and time `sh SCRIPT`" in err
    (scratch / "script.sh").write_bytes(command + b"\n")
    code, out, err = timekit("bench", "sh script.sh", "--reruns", "2", "--runs", "2", "--output", scratch / "b",
                             cwd=scratch)
    assert code == 0 and "Time (mean" in out, err


@pytest.mark.benchexec
def test_killed_command_is_reported_as_such(programs, scratch):
    """A command that dies of a signal in its first execution says which signal."""
    code, _, err = timekit("bench", "kill -SEGV $$", "--reruns", "2", cwd=scratch)
    assert code == 2 and (f"exit code {128 + signal.SIGSEGV}" in err or "SIGSEGV" in err or "signal" in err), err
