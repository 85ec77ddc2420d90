"""Tests for analysis.core.results: every real BenchExec result file loads with the right numbers in
SI units, every bad input is one line that starts with its path, and nothing else escapes."""

import bz2
import collections
import dataclasses
import gzip
import math
import pathlib
import runpy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.core import results
from analysis.core.results import ResultFileError, RunTable, files, load_result, load_results, strict_reader

CORPUS = pathlib.Path(__file__).resolve().parent / "data" / "benchexec-results-corpus"  # BenchExec's own test data (NOTICE.md)
DATA = pathlib.Path(__file__).resolve().parent / "data"
REAL = DATA / "calculatepi-real.results.xml.bz2"  # written by BenchExec 3.35, see below
GENERATOR = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "make_large_result.py"

PREDICATE = "test.2015-03-03_1613.results.predicateAnalysis.xml"
FIRST_TASK = "test/programs/simple/bitvectors/implicitunsignedconversion_false-unreach-label.i"
INTEGRATION = "integration-predicateAnalysis.2015-10-{}.results.xml.bz2"

# file -> (runs, name of the first run, its cputime in s), read from the files by hand
CORPUS_FILES = {
    "mathsat.2015-05-27_1004.results.xml": (4, "ie-local-interpolant.smt2", 0.125825),
    "nan_and_inf.xml": (
        3,
        (
            "../programs/benchmarks/ldv-linux-4.0-rc1-mav/linux-4_true-termination.0-rc1---drivers"
            "--media--rc--lirc_dev.ko_true-unreach-call.cil.c"
        ),
        16.07363273,
    ),
    "smtinterpol.2015-05-27_1004.results.xml": (4, "ie-local-interpolant.smt2", 0.479385),
    "test-error.2015-03-03_1613.results.predicateAnalysis.xml": (5, FIRST_TASK, 2.169189428),
    "test.2015-03-03_1613.results.predicateAnalysis-legacy.xml": (5, FIRST_TASK, 2.169189428),
    "test.2015-03-03_1613.results.predicateAnalysis-logfile-links.xml": (
        5, FIRST_TASK, 2.169189428
    ),
    "test.2015-03-03_1613.results.predicateAnalysis.0.xml": (3, FIRST_TASK, 2.169189428),
    "test.2015-03-03_1613.results.predicateAnalysis.1.xml": (
        1, "doc/examples/example.c", 2.272238619
    ),
    "test.2015-03-03_1613.results.predicateAnalysis.2.xml": (
        1, "test/programs/simple/builtin_expect_true-unreach-label.c", 2.058647067
    ),
    "test.2015-03-03_1613.results.predicateAnalysis.custom-score.xml": (3, FIRST_TASK, 2.169189428),
    PREDICATE: (5, FIRST_TASK, 2.169189428),
    PREDICATE + ".bz2": (5, FIRST_TASK, 2.169189428),
    PREDICATE + ".gz": (5, FIRST_TASK, 2.169189428),
    "test.2015-03-03_1613.results.valueAnalysis.0.xml": (3, FIRST_TASK, 2.117287256),
    "test.2015-03-03_1613.results.valueAnalysis.1.xml": (1, "doc/examples/example.c", 2.018490461),
    "test.2015-03-03_1613.results.valueAnalysis.xml": (4, FIRST_TASK, 2.117287256),
    "test.2015-03-03_1815.results.predicateAnalysis.xml": (5, FIRST_TASK, 1.858883109),
    "test.2015-03-03_1815.results.valueAnalysis.xml": (4, FIRST_TASK, 1.816985346),
    "benchmark-example-true.2019-11-06_0932.results.no options.xml.bz2": (
        26, "../doc/benchmark.dtd", 0.001618668
    ),
    "benchmark.test.2019-12-20_1532.results.xml.bz2": (
        6, "../../../../test/tasks/false_other_sub_task.yml", 0.001669043
    ),
    "benchmark.test.2020-06-10_09-17-06.results.xml.bz2": (
        6, "../../../../test/tasks/false_other_sub_task.yml", 0.001915179
    ),
    INTEGRATION.format("20_1355"): (
        484, "test/programs/benchmarks/ntdrivers/cdaudio_false-unreach-call.i.cil.c", 60.819608754
    ),
    INTEGRATION.format("22_1113"): (
        484, "test/programs/benchmarks/ntdrivers/cdaudio_false-unreach-call.i.cil.c", 62.288204035
    ),
    INTEGRATION.format("23_1348"): (
        484, "test/programs/benchmarks/ntdrivers/cdaudio_false-unreach-call.i.cil.c", 62.792292517
    ),
}


