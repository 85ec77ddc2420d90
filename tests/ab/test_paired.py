"""The paired designs of `timekit ab` on shell commands (blocks, duet): every execution read back,
the invocation's median log ratio, the one-sample t over invocations, the paired sequential rule,
the batch size, and the real benchexec runs end to end (verdicts and shapes, never times)."""

import json
import math
import sys

import numpy as np
import pytest
import scipy.stats
from lxml import etree

from analysis.sweep import lint
from analysis.products.calibrate import paired as paired_calibration
from analysis.tools.commands import definition, executions, spec
from analysis.ab import paired, stopping, paired_summary
from analysis.ab import observations
from analysis.tools.plan import sequential
from tests.helpers import REPO, run_isolated

SPIN = REPO / "programs" / "bin" / "spin"


def timekit(*argv, cwd):
    return run_isolated([sys.executable, "-m", "analysis.cli", *map(str, argv)], cwd=cwd)


def invocation(log_ratios, base=0.02):
    """An executions.Invocation of one run whose pairs have these ln(b / a) (cpu and wall alike)."""
    run = []
    for k, r in enumerate(log_ratios, start=1):
        b = base * math.exp(r)
        run += [executions.Execution(k, "a", base, base, 0.0, 0), executions.Execution(k, "b", b, b, 0.0, 0)]
    return executions.Invocation(("paired", str(len(log_ratios))), [run])


# ---------------------------------------------------------------------------------------------
# reading, statistics, rules


@pytest.mark.unit
def test_execution_lines_of_pairs_and_of_single_commands_are_read():
    text = ("some output of the command\n"
            "cmdrun-execution 1 side=b wall=0.020 user=0.018 sys=0.001 status=0\n"
            "cmdrun-execution 1 side=a wall=0.010 user=0.009 sys=0.000 status=0 core=1\n"
            "cmdrun-execution 2 wall=0.5 user=0.4 sys=0.1 status=3\n"
            "cmdrun-execution 3 side=a wall=oops user=0.4 sys=0.1 status=0\n")
    found = executions.parse(text)
    assert [(e.index, e.side, e.core, e.status) for e in found] == [(1, "b", -1, 0), (1, "a", 1, 0), (2, "a", -1, 3)]
    assert found[0].cpu == pytest.approx(0.019) and found[2].value("exec-walltime") == 0.5
    pairs = executions.Invocation(("x", "d"), [found[:2]])
    assert executions.pair_log_ratios(pairs, "exec-cputime") == pytest.approx([math.log(0.019 / 0.009)])


@pytest.mark.unit
def test_a_row_is_the_t_interval_over_invocation_medians():
    rng = np.random.default_rng(3)
    invocations = [invocation(rng.normal(0.03, 0.01, 15)) for _ in range(6)]
    medians = np.array([np.median(executions.pair_log_ratios(i, "exec-cputime")) for i in invocations])
    row = observations.row("command", "exec-cputime", invocations)
    assert row.unit == observations.UNIT and row.reruns_base == 6 and row.n_base == 90
    assert row.ratio == pytest.approx(math.exp(medians.mean()))
    assert row.welch_p == pytest.approx(scipy.stats.ttest_1samp(medians, 0).pvalue)
    half = scipy.stats.t.ppf(0.975, 5) * medians.std(ddof=1) / math.sqrt(6)
    assert (row.ci_low, row.ci_high) == pytest.approx((math.exp(medians.mean() - half), math.exp(medians.mean() + half)))
    assert observations.row("command", "exec-cputime", invocations[:1]) is None   # one invocation: no row
    # a pair far off moves the median little: the outlier that a mean would follow
    spoiled = [invocation(list(rng.normal(0.03, 0.01, 14)) + [2.0]) for _ in range(6)]
    assert observations.row("command", "exec-cputime", spoiled).ratio == pytest.approx(math.exp(0.03), rel=0.01)


