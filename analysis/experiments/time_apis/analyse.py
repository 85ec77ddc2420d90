"""
The time-APIs experiment (seed 000): samples, statistics, figures and findings.

Per run: which timing API measured it (the run definition's `--timer`), the background load, the
input, BenchExec's cgroup values (the ground truth) and what the timer and the program reported.
"Observed" CPU time is what a user of each API reads: user+sys of the timer, or BenchExec's
cputime for runexec. Runs that timed out, failed or lack a value are counted and left out.
"""

import re
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from analysis.core import plots
from analysis.core import stats
from analysis.core.report import Figure, Finding, Section, Table
from analysis.core.tasks import input_of

API_ORDER = ("runexec", "bash", "fish", "gnu")
API_LABEL = {"runexec": "RunExec (cgroups)", "bash": "bash time", "fish": "fish time", "gnu": "GNU time"}
ALPHA = 0.05
PRACTICAL = 0.01  # a difference below 1 % of the mean is reported as "~" even when significant
# the result columns this analysis reads; the loader skips all others
COLUMNS = ("status", "category", "cputime", "walltime", "timer-user", "timer-sys", "timer-real",
           "self-clock", "self-cputime")
_TIMER_OPTION = re.compile(r"--timer[= ](\S+)")
_NAME_CONDITION = re.compile(r"load(\d+)-rerun(\d+)")


@dataclass
class Samples:
    """One entry per run, as parallel arrays (fast for 100,000 runs)."""

    api: np.ndarray
    load: np.ndarray
    rerun: np.ndarray
    input: np.ndarray
    task: np.ndarray
    status: np.ndarray
    valid: np.ndarray
    cgroup_cpu: np.ndarray
    cgroup_wall: np.ndarray
    timer_user: np.ndarray
    timer_sys: np.ndarray
    timer_real: np.ndarray
    self_clock: np.ndarray
    self_cputime: np.ndarray

    @property
    def observed_cpu(self):
        timed = self.timer_user + self.timer_sys
        return np.where(self.api == "runexec", self.cgroup_cpu, timed)

    @property
    def observed_wall(self):
        return np.where(self.api == "runexec", self.cgroup_wall, self.timer_real)

    def select(self, mask):
        return Samples(**{name: getattr(self, name)[mask] for name in self.__dataclass_fields__})

    def as_columns(self):
        """Columns for the CSV of every sample (seconds)."""
        columns = {name: getattr(self, name) for name in self.__dataclass_fields__}
        columns["observed_cpu"] = self.observed_cpu
        columns["observed_wall"] = self.observed_wall
        return columns


def api_of(table):
    """The timing API of a result file: its `--timer` option, else its run-definition name."""
    match = _TIMER_OPTION.search(table.options or "")
    return match.group(1) if match else table.rundefinition or "runexec"


def condition_of(table, conditions):
    """(load, rerun) from the sweep manifest, else from a `loadK-rerunM` benchexec --name;
    a plain benchexec result had no background load from the kit: load 0."""
    if table.path.name in conditions:
        step = conditions[table.path.name]
        return step.load, step.rerun
    match = _NAME_CONDITION.search(table.benchmark)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 1)


def collect(tables, conditions=None):
    """Samples of all runs in the given RunTables; `conditions` maps file name -> (load, rerun)."""
    conditions = conditions or {}
    parts = []
    for table in tables:
        n = len(table)
        load, rerun = condition_of(table, conditions)
        def column(name, table=table, n=n):
            return table.columns.get(name, np.full(n, np.nan))

        parts.append(dict(
            api=np.full(n, api_of(table), dtype=object),
            load=np.full(n, load),
            rerun=np.full(n, rerun),
            input=np.array([input_of(t) for t in table.tasks], dtype=object),
            task=table.tasks,
            status=table.status,
            valid=table.valid(),
            cgroup_cpu=column("cputime"),
            cgroup_wall=column("walltime"),
            timer_user=column("timer-user"),
            timer_sys=column("timer-sys"),
            timer_real=column("timer-real"),
            self_clock=column("self-clock"),
            self_cputime=column("self-cputime"),
        ))
    if not parts:
        return None
    samples = Samples(**{name: np.concatenate([p[name] for p in parts]) for name in parts[0]})
    # a run counts only if it finished and its API's values exist
    samples.valid &= np.isfinite(samples.observed_cpu) & np.isfinite(samples.observed_wall)
    return samples


def _ordered_apis(samples):
    present = set(samples.api.tolist())
    return [a for a in API_ORDER if a in present] + sorted(present - set(API_ORDER))


