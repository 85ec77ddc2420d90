"""`timekit ab`'s options, built once from argv, and ab as a function (analysis.ab.api): the
outcome a caller reads, the same as what the command prints and exits with."""

import ast
import dataclasses
import io
import math
from types import SimpleNamespace

import pytest

from analysis import cli
from analysis.ab import api, report, verdict
from analysis.ab import cli as ab_cli
from analysis.tools.commands import cli as commands_cli
from analysis.tools.compare import cli as compare_cli
from analysis.tools.options import AbOptions, BenchOptions, CompareOptions
from tests.helpers import REPO

SPIN = REPO / "programs" / "bin" / "spin"


def parsed(*argv):
    return cli.build_parser().parse_args([str(a) for a in argv])


@pytest.mark.unit
def test_ab_options_are_built_once_from_argv_typed_and_frozen():
    options = ab_cli.options(parsed("ab", "./a {n}", "--threshold", "0.05", "./b {n}", "./c {n}", "--alpha", "0.01",
                                    "--until-decided", "--budget", "2m", "--column", "cputime", "--no-container",
                                    "-L", "n", "1,2", "--runs", "3", "--design", "blocks", "--verbose"))
    assert isinstance(options, AbOptions)
    assert (options.base, options.new, options.more, options.arguments) == ("./a {n}", "./b {n}", ("./c {n}",),
                                                                             ["./a {n}", "./b {n}", "./c {n}"])
    assert (options.threshold, options.alpha, options.budget, options.design) == (0.05, 0.01, 120.0, "blocks")
    assert options.until_decided and options.verbose and options.container is False
    assert options.columns == ("cputime",) and options.parameter_list == (("n", "1,2"),) and options.runs == 3
    # what the command line leaves open is resolved by the options, not written back into them
    assert options.max_reruns is None and options.max_reruns_limit == 20 and options.budget_sets_max
    assert options.reruns is None and options.reruns_to_start == 3   # --until-decided: the first look
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.threshold = 0.1
    # argparse's defaults are the dataclass's: a caller of analysis.ab.api builds the same options by hand
    defaults = ab_cli.options(parsed("ab", "./a", "./b"))
    assert defaults == AbOptions(base="./a", new="./b", command_line=defaults.command_line)
    # by default ab decides: the sequential rule's first look, then one more at a time within 2 minutes
    assert defaults.until_decided and defaults.budget == 120.0 and defaults.reruns_to_start == 3
    assert defaults.columns == () and defaults.max_reruns_limit == 20
    fixed = ab_cli.options(parsed("ab", "./a", "./b", "--reruns", "5"))
    assert not fixed.until_decided and fixed.budget is None and fixed.reruns_to_start == 5
    resumed = ab_cli.options(parsed("ab", "--resume"))
    assert not resumed.until_decided and resumed.budget is None   # the run goes on as it began
    given = ab_cli.options(parsed("ab", "./a", "./b", "--until-decided", "--max-reruns", "9", "--reruns", "4"))
    assert (given.max_reruns_limit, given.budget_sets_max, given.reruns_to_start) == (9, False, 4)


@pytest.mark.unit
def test_bench_and_compare_options_are_built_once_from_argv_too():
    bench = commands_cli.bench_options(parsed("bench", "./prog", "-L", "n", "10,100", "./prog {n}", "--reruns", "3"))
    assert isinstance(bench, BenchOptions) and bench.commands == ("./prog", "./prog {n}") and bench.reruns == 3
    assert bench.parameter_list == (("n", "10,100"),) and bench.runs is None and bench.container
    compare = compare_cli.options(parsed("compare", "a", "b", "--threshold", "0.03", "--column", "cputime"))
    assert isinstance(compare, CompareOptions) and compare.threshold == 0.03 and compare.columns == ("cputime",)
    assert compare.base.name == "a" and not compare.paired


@pytest.mark.unit
def test_nothing_below_the_command_lines_takes_an_argparse_namespace():
    """Only each command line's own functions (parse, turn the namespace into options or values,
    hand them on) see argparse's namespace; every other function of analysis/ takes typed values."""
    edge = {"options", "run", "command_options", "bench_options"}
    found = []
    for path in sorted((REPO / "analysis").rglob("*.py")):
        is_cli = path.name in ("cli.py", "history_cli.py")
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and "args" in [a.arg for a in node.args.args]:
                top_level = path == REPO / "analysis" / "cli.py" and (node.name.startswith("cmd_") or node.name in ("_preset", "parse_known_args"))
                if not (is_cli and (node.name in edge or top_level)):
                    found.append(f"{path.relative_to(REPO)}:{node.name}")
    assert not found, found