def assert_one_line_error(path, excinfo):
    """The error names the path first and is a single line."""
    message = str(excinfo.value)
    assert message.startswith(f"{path}: "), message
    assert "\n" not in message
    assert len(message) > len(f"{path}: ") + 10


def test_corpus_table_covers_every_result_file():
    """The table below lists every corpus file but the notice and the zip: none is forgotten."""
    files = {p.name for p in CORPUS.iterdir()} - {"NOTICE.md", "test.2015-03-03_1613.logfiles.zip"}
    assert files == set(CORPUS_FILES)


@pytest.mark.parametrize("name", sorted(CORPUS_FILES))
def test_corpus_file_loads(name):
    runs, first_task, first_cputime = CORPUS_FILES[name]
    table = load_result(CORPUS / name)
    assert isinstance(table, RunTable)
    assert len(table) == runs
    assert table.tasks[0] == first_task
    assert table.columns["cputime"][0] == pytest.approx(first_cputime, rel=1e-12)
    assert table.units["cputime"] == "s"
    for array in [table.tasks, table.files, table.run_options, table.status, table.category,
                  *table.columns.values(), *table.text_columns.values()]:
        assert len(array) == runs
    assert all(array.dtype == np.float64 for array in table.columns.values())
    assert table.text_columns["status"] is table.status
    assert not set(table.columns) & set(table.text_columns)
    assert table.systeminfo and all(info["os"] for info in table.systeminfo)


def test_run_properties_are_kept_for_the_run_identity():
    """BenchExec's run identity is task name plus properties: the reader keeps each run's."""
    table = load_result(CORPUS / "integration-predicateAnalysis.2015-10-20_1355.results.xml.bz2", ["cputime"])
    assert collections.Counter(table.properties.tolist()) == {"unreach-call": 403, "unreach-label": 81}
    assert len({id(p) for p in table.properties}) == 2  # one str per distinct value, not one per run
    legacy = load_result(CORPUS / "test.2015-03-03_1613.results.predicateAnalysis-legacy.xml")  # <sourcefile> runs
    assert legacy.properties.tolist() == ["unreach-label"] * 3 + ["", "unreach-label"]


def test_legacy_memory_in_bytes_and_sourcefile_elements():
    """BenchExec 1.x: <sourcefile> instead of <run>, memUsage as unitless bytes."""
    table = load_result(CORPUS / "test.2015-03-03_1613.results.predicateAnalysis-legacy.xml")
    assert table.units["memUsage"] == "B"
    assert table.columns["memUsage"].tolist() == [
        128032768, 129118208, 132337664, 129470464, 126312448
    ]
    assert table.status.tolist() == ["true", "false(reach)", "true", "true", "true"]
    assert table.category.tolist() == ["wrong", "correct", "correct", "missing", "correct"]
    assert table.units["exitcode"] == ""


def test_metadata_and_run_set_names():
    table = load_result(CORPUS / "test.2015-03-03_1613.results.predicateAnalysis.0.xml")
    assert (table.benchmark, table.name, table.rundefinition) == (
        "test", "predicateAnalysis.0", "predicateAnalysis"
    )
    assert table.tool == "CPAchecker"
    assert table.toolmodule == "benchexec.tools.cpachecker"
    assert table.version == "1.4-svn 15944M"
    assert table.date == "2015-03-03 16:13:02 CET"
    assert table.options == "-noout -setprop log.consoleLevel=WARNING -predicateAnalysis"
    assert table.attributes["block"] == "0"
    assert table.attributes["timelimit"] == "10 s"
    assert table.systeminfo == [{
        "hostname": "tortuga", "os": "Linux 3.13.0-45-generic x86_64",
        "cpu_model": "Intel Core i7-2600 CPU @ 3.40GHz", "cpu_cores": "8",
        "cpu_frequency": "3401 MHz", "turboboost": "", "ram": "16389384 kB",
    }]


def test_unnamed_run_set_falls_back_to_benchmark():
    table = load_result(CORPUS / "mathsat.2015-05-27_1004.results.xml")
    assert (table.benchmark, table.name, table.rundefinition) == ("mathsat", "mathsat", "")
    numbered_block = load_result(CORPUS / "benchmark.test.2019-12-20_1532.results.xml.bz2")
    assert (numbered_block.name, numbered_block.rundefinition) == ("0", "")