def _ms(seconds):
    return seconds * 1e3


# ---------------------------------------------------------------------------------------------
# analysis of one input


def summary_table(samples, apis, loads, quantity, label):
    rows = []
    data = []
    for api in apis:
        for load in loads:
            group = samples.select((samples.api == api) & (samples.load == load))
            values = getattr(group.select(group.valid), quantity)
            s = stats.summarize(values)
            excluded = int((~group.valid).sum())
            rows.append([API_LABEL.get(api, api), load, s.n, excluded, _ms(s.mean), _ms(s.sd),
                         100 * s.cv, _ms(s.median), _ms(s.mad), _ms(s.min), _ms(s.max),
                         f"{_ms(s.ci_low):.4g} – {_ms(s.ci_high):.4g}"])
            data.append({"api": api, "load": int(load), "quantity": quantity, "excluded": excluded, **s.as_dict()})
    table = Table(
        title=f"{label}: summary per timing API and load level",
        columns=["API", "load", "n", "excluded", "mean (ms)", "sd (ms)", "CV (%)", "median (ms)",
                 "MAD (ms)", "min (ms)", "max (ms)", "95 % CI (ms)"],
        rows=rows,
        caption="95 % CI: of the mean, Student t. n counts runs that finished normally; excluded runs (timeout, error, missing "
                "value) are left out of every statistic.",
    )
    return table, data


def api_tests(samples, apis, loads):
    """Observed CPU time: every pair of APIs at each load level (four tests, Holm per test)."""
    results = []
    for load in loads:
        groups = {api: samples.observed_cpu[(samples.api == api) & (samples.load == load) & samples.valid]
                  for api in apis}
        groups = {k: v for k, v in groups.items() if len(v) >= 2}
        for r in stats.pairwise_tests(groups, alpha=ALPHA):
            results.append((load, r))
    return results


def load_effects(samples, apis, loads, quantity):
    """Each load level against load 0 per API: ratio of means with CI and Welch t (Holm)."""
    base_load = min(loads)
    rows, raw = [], []
    for api in apis:
        mask = (samples.api == api) & samples.valid
        values = getattr(samples, quantity)
        base = values[mask & (samples.load == base_load)]
        for load in loads:
            if load == base_load:
                continue
            other = values[mask & (samples.load == load)]
            if len(base) < 2 or len(other) < 2:
                continue
            ratio = stats.ratio_of_means(base, other)
            welch = [r for r in stats.two_sample_tests(base, other, f"load {base_load}", f"load {load}", alpha=ALPHA)
                     if r.test == "Welch t"][0]
            spread = scipy_stats.levene(base, other, center="median")
            raw.append((api, load, ratio, welch, spread.pvalue))
    adjusted = stats.adjust([w for _, _, _, w, _ in raw])
    spread_p = stats.holm([p for *_, p in raw]) if raw else []
    results = []
    for (api, load, ratio, _, _), welch, p_spread in zip(raw, adjusted, spread_p):
        verdict = stats.verdict(welch.significant, ratio.ratio, PRACTICAL)
        rows.append([API_LABEL.get(api, api), f"{base_load} → {load}", welch.n_a, welch.n_b, ratio.ratio,
                     f"{ratio.ci_low:.4f} – {ratio.ci_high:.4f}", welch.p, welch.p_adjusted, verdict, p_spread])
        results.append({"api": api, "load": int(load), "ratio": ratio.as_dict(), "welch": welch.as_dict(),
                        "verdict": verdict, "brown_forsythe_p_holm": float(p_spread)})
    return rows, results


def timer_quality(samples, apis):
    """Resolution of each timer and its bias against the cgroup value of the same run."""
    rows, data = [], []
    for api in apis:
        if api == "runexec":
            continue
        group = samples.select((samples.api == api) & samples.valid)
        if len(group.api) == 0:
            continue
        resolution = stats.timer_resolution(np.concatenate([group.timer_user, group.timer_real]))
        cpu_bias = stats.bias_against(group.timer_user + group.timer_sys, group.cgroup_cpu, step=resolution.step)
        wall_bias = stats.bias_against(group.timer_real, group.cgroup_wall, step=resolution.step)
        rows.append([API_LABEL.get(api, api), _ms(resolution.step), 100 * resolution.share_on_grid, cpu_bias.n,
                     _ms(cpu_bias.mean_diff), f"{_ms(cpu_bias.ci_low):.3f} – {_ms(cpu_bias.ci_high):.3f}",
                     cpu_bias.summary, _ms(wall_bias.mean_diff), wall_bias.summary])
        data.append({"api": api, "resolution": resolution.as_dict(), "cpu_bias": cpu_bias.as_dict(),
                     "wall_bias": wall_bias.as_dict()})
    table = Table(
        title="Timer resolution and bias against BenchExec's cgroup values of the same run",
        columns=["API", "step (ms)", "values on grid (%)", "n", "CPU bias (ms)", "95 % CI (ms)",
                 "CPU: what it does", "wall bias (ms)", "wall: what it does"],
        rows=rows,
        caption="Bias = timer minus cgroup value per run (paired), mean with Student-t CI. The cgroup "
                "value covers the timer's own process too (shell, fish, GNU time), so a timer that "
                "measures only its child reads slightly lower even at perfect resolution.",
    )
    return table, data


