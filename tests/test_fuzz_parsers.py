"""Fuzz (hypothesis, bounded time) the parsers that read what programs and users write: timer
output, key=value workload output, the tracer's periods file, and lint's XML and YAML checks.
Each either gives a value of the promised kind or refuses in its own way, never a crash."""

import math
import string
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from analysis.sweep import lint
from analysis.experiments.scheduling_noise import analyse as noise
from tool_info import timer
from tool_info.keyvalue import KeyValueTool

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# pieces of real timer output, so that mutations come close to what parses
TIMER_PIECES = ["bash-time real=", "gnu-time real=", " user=", " sys=", "0.093", "1,5", "Executed in", "millis",
                "secs", "usr time", "sys time", "fish", "________________________________________________________",
                "  ", "\t", "-", "e5", "nan", "inf", "1e308", "\n"]
LINES = st.lists(st.text(alphabet=string.printable, max_size=80) | st.lists(st.sampled_from(TIMER_PIECES), max_size=12).map("".join),
                 max_size=12)


@FUZZ
@given(LINES)
def test_timer_output_gives_seconds_or_nothing(lines):
    values = timer.timer_values(lines)
    if values is not None:
        assert set(values) == set(timer.COLUMNS)
        for value in values.values():
            assert math.isfinite(float(value)) and float(value) >= 0, values


@FUZZ
@given(LINES, st.sampled_from(["divisors", "self-clock", "timer-real", "a.b"]))
def test_key_value_output_gives_a_token_or_nothing(lines, key):
    value = KeyValueTool().get_value_from_output(lines, key)
    assert value is None or (value and not any(c.isspace() for c in value))


ROWS = st.lists(st.lists(st.sampled_from(["tracer", "child", "active", "inactive", "0", "12", "-3", "1.5", "x", "", "nan"]),
                         max_size=8).map(",".join), max_size=6)


@FUZZ
@given(ROWS, st.booleans())
@example(["tracer,active"], True)  # found by this test: a short row once gave misaligned arrays
@example(["tracer,active,0,1,2,nan,1"], True)
def test_periods_file_reads_or_refuses(rows, header):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "periods.csv"
        path.write_text("\n".join(([",".join(noise.PERIODS_HEADER)] if header else []) + rows) + "\n")
        try:
            periods = noise.read_periods(path)
        except noise.PeriodsError as e:
            assert str(path) in str(e) and "\n" not in str(e)
        else:
            assert len(periods.start_ms) == len(periods.duration_ms) == len(periods.process)


XML_PIECES = ["<benchmark", "<table", " tool=\"x\"", ">", "</benchmark>", "</table>", "<rundefinition name=\"a\">",
              "</rundefinition>", "<column title=\"c\"/>", "<option name=\"o\">v</option>", "<!--", "-->", "&", "<?xml version=\"1.0\"?>"]
YAML_PIECES = ["format_version: '2.0'\n", "format_version: 2.0\n", "input_files: 'in.txt'\n", "input_files: [a, b]\n",
               "properties:\n", "  - property_file: p\n", "- x\n", "{", "}", ": ", "'", "\t", "options: {a: 1}\n"]


@FUZZ
@given(st.lists(st.sampled_from(XML_PIECES), max_size=15).map("".join) | st.text(max_size=200),
       st.lists(st.sampled_from(YAML_PIECES), max_size=10).map("".join) | st.text(max_size=200))
@example("", "\x1f")  # found by this test: YAML's reader error spans two lines
def test_lint_reports_lines_never_crashes(xml, yaml_text):
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "in.txt").write_text("1\n")
        (Path(d) / "f.xml").write_text(xml)
        (Path(d) / "t.yml").write_text(yaml_text)
        problems = lint.check([Path(d) / "f.xml", Path(d) / "t.yml"])
    assert all(isinstance(p, str) and "\n" not in p and p.startswith(d) for p in problems)
