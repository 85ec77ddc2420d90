"""
The paper's claims (seed 002) with this machine's verdicts, one function per claim: cache-heavy
code differs between cores, the control does not, SMT siblings are alike, cg follows the
microbenchmark, and slower cores do not save energy.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from analysis.core import verdicts
from analysis.core.report import Claim, Finding
from analysis.experiments.core_heterogeneity.labels import core_label
from analysis.experiments.core_heterogeneity.measures import gap_estimate
from analysis.experiments.core_heterogeneity.similarity import ALPHA

CACHE_HEAVY = ("cachestress", "cg")  # the paper: some cores > 10 % faster for these
CONTROLS = ("isort",)  # the paper: equally fast on all cores
CORRELATION_ALPHA = 0.05
PAPER_GAP = 0.10  # "some cores are > 10 % faster"
NEGLIGIBLE = 0.02  # a slowest/fastest ratio below 1.02 counts as "equal on all cores"
# runs per core per round and rounds of the presets (quick: 3 x 10, paper: 10 x 100)
SIZES = {"quick": (10, 3), "paper": (100, 10)}

CALIBRATION = (
    verdicts.ClaimSpec("cache-heavy code: some cores > 10 % faster", "at_least", 1 + PAPER_GAP, SIZES),
    verdicts.ClaimSpec("the control runs equally fast on all cores", "no_effect", NEGLIGIBLE, SIZES, confidence=0.90),
)


def findings(groups, similarities, ratios, sibling_pairs, correlation, energy_rows, energy_note, topology_cpus,
             consistency=None):
    """Every claim's finding, in the report's order."""
    return [
        *[cache_heavy_gap(w, groups, similarities, ratios, topology_cpus, consistency) for w in CACHE_HEAVY if w in groups],
        *[control_equal(w, groups, similarities, ratios, consistency) for w in CONTROLS if w in groups],
        smt_siblings_alike(groups, similarities, sibling_pairs),
        cg_follows_microbenchmark(correlation),
        slower_cores_save_no_energy(groups, energy_rows, energy_note),
    ]


def untestable(why):
    """The findings of a section without counted runs."""
    return [Finding(claim=Claim("Some cores are more than 10 % faster than others for cache-heavy code", "paper Fig. 1/2"),
                    verdict="not testable here", evidence=why, id="core-heterogeneity/cores-differ")]


def cache_heavy_gap(workload, groups, similarities, ratios, topology_cpus, consistency=None):
    """1. cache-heavy code: some cores > 10 % faster, judged on the round-level interval."""
    claim = Claim(f"{workload}: some cores are more than {PAPER_GAP:.0%} faster than others for cache-heavy code",
                  "paper Fig. 1/2: cg on an i5-8400")
    id = f"core-heterogeneity/{workload}/cores-differ"
    if workload not in ratios:
        return Finding(claim, "not testable here", f"{len(groups[workload])} core measured; needs at least 2", id=id)
    fast, slow, r = ratios[workload]
    sim = similarities[workload]
    i, j = sim.cores.index(fast), sim.cores.index(slow)
    rounds = (consistency or {}).get(workload, {"rounds_slowest": 0, "rounds": 0})
    judged = verdicts.at_least(gap_estimate(r, rounds, min(sim.n[i], sim.n[j])), 1 + PAPER_GAP)
    return Finding(claim, judged.verdict, id=id,
                   parts=[judged.as_part("slowest / fastest core", f"{workload}: slowest / fastest core time")],
                   evidence=f"slowest {core_label(slow, topology_cpus)} / fastest {core_label(fast, topology_cpus)}: "
                   f"{judged.evidence} Pooled over rounds: ratio of means {r.ratio:.4f} [{r.ci_low:.4f}, "
                   f"{r.ci_high:.4f}] ({r.method}); Anderson-Darling p (Holm) {sim.p_adjusted[i, j]:.3g} at alpha "
                   f"{ALPHA}, n = {sim.n[i]} and {sim.n[j]}; {_pairs_different(sim)}; CPU {slow} was the slowest in "
                   f"{rounds['rounds_slowest']} of {rounds['rounds']} rounds.")


def control_equal(workload, groups, similarities, ratios, consistency=None):
    """2. the control: equal on all cores, judged by equivalence on the round-level interval."""
    claim = Claim(f"{workload}: most kernels run equally fast on all cores", "paper Fig. 3: all NAS kernels but cg")
    id = f"core-heterogeneity/{workload}/cores-equal"
    if workload not in ratios:
        return Finding(claim, "not testable here", f"{len(groups[workload])} core measured; needs at least 2", id=id)
    fast, slow, r = ratios[workload]
    sim = similarities[workload]
    i, j = sim.cores.index(fast), sim.cores.index(slow)
    rounds = (consistency or {}).get(workload, {})
    # equivalence at alpha 5 % (TOST): the 90 % interval inside 1 +- the negligible gap
    judged = verdicts.no_effect(gap_estimate(r, rounds, min(sim.n[i], sim.n[j]), confidence=0.90), NEGLIGIBLE)
    return Finding(claim, judged.verdict, id=id,
                   parts=[judged.as_part("slowest / fastest core", f"{workload}: slowest / fastest core time")],
                   evidence=f"slowest / fastest core: {judged.evidence} A gap under {NEGLIGIBLE:.0%} counts as equal; "
                   f"{_pairs_different(sim)} (Anderson-Darling, Holm, alpha {ALPHA}, n = {min(sim.n)}-{max(sim.n)} "
                   "per core).")


def smt_siblings_alike(groups, similarities, sibling_pairs):
    """3. SMT siblings alike, judged on cg (the paper's workload) where measured."""
    claim = Claim("SMT siblings (two hardware threads of one core) perform alike", "paper Fig. 5")
    k = max((len(v) for v in groups.values()), default=0)
    workload = "cg" if "cg" in similarities else next(iter(similarities), None)
    measured = [(a, b) for a, b in sorted(sibling_pairs)
                if workload and a in similarities[workload].cores and b in similarities[workload].cores]
    if not measured:
        why = ("no two measured CPUs are SMT siblings (thread_siblings_list)" if sibling_pairs or k else "no cores measured")
        return Finding(claim, "not testable here", why + ".", id="core-heterogeneity/smt-siblings-alike")
    parts, alike = [], 0
    for w, sim in similarities.items():
        for a, b in measured:
            i, j = sim.cores.index(a), sim.cores.index(b)
            alike += bool(sim.similar[i, j]) if w == workload else 0
            parts.append(f"{w} CPU {a}/{b}: p (Holm) {sim.p_adjusted[i, j]:.3g}, KS D {sim.ks[i, j]:.3f} "
                         f"({'similar' if sim.similar[i, j] else 'different'})")
    verdict = "confirmed" if alike == len(measured) else "refuted"
    return Finding(claim, verdict, id="core-heterogeneity/smt-siblings-alike",
                   why=f"{alike} of {len(measured)} sibling pairs similar (Anderson-Darling, Holm, alpha {ALPHA})",
                   evidence=f"judged on {workload} (the paper's workload): {alike} of {len(measured)} sibling pairs "
                   f"similar (Anderson-Darling, Holm, alpha {ALPHA}); " + "; ".join(parts) + ".")


def cg_follows_microbenchmark(correlation):
    """4. cg correlates with the microbenchmark across cores."""
    claim = Claim("cg and the cache-stress microbenchmark rank the cores alike: their times correlate across cores",
                  "paper Fig. 4b")
    id = "core-heterogeneity/cg-follows-cachestress"
    if not correlation.get("testable"):
        return Finding(claim, "not testable here", correlation.get("why", "") + ".", id=id)
    r, p = correlation["r"], correlation["p"]
    verdict = ("confirmed" if r > 0 and p < CORRELATION_ALPHA else "refuted" if r < 0 and p < CORRELATION_ALPHA
               else "inconclusive")
    return Finding(claim, verdict, id=id, why=f"Pearson r = {r:.3f}, p = {p:.3g} over {correlation['n']} cores",
                   decide=_cores_to_decide(r), evidence=f"Pearson r = {r:.3f}, p = {p:.3g} over {correlation['n']} cores (per-core means "
                   f"normalised to the fastest core), alpha {CORRELATION_ALPHA}.")


def slower_cores_save_no_energy(groups, energy_rows, energy_note):
    """5. energy: a slower core does not need less energy for the same work."""
    claim = Claim("Slower cores do not need less energy for the same work", "paper Fig. 4a, RAPL")
    id = "core-heterogeneity/slower-cores-save-no-energy"
    if not energy_rows:
        return Finding(claim, "not testable here", f"Energy {energy_note}", id=id)
    cg_rows = [row for row in energy_rows if row[0] == "cg"]
    if len(cg_rows) < 3 or "cg" not in groups:
        return Finding(claim, "not testable here", id=id,
                       evidence=f"energy of {len(cg_rows)} core(s) for cg; a correlation across cores needs at least 3.")
    times = np.array([np.mean(groups["cg"][row[1]]) for row in cg_rows])
    energy = np.array([row[3] for row in cg_rows])
    rho = scipy.stats.spearmanr(times, energy)
    verdict = "refuted" if rho.statistic < 0 and rho.pvalue < CORRELATION_ALPHA else (
        "confirmed" if rho.pvalue < CORRELATION_ALPHA else "inconclusive")
    return Finding(claim, verdict, id=id,
                   why=f"Spearman rho {rho.statistic:.3f}, p = {rho.pvalue:.3g}, {len(cg_rows)} cores",
                   decide=_cores_to_decide(rho.statistic),
                   evidence=f"cg: Spearman rho between per-core mean time and mean energy = {rho.statistic:.3f}, "
                   f"p = {rho.pvalue:.3g}, {len(cg_rows)} cores. {energy_note}")


def _cores_to_decide(r):
    """How many cores a correlation of r needs to differ from 0 at CORRELATION_ALPHA (Fisher's z:
    atanh(r) against its standard error 1 / sqrt(k - 3)): only more cores narrow it, not runs."""
    z = abs(math.atanh(max(-0.999999, min(0.999999, r)))) if np.isfinite(r) else 0.0
    if z == 0:
        return verdicts.never("the correlation is 0: no number of cores would show one")
    quantile = scipy.stats.norm.ppf(1 - CORRELATION_ALPHA / 2)
    return {"cases": math.ceil((quantile / z) ** 2 + 3)}


def _pairs_different(sim):
    m = len(list(sim.pairs()))
    different = sum(1 for i, j in sim.pairs() if not sim.similar[i, j])
    return f"{different} of {m} core pairs differ"