def modality_table(samples, apis, loads):
    rows, data = [], []
    for api in apis:
        for load in loads:
            values = samples.observed_cpu[(samples.api == api) & (samples.load == load) & samples.valid]
            if len(values) == 0:
                continue
            m = stats.modality(values)
            rows.append([API_LABEL.get(api, api), load, len(values), m.modes,
                         ", ".join(f"{_ms(x):.2f}" for x in m.mode_locations), m.bimodality_coefficient])
            data.append({"api": api, "load": int(load), **m.as_dict()})
    table = Table(
        title="Modes of the observed CPU-time distributions",
        columns=["API", "load", "n", "modes", "mode locations (ms)", "bimodality coefficient"],
        rows=rows,
        caption=(data[0]["method"] if data else ""),
    )
    return table, data


# ---------------------------------------------------------------------------------------------
# the section


def section(samples, cores, notes=()):
    """The report section for all inputs of a time-APIs result set."""
    sec = Section(id="time-apis", title="Timing APIs compared (bash, fish, GNU time, RunExec)")
    sec.paragraphs += [
        "Seed 000 (bachelor thesis, JKU Linz 2023) measured a divisor-counting program with bash "
        "'time', fish 'time', GNU /usr/bin/time and BenchExec's "
        "RunExec under 0–6 background busy processes. Here every run also has BenchExec's cgroup "
        "values, so each timer is checked against the ground truth of the same run.",
        f"Tests: Welch t, Mann-Whitney U, two-sample Kolmogorov-Smirnov and k-sample Anderson-Darling, "
        f"alpha = {ALPHA}, Holm-corrected within each family. A difference is called only when it is "
        f"significant and larger than {PRACTICAL:.0%} of the mean; otherwise '~'.",
        *notes,
    ]
    data = {"inputs": {}}
    for input_name in sorted(set(samples.input.tolist()), key=_numeric_first):
        sub = samples.select(samples.input == input_name)
        data["inputs"][input_name] = _analyse_input(sec, sub, input_name, cores)
    excluded = int((~samples.valid).sum())
    if excluded:
        statuses = {}
        for status in samples.status[~samples.valid].tolist():
            statuses[status or "(no status)"] = statuses.get(status or "(no status)", 0) + 1
        sec.warnings.append(f"{excluded} of {len(samples.valid)} runs were left out of every statistic: "
                            + ", ".join(f"{k}: {v}" for k, v in statuses.items()))
    data["excluded"] = excluded
    return sec, data


def _numeric_first(name):
    return (0, int(name)) if name.isdigit() else (1, name)


def _analyse_input(sec, samples, input_name, cores):
    apis = _ordered_apis(samples)
    loads = sorted(set(samples.load.tolist()))
    label = f"input {input_name}"
    data = {}

    cpu_table, data["cpu_summary"] = summary_table(samples, apis, loads, "observed_cpu", f"{label}, observed CPU time (user+sys)")
    wall_table, data["wall_summary"] = summary_table(samples, apis, loads, "observed_wall", f"{label}, wall time")
    quality_table, data["timer_quality"] = timer_quality(samples, apis)
    modes_table, data["modality"] = modality_table(samples, apis, loads)
    tests = api_tests(samples, apis, loads)
    data["api_tests"] = [{"load": int(load), **r.as_dict()} for load, r in tests]
    cpu_rows, data["cpu_vs_load"] = load_effects(samples, apis, loads, "observed_cpu")
    wall_rows, data["wall_vs_load"] = load_effects(samples, apis, loads, "observed_wall")
    load_columns = ["API", "load", "n base", "n", "ratio of means", "95 % CI", "Welch p",
                    "Welch p (Holm)", "verdict", "spread: Brown-Forsythe p (Holm)"]

    sec.tables += [
        cpu_table,
        wall_table,
        quality_table,
        Table(title=f"{label}: observed CPU time between APIs at each load level",
              columns=["load", "test", "A", "B", "n A", "n B", "statistic", "p", "p (Holm)", "significant", "note"],
              rows=[[load, r.test, API_LABEL.get(r.label_a, r.label_a), API_LABEL.get(r.label_b, r.label_b),
                     r.n_a, r.n_b, r.statistic, r.p, r.p_adjusted, "yes" if r.significant else "no", r.note]
                    for load, r in tests],
              caption=f"alpha = {ALPHA}; Holm over all API pairs and load levels of one test."),
        Table(title=f"{label}: observed CPU time against the lowest load level", columns=load_columns, rows=cpu_rows,
              caption="Ratio = mean at the load level / mean at the base level, bootstrap CI. "
                      "Brown-Forsythe (Levene, median-centred) tests whether the spread changed."),
        Table(title=f"{label}: wall time against the lowest load level", columns=load_columns, rows=wall_rows),
        modes_table,
    ]
    sec.figures += _figures(samples, apis, loads, label, cores)
    sec.findings += _findings(samples, apis, loads, label, cores, data)
    return data