def test_nan_and_inf_are_kept_and_counted():
    table = load_result(CORPUS / "nan_and_inf.xml")
    assert table.nonfinite == {"Floats": 1, "Aliasing": 2, "Loops": 1, "Boolean": 1}
    assert math.isnan(table.columns["Floats"][0])
    assert table.columns["Floats"][1] == pytest.approx(1e-8)
    assert table.columns["Aliasing"].tolist() == [1.0, math.inf, -math.inf]
    assert table.columns["Loops"][1] == math.inf
    assert table.columns["Boolean"][2] == -math.inf
    assert table.text_columns["host"][0] == "apollon104"
    assert table.text_columns["Config"][0].startswith("configselection-restart-")
    assert len(table.systeminfo) > 1


def test_mixed_columns_are_text_and_duplicates_take_the_first():
    """'vcloud-cpuCores' holds '[Processor{...}]' in this file; cputime appears twice per run."""
    table = load_result(CORPUS / INTEGRATION.format("20_1355"))
    assert "vcloud-cpuCores" in table.text_columns
    assert table.text_columns["vcloud-numaMemoyLimit"][0].startswith("{")
    assert table.units["vcloud-memoryLimit"] == "B"
    assert table.columns["vcloud-memoryLimit"][0] == 1.5e9


def test_valid_and_status_counts_on_error_statuses():
    table = load_result(CORPUS / INTEGRATION.format("22_1113"))
    counts = table.status_counts()
    assert counts == {"true": 185, "false(reach)": 138, "TIMEOUT": 137, "unknown": 17,
                      "ERROR (recursion)": 6, "ERROR": 1}
    assert next(iter(counts)) == "true"
    valid = table.valid()
    assert valid.dtype == bool and valid.sum() == 484 - 144  # 144 runs have category 'error'
    assert not valid[table.status == "TIMEOUT"].any()
    assert valid[table.status == "unknown"].all()
    assert not valid[0]  # the first run is a timeout


def test_runs_without_any_column_are_invalid():
    table = load_result(CORPUS / INTEGRATION.format("20_1355"))
    no_status = np.flatnonzero(table.status == "")
    assert len(no_status) == 2
    assert not table.valid()[no_status].any()
    assert np.isnan(table.columns["cputime"][no_status]).all()
    assert table.status_counts()[""] == 2
    assert table.valid().sum() == 484 - 119 - 2


def test_error_attribute_is_kept():
    table = load_result(CORPUS / "test-error.2015-03-03_1613.results.predicateAnalysis.xml")
    assert table.attributes["error"] == "fake error for testing"


def test_real_benchexec_335_file():
    """tests/data/calculatepi-real.results.xml.bz2: `benchexec --no-container` 3.35, tool
    calculatepi, time limit 2 s, tasks <withoutfile> 10, 100, 1000, 100000 (a timeout)."""
    table = load_result(REAL)
    assert len(table) == 4
    assert table.tasks.tolist() == ["10", "100", "1000", "100000"]
    assert (table.benchmark, table.name, table.rundefinition) == (
        "calculatepi-real", "bc.digits", "bc"
    )
    assert table.attributes["generator"] == "BenchExec 3.35"
    assert table.units["cputime"] == "s" and table.units["walltime"] == "s"
    assert table.units["memory"] == "B" and table.units["blkio-read"] == "B"
    assert table.columns["cputime"][0] == 0.004282051
    assert table.columns["memory"][0] == 933888
    assert table.status_counts() == {"done": 3, "TIMEOUT": 1}
    assert table.valid().tolist() == [True, True, True, False]
    assert np.isnan(table.columns["exitsignal"][:3]).all() and table.columns["exitsignal"][3] == 9
    assert table.text_columns["terminationreason"].tolist() == ["", "", "", "cputime"]
    assert table.text_columns["starttime"][0] == "2026-11-23T02:04:25.536273+00:00"
    assert table.systeminfo[0]["cpu_frequency"] == "2596130000Hz"


def test_valid_without_categories_follows_benchexec(tmp_path):
    """Without a category column the status decides, as benchexec.result would categorize it."""
    text = bz2.decompress(REAL.read_bytes()).decode()
    text = "\n".join(line for line in text.splitlines() if 'title="category"' not in line)
    path = tmp_path / "nocategory.results.xml"
    path.write_text(text)
    table = load_result(path)
    assert table.category.tolist() == ["", "", "", ""]
    assert table.valid().tolist() == [True, True, True, False]


