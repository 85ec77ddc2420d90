"""
The time-APIs tests: every pair of APIs at each load level, and each load level against the
lowest per API, with Holm correction within each family of tests.
"""

from scipy import stats as scipy_stats

from analysis.core import stats
from analysis.core.report import Table
from analysis.experiments.time_apis.samples import api_label

ALPHA = 0.05
PRACTICAL = 0.01  # a difference below 1 % of the mean is reported as "~" even when significant

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
        rows.append([api_label(api), f"{base_load} → {load}", welch.n_a, welch.n_b, ratio.ratio,
                     f"{ratio.ci_low:.4f} – {ratio.ci_high:.4f}", welch.p, welch.p_adjusted, verdict, p_spread])
        results.append({"api": api, "load": int(load), "ratio": ratio.as_dict(), "welch": welch.as_dict(),
                        "verdict": verdict, "brown_forsythe_p_holm": float(p_spread)})
    return rows, results


LOAD_COLUMNS = ("API", "load", "n base", "n", "ratio of means", "95 % CI", "Welch p", "Welch p (Holm)", "verdict",
                "spread: Brown-Forsythe p (Holm)")


def api_tests_table(label, tests):
    """The table of ``api_tests``: one row per (load, test, API pair)."""
    return Table(title=f"{label}: observed CPU time between APIs at each load level",
                 columns=["load", "test", "A", "B", "n A", "n B", "statistic", "p", "p (Holm)", "significant", "note"],
                 rows=[[load, r.test, api_label(r.label_a), api_label(r.label_b), r.n_a, r.n_b, r.statistic, r.p,
                        r.p_adjusted, "yes" if r.significant else "no", r.note] for load, r in tests],
                 caption=f"alpha = {ALPHA}; Holm over all API pairs and load levels of one test.")


def load_tables(label, cpu_rows, wall_rows):
    """The tables of ``load_effects`` for observed CPU time and wall time."""
    return [
        Table(title=f"{label}: observed CPU time against the lowest load level", columns=list(LOAD_COLUMNS), rows=cpu_rows,
              caption="Ratio = mean at the load level / mean at the base level, bootstrap CI. "
                      "Brown-Forsythe (Levene, median-centred) tests whether the spread changed."),
        Table(title=f"{label}: wall time against the lowest load level", columns=list(LOAD_COLUMNS), rows=wall_rows),
    ]