def _figures(samples, apis, loads, label, cores):
    valid = samples.select(samples.valid)
    cells = {(API_LABEL.get(a, a), f"load {load}"): valid.observed_cpu[(valid.api == a) & (valid.load == load)]
             for a in apis for load in loads}
    grid = plots.histogram_grid(cells, rows=[API_LABEL.get(a, a) for a in apis], cols=[f"load {x}" for x in loads],
                                xlabel="observed CPU time, user+sys (ms)",
                                title=f"{label}: observed CPU time per timing API (rows) and background load (columns)")
    runexec = valid.select(valid.api == "runexec") if "runexec" in apis else valid
    scatter = plots.paired_scatter(runexec.cgroup_cpu, runexec.self_clock,
                                   np.array([f"load {x}" for x in runexec.load]),
                                   xlabel="observed CPU time, cgroup (ms)", ylabel="self-reported clock() (ms)",
                                   title=f"{label}: observed vs self-reported CPU time per run")
    series = {}
    for api in apis:
        means, lows, highs = [], [], []
        for load in loads:
            s = stats.summarize(valid.observed_wall[(valid.api == api) & (valid.load == load)])
            means.append(s.mean), lows.append(s.ci_low), highs.append(s.ci_high)
        series[API_LABEL.get(api, api)] = (np.array(means), np.array(lows), np.array(highs))
    wall = plots.means_with_ci(loads, series, xlabel="background busy processes",
                               ylabel="wall time (ms)", title=f"{label}: wall time vs background load",
                               cores=cores)
    return [
        Figure(f"{label}: observed CPU time histograms", plots.to_png(grid),
               "Rows: timing API; columns: number of background busy processes. The line marks the mean."),
        Figure(f"{label}: observed vs self-reported", plots.to_png(scatter),
               "Each point is one RunExec run: the cgroup's CPU time against the program's own clock() value."),
        Figure(f"{label}: wall time vs load", plots.to_png(wall),
               "Mean wall time with 95 % CI per API. The dashed line marks the machine's CPU count."),
    ]


