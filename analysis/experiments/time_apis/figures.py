"""
The figures of one time-APIs input: CPU-time histograms per API and load, the cgroup's CPU time
against the program's own clock(), and wall time against background load.
"""

import numpy as np

from analysis.core import plots
from analysis.core import stats
from analysis.core.report import Figure
from analysis.experiments.time_apis.samples import api_label

def _histograms(valid, apis, loads, label):
    cells = {(api_label(a), f"load {load}"): valid.observed_cpu[(valid.api == a) & (valid.load == load)]
             for a in apis for load in loads}
    grid = plots.histogram_grid(cells, rows=[api_label(a) for a in apis], cols=[f"load {x}" for x in loads],
                                xlabel="observed CPU time, user+sys (ms)",
                                title=f"{label}: observed CPU time per timing API (rows) and background load (columns)")
    return Figure(f"{label}: observed CPU time histograms", plots.to_png(grid),
                  "Rows: timing API; columns: number of background busy processes. The line marks the mean.")


def _self_reported(valid, apis, label):
    runexec = valid.select(valid.api == "runexec") if "runexec" in apis else valid
    scatter = plots.paired_scatter(runexec.cgroup_cpu, runexec.self_clock,
                                   np.array([f"load {x}" for x in runexec.load]),
                                   xlabel="observed CPU time, cgroup (ms)", ylabel="self-reported clock() (ms)",
                                   title=f"{label}: observed vs self-reported CPU time per run")
    return Figure(f"{label}: observed vs self-reported", plots.to_png(scatter),
                  "Each point is one RunExec run: the cgroup's CPU time against the program's own clock() value.")


def _wall_vs_load(valid, apis, loads, label, cores):
    series = {}
    for api in apis:
        means, lows, highs = [], [], []
        for load in loads:
            s = stats.summarize(valid.observed_wall[(valid.api == api) & (valid.load == load)])
            means.append(s.mean), lows.append(s.ci_low), highs.append(s.ci_high)
        series[api_label(api)] = (np.array(means), np.array(lows), np.array(highs))
    wall = plots.means_with_ci(loads, series, xlabel="background busy processes",
                               ylabel="wall time (ms)", title=f"{label}: wall time vs background load",
                               cores=cores)
    return Figure(f"{label}: wall time vs load", plots.to_png(wall),
                  "Mean wall time with 95 % CI per API. The dashed line marks the machine's CPU count.")


def figures(samples, apis, loads, label, cores):
    """The three figures of one input, each over the runs with valid values of what it shows."""
    both_cpu = samples.usable("cgroup_cpu") & samples.usable("self_clock")
    return [_histograms(samples.select(samples.usable("observed_cpu")), apis, loads, label),
            _self_reported(samples.select(both_cpu), apis, label),
            _wall_vs_load(samples.select(samples.usable("observed_wall")), apis, loads, label, cores)]
