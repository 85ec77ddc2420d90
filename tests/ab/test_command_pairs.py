"""`timekit ab 'CMD A' 'CMD B'`: shell commands as ab's sides (analysis.ab.command_pairs), the
pairs' record and progress, and two real builds under benchexec (verdicts and shapes, never
times)."""

import json
import re
from types import SimpleNamespace

import pytest

from analysis.sweep import lint
from analysis.tools.commands import export, spec
from analysis.ab import command_pairs
from tests.helpers import REPO
from tests.test_commands import MILLIONS, build, timekit


@pytest.mark.unit
def test_ab_sides_share_run_definition_names_and_tasks(scratch):
    options = spec.Options(runs=2, cwd=str(scratch), parameters=spec.parse_parameters([("n", "1,2")]))
    [pair] = command_pairs.pairs(["./a {n}", "./b {n}"], options)
    assert pair["directory"] == "." and [r["name"] for r in pair["rundefinitions"]] == ["n=1", "n=2"]
    base, new = command_pairs._write_sides(pair, options, scratch, "timekit ab")
    assert lint.check([base, new]) == []
    assert base.parent.name == "base" and new.parent.name == "new"
    assert base.read_text().count("../tasks/run.r*.yml") == 1 and new.read_text().count("../tasks/run.r*.yml") == 1
    assert command_pairs.pair_commands(pair) == {"n=1": "./a 1 → ./b 1", "n=2": "./a 2 → ./b 2"}
    assert command_pairs.pair_labels(pair) == {"n=1": "A → B (n=1)", "n=2": "A → B (n=2)"}
    more = command_pairs.pairs(["./a", "./b", "./c"], spec.Options())
    assert [p["directory"] for p in more] == ["2-b", "3-c"] and [p["new"] for p in more] == ["./b", "./c"]


@pytest.mark.unit
def test_commands_have_short_labels_or_the_names_given():
    options = spec.Options(parameters=spec.parse_parameters([("n", "1,2")]))
    more = command_pairs.pairs(["./a", "./b", "./c"], spec.Options())
    assert [command_pairs.pair_labels(p) for p in more] == [{"command": "A → B"}, {"command": "A → C"}]
    [named] = command_pairs.pairs(["./a {n}", "./b {n}"], options, ("old-{n}", "new-{n}"))   # hyperfine's {n} in a name
    assert command_pairs.pair_labels(named) == {"n=1": "old-1 → new-1", "n=2": "old-2 → new-2"}
    assert [c.label for c in command_pairs.side_commands(named, "new")] == ["new-1", "new-2"]
    [partly] = command_pairs.pairs(["./a {n}", "./b {n}"], options, ("old",))   # the rest: their letters
    assert command_pairs.pair_labels(partly) == {"n=1": "old → B (n=1)", "n=2": "old → B (n=2)"}
    assert [c.label for c in command_pairs.side_commands(partly, "base")] == ["old n=1", "old n=2"]
    assert [c.label for c in spec.expand(["./a {n}", "./b"], options)] == ["#1", "#2", "#3"]
    assert [c.label for c in spec.expand(["./a {n}", "./b"], options, ("a",))] == ["a n=1", "a n=2", "#3"]
    for names, why in ((("x", "y", "z"), "3 --command-name given for 2 command(s)"), (("x", "x"), "'x' would name two"),
                       (("B",), "'B' would name two"), (("",), "an empty name")):
        with pytest.raises(spec.CommandError, match=re.escape(why)):
            command_pairs.pairs(["./a", "./b"], spec.Options(), names)


@pytest.mark.unit
def test_ab_refuses_a_mix_and_command_options_with_definitions():
    def args(*given, **options):
        return SimpleNamespace(base=given[0], new=given[1], more=list(given[2:]), resume=False,
                               **{name: options.get(name) for name in command_pairs.commands_cli.COMMAND_ONLY})

    with pytest.raises(spec.CommandError, match="not a mix"):
        command_pairs.commands_given(args("base.xml", "./b"))
    with pytest.raises(spec.CommandError, match="--runs: for shell commands only"):
        command_pairs.commands_given(args("base.xml", "new.xml", runs=5))
    with pytest.raises(spec.CommandError, match="two benchmark definitions, got 3"):
        command_pairs.commands_given(args("a.xml", "b.xml", "c.xml"))
    assert command_pairs.commands_given(args("base.xml", "new.xml")) is None
    assert command_pairs.commands_given(args("./a", "./b", "./c")) == ["./a", "./b", "./c"]


