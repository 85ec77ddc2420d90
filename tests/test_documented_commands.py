"""Every `timekit ...` line in a fenced code block of README.md and docs/*.md is parsed by the
CLI's own parser (analysis.cli), so the guide cannot drift from the command line; those that
need nothing but files of the checkout (`compare` of recorded results) are run as written."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from analysis import cli

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
PROMPT = re.compile(r"^(?:\$ )?(?:sudo )?(timekit\s.*)$")
RUN_AS_WRITTEN = {"compare"}   # read-only, and fast on recorded results


def documented():
    """(doc name, line number, the command line without prompt and comment) of every timekit line."""
    found = []
    for doc in DOCS:
        text = doc.read_text()
        for block in FENCE.finditer(text):
            first = text.count("\n", 0, block.start(1)) + 1
            lines = block.group(1).splitlines()
            k = 0
            while k < len(lines):
                start, line = k, lines[k]
                while line.rstrip().endswith("\\") and k + 1 < len(lines):   # a continued line
                    k += 1
                    line = line.rstrip()[:-1] + " " + lines[k].strip()
                k += 1
                match = PROMPT.match(line.strip())
                if match:
                    found.append((doc.name, first + start, match.group(1)))
    return found


COMMANDS = documented()


def test_the_docs_show_command_lines():
    names = {shlex.split(line, comments=True)[1] for _, _, line in COMMANDS}
    assert len(COMMANDS) > 40 and {"ab", "bench", "compare", "report", "run"} <= names, names


@pytest.mark.parametrize("doc,number,line", COMMANDS, ids=[f"{d}:{n}" for d, n, _ in COMMANDS])
def test_every_documented_command_line_parses(doc, number, line, capsys):
    argv = shlex.split(line, comments=True)[1:]
    try:
        args = cli.build_parser().parse_args(argv)
    except SystemExit as e:
        pytest.fail(f"{doc}:{number}: `{line}` does not parse (exit {e.code}): {capsys.readouterr().err.strip()}")
    assert args.command == argv[0]


def _runnable(line):
    argv = shlex.split(line, comments=True)[1:]
    paths = [a for a in argv[1:] if not a.startswith("-") and "/" in a]
    return argv[0] in RUN_AS_WRITTEN and paths and all((REPO / p).exists() for p in paths)


@pytest.mark.parametrize("doc,number,line", [c for c in COMMANDS if _runnable(c[2])],
                         ids=[f"{d}:{n}" for d, n, line in COMMANDS if _runnable(line)])
def test_documented_commands_on_recorded_results_run_as_written(doc, number, line):
    argv = shlex.split(line, comments=True)[1:]
    done = subprocess.run([sys.executable, "-m", "analysis.cli", *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode in (0, 1) and done.stdout.strip() and not done.stderr.strip(), (line, done.stderr[-2000:])


def test_some_documented_command_runs_as_written():
    assert any(_runnable(line) for _, _, line in COMMANDS)