def _measured(rows, columns=("exec-cputime", "exec-walltime"), until_decided=False):
    run = SimpleNamespace(until_decided=until_decided, design="blocks", steps=[SimpleNamespace(status="done")] * 4,
                          busy_from_outside=lambda directory: "", design_changed=lambda: "")
    pair = {"base": "./a", "new": "./b",
            "rundefinitions": [{"name": "command", "base": "./a", "new": "./b", "assignment": {}}]}
    rows = [SimpleNamespace(rundefinition="command", column=c, ratio=r, ci_low=lo, ci_high=hi, verdict=v)
            for c, r, lo, hi, v in rows]
    return [SimpleNamespace(pair=pair, run=run, directory=REPO, rows=rows, sequential=None, columns=columns)]


@pytest.mark.unit
def test_the_outcome_is_the_gates_verdict_with_the_first_columns_row():
    """The outcome says what `timekit ab` says last (report.gate over every row): an open row
    anywhere is undecided, a slight change within the threshold passes as same, and its ratio and
    CI are the first column's."""
    def outcome(rows, until_decided=False, busy=()):
        measured = _measured(rows, until_decided=until_decided)
        judged = report.gate(measured, 0.02) if not busy else verdict.judge([], 0.02, busy=busy)
        return api.outcome(measured, judged, 1.0, REPO)

    same = outcome([("exec-cputime", 1.001, 0.99, 1.012, "~"), ("exec-walltime", 1.0, 0.99, 1.01, "~")])
    assert (same.verdict, same.column, same.ratio, same.invocations, same.reason, same.exit_code) == (
        "same", "exec-cputime", 1.001, 4, "", 0)
    wide = outcome([("exec-cputime", 1.001, 0.99, 1.012, "~"), ("exec-walltime", 1.0, 0.9, 1.1, "~")])
    assert (wide.verdict, wide.exit_code) == ("undecided", 3) and "walltime's CI reaches +10.0 %" in wide.reason
    assert outcome([("exec-cputime", 1.001, 0.97, 1.03, "~")], until_decided=True).verdict == "same"   # equivalence shown
    assert outcome([("exec-cputime", 0.8, 0.75, 0.85, "faster")]).verdict == "faster"
    assert outcome([("exec-cputime", 1.01, 1.005, 1.015, "slightly slower")]).verdict == "same"   # within the threshold
    slower = outcome([("exec-cputime", 1.3, 1.2, 1.4, "slower")])
    assert (slower.verdict, slower.exit_code, slower.ci_low) == ("slower", 1, 1.2)
    busy = outcome([("exec-cputime", 1.0, 0.99, 1.01, "~")], busy=["too much outside work"])
    assert (busy.verdict, busy.exit_code, busy.reason) == ("undecided", 3, "too much outside work")
    nothing = outcome([])
    assert nothing.verdict == "undecided" and math.isnan(nothing.ratio)


@pytest.mark.timing
def test_compare_commands_runs_what_ab_runs_and_returns_the_verdict(programs, scratch, monkeypatch):
    """Three times the work (a few ms each): slower, by the same path `timekit ab` takes (auto's
    pilot and choice of design, the first execution, the invocations), without a subprocess."""
    monkeypatch.chdir(scratch)
    out = io.StringIO()
    options = AbOptions(until_decided=False, budget=None, reruns=3, runs=1, repeat=15)
    outcome = api.compare_commands(f"{SPIN} 5000", f"{SPIN} 15000", options, scratch / "ab", out=out)
    assert (outcome.verdict, outcome.exit_code, outcome.reason) == ("slower", 1, ""), (outcome, out.getvalue())
    assert outcome.column == "exec-cputime" and 1.3 < outcome.ratio < 3.5, outcome
    assert outcome.ci_low <= outcome.ratio <= outcome.ci_high
    assert outcome.design in ("interleaved", "blocks") and outcome.invocations == 3 and outcome.seconds > 0
    assert outcome.directory == (scratch / "ab").resolve() and (scratch / "ab" / "paired.json").is_file()
    assert "(3/3 invocations)" in out.getvalue() and "verdict: slower:" in outcome.text
    assert [r.column for r in outcome.rows][0] == "exec-cputime" and outcome.rows[0].pair == f"{SPIN} 5000 → {SPIN} 15000"