@pytest.mark.unit
def test_an_invocations_median_weighs_both_start_orders_alike():
    """The side that starts second runs 10 % slower here: pairs started by a read +0.10 + change,
    pairs started by b -0.10 + change. Seven against three pairs: a plain median lands in the
    larger group, the balanced one between them; swapping base and new flips its sign."""
    rng = np.random.default_rng(5)
    change, order_effect = 0.02, 0.10
    firsts = ["a"] * 7 + ["b"] * 3
    ratios = [change + (order_effect if f == "a" else -order_effect) + rng.normal(0, 0.002) for f in firsts]
    run = []
    for k, (first, r) in enumerate(zip(firsts, ratios), start=1):
        a, b = executions.Execution(k, "a", 0.02, 0.02, 0.0, 0), executions.Execution(k, "b", 0.02 * math.exp(r), 0.02 * math.exp(r), 0.0, 0)
        run += [a, b] if first == "a" else [b, a]
    pairs = executions.Invocation(("paired", "order"), [run])
    assert executions.pair_strata(pairs, "exec-cputime") == [f"{f} first" for f in firsts]
    assert np.median(executions.pair_log_ratios(pairs, "exec-cputime")) == pytest.approx(change + order_effect, abs=0.01)
    logs, _ = observations.invocation_log_ratios([pairs], "exec-cputime")
    assert logs[0] == pytest.approx(change, abs=0.01)
    strata = ["x first" if f == "a" else "y first" for f in firsts]
    assert observations.balanced_median(-np.array(ratios), strata) == pytest.approx(-observations.balanced_median(ratios, strata))
    # groups of one size: the plain median of all pairs, not a mean of the two groups' medians
    values, groups = [0.0, 0.01, 0.02, 0.5, -0.5, -0.4, 0.01, 0.02], ["a first"] * 4 + ["b first"] * 4
    assert observations.balanced_median(values, groups) == pytest.approx(np.median(values)) == pytest.approx(0.01)
    assert np.mean([np.median(values[:4]), np.median(values[4:])]) == pytest.approx(-0.09)   # one group's tail


@pytest.mark.unit
def test_the_paired_sequential_rule_keeps_its_error_rate_over_all_looks():
    """Under the null, a sequence of M_max = 10 invocations' log ratios is called slower or faster
    at some look in about alpha of the cases, not alpha times the looks."""
    rng = np.random.default_rng(11)
    alpha, trials = 0.05, 1500
    wrong = sum(sequential.run_paired_sequence(rng.normal(0, 0.01, 10), alpha, 0.0, 10).verdict in ("slower", "faster")
                for _ in range(trials))
    assert abs(wrong / trials - alpha) < 0.015, wrong / trials
    levels = sequential.boundaries(alpha, 10, paired=True)
    assert levels[3] > sequential.boundaries(alpha, 10)[3]   # Pocock-type: more alpha early than O'Brien-Fleming
    d = sequential.decide_paired(np.log([1.05, 1.052, 1.049, 1.051]), levels[4], 0.01)
    assert d.decided and d.verdict == "slower" and d.ratio == pytest.approx(1.0505, abs=1e-3)
    same = sequential.decide_paired([0.001, -0.001, 0.0005, -0.0004, 0.0], levels[5], 0.01)
    assert same.decided and same.verdict == "~"


@pytest.mark.unit
def test_a_duet_invocation_centres_each_core_on_its_own_median():
    """Core 0 runs 1.8 times slower than core 1 (as it did on the development VM): a's pairs on
    core 0 read -0.59 + change, on core 1 +0.59 + change. The mean of the cores' medians finds the
    change; one median over both groups would land anywhere between them."""
    rng = np.random.default_rng(8)
    change, gap = 0.03, math.log(1.8)
    run = []
    for k in range(1, 22):   # 21 pairs: a on core 0 in 11 of them
        a_core = 0 if k % 2 else 1
        r = change + (gap if a_core == 1 else -gap) + rng.normal(0, 0.01)
        b = 0.01 * math.exp(r)
        run += [executions.Execution(k, "a", 0.01, 0.01, 0.0, 0, a_core), executions.Execution(k, "b", b, b, 0.0, 0, 1 - a_core)]
    logs, pairs = observations.invocation_log_ratios([executions.Invocation(("duet", "1"), [run])], "exec-cputime")
    assert logs[0] == pytest.approx(change, abs=0.01)
    assert abs(np.median(pairs[0]) - change) > 0.5   # the plain median: inside core 0's group


