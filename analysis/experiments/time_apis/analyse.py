"""
The time-APIs experiment (seed 000): the report section, one part per input.

The parts, one job each: samples (one entry per run, collect), summaries (statistics, modes and
timer quality per API and load), comparisons (tests between APIs and against the lowest load),
figures, and claims (the thesis's claims, judged).
"""

from analysis.core import validity
from analysis.core.report import Section
from analysis.experiments.time_apis import comparisons, summaries
from analysis.experiments.time_apis.claims import findings
from analysis.experiments.time_apis.claims import NEGLIGIBLE
from analysis.experiments.time_apis.comparisons import ALPHA
from analysis.experiments.time_apis.figures import figures
from analysis.experiments.time_apis.samples import ordered_apis


def section(samples, cores, notes=()):
    """The report section for all inputs of a time-APIs result set."""
    sec = Section(id="time-apis", title="Timing APIs compared (bash, fish, GNU time, RunExec)")
    sec.paragraphs += [
        "Seed 000 (bachelor thesis, JKU Linz 2023) measured a divisor-counting program with bash "
        "'time', fish 'time', GNU /usr/bin/time and BenchExec's "
        "RunExec under 0–6 background busy processes. Here every run also has BenchExec's cgroup "
        "values, so each timer is checked against the ground truth of the same run.",
        "The findings follow the report's verdict policy (docs/verdicts.md): ratios of means with "
        "intervals over reruns where there are two or more (the load levels and timers of one rerun pair "
        "up; their order rotates per rerun), else over the runs of the one invocation; 'no effect' means "
        f"within ±{NEGLIGIBLE:.0%} (equivalence on a 90 % interval); a claim of k parts judges each on a "
        "1 - alpha/k interval (Bonferroni). The distribution tests between APIs (Welch t, Mann-Whitney U, "
        f"two-sample Kolmogorov-Smirnov, k-sample Anderson-Darling, alpha = {ALPHA}) are Holm-corrected "
        "over the API pairs of one load level, separately for each test.",
        *notes,
    ]
    data = {"inputs": {}}
    for input_name in sorted(set(samples.input.tolist()), key=_numeric_first):
        sub = samples.select(samples.input == input_name)
        data["inputs"][input_name] = _analyse_input(sec, sub, input_name, cores)
    excluded = int((~samples.valid).sum())
    if excluded:
        sec.warnings.append(_excluded_warning(samples, excluded))
    data["excluded"] = excluded
    return sec, data


def _excluded_warning(samples, excluded):
    """How many runs were left out, and why: BenchExec's status of those that did not finish
    normally, and per quantity the values that are no measurement (each left out of that
    quantity's statistics only)."""
    statuses = {}
    for status in samples.status[~samples.finished].tolist():
        statuses[status or "(no status)"] = statuses.get(status or "(no status)", 0) + 1
    parts = [f"{sum(statuses.values())} not finished normally ({', '.join(f'{k}: {v}' for k, v in statuses.items())})"] if statuses else []
    for quantity, what in (("observed_cpu", "CPU time"), ("observed_wall", "wall time")):
        reasons = {k: v for k, v in samples.left_out(quantity).items() if k != validity.NOT_FINISHED}
        if reasons:
            parts.append(f"{what}: {validity.describe(reasons)} (left out of the {what} statistics only)")
    return f"{excluded} of {len(samples.valid)} runs lack a valid CPU or wall time: " + "; ".join(parts)


def _numeric_first(name):
    return (0, int(name)) if name.isdigit() else (1, name)


def _analyse_input(sec, samples, input_name, cores):
    apis = ordered_apis(samples)
    loads = sorted(set(samples.load.tolist()))
    label = f"input {input_name}"
    data = {}

    cpu_table, data["cpu_summary"] = summaries.summary_table(samples, apis, loads, "observed_cpu",
                                                             f"{label}, observed CPU time (user+sys)")
    wall_table, data["wall_summary"] = summaries.summary_table(samples, apis, loads, "observed_wall",
                                                               f"{label}, wall time")
    quality_table, data["timer_quality"] = summaries.timer_quality(samples, apis)
    modes_table, data["modality"] = summaries.modality_table(samples, apis, loads)
    tests = comparisons.api_tests(samples, apis, loads)
    data["api_tests"] = [{"load": int(load), **r.as_dict()} for load, r in tests]
    cpu_rows, data["cpu_vs_load"] = comparisons.load_effects(samples, apis, loads, "observed_cpu")
    wall_rows, data["wall_vs_load"] = comparisons.load_effects(samples, apis, loads, "observed_wall")

    sec.tables += [cpu_table, wall_table, quality_table, comparisons.api_tests_table(label, tests),
                   *comparisons.load_tables(label, cpu_rows, wall_rows), modes_table]
    sec.figures += figures(samples, apis, loads, label, cores)
    data["reruns"] = len(set(samples.rerun.tolist()))
    sec.findings += findings(samples, apis, loads, label, cores, data)
    return data
