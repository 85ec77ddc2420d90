"""
What each timing API measured at each load level, described one (API, load) at a time: the
summary statistics, the modes of the CPU-time distribution, and each timer's resolution and
bias against BenchExec's cgroup values of the same runs.
"""

import numpy as np

from analysis.core import fmt
from analysis.core import modality, stats, timers
from analysis.core.report import Table
from analysis.experiments.time_apis.samples import api_label

def summary_table(samples, apis, loads, quantity, label):
    rows = []
    data = []
    for api in apis:
        for load in loads:
            group = samples.select((samples.api == api) & (samples.load == load))
            values = getattr(group, quantity)[group.usable(quantity)]
            s = stats.summarize(values)
            excluded = int((~group.usable(quantity)).sum())
            rows.append([api_label(api), load, s.n, excluded, fmt.ms(s.mean), fmt.ms(s.sd),
                         100 * s.cv, fmt.ms(s.median), fmt.ms(s.mad), fmt.ms(s.min), fmt.ms(s.max),
                         f"{fmt.ms(s.ci_low):.4g} – {fmt.ms(s.ci_high):.4g}"])
            data.append({"api": api, "load": int(load), "quantity": quantity, "excluded": excluded, **s.as_dict()})
    table = Table(
        title=f"{label}: summary per timing API and load level",
        columns=["API", "load", "n", "excluded", "mean (ms)", "sd (ms)", "CV (%)", "median (ms)",
                 "MAD (ms)", "min (ms)", "max (ms)", "95 % CI (ms)"],
        rows=rows,
        caption="95 % CI: of the mean, Student t. n counts runs that finished normally with a valid value; excluded runs "
                "(timeout, error, no value, NaN, infinite, negative) are left out of this quantity's statistics.",
    )
    return table, data


def timer_quality(samples, apis):
    """Resolution of each timer and its bias against the cgroup value of the same run."""
    rows, data = [], []
    for api in apis:
        if api == "runexec":
            continue
        group = samples.select((samples.api == api) & samples.valid)
        if len(group.api) == 0:
            continue
        resolution = timers.timer_resolution(np.concatenate([group.timer_user, group.timer_real]))
        cpu = group.select(group.usable("cgroup_cpu"))     # the pairs with both values valid
        wall = group.select(group.usable("cgroup_wall"))
        cpu_bias = timers.bias_against(cpu.timer_user + cpu.timer_sys, cpu.cgroup_cpu, step=resolution.step)
        wall_bias = timers.bias_against(wall.timer_real, wall.cgroup_wall, step=resolution.step)
        rows.append([api_label(api), fmt.ms(resolution.step), 100 * resolution.share_on_grid, cpu_bias.n,
                     fmt.ms(cpu_bias.mean_diff), f"{fmt.ms(cpu_bias.ci_low):.3f} – {fmt.ms(cpu_bias.ci_high):.3f}",
                     cpu_bias.summary, fmt.ms(wall_bias.mean_diff), wall_bias.summary])
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
            values = samples.observed_cpu[(samples.api == api) & (samples.load == load) & samples.usable("observed_cpu")]
            if len(values) == 0:
                continue
            m = modality.modality(values)
            rows.append([api_label(api), load, len(values), m.modes,
                         ", ".join(f"{fmt.ms(x):.2f}" for x in m.mode_locations), m.bimodality_coefficient])
            data.append({"api": api, "load": int(load), "n": int(len(values)), **m.as_dict()})
    table = Table(
        title="Modes of the observed CPU-time distributions",
        columns=["API", "load", "n", "modes", "mode locations (ms)", "bimodality coefficient"],
        rows=rows,
        caption=(data[0]["method"] if data else ""),
    )
    return table, data