@pytest.mark.unit
def test_a_block_says_why_its_runs_outnumber_the_tables_n():
    """Under a co-located design the rows rest on the pairs timed together, not on the sentinel's
    back-to-back ones, which each command's block counts too: the block says how many and why."""
    from analysis.tools.commands import figures, output

    run = []
    for k in range(1, 11):   # 8 pairs interleaved, 2 back to back for the sentinel
        mode = "interleave" if k <= 8 else executions.ALONE
        run += [executions.Execution(k, side, 0.02, 0.02, 0.0, 0, mode=mode) for side in "ab"]
    invocations = [executions.Invocation(("interleaved", str(i)), [list(run)]) for i in range(2)]
    row = observations.row("command", "exec-cputime", invocations)
    command = spec.Command("./a", "./a", {}, "", "command", "A")
    f = figures.side_figures(command, invocations, "a", "exec-cputime")
    f.uncompared, f.uncompared_why = paired.uncompared(invocations, "a", alone=False)
    assert (f.runs, row.n_base, f.uncompared, f.uncompared_why) == (20, 16, 4, "sentinel")
    assert "20 runs in 2 invocations (4 of them back to back for the sentinel's check: not in the table)" in output.block("Base (A)", f)
    flagged = observations.row("command", "exec-cputime", invocations, alone=True)   # the sentinel flagged the design
    assert (flagged.n_base, paired.uncompared(invocations, "a", alone=True)) == (4, (16, "together"))
    blocks = [executions.Invocation(("blocks", "1"), [[executions.Execution(1, s, 0.02, 0.02, 0.0, 0) for s in "ab"]])]
    assert paired.uncompared(blocks, "a", alone=False) == (0, "")


@pytest.mark.unit
def test_an_undecided_row_says_what_would_decide_it_at_its_own_spread():
    from analysis.tools.plan import paired_power
    from analysis.tools.plan.verdict_record import WouldDecide

    # a change beyond the threshold: M where the one-sample t calls it with 90 % power
    a = paired_power.advice(0.02, 1.03, 0.025, 0.01, seconds=1.5)
    assert a.goal == "change" and a.invocations == paired_power.invocations_needed(0.02, 0.03, 0.025, 0.9)
    assert paired_power.power(a.invocations, 0.02, 0.03, 0.025) >= 0.9 > paired_power.power(a.invocations - 1, 0.02, 0.03, 0.025)
    # power is a number at every M (scipy's noncentral t alone gives NaN far in its tail), and grows with M
    powers = [paired_power.power(m, 0.02, 0.03, 0.025) for m in range(3, paired_power.MAX_INVOCATIONS + 1)]
    assert all(math.isfinite(x) for x in powers) and all(b >= a - 1e-6 for a, b in zip(powers, powers[1:]))   # within scipy's noise near 1
    assert a.minutes == pytest.approx(a.invocations * 1.5 / 60)
    # within the threshold: M where the interval of the two one-sided tests (1 - 2 x 0.025) fits
    # between the change and the threshold
    w = paired_power.advice(0.02, 1.002, 0.025, 0.01, seconds=1.0)

    def half(m):
        return scipy.stats.t.ppf(1 - 0.025, m - 1) * 0.02 / math.sqrt(m)

    assert w.goal == "within" and half(w.invocations) < math.log(1.01) - math.log(1.002) <= half(w.invocations - 1)
    # more spread: more invocations; beyond reach at all, it says so and what would help
    assert paired_power.advice(0.04, 1.03, 0.025, 0.01, 1.0).invocations > a.invocations
    far = paired_power.advice(0.3, 1.01, 0.025, 0.005, 1.0)
    assert far.invocations is None
    text = paired_power.render_advice(far, 0.005, "/r/ab")
    assert "more than 200 invocations" in text and "quieter machine" in text and "30.00 %" in text
    assert "--max-reruns 14" in paired_power.render_advice(WouldDecide("change", 0.03, 14, 0.35, sd=0.02), 0.01, "/r/ab")