@pytest.mark.timing
def test_ab_of_two_builds_where_b_does_more_work_says_slower_and_exits_1(programs, scratch):
    # B does twice the work (see below). With 10 % (benchmarks/README.md's log: +11.2 %, CI +8.5 … +14.3 %) the loaded VM
    # sometimes hides it: under a parallel test suite a 0.2 s loop's CPU time moved by 10 to 25 %
    # between invocations, and 20 invocations a side measured +5.8 % (CI -2.1 … +14.4 %) for 10 %
    # and +10.7 % (CI +0.2 … +22.1 %) for 20 %, rightly "undecided" by the sequential rule. The kit
    # adds invocations until decided; the test's margin keeps it from depending on the VM's quiet.
    # Its verdict is cputime's: deciding walltime's row too (the default columns) kept it adding
    # invocations for longer on a loaded machine (55 s). No --max-reruns: on a CI host whose CPU time
    # varied by 35 % within an invocation (241 … 634 ms for one loop), M = 5 left +42.6 % open (p 0.043
    # against 0.039); ab decides by default and adds invocations within its budget instead. At most 8
    # a side: the separate design's O'Brien-Fleming-type spending over the budget's M_max (about 60)
    # spent almost nothing before M = 20 (69 s); over 8 looks it decides a 50 % change at M = 3 to 5.
    # Twice the work, not 50 % more: on 2026-11-29 the host's spells moved the 0.2 s loop from 222 to
    # 1,316 ms (CV 55 % within an invocation, 42 % between), and 8 invocations a side left +50 % at
    # CI -12 … +113 %, rightly undecided; ln 2 stands about 3 standard errors clear of 0 there.
    base, new = build(scratch, "loop-a", MILLIONS), build(scratch, "loop-b", MILLIONS * 2)
    code, text = timekit("ab", base, new, "--design", "separate", "--column", "cputime", "--budget", "3m",
                         "--max-reruns", "8", "--runs", "5", "--output", scratch / "ab", "--export-json",
                         scratch / "ab.json", cwd=scratch)
    assert code == 1, text
    assert "every row decided after" in text or "decided at" in text, text
    table = text[text.index("base → new"):]
    assert "A → B       cputime" in table and "slower" in table.splitlines()[1], text
    assert re.search(r"^verdict: slower: A → B: cputime \+[0-9.]+ % \(exit 1\)$", text, re.M), text
    assert sum(line.startswith("verdict:") for line in text.splitlines()) == 1, text
    assert "Base (A): ./loop-a" in text and "New (B): ./loop-b" in text and ", ETA " in text   # the legend
    data = json.loads((scratch / "ab.json").read_text())
    assert [(r["command"], r["label"]) for r in data["results"]] == [("./loop-a", "A"), ("./loop-b", "B")]
    assert {(r["command"], r["label"]) for r in data["comparison"]} == {("./loop-a → ./loop-b", "A → B")}
    for entry in data["results"]:
        assert set(export.HYPERFINE) <= set(entry) and entry["reruns"] >= 3 and len(entry["times"]) == 5 * entry["reruns"]
        assert all(entry[k] is not None for k in ("mean", "stddev", "median", "user", "min", "max", "cv_within"))
    assert data["regression"] is True and {r["verdict"] for r in data["comparison"] if r["column"] == "cputime"} == {"slower"}
    assert data["benchexec"]["per_run"] > 0
    assert lint.check(data["benchexec"]["definitions"]) == [] and len(data["benchexec"]["definitions"]) == 2


@pytest.mark.timing
def test_ab_of_one_build_on_both_sides_says_same_exits_0_and_resumes_by_the_commands(programs, scratch):
    base = build(scratch, "loop-a", MILLIONS)
    # identical sides: a calibrated test says slower or faster in alpha of the cases; 0.01 keeps this one from flaking
    code, text = timekit("ab", base, base, "--design", "separate", "--reruns", "3", "--runs", "5", "--alpha", "0.01",
                         "-n", "before", "-n", "after", "--output", scratch / "ab", cwd=scratch)
    assert code in (0, 3), text   # three fixed invocations may leave it open (exit 3), never slower
    assert "Base (before): ./loop-a" in text and "New (after): ./loop-a" in text
    rows = text[text.index("base → new"):].split("\n\n")[0].splitlines()[1:]
    assert len(rows) == 2 and all(row.startswith("before → after") and row.rstrip().endswith("~") for row in rows), text
    assert "no significant slowdown" in next(line for line in text.splitlines() if line.startswith("verdict:"))
    # nothing left to run: --resume prints the same verdict, labelled by the commands
    first = code
    code, again = timekit("ab", "--resume", "--output", scratch / "ab", "--alpha", "0.01", cwd=scratch)
    assert code == first and again[again.index("base → new"):].split("\n\n")[0] == text[text.index("base → new"):].split("\n\n")[0]
    # the sides are ordinary result directories
    code, compared = timekit("compare", scratch / "ab" / "base", scratch / "ab" / "new", "--alpha", "0.01", "--format", "json",
                             cwd=REPO)   # the same alpha as above: at 0.05 an A/A pair fails the gate in 5 % of the cases
    assert code == 0 and {r["rundefinition"] for r in json.loads(compared[compared.index("{"):])["rows"]} == {"command"}
    assert json.loads(compared[compared.index("{"):])["labels"] == {"command": "./loop-a → ./loop-a"}
    assert sum(line.startswith("verdict:") for line in text.splitlines()) == 1, text


@pytest.mark.unit
def test_compare_of_an_ab_folder_labels_its_rows_by_the_commands(scratch):
    for side in ("base", "new"):
        (scratch / side).mkdir()
    (scratch / "commands.json").write_text(json.dumps(
        {"pairs": [{"directory": ".", "rundefinitions": [{"name": "command", "base": "./a", "new": "./b"}]}]}))
    assert command_pairs.labels_of(scratch / "base", scratch / "new") == {"command": "./a → ./b"}
    assert command_pairs.labels_of(scratch / "base", scratch / "other" / "new") == {}
    assert command_pairs.labels_of(REPO / "programs", REPO / "tests") == {}


@pytest.mark.unit
def test_progress_lines_of_ab_get_an_eta():
    import io

    stream = io.StringIO()
    eta = command_pairs.EtaLines(stream)
    eta.invocation("  base rerun 1: 5 runs in 3.0 s", 3, 10)   # 2 were done before (--resume)
    print("  a line without progress", file=eta)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("  base rerun 1: 5 runs in 3.0 s (3/10 invocations), ETA 0:00:")
    assert lines[1] == "  a line without progress"