def corpus_variant(tmp_path, name, replacements, source=PREDICATE):
    """A copy of a corpus file with text replaced; each replacement must hit."""
    text = (CORPUS / source).read_text()
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def test_units_are_converted_to_si(tmp_path):
    path = corpus_variant(tmp_path, "units.xml", [
        ('value="2.169189428s"', 'value="2169.189428ms"'),
        ('value="2.1783649921417236s"', 'value="0.5min"'),
        ('value="128032768"', 'value="128.032768MB"'),
        ('value="129118208"', 'value="129118208B"'),
    ])
    table = load_result(path)
    assert table.units == {"cputime": "s", "walltime": "s", "exitcode": "", "memUsage": "B"}
    assert table.columns["cputime"][0] == pytest.approx(2.169189428, rel=1e-15)
    assert table.columns["cputime"][1] == pytest.approx(2.189887353, rel=1e-15)
    assert table.columns["walltime"][0] == 30.0
    assert table.columns["memUsage"][:3] == pytest.approx([128032768, 129118208, 132337664])


def test_nonfinite_counts_what_the_file_writes(tmp_path):
    """A huge value in a large unit overflows to inf in SI units; the file wrote a number."""
    path = corpus_variant(tmp_path, "huge.xml", [('value="2.169189428s"', 'value="1e308h"')])
    table = load_result(path)
    assert table.columns["cputime"][0] == math.inf
    assert "cputime" not in table.nonfinite


def test_legacy_unitless_seconds(tmp_path):
    path = corpus_variant(tmp_path, "unitless.xml", [
        ('value="2.169189428s"', 'value="2.169189428"'),
        ('value="2.189887353s"', 'value="2.189887353"'),
    ])
    table = load_result(path)
    assert table.units["cputime"] == "s"
    assert table.columns["cputime"][:2].tolist() == [2.169189428, 2.189887353]


def test_load_results_takes_directories_and_files(tmp_path):
    tables = load_results([CORPUS])
    result_files = sorted(p for p in CORPUS.glob("*.results*") if not p.name.endswith(".zip"))
    assert [t.path for t in tables] == result_files
    assert len(tables) == len(CORPUS_FILES) - 1  # nan_and_inf.xml is not named *.results*
    assert [t.path for t in load_results(REAL)] == [REAL]
    tables = load_results([REAL, DATA])
    assert tables[0].path == REAL and REAL in [t.path for t in tables[1:]]
    with pytest.raises(ResultFileError) as excinfo:
        load_results([tmp_path])
    assert_one_line_error(tmp_path, excinfo)