@pytest.mark.unit
def test_the_progress_line_says_whether_a_decision_is_within_reach():
    from types import SimpleNamespace

    from analysis.tools.plan import paired_power

    run = SimpleNamespace(reruns=5, max_reruns=20, steps=[SimpleNamespace(status="done", seconds=1.5, rerun=k) for k in range(1, 6)])

    def look(sd, ratio, decided=False):
        return stopping.Look("r", sequential.Decision("slower" if decided else "", decided, 5, 0.01, 0.004, ratio, 0.99, 1.05),
                              100, sd)

    near = stopping._nearest_decision(run, [look(0.02, 1.03), look(0.05, 1.03)], 0.05, 0.01)
    assert near == paired_power.advice(0.02, 1.03, 0.004, 0.01, 1.5).invocations   # one row slower: the gate's answer
    assert stopping._forecast(run, near) == f" (at this spread about M = {max(near, 6)} would decide it)"
    both_same = stopping._nearest_decision(run, [look(0.01, 1.001), look(0.02, 1.001)], 0.05, 0.01)
    assert both_same == paired_power.advice(0.02, 1.001, 0.004, 0.01, 1.5).invocations   # '~' needs every row
    far = stopping._nearest_decision(run, [look(0.03, 1.012)], 0.05, 0.01)
    assert far is not None and far > 20
    assert stopping._forecast(run, far).endswith(f"about M = {far} would decide it, beyond M_max = 20: likely to end undecided)")
    assert stopping._nearest_decision(run, [look(0.3, 1.005)], 0.05, 0.01) is None
    assert "likely to end undecided" in stopping._forecast(run, None)
    assert stopping._nearest_decision(run, [look(0.02, 1.03, decided=True)], 0.05, 0.01) is None   # decided rows need nothing


@pytest.mark.unit
def test_the_batch_keeps_benchexecs_cost_small_and_invocations_short():
    options = spec.Options()
    short = paired.choose_batch(0.028, options, None, None)
    assert short.pairs >= math.ceil(paired.INVOCATION_SECONDS / 0.028) and short.runs == 1
    assert short.pairs * 0.028 < 2 * paired.INVOCATION_SECONDS
    long = paired.choose_batch(0.6, options, None, None)
    assert long.pairs == paired.MIN_PAIRS and long.pairs_per_run == 3
    very_long = paired.choose_batch(6.0, options, None, None)
    assert very_long.pairs_per_run == 1 and very_long.runs == paired.MIN_PAIRS
    given = paired.choose_batch(0.028, options, 4, 7)
    assert (given.runs, given.pairs_per_run) == (4, 7) and "--repeat 7" in given.why
    untimed = paired.choose_batch(math.nan, options, None, None)
    assert (untimed.runs, untimed.pairs_per_run) == (paired.MIN_PAIRS, 1)


