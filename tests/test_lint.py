"""`timekit lint` and the runner's check of its definitions: one line per problem, with file and line."""

import subprocess
import sys

import pytest

from analysis.sweep import lint
from tests.helpers import REPO

GOOD_TASK = "format_version: '2.0'\ninput_files: 'in.txt'\n"
BAD_FILES = {
    "misspelled.xml": ('<benchmark tool="x">\n  <rundefinition name="a">\n    <optoin name="--timer">bash</optoin>\n'
                       '  </rundefinition>\n</benchmark>\n', ":2: not valid against BenchExec's benchmark.dtd"),
    "malformed.xml": ('<table>\n  <column title="a">\n</table>\n', ":3: malformed XML"),
    "wrong-root.xml": ("<result/>\n", "neither <benchmark> nor <table>"),
    "bad-column.xml": ('<table>\n  <colum title="a"/>\n</table>\n',
                       "table.dtd: Element table content does not follow the DTD, expecting (result | union | column)*, got (colum )"),
    "no-inputs.yml": ("format_version: '2.0'\n", "input_files is missing"),
    "number-version.yml": ("format_version: 2.0\ninput_files: 'in.txt'\n", "must be the string '2.0'"),
    "typo.yml": ("format_version: '2.0'\ninput_file: 'in.txt'\n", "unknown field(s) input_file"),
    "missing-input.yml": ("format_version: '2.0'\ninput_files: 'gone.txt'\n", "input file gone.txt does not exist"),
    "not-yaml.yml": ("format_version: '2.0'\ninput_files: [in.txt\n", ":3: malformed YAML"),
    "list.yml": ("- a\n- b\n", "must be a YAML mapping"),
    "bad-properties.yml": (GOOD_TASK + "properties: x\n", "properties must be a list"),
}


@pytest.fixture
def files(tmp_path):
    (tmp_path / "in.txt").write_text("1\n")
    (tmp_path / "good.yml").write_text(GOOD_TASK)
    for name, (text, _) in BAD_FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_each_bad_file_gets_a_line_naming_file_and_problem(files, name):
    problems = lint.check([files / name])
    assert problems, name
    assert problems[0].startswith(str(files / name)) and BAD_FILES[name][1] in problems[0], problems


def test_the_kits_own_files_are_clean():
    paths = [*REPO.glob("benchmark-defs/*.xml"), *REPO.glob("table-configs/*.xml"), *REPO.glob("programs/tasks/*/reps/*.yml")]
    assert len(paths) > 60 and lint.check(paths) == []


def test_cli_exit_codes(files):
    good = subprocess.run([sys.executable, "-m", "analysis.cli", "lint", str(files / "good.yml")], cwd=REPO,
                          capture_output=True, text=True)
    assert good.returncode == 0 and "ok: 1 file(s) valid" in good.stdout
    bad = subprocess.run([sys.executable, "-m", "analysis.cli", "lint", str(files / "good.yml"), str(files / "typo.yml"),
                          str(files / "malformed.xml")], cwd=REPO, capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 3 and "Traceback" not in bad.stderr


def test_runner_refuses_an_invalid_definition_before_running(files):
    from analysis.sweep import model as experiments
    from analysis.sweep import runner

    broken = experiments.Experiment(name="broken", benchmark=files / "misspelled.xml", table=files / "bad-column.xml",
                                    task_dir=files, inputs=(files / "in.txt",), rundefinitions=("a",))
    with pytest.raises(lint.LintError, match=r"misspelled.xml:2:.*\(and 5 more; run: timekit lint FILE\)"):
        runner.run_sweep(broken, "quick", experiments.Preset(reps=1, loads=(0,), reruns=1), files / "out")
    assert not (files / "out").exists()


def test_a_task_file_with_a_null_or_numeric_key_is_named_not_a_crash(tmp_path):
    """YAML allows keys that are not strings (`?` alone is a null key; `1:` a number): they are
    unknown fields like any other, reported by name."""
    task = tmp_path / "task.yml"
    task.write_text("format_version: '2.0'\ninput_files: in.txt\n?\n1: x\n")
    (tmp_path / "in.txt").write_text("1\n")
    [problem] = lint.check_task(task)
    assert "unknown field(s) 1, None" in problem