def truncated_bz2(tmp_path):
    data = (CORPUS / (PREDICATE + ".bz2")).read_bytes()
    path = tmp_path / "half.results.xml.bz2"
    path.write_bytes(data[: len(data) // 2])
    return path


def truncated_gz(tmp_path):
    data = (CORPUS / (PREDICATE + ".gz")).read_bytes()
    path = tmp_path / "half.results.xml.gz"
    path.write_bytes(data[: len(data) // 2])
    return path


def corrupt_bz2(tmp_path):
    data = bytearray((CORPUS / (PREDICATE + ".bz2")).read_bytes())
    data[100:300] = bytes(200)
    path = tmp_path / "corrupt.results.xml.bz2"
    path.write_bytes(bytes(data))
    return path


def truncated_xml(tmp_path):
    data = (CORPUS / PREDICATE).read_bytes()
    path = tmp_path / "half.results.xml"
    path.write_bytes(data[: len(data) // 2])
    return path


def empty_file(tmp_path):
    path = tmp_path / "empty.results.xml"
    path.write_bytes(b"")
    return path


def empty_bz2(tmp_path):
    path = tmp_path / "empty.results.xml.bz2"
    path.write_bytes(bz2.compress(b""))
    return path


def wrong_root(tmp_path):
    path = tmp_path / "benchmark.xml"
    path.write_text('<?xml version="1.0"?>\n<benchmark tool="pi"><run name="x"/></benchmark>')
    return path


def not_xml(tmp_path):
    path = tmp_path / "notes.results.xml"
    path.write_text("cputime: 12 s\n")
    return path


def gzipped_text(tmp_path):
    path = tmp_path / "notes.results.xml.gz"
    path.write_bytes(gzip.compress(b"cputime: 12 s\n"))
    return path


def unknown_unit(tmp_path):
    return corpus_variant(tmp_path, "unit.xml", [('value="2.189887353s"', 'value="12.3parsecs"')])


def mixed_units(tmp_path):
    return corpus_variant(tmp_path, "mixed.xml", [('value="2.189887353s"', 'value="2189887353B"')])


def column_without_title(tmp_path):
    return corpus_variant(tmp_path, "notitle.xml", [('title="exitcode" ', "")])


def external_entity(tmp_path):
    return corpus_variant(tmp_path, "xxe.xml", [
        ('<?xml version="1.0" ?>',
         '<?xml version="1.0" ?><!DOCTYPE result [<!ENTITY x SYSTEM "file:///etc/passwd">]>'),
        ('value="2.189887353s"', 'value="&x;"'),
    ])


def logfiles_zip(tmp_path):
    return CORPUS / "test.2015-03-03_1613.logfiles.zip"


def missing_file(tmp_path):
    return tmp_path / "missing.results.xml.bz2"


def directory(tmp_path):
    return tmp_path


BAD_INPUTS = [truncated_bz2, truncated_gz, corrupt_bz2, truncated_xml, empty_file, empty_bz2,
              wrong_root, not_xml, gzipped_text, unknown_unit, mixed_units, column_without_title,
              external_entity, logfiles_zip, missing_file, directory]


@pytest.mark.parametrize("make", BAD_INPUTS, ids=[make.__name__ for make in BAD_INPUTS])
def test_bad_input_is_one_line_naming_the_file(tmp_path, make):
    path = make(tmp_path)
    with pytest.raises(ResultFileError) as excinfo:
        load_result(path)
    assert_one_line_error(path, excinfo)
    error = excinfo.value  # no chained lxml/bz2/OS traceback is printed with it
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


@pytest.mark.parametrize("make, words", [
    (truncated_bz2, "truncated"),
    (truncated_gz, "truncated"),
    (empty_file, "empty"),
    (wrong_root, "<benchmark>"),
    (logfiles_zip, "ZIP"),
    (missing_file, "no such file"),
    (unknown_unit, "'parsecs'"),
])
def test_bad_input_says_why(tmp_path, make, words):
    with pytest.raises(ResultFileError, match=words):
        load_result(make(tmp_path))


def test_unknown_unit_names_column_and_run(tmp_path):
    with pytest.raises(ResultFileError) as excinfo:
        load_result(unknown_unit(tmp_path))
    message = str(excinfo.value)
    assert "'cputime'" in message and "switch_test_default_fallthrough" in message


def test_result_without_runs_is_empty(tmp_path):
    path = tmp_path / "none.results.xml"
    path.write_text('<result benchmarkname="b" name="r" tool="t"><columns/></result>')
    table = load_result(path)
    assert len(table) == 0
    assert table.status_counts() == {}
    assert table.valid().shape == (0,)
    assert (table.benchmark, table.name, table.columns) == ("b", "r", {})


def test_generator_writes_a_loadable_benchexec_file(tmp_path):
    generator = runpy.run_path(str(GENERATOR))
    path = tmp_path / "large.results.xml.bz2"
    generator["main"]([str(path), "--runs", "300", "--seed", "3"])
    again = tmp_path / "again.results.xml.bz2"
    generator["main"]([str(again), "--runs", "300", "--seed", "3"])
    assert path.read_bytes() == again.read_bytes()
    table = load_result(path)
    assert len(table) == 300 and len(set(table.tasks)) == 300
    assert table.attributes["generator"] == "BenchExec 3.35"
    for title in ["cputime", "walltime", "timer-user", "timer-sys", "timer-real"]:
        assert table.units[title] == "s"
    assert table.units["memory"] == "B"
    assert set(table.text_columns) >= {"status", "category", "starttime"}
    assert table.status_counts()["done"] == table.valid().sum()
    assert np.isnan(table.columns["timer-user"][~table.valid()]).all()
    # the time-APIs experiment's bash run definition, as `timekit run time-apis` gets it
    assert (table.benchmark, table.name, table.rundefinition) == ("time-apis.load0-rerun1", "bash", "bash")
    assert table.toolmodule == "tool_info.timed_divisors" and table.tool == "divisors (timed)"
    assert table.options == "--timer bash" and "block" not in table.attributes
    assert table.tasks[0] == "tasks/43434343.r001.yml" and table.tasks[-1] == "tasks/250000000.r150.yml"
    for title in ["timer-user", "timer-sys", "timer-real"]:  # bash `time`: 1 ms resolution
        values = table.columns[title][table.valid()]
        assert np.allclose(values, np.round(values, 3), rtol=0, atol=1e-12)


def gzip_without_time(data):
    """gzip bytes that are the same in every test run."""
    return gzip.compress(data, mtime=0)


MUTATION_SOURCES = [PREDICATE, "nan_and_inf.xml", "mathsat.2015-05-27_1004.results.xml"]


@st.composite
def mutated_xml(draw):
    """A corpus file with a few bytes cut, inserted or overwritten, maybe compressed, maybe
    truncated."""
    data = bytearray((CORPUS / draw(st.sampled_from(MUTATION_SOURCES))).read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(data)))
        end = draw(st.integers(start, min(len(data), start + 40)))
        data[start:end] = draw(st.binary(max_size=8) | st.sampled_from(
            [b"", b"<", b">", b'"', b"&", b"<run>", b"</run>", b"NaN", b"s", b"xyz", b"\x00"]
        ))
    compressed = draw(st.sampled_from([bytes, bz2.compress, gzip_without_time]))(bytes(data))
    return compressed[: draw(st.none() | st.integers(1, len(compressed)))]  # maybe cut short


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # one file, rewritten
@given(data=st.binary(max_size=2000) | mutated_xml())
def test_fuzz_loads_or_raises_result_file_error(tmp_path, data):
    path = tmp_path / "fuzz.results.xml"
    path.write_bytes(data)
    try:
        table = load_result(path)
    except ResultFileError as e:
        assert str(e).startswith(f"{path}: ") and "\n" not in str(e)
    else:
        assert isinstance(table, RunTable)
        assert all(len(array) == len(table) for array in table.columns.values())


# -- columns=, and the fast reader against the strict one ---------------------------------------

TIME_APIS_COLUMNS = {"cputime", "walltime", "timer-user", "timer-sys", "timer-real", "self-clock", "self-cputime"}


def generated_file(tmp_path, name="large.results.xml.bz2", runs=2000, seed=1):
    """A file of the time-APIs experiment as benchmarks/make_large_result.py writes it."""
    path = tmp_path / name
    runpy.run_path(str(GENERATOR))["main"]([str(path), "--runs", str(runs), "--seed", str(seed)])
    return path


def assert_same_arrays(first, second):
    """Same dtype and values; floats bit for bit (NaN payloads, -0.0), strings as str."""
    assert first.dtype == second.dtype and first.shape == second.shape
    if first.dtype == np.float64:
        assert (first.view(np.uint64) == second.view(np.uint64)).all()
    else:
        assert first.tolist() == second.tolist()
        assert all(type(value) is str for value in first.tolist())


def assert_same_tables(first, second):
    """Every field of two RunTables equal, dicts in the same order."""
    for field in dataclasses.fields(RunTable):
        a, b = getattr(first, field.name), getattr(second, field.name)
        if isinstance(a, np.ndarray):
            assert_same_arrays(a, b)
        elif isinstance(a, dict):
            assert list(a) == list(b), field.name
            for key in a:
                if isinstance(a[key], np.ndarray):
                    assert_same_arrays(a[key], b[key])
                else:
                    assert a[key] == b[key], (field.name, key)
        else:
            assert a == b, field.name


def load_outcome(path, fast, columns=None):
    """The RunTable, or the error message."""
    try:
        return results._load(path, columns, fast=fast)
    except ResultFileError as e:
        return str(e)


def assert_same_outcome(path, columns=None):
    """The fast reader (with its fall-back) gives what the strict reader gives."""
    fast, strict = load_outcome(path, True, columns), load_outcome(path, False, columns)
    if isinstance(fast, str) or isinstance(strict, str):
        assert fast == strict
    else:
        assert_same_tables(fast, strict)


def forbid_fallback(monkeypatch):
    """Make the strict reader fail the test: the fast reader must read the file itself."""
    def fail(*args):
        raise AssertionError("the fast reader gave up")
    monkeypatch.setattr(strict_reader, "collect", fail)


@pytest.mark.parametrize("name", sorted(CORPUS_FILES))
def test_fast_reader_gives_the_strict_readers_table(name, monkeypatch):
    strict = results._load(CORPUS / name, None, fast=False)
    forbid_fallback(monkeypatch)  # the fast reader reads every corpus file itself
    assert_same_tables(results._load(CORPUS / name, None, fast=True), strict)


@pytest.mark.parametrize("name", ["large.results.xml.bz2", "large.results.xml", "large.results.xml.gz"])
def test_fast_reader_on_generated_file(tmp_path, name, monkeypatch):
    """2,000 runs: many chunks, the scanner learning new columns (runs that time out) as it goes."""
    path = generated_file(tmp_path, name)
    strict = results._load(path, None, fast=False)
    assert len(strict) == 2000
    monkeypatch.setattr(files, "CHUNK_SIZE", 1 << 14)  # ~16 runs a chunk, a few cut mid-run
    monkeypatch.setattr(files, "CHILD_MIN_BYTES", 0)  # bz2 from the child process
    forbid_fallback(monkeypatch)
    assert_same_tables(results._load(path, None, fast=True), strict)


def test_text_after_numbers_is_read_again_by_the_fast_reader(tmp_path, monkeypatch):
    """The fast reader keeps no text of numbers; a text value late in a numeric column makes it
    read the file again, keeping it, and gives the strict reader's table."""
    path = generated_file(tmp_path, "late-text.results.xml")
    text = path.read_text()
    last = text.rindex('<column title="divisors" value="')
    path.write_text(text[:last] + text[last:].replace('value="80"', 'value="n/a"', 1))
    strict = results._load(path, None, fast=False)
    assert strict.text_columns["divisors"][-1] == "n/a" and strict.text_columns["divisors"][0] == "16"
    monkeypatch.setattr(files, "CHUNK_SIZE", 1 << 14)
    forbid_fallback(monkeypatch)
    assert_same_tables(results._load(path, None, fast=True), strict)


def test_columns_keeps_only_the_columns_asked_for(tmp_path):
    path = generated_file(tmp_path, runs=300)
    full = load_result(path)
    for fast in (True, False):
        table = results._load(path, TIME_APIS_COLUMNS | {"no-such-column"}, fast=fast)
        assert set(table.columns) == TIME_APIS_COLUMNS
        assert list(table.text_columns) == ["status", "category"]  # always kept, in file order
        assert table.status is table.text_columns["status"]
        for title in TIME_APIS_COLUMNS:
            assert_same_arrays(table.columns[title], full.columns[title])
            assert table.units[title] == full.units[title]
        assert_same_arrays(table.tasks, full.tasks)
        assert table.valid().tolist() == full.valid().tolist()
    only_status = load_result(path, columns=[])
    assert only_status.columns == {} and list(only_status.text_columns) == ["status", "category"]
    assert load_results([path], columns={"cputime"})[0].columns.keys() == {"cputime"}
    assert load_result(path, columns="cputime").columns.keys() == {"cputime"}  # one title, not letters


def test_columns_skips_bad_columns_it_does_not_keep(tmp_path):
    """A column left out is never converted, so its unknown unit is no error."""
    path = unknown_unit(tmp_path)
    with pytest.raises(ResultFileError):
        load_result(path)
    assert load_result(path, columns={"walltime"}).units == {"walltime": "s"}


RUN = '<run files="[a.c]" name="a.c">'
COLUMN = '<column title="cputime" value="2.169189428s"/>'

# Files the fast reader must leave to the strict one (or read the same), and what they test.
SURPRISES = {
    "entity": [(RUN, RUN.replace("a.c]", "a&amp;b.c]"))],
    "character reference": [(COLUMN, COLUMN.replace("2.169", "&#50;.169"))],
    "comment between runs": [("</run>\n  <run", "</run><!-- <run name='x'></run> -->\n  <run")],
    "comment in a run": [(COLUMN, "<!-- x -->" + COLUMN)],
    "CDATA between runs": [("</run>\n  <run", "</run><![CDATA[ <run> ]]>\n  <run")],
    "processing instruction": [("</run>\n  <run", "</run><?timekit-runs?>\n  <run")],
    "other element in a run": [(COLUMN, "<log/>" + COLUMN)],
    "text in a run": [(COLUMN, "x" + COLUMN)],
    "single quotes": [(COLUMN, COLUMN.replace('"', "'"))],
    "tab in a value": [(COLUMN, COLUMN.replace("2.169", "\t2.169"))],
    "newline in an attribute": [(RUN, RUN.replace("[a.c]", "[a\nb.c]"))],
    "title after value": [(COLUMN, '<column value="2.169189428s" title="cputime"/>')],
    "hidden twice": [(COLUMN, '<column hidden="true" title="cputime" value="1s" hidden="true"/>')],
    "no value": [(COLUMN, '<column title="cputime"/>')],
    "empty value": [(COLUMN, '<column title="cputime" value=""/>')],
    "duplicate run attribute": [(RUN, RUN.replace(">", ' name="b">'))],
    "namespace on a run": [(RUN, RUN.replace(">", ' xmlns="urn:x">'))],
    "namespace prefix": [(RUN, RUN.replace(">", ' x:y="1">'))],
    "self-closing run": [("</run>\n  <run", '</run><run name="empty"/>\n  <run')],
    "run after the totals": [("</result>", '<column title="cputime" value="1s"/><run name="late"></run></result>')],
    "nested run": [(COLUMN, '<run name="inner"></run>' + COLUMN)],
    "systeminfo between runs": [("</run>\n  <run", "</run><systeminfo hostname='h'/>\n  <run")],
    "end tag with space": [("</run>", "</run >")],
    "run in a comment before the runs": [("<columns>", "<!-- <run name='x'><column title='a' value='1'/></run> --><columns>")],
    "unclosed run": [("</result>", "<run name='open'></result>")],
    "no end of result": [("</result>", "")],
    "garbage after the end": [("</result>", "</result><result/>")],
    "latin-1 declared": [('<?xml version="1.0" ?>', '<?xml version="1.0" encoding="ISO-8859-1"?>'),
                         (RUN, RUN.replace("a.c]", "\xe4.c]"))],
    "XML 1.1": [('<?xml version="1.0" ?>', '<?xml version="1.1" ?>')],
    "non-ASCII task": [(RUN, RUN.replace("a.c]", "\u00e4\u4e2d\U0001f600.c]"))],
    "forbidden character": [(RUN, RUN.replace("a.c]", "a\ufffe.c]"))],
    "entity defined for the runs": [('<?xml version="1.0" ?>', '<?xml version="1.0" ?><!DOCTYPE result ['
                                     '<!ENTITY r "<run name=\'z\'/>">]>'), ("<columns>", "&r;<columns>")],
    "attribute default": [('<?xml version="1.0" ?>', '<?xml version="1.0" ?><!DOCTYPE result ['
                           '<!ATTLIST run options CDATA "-x">]>')],
    "attribute type": [('<?xml version="1.0" ?>', '<?xml version="1.0" ?><!DOCTYPE result ['
                        '<!ATTLIST column value NMTOKENS #IMPLIED>]>'), (COLUMN, COLUMN + '<column title="x" value=" a  b "/>')],
    "attribute type from an entity": [('<?xml version="1.0" ?>', '<?xml version="1.0" ?><!DOCTYPE result ['
                                       '<!ENTITY % d "&#60;!ATTLIST column value NMTOKENS #IMPLIED>"> %d;]>'),
                                      (COLUMN, COLUMN + '<column title="x" value=" a  b "/>')],
}


@pytest.mark.parametrize("name", sorted(SURPRISES))
def test_surprises_give_what_the_strict_reader_gives(tmp_path, name):
    source = "test.2015-03-03_1613.results.predicateAnalysis.1.xml"  # one run, a.c added below
    text = (CORPUS / source).read_text().replace("<run ", RUN + COLUMN + "</run>\n  <run ", 1)
    for old, new in SURPRISES[name]:
        assert old in text
        text = text.replace(old, new, 1)
    path = tmp_path / "surprise.results.xml"
    path.write_bytes(text.encode("latin-1" if "latin" in name else "utf-8"))
    assert_same_outcome(path)
    assert_same_outcome(path, columns={"cputime"})


@pytest.mark.parametrize("make", [truncated_bz2, corrupt_bz2, empty_bz2], ids=lambda make: make.__name__)
def test_bz2_child_process_errors_are_the_strict_readers(tmp_path, make, monkeypatch):
    monkeypatch.setattr(files, "CHILD_MIN_BYTES", 0)
    path = make(tmp_path)
    message = load_outcome(path, False)
    assert isinstance(message, str) and message == load_outcome(path, True)


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # one file, rewritten
@given(data=mutated_xml())
def test_fuzz_fast_reader_gives_the_strict_readers_outcome(tmp_path, data):
    path = tmp_path / "fuzz.results.xml"
    path.write_bytes(data)
    assert_same_outcome(path)