def _findings(samples, apis, loads, label, cores, data):
    findings = []
    base = min(loads)

    # 1. the choice of API does not change the measured CPU time
    at_base = [t for t in data["api_tests"] if t["load"] == base and t["test"] == "Welch t"]
    ref = samples.observed_cpu[(samples.api == "runexec") & (samples.load == base) & samples.valid]
    ratios = []
    for api in apis:
        if api == "runexec" or len(ref) < 2:
            continue
        values = samples.observed_cpu[(samples.api == api) & (samples.load == base) & samples.valid]
        if len(values) >= 2:
            ratios.append((api, stats.ratio_of_means(ref, values)))
    different = [t for t in at_base if t["significant"]]
    practically = [(a, r) for a, r in ratios if abs(r.ratio - 1) >= PRACTICAL and (r.ci_low > 1 or r.ci_high < 1)]
    evidence = "; ".join(f"{API_LABEL.get(a, a)}/RunExec = {r.ratio:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}]"
                         for a, r in ratios)
    findings.append(Finding(
        claim=f"{label}: the choice of timing API does not change the measured CPU time (thesis, ch. 3.3)",
        verdict="refuted" if practically else "confirmed",
        evidence=f"load {base}: Welch t over {len(at_base)} API pairs, alpha {ALPHA}, Holm: "
                 f"{len(different)} significant; ratios of means (bootstrap 95 % CI): {evidence or 'n/a'}; "
                 f"a difference counts when its CI excludes 1 and exceeds {PRACTICAL:.0%}.",
    ))

    # 2. background load does not increase CPU time (with frequency scaling off)
    cpu_up = [r for r in data["cpu_vs_load"] if r["verdict"] == "slower"]
    findings.append(Finding(
        claim=f"{label}: background processes do not increase the CPU time the program uses (thesis, Fig. 3.4)",
        verdict="refuted" if cpu_up else ("confirmed" if data["cpu_vs_load"] else "not testable here"),
        evidence=_load_evidence(data["cpu_vs_load"], base),
    ))

    # 3. wall time flat until all cores are busy
    if cores and len(loads) > 1:
        below = [r for r in data["wall_vs_load"] if r["load"] < cores]
        above = [r for r in data["wall_vs_load"] if r["load"] >= cores]
        flat_below = all(r["verdict"] == "~" for r in below)
        rises_above = bool(above) and all(r["verdict"] == "slower" for r in above)
        if not below or not above:
            verdict = "inconclusive"
        else:
            verdict = "confirmed" if flat_below and rises_above else "refuted"
        findings.append(Finding(
            claim=f"{label}: wall time stays flat until all {cores} cores are busy, then rises (thesis, Fig. 3.8)",
            verdict=verdict,
            evidence=_load_evidence(data["wall_vs_load"], base)
            + ("" if below and above else f"; needs load levels below and at/above {cores}"),
        ))

    # 4. self-reported clock() close to observed
    runexec = samples.select((samples.api == "runexec") & samples.valid & np.isfinite(samples.self_clock))
    if len(runexec.api) >= 2:
        ratio = stats.ratio_of_means(runexec.cgroup_cpu, runexec.self_clock)
        diff = stats.bias_against(runexec.self_clock, runexec.cgroup_cpu)
        close = abs(ratio.ratio - 1) < 0.05
        findings.append(Finding(
            claim=f"{label}: the program's own clock() time is close to the observed CPU time (thesis, Fig. 3.5)",
            verdict="confirmed" if close else "refuted",
            evidence=f"RunExec runs, n = {diff.n}: clock() minus cgroup CPU time = {_ms(diff.mean_diff):.3f} ms "
                     f"(95 % CI {_ms(diff.ci_low):.3f} – {_ms(diff.ci_high):.3f}); ratio of means "
                     f"{ratio.ratio:.4f} [{ratio.ci_low:.4f}, {ratio.ci_high:.4f}]; 'close' = within 5 %. "
                     "clock() misses process start-up and exit, which the cgroup counts.",
        ))

    # 5. multimodality
    multi = [m for m in data["modality"] if m["modes"] >= 2]
    findings.append(Finding(
        claim=f"{label}: CPU-time distributions are often bi- or tri-modal (thesis, Fig. 3.6/3.7)",
        verdict="confirmed" if multi else "refuted",
        evidence=f"{len(multi)} of {len(data['modality'])} (API, load) distributions show 2+ modes: "
                 + (", ".join(f"{API_LABEL.get(m['api'], m['api'])} load {m['load']}: {m['modes']}" for m in multi) or "none")
                 + f". Method: {data['modality'][0]['method'] if data['modality'] else 'n/a'}.",
    ))

    # 6. timer resolution: GNU time truncates to 10 ms, bash to 1 ms
    for q in data["timer_quality"]:
        expected = {"gnu": 0.01, "bash": 0.001}.get(q["api"])
        if expected is None:
            continue
        step = q["resolution"]["step"]
        findings.append(Finding(
            claim=f"{label}: {API_LABEL[q['api']]} reports in steps of {expected * 1e3:g} ms",
            verdict="confirmed" if np.isclose(step, expected) else "refuted",
            evidence=f"finest grid holding {100 * q['resolution']['share_on_grid']:.1f} % of values: "
                     f"{step * 1e3:g} ms; CPU bias against the cgroup {q['cpu_bias']['mean_diff'] * 1e3:.3f} ms "
                     f"({q['cpu_bias']['summary']}), n = {q['cpu_bias']['n']}.",
        ))
    return findings


def _load_evidence(results, base):
    if not results:
        return "only one load level measured"
    parts = [f"{API_LABEL.get(r['api'], r['api'])} {base}→{r['load']}: ratio {r['ratio']['ratio']:.4f} "
             f"p(Holm) {r['welch']['p_adjusted']:.3g} {r['verdict']}" for r in results]
    n = results[0]["welch"]["n_a"]
    return f"Welch t, alpha {ALPHA}, Holm, n = {n} per level: " + "; ".join(parts)