@pytest.mark.unit
def test_a_budget_sets_how_many_invocations_the_sequential_rule_may_look_at():
    batch = paired.choose_batch(0.6, spec.Options(), None, None)   # 3 pairs of 0.6 s: about 2.5 s an invocation
    run = paired.PairedRun("blocks", [], {}, vars(batch), seed=0, reruns=3)
    assert paired.invocations_in(run, 120) == int(120 // (1.8 + paired.RUN_COST + paired.INVOCATION_COST))
    assert paired.invocations_in(run, 1e6) == paired.MAX_INVOCATIONS
    run.batch.pair_seconds = math.nan
    assert paired.invocations_in(run, 120) == 0


@pytest.mark.unit
def test_a_paired_design_compares_cmdruns_times_only():
    assert paired.columns_of(None) == ("exec-cputime", "exec-walltime")
    assert paired.columns_of(["walltime", "exec-walltime"]) == ("exec-walltime",)
    with pytest.raises(paired.PairedError, match="--design separate"):
        paired.columns_of(["memory"])
    # interleaved: a side's wall time includes the other's turns on the core
    assert paired.columns_of(None, "interleaved") == ("exec-cputime",)
    with pytest.raises(paired.PairedError, match="only exec-cputime compares them"):
        paired.columns_of(["walltime"], "interleaved")


@pytest.mark.unit
def test_a_pair_is_told_by_the_one_column_its_pilot_names_unless_columns_are_asked_for():
    """Wall time alone where a command waits; CPU time alone where both keep one core busy (their
    wall time is that CPU time plus the machine's noise); both in between, for threads, untimed."""
    def run(share, cores=1):
        return paired.PairedRun("blocks", [], {}, {}, seed=0, reruns=3, cpu_share=share, cores=cores)

    assert [run(s).only_column for s in (0.05, 0.5, 0.89, 0.9, 0.99, math.nan)] == [
        "exec-walltime", None, None, "exec-cputime", "exec-cputime", None]
    assert run(0.97, cores=2).only_column is None   # threads: wall time is what they save
    assert "CPU time only: both commands keep one core busy (CPU time at least 97%" in run(0.97).only_column_why()
    assert run(0.5).only_column_why() == ""
    interleaved = paired.PairedRun("interleaved", [], {}, {}, seed=0, reruns=3, cpu_share=0.97, cores=1)
    assert interleaved.only_column_why() == ""   # it compares CPU time whatever the commands do: no choice to name
    assert paired.columns_of(None, "blocks", run(0.97).only_column) == ("exec-cputime",)
    assert paired.columns_of(None, "blocks", run(0.05).only_column) == ("exec-walltime",)
    assert paired.columns_of(["walltime", "cputime"], "blocks", run(0.97).only_column) == ("exec-walltime", "exec-cputime")
    assert paired.columns_of(None, "interleaved", run(0.05).only_column) == ("exec-cputime",)


@pytest.mark.unit
def test_a_paired_definition_is_valid_and_pairs_the_commands(scratch):
    options = spec.Options(runs=2, repeat=5, cwd=str(scratch))
    tasks = definition.write_tasks(scratch, options)
    for design, cores in (("blocks", "1"), ("duet", "2"), ("interleaved", "1")):
        path = definition.write_definition(scratch / f"p{design}.xml", [("command", "./a", "", "./b")], options, tasks,
                                           "test", paired=paired.cmdrun_settings(design, 7))
        assert lint.check([path]) == []
        text = path.read_text()
        assert f'cpuCores="{cores}"' in text and '<option name="--versus">./b</option>' in text
        assert "${taskdef_name}" in text
        assert ('<option name="--duet"/>' in text) == (design == "duet")
        assert ('<option name="--interleave"/>' in text) == (design == "interleaved")
        definition.set_seed(path, 7003)
        assert '<option name="--seed">7003</option>' in path.read_text()


# ---------------------------------------------------------------------------------------------
# under the real benchexec


@pytest.mark.timing
def test_blocks_says_slower_for_twice_the_work_and_same_for_a_against_itself(programs, scratch):
    base, new = f"{SPIN} 5000", f"{SPIN} 15000"   # three times the work: a few ms each, so a process start dilutes it
    code, text = timekit("ab", base, new, "--design", "blocks", "--reruns", "4", "--runs", "1", "--repeat", "15",
                         "--output", scratch / "ab", "--export-json", scratch / "ab.json", cwd=scratch)
    assert code == 1, text
    assert "design: blocks: 4 invocations, each 1 BenchExec run(s) of 15 pair(s)" in text
    assert "verdict: slower:" in text and sum(line.startswith("verdict:") for line in text.splitlines()) == 1
    data = json.loads((scratch / "ab.json").read_text())
    assert data["ab"][0]["design"] == "blocks"
    cpu = next(r for r in data["comparison"] if r["column"] == "exec-cputime")
    assert cpu["unit"] == "pair" and cpu["verdict"] == "slower" and 1.3 < cpu["ratio"] < 3.5 and cpu["n_base"] == 60
    assert [len(r["times"]) for r in data["results"]] == [60, 60]   # every execution a value of its own
    assert lint.check(data["benchexec"]["definitions"]) == []
    code, same = timekit("ab", base, base, "--design", "blocks", "--reruns", "3", "--runs", "1", "--repeat", "15",
                         "--alpha", "0.01", "--column", "cputime", "--column", "walltime", "--until-decided",
                         "--max-reruns", "3", "--output", scratch / "aa", "--export-json", scratch / "aa.json", cwd=scratch)
    # three invocations may leave the A/A open: undecided (exit 3), never a slowdown
    rows_decided = all(r["verdict"] == "~" for r in json.loads((scratch / "aa.json").read_text())["ab"][0]["sequential"]["rows"])
    assert code == (0 if rows_decided else 3) and "no significant slowdown" in same, same
    # the sequential verdicts travel as data: each row's verdict, cost, and what would decide it
    rows = json.loads((scratch / "aa.json").read_text())["ab"][0]["sequential"]["rows"]
    assert [r["row"] for r in rows] == ["command / run (exec-cputime)", "command / run (exec-walltime)"]
    for r in rows:
        assert r["verdict"] in ("~", "inconclusive") and r["invocations"] == 3 and r["pairs"] == 45, r
        assert r["test"] == "one-sample t" and r["rci_low"] <= r["ratio"] <= r["rci_high"]
        assert (r["would_decide"] is None) == (r["verdict"] == "~")
        if r["would_decide"]:
            assert r["would_decide"]["goal"] in ("change", "within") and r["would_decide"]["sd"] > 0
            assert f"{r['row']}: inconclusive at M = 3" in same and "would decide it:" in same
    # the A/A directory calibrates the paired rule: 3 invocations are too few, and say so
    with pytest.raises(Exception, match="4 or more"):
        paired_calibration.check(scratch / "aa")


@pytest.mark.timing   # its pilot may flag duet on a machine busy with other tests, and run blocks
def test_duet_runs_the_sides_on_two_cores_swapped_every_other_pair(programs, scratch):
    code, text = timekit("ab", f"{SPIN} 2000", f"{SPIN} 2000", "--duet", "--reruns", "2", "--runs", "1", "--repeat", "4",
                         "--output", scratch / "ab", "--format", "json", cwd=scratch)
    assert code in (0, 1, 3), text   # two fixed invocations: any verdict, open ones included
    data = json.loads(text[text.index("{"):])
    assert data["ab"][0]["design"] == "duet" and "two cores" in data["ab"][0]["summary"]
    assert "duet A/A on this machine" in data["ab"][0]["summary"] and (scratch / "results" / paired_summary.DUET_AA).is_file()
    found = executions.of_tables(paired.tables(scratch / "ab"), "command")
    assert len(found) == 2
    for inv in found:
        cores = {(e.index, e.side): e.core for e in inv.executions}
        duet = sorted({e.index for e in inv.executions if e.mode == "duet"})   # the other couple: the sentinel's
        assert len(duet) == 2 and duet[1] == duet[0] + 1 and duet[0] % 2 == 1, duet
        assert all(cores[(k, "a")] != cores[(k, "b")] for k in duet)
        assert cores[(duet[0], "a")] != cores[(duet[1], "a")]
        assert all(cores[(k, side)] == -1 for k in set(range(1, 5)) - set(duet) for side in "ab")


@pytest.mark.timing
def test_interleaved_compares_the_cpu_times_of_both_sides_run_at_once_on_one_core(programs, scratch):
    base, new = f"{SPIN} 5000", f"{SPIN} 15000"   # three times the work
    # 24 pairs a run: where the sentinel has not shown interleaving harmless (a noisy host), the
    # verdict rests on the 3 back-to-back couples of each run, and 10 pairs (one couple) left a
    # threefold change open at 3 invocations (CI to +345 %)
    code, text = timekit("ab", base, new, "--design", "interleaved", "--reruns", "4", "--runs", "1", "--repeat", "24",
                         "--output", scratch / "ab", "--export-json", scratch / "ab.json", cwd=scratch)
    assert code == 1 and "verdict: slower:" in text, text
    assert "design: interleaved: 4 invocations" in text and "one core" in text
    data = json.loads((scratch / "ab.json").read_text())
    assert data["ab"][0]["design"] == "interleaved"
    assert [r["column"] for r in data["comparison"]] == ["exec-cputime"]   # wall times include the other's turns
    row = data["comparison"][0]
    assert row["unit"] == "pair" and row["verdict"] == "slower" and 1.3 < row["ratio"] < 3.5, row
    assert '<option name="--interleave"/>' in (scratch / "ab" / paired.DEFINITION).read_text()
    code, text = timekit("ab", base, new, "--design", "interleaved", "--column", "walltime", "--output", scratch / "w",
                         cwd=scratch)
    assert code == 2 and "only exec-cputime compares them" in text, text


@pytest.mark.benchexec
def test_a_paired_design_refuses_benchexecs_other_columns_in_one_line(programs, scratch):
    code, text = timekit("ab", f"{SPIN} 1000", f"{SPIN} 1000", "--column", "memory", "--output", scratch / "ab", cwd=scratch)
    errors = [line for line in text.splitlines() if line.startswith("timekit: error:")]
    assert code == 2 and len(errors) == 1 and "--design separate" in errors[0], text


# ---------------------------------------------------------------------------------------------
# two benchmark definitions under blocks


@pytest.mark.unit
def test_definitions_of_one_tool_and_limits_merge_and_others_say_why_not(scratch):
    from analysis.ab import merged
    from tests.ab.test_separate import definitions

    base, new = definitions(scratch)
    assert merged.why_not_mergeable(base, new) == ""
    (scratch / "other.xml").write_text(new.read_text().replace("tool_info.divisors", "tool_info.timed_divisors"))
    assert "different tool-info modules" in merged.why_not_mergeable(base, scratch / "other.xml")
    (scratch / "limits.xml").write_text(new.read_text().replace('timelimit="20 s"', 'timelimit="30 s"'))
    assert "different timelimit values" in merged.why_not_mergeable(base, scratch / "limits.xml")
    copies = {}
    for side, path in (("base", base), ("new", new)):
        copies[side] = path
    written = merged.merge(copies, ["runexec"], scratch / "blocks.xml")
    text = written.read_text()
    assert '<rundefinition name="base.runexec">' in text and '<rundefinition name="new.runexec">' in text
    assert "base/tasks/*.yml" in text and "new/tasks/*.yml" in text and lint.check([written]) == []
    # task sets that can be cut: a run definition per side and chunk, each naming its part of the tasks
    assert merged.chunks_of(copies) == 2
    written = merged.merge(copies, ["runexec"], scratch / "chunked.xml", chunks=2)
    root = etree.parse(str(written)).getroot()
    names = [r.get("name") for r in root.findall("rundefinition")]
    assert names == ["base.runexec.chunk1", "base.runexec.chunk2", "new.runexec.chunk1", "new.runexec.chunk2"]
    tasks = {r.get("name"): [i.text.rsplit("/", 2)[-2:] for i in r.iter("include")] for r in root.findall("rundefinition")}
    assert tasks["base.runexec.chunk1"] == [["tasks", "x.r001.yml"]] and tasks["new.runexec.chunk2"] == [["tasks", "x.r002.yml"]]
    assert all("/base/" in i.text for i in root.find("rundefinition").iter("include")) and lint.check([written]) == []
    run = merged.BlocksRun("b.xml", "n.xml", ["runexec"], seed=1, reruns=0, chunks=2)
    run.plan(1)
    run.plan(2)
    sides = ["".join(n[0] for n in s.order) for s in run.steps]
    assert sides[0] in ("bnnb", "nbbn") and sides[1] == sides[0].translate(str.maketrans("bn", "nb"))


@pytest.mark.timing
def test_blocks_of_two_definitions_finds_the_doubled_input_slower(programs, scratch):
    from tests.ab.test_separate import definitions

    base, new = definitions(scratch, "4343434", "8686868", runs=3)   # twice the trial divisions
    # the default run: invocations until decided, so one set aside for outside work is made up for
    code, text = timekit("ab", base, new, "--column", "cputime", "--output", scratch / "ab",
                         "--format", "json", cwd=REPO)
    data = json.loads(text[text.index("{\n"):])
    [row] = data["comparison"]
    assert code == 1 and row["unit"] == "pair" and row["verdict"] == "slower" and 1.5 < row["ratio"] < 2.5, text
    assert data["ab"][0]["design"] == "blocks" and row["reruns_base"] >= 3 and row["n_base"] == 3 * row["reruns_base"]
    manifest = json.loads((scratch / "ab" / "blocks.json").read_text())
    assert manifest["chunks"] == 3 and {len(s["order"]) for s in manifest["steps"]} == {6}   # 3 tasks: 3 chunks a side
    assert [s["order"][0].split(".")[0] for s in manifest["steps"][:2]] in (["base", "new"], ["new", "base"])
    assert "their task sets in 3 chunks" in data["ab"][0]["summary"]
    assert lint.check([scratch / "ab" / "blocks.xml"]) == []
    (scratch / "other.xml").write_text(new.read_text().replace("tool_info.divisors", "tool_info.timed_divisors"))
    code, text = timekit("ab", base, scratch / "other.xml", "--reruns", "2", "--output", scratch / "sep", cwd=REPO)
    assert "design: separate: base and new have different tool-info modules" in text and (scratch / "sep" / "ab.json").is_file()


@pytest.mark.unit
def test_bench_pairs_its_commands_invocation_by_invocation():
    """Every invocation of bench runs every command: invocation k of one pairs with invocation k of
    the other, and the machine's drift between invocations (here 30 %) cancels in their ratio."""
    from analysis.tools.commands import figures, output

    drift = np.array([1.0, 1.3, 0.8, 1.1, 0.9])

    def command(name, scale):
        means = list(0.1 * scale * drift)
        return figures.Figures(name, name, {}, "walltime", means, float(np.mean(means)), 0.0, 0.0, 0.0, 0.0, math.nan,
                               math.nan, math.nan, [], 5, 0, 1, 5, rerun_means=means, rerun_sizes=[1] * 5)

    fast, slow = command("a", 1.0), command("b", 1.05)
    [(_, other, ratio, low, high, test)] = output.relative([fast, slow], paired=True)
    assert other is slow and ratio == pytest.approx(1.05) and high - low < 1e-6 and "paired t" in test
    [(_, _, _, low, high, test)] = output.relative([fast, slow])
    assert high - low > 0.2 and "Welch" in test
    assert "paired t" in output.summary([fast, slow], paired=True)


@pytest.mark.benchexec
def test_bench_with_repeat_keeps_every_execution(programs, scratch):
    code, text = timekit("bench", f"{SPIN} 1000", "--reruns", "2", "--runs", "2", "--repeat", "3", "--output", scratch / "b",
                         "--export-json", scratch / "b.json", cwd=scratch)
    assert code == 0, text
    [entry] = json.loads((scratch / "b.json").read_text())["results"]
    assert len(entry["times"]) == 12 and entry["reruns"] == 2 and "12 runs in 2 invocations" in text


@pytest.mark.unit
def test_the_method_line_says_how_each_kind_of_paired_row_was_formed():
    from analysis.tools.compare import repeated
    from analysis.ab import observations

    logs, ones = np.log([1.01, 0.99, 1.02]), np.ones(3)
    merged = observations.row_of("pi", repeated.MERGED_INPUTS, "cputime", logs, ones, ones)
    commands = observations.row_of("command", "run", "cputime", logs, ones, ones)
    assert "mean over the inputs" in repeated.legend([merged], 0.05, 0.02)
    assert "median" not in repeated.legend([merged], 0.05, 0.02)
    assert "median ln(new / base)" in repeated.legend([commands], 0.05, 0.02)
    assert "mean over the inputs" not in repeated.legend([commands], 0.05, 0.02)
    header = repeated.render(repeated.Result([merged, commands], []), "text", 0.05, 0.02).splitlines()[0]
    assert repeated.PAIRED_P in header and "Welch" not in header
