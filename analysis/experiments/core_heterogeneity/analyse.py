"""
Core-to-core heterogeneity (seed 002: Reif et al., "Nearly Symmetric Multi-Core Processors",
APSys 2020): are the cores of one processor equally fast?

The paper ran NAS kernels and a clflush cache-stress microbenchmark on one core at a time
(10 warm-ups, then 1000 runs per core) and found cg, the kernel with irregular memory access,
more than 10 % slower on some cores than on others, the other kernels equal on all cores, and
SMT siblings alike. Here each benchexec invocation runs the three workloads of
`benchmark-defs/core-heterogeneity.xml` on one core (`--allowedCores K --limitCores 1`); `plan`
visits the cores interleaved over rounds, so drift over time is spread over all cores.

Every run reports the CPU it ran on (cpu-start, cpu-end from sched_getcpu) and its own kernel
time (self-seconds); a run counts for the core it ran on only if it finished, started and ended
there, and that core is the one BenchExec was told to use. The first W runs of each workload
in each invocation are warm-ups and are dropped.

Besides the report section this module ranks the cores (`rank`); analysis.cores_pinning saves
that ranking and pins a command to the K fastest cores, the paper's golden-suite idea.
"""

from __future__ import annotations

import datetime
import itertools
import math
import platform
import re
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.stats

from analysis.core import results
from analysis.core import stats
from analysis.core.report import Figure, Finding, Section, Table, jsonable
from analysis.core.tasks import input_of
from analysis.machine import facts as machine_facts
from analysis.machine.kernel import read_boot_time

WORKLOADS = ("cachestress", "cg", "isort")
LABEL = {"cachestress": "cache-stress (clflush)", "cg": "CG kernel", "isort": "integer sort (control)"}
CACHE_HEAVY = ("cachestress", "cg")  # the paper: some cores > 10 % faster for these
CONTROLS = ("isort",)  # the paper: equally fast on all cores
ALPHA = 0.01  # the paper's level for "similar" (k-sample Anderson-Darling, k = 2)
CORRELATION_ALPHA = 0.05
WARMUPS = 2  # quick preset; the paper dropped 10 per core
PAPER_GAP = 0.10  # "some cores are > 10 % faster"
NEGLIGIBLE = 0.02  # a slowest/fastest ratio below 1.02 counts as "equal on all cores"
TOOL_MODULE = "tool_info.cores"
# the result columns this analysis reads; the loader skips all others
COLUMNS = ("status", "category", "self-seconds", "self-cputime", "cpu-start", "cpu-end", "cputime", "walltime", "cpuCores",
           "cpuenergy")
CONTENDED = 0.95  # a run whose kernel got less than 95 % of its wall time as CPU time shared its core
AD_RESAMPLES_MAX = 20000
_NAME = re.compile(r"core(\d+)-round(\d+)")
_REP = re.compile(r"\.r(\d+)\.yml$")


class CoresError(Exception):
    """A user error of the cores commands (one line)."""


# ---------------------------------------------------------------------------------------------
# the plan: which core in which order


def plan(cores, rounds):
    """The interleaved order of benchexec invocations: [(round, core), ...].

    Every round visits every core once; round r starts at the (r-1)-th core and wraps around, so
    over k rounds each core takes each position once and slow drift (temperature, other tenants)
    lands on all cores alike instead of on whichever came last.
    """
    cores = [int(c) for c in cores]
    if not cores:
        raise CoresError("plan: no cores given")
    if len(set(cores)) != len(cores) or min(cores) < 0:
        raise CoresError(f"plan: cores must be distinct CPU numbers >= 0, got {cores}")
    if int(rounds) < 1:
        raise CoresError(f"plan: rounds must be at least 1, got {rounds}")
    order = []
    for r in range(1, int(rounds) + 1):
        start = (r - 1) % len(cores)
        order += [(r, c) for c in cores[start:] + cores[:start]]
    return order


def step_name(round_, core):
    """benchexec --name of one invocation."""
    return f"core{core}-round{round_}"


def benchexec_arguments(round_, core):
    """What to add to a benchexec command line so that every run of it uses exactly `core`."""
    return ["--allowedCores", str(core), "--limitCores", "1", "--name", step_name(round_, core)]


# ---------------------------------------------------------------------------------------------
# samples


@dataclass
class Samples:
    """One entry per run, as parallel arrays. `core` is the CPU the run started on (-1 unknown),
    `assigned` the core BenchExec was told to use (-1 unknown)."""

    workload: np.ndarray
    core: np.ndarray
    cpu_end: np.ndarray
    assigned: np.ndarray
    round: np.ndarray
    invocation: np.ndarray
    rep: np.ndarray
    seconds: np.ndarray
    self_cputime: np.ndarray
    cputime: np.ndarray
    walltime: np.ndarray
    energy: np.ndarray
    status: np.ndarray
    reason: np.ndarray  # '' for a counted run, else why it is not counted
    warmup: np.ndarray

    @property
    def counted(self):
        return (self.reason == "") & ~self.warmup

    def select(self, mask):
        return Samples(**{name: getattr(self, name)[mask] for name in self.__dataclass_fields__})

    def workloads(self):
        present = set(self.workload.tolist())
        return [w for w in WORKLOADS if w in present] + sorted(present - set(WORKLOADS))

    def cores(self):
        return sorted({int(c) for c in self.core[self.counted].tolist()})

    def groups(self, quantity="seconds"):
        """{workload: {core: values}} of the counted runs."""
        counted = self.select(self.counted)
        values = getattr(counted, quantity)
        return {w: {c: values[(counted.workload == w) & (counted.core == c)] for c in counted.cores()
                    if np.any((counted.workload == w) & (counted.core == c))}
                for w in counted.workloads()}


def samples_from_groups(groups, warmup=None):
    """Samples from {workload: {core: values in seconds}}, every run counted (synthetic data, other tools)."""
    rows = [(w, int(c), float(v), i) for w, by_core in groups.items() for c, values in by_core.items()
            for i, v in enumerate(np.asarray(values, dtype=float))]
    n = len(rows)
    workload, core, seconds, rep = (np.array(x) for x in zip(*rows)) if rows else (np.empty(0),) * 4
    nan = np.full(n, np.nan)
    return Samples(workload=workload.astype(object), core=core.astype(int), cpu_end=core.astype(int),
                   assigned=core.astype(int), round=np.ones(n, dtype=int), invocation=np.zeros(n, dtype=int),
                   rep=rep.astype(int), seconds=seconds.astype(float), self_cputime=nan.copy(), cputime=nan.copy(),
                   walltime=nan.copy(), energy=nan.copy(), status=np.full(n, "done", dtype=object),
                   reason=np.full(n, "", dtype=object),
                   warmup=np.zeros(n, dtype=bool) if warmup is None else np.asarray(warmup, dtype=bool))


def _assigned_core(table, n):
    """The core BenchExec assigned per run: its cpuCores column, else coreK of the name."""
    values = table.columns.get("cpuCores")
    if values is not None:
        return np.where(np.isfinite(values), values, -1).astype(int)
    match = _NAME.search(table.benchmark)
    return np.full(n, int(match.group(1)) if match else -1)


def collect(tables, warmups=WARMUPS):
    """Samples of the runs of the core-heterogeneity workloads in the given RunTables."""
    if warmups < 0:
        raise CoresError(f"warm-ups must be >= 0, got {warmups}")
    tables = [t for t in results.without_duplicate_blocks(tables) if t.toolmodule == TOOL_MODULE]
    parts = []
    for index, table in enumerate(tables):
        n = len(table)
        match = _NAME.search(table.benchmark)

        def column(name, table=table, n=n):
            return table.columns.get(name, np.full(n, np.nan))

        energy = column("cpuenergy")
        workload = np.array([input_of(t) for t in table.tasks], dtype=object)
        reps = np.array([int(m.group(1)) if (m := _REP.search(t)) else i for i, t in enumerate(table.tasks)])
        start, end, seconds = column("cpu-start"), column("cpu-end"), column("self-seconds")
        assigned = _assigned_core(table, n)
        valid = table.valid()
        reason = np.full(n, "", dtype=object)
        for i in range(n):
            if not valid[i]:
                reason[i] = f"failed: {table.status[i] or 'no status'}"
            elif not (np.isfinite(seconds[i]) and np.isfinite(start[i]) and np.isfinite(end[i])):
                reason[i] = "no self-seconds/cpu-start/cpu-end value"
            elif start[i] != end[i]:
                reason[i] = "moved to another CPU during the run"
            elif assigned[i] >= 0 and start[i] != assigned[i]:
                reason[i] = "ran on another CPU than BenchExec assigned"
        # the first `warmups` runs of each workload in this invocation, by repetition number
        warmup = np.zeros(n, dtype=bool)
        for w in set(workload.tolist()):
            idx = np.flatnonzero(workload == w)
            warmup[idx[np.argsort(reps[idx], kind="stable")[:warmups]]] = True
        parts.append(dict(
            workload=workload,
            core=np.where(np.isfinite(start), start, -1).astype(int),
            cpu_end=np.where(np.isfinite(end), end, -1).astype(int),
            assigned=assigned,
            round=np.full(n, int(match.group(2)) if match else 1),
            invocation=np.full(n, index),
            rep=reps,
            seconds=seconds,
            self_cputime=column("self-cputime"),
            cputime=column("cputime"),
            walltime=column("walltime"),
            energy=energy,
            status=table.status,
            reason=reason,
            warmup=warmup,
        ))
    if not parts:
        return None
    return Samples(**{name: np.concatenate([p[name] for p in parts]) for name in parts[0]})


def load(paths, warmups=WARMUPS):
    """(Samples, RunTables) of result files or directories of them."""
    try:
        tables = results.load_results(list(paths), COLUMNS)
    except results.ResultFileError as e:
        raise CoresError(str(e)) from None
    samples = collect(tables, warmups)
    if samples is None or not samples.counted.any():
        raise CoresError(f"no counted runs of {TOOL_MODULE} in {', '.join(map(str, paths))}; "
                         "run benchexec benchmark-defs/core-heterogeneity.xml first")
    return samples, [t for t in results.without_duplicate_blocks(tables) if t.toolmodule == TOOL_MODULE]


# ---------------------------------------------------------------------------------------------
# statistics


@dataclass
class Similarity:
    """Every pair of cores of one workload: KS distance, Anderson-Darling p, 'similar'."""

    cores: list
    n: list
    ks: np.ndarray  # two-sample KS statistic D, 0 on the diagonal
    ad_statistic: np.ndarray
    p: np.ndarray  # Anderson-Darling p (permutation where scipy's is capped)
    p_adjusted: np.ndarray  # Holm over the k(k-1)/2 pairs
    similar: np.ndarray  # p_adjusted >= alpha (True on the diagonal)
    notes: np.ndarray  # per pair, how p was obtained
    alpha: float
    resamples: int
    correction: str

    def pairs(self):
        for i, j in itertools.combinations(range(len(self.cores)), 2):
            yield i, j

    def as_dict(self):
        return {
            "cores": list(self.cores), "n": list(self.n), "alpha": self.alpha, "correction": self.correction,
            "resamples": self.resamples,
            "pairs": [{"a": self.cores[i], "b": self.cores[j], "ks": float(self.ks[i, j]),
                       "ad_statistic": float(self.ad_statistic[i, j]), "p": float(self.p[i, j]),
                       "p_adjusted": float(self.p_adjusted[i, j]), "similar": bool(self.similar[i, j]),
                       "note": str(self.notes[i, j])} for i, j in self.pairs()],
        }


def ad_resamples(pairs, alpha=ALPHA):
    """Permutation resamples for an Anderson-Darling p that scipy floors at 0.001: enough that the
    smallest Holm threshold alpha/m is 10 resolution steps (1/(R+1)) wide, at least
    stats.AD_RESAMPLES, at most AD_RESAMPLES_MAX (beyond, similarity bounds a floored p by the KS p)."""
    return int(min(max(stats.AD_RESAMPLES, math.ceil(10 * max(pairs, 1) / alpha)), AD_RESAMPLES_MAX))


def similarity(groups, alpha=ALPHA, seed=0):
    """The core similarity matrix (the paper's Fig. 5) of {core: values}.

    Per pair: k-sample Anderson-Darling (k = 2, scipy's midrank variant) with a permutation p
    where scipy's tabulated p is capped to 0.001-0.25 (analysis.stats), Holm over all
    k(k-1)/2 pairs; 'similar' when the adjusted p is at least alpha. The two-sample KS statistic
    measures how far apart two cores are (the paper's colours).

    From 7 cores on (alpha/m below 10 steps of AD_RESAMPLES_MAX resamples) no affordable permutation
    resolves the Holm thresholds (at 96 cores alpha/m = 2e-6, against 1/20001): a pair whose scipy p
    is floored gets p = min(0.001, two-sample KS p) instead. That is still a valid p-value: for
    t < 0.001, P(p <= t) <= P(KS p <= t) <= t; for t >= 0.001, p <= t exactly when the AD p <= t.
    """
    cores = sorted(groups)
    k = len(cores)
    m = k * (k - 1) // 2
    resamples = ad_resamples(m, alpha)
    bounded = math.ceil(10 * max(m, 1) / alpha) > AD_RESAMPLES_MAX  # floored p: KS bound, no permutation
    ks = np.zeros((k, k))
    ad = np.full((k, k), np.nan)
    p = np.full((k, k), np.nan)
    notes = np.full((k, k), "", dtype=object)
    for i, j in itertools.combinations(range(k), 2):
        a, b = groups[cores[i]], groups[cores[j]]
        # the many resamples matter only where scipy's p is floored (near the Holm thresholds);
        # a capped p (>= 0.25) is 'similar' at any resolution, so it gets the default count
        scipy_p = _scipy_ad_p(a, b)
        floored, capped = scipy_p <= stats.AD_P_FLOOR, scipy_p >= stats.AD_P_CAP
        # ad_max_pooled=0: a floored pair keeps scipy's statistic and skips the permutation
        found = {r.test: r for r in stats.two_sample_tests(a, b, str(cores[i]), str(cores[j]), alpha, seed,
                                                           (stats.KS, stats.ANDERSON),
                                                           ad_resamples=resamples if floored else stats.AD_RESAMPLES,
                                                           ad_max_pooled=0 if bounded else stats.AD_MAX_POOLED)}
        ks[i, j] = ks[j, i] = found[stats.KS].statistic
        ad[i, j] = ad[j, i] = found[stats.ANDERSON].statistic
        p[i, j] = p[j, i] = found[stats.ANDERSON].p
        notes[i, j] = notes[j, i] = found[stats.ANDERSON].note
        if bounded and capped:
            notes[i, j] = notes[j, i] = (f"Anderson-Darling p >= {p[i, j]:.3g} (scipy's tabulated value, capped at 0.25): "
                                         "similar under any correction, no permutation needed")
        if floored and bounded:
            p[i, j] = p[j, i] = min(stats.AD_P_FLOOR, found[stats.KS].p)
            notes[i, j] = notes[j, i] = (
                f"Anderson-Darling p < {stats.AD_P_FLOOR} (scipy's floor); p = min({stats.AD_P_FLOOR}, two-sample KS p "
                f"{found[stats.KS].p:.3g}): no permutation of at most {AD_RESAMPLES_MAX} resamples resolves alpha/m = {alpha / m:.2g}")
    upper = [(i, j) for i, j in itertools.combinations(range(k), 2)]
    adjusted = np.full((k, k), np.nan)
    if upper:
        holm = stats.holm([p[i, j] for i, j in upper])
        for (i, j), q in zip(upper, holm):
            adjusted[i, j] = adjusted[j, i] = q
    similar = np.eye(k, dtype=bool) | (adjusted >= alpha)
    return Similarity(cores=cores, n=[int(np.isfinite(np.asarray(groups[c], dtype=float)).sum()) for c in cores],
                      ks=ks, ad_statistic=ad, p=p, p_adjusted=adjusted, similar=similar, notes=notes,
                      alpha=alpha, resamples=resamples, correction=f"Holm over the {m} pairs" + (
                          f"; a permutation cannot resolve alpha/m = {alpha / m:.2g}: where scipy's Anderson-Darling p is "
                          f"floored, p = min({stats.AD_P_FLOOR}, two-sample KS p)" if bounded else ""))


def _scipy_ad_p(a, b):
    """scipy's tabulated k-sample Anderson-Darling p (capped to 0.001-0.25), NaN if not computable."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if x.size < 2 or y.size < 2 or np.unique(np.concatenate([x, y])).size < 2:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(scipy.stats.anderson_ksamp([x, y], variant="midrank").pvalue)
        except TypeError:  # scipy < 1.17 has no `variant`
            return float(scipy.stats.anderson_ksamp([x, y], midrank=True).pvalue)


def slowest_vs_fastest(groups):
    """(fastest core, slowest core, Ratio of their means slow/fast with a bootstrap CI) by mean."""
    means = {c: float(np.mean(v)) for c, v in groups.items() if len(v)}
    if len(means) < 2:
        return None
    fast, slow = min(means, key=means.get), max(means, key=means.get)
    return fast, slow, stats.ratio_of_means(groups[fast], groups[slow])


def rank(samples, alpha=ALPHA, *, sources=(), measured_from=None, boot_time=None):
    """Cores ordered fastest to slowest (by mean) per workload, with which adjacent differences
    are significant: Welch t (two-sided) on each adjacent pair, Holm over the k-1 pairs of a
    workload, alpha as given; the ratio of means with a bootstrap CI says how much.

    `samples` is a Samples or {workload: {core: values in seconds}}. The result is plain data for
    JSON, stamped with the date, host and the machine's boot time (pin_command refuses rankings
    older than the boot).
    """
    groups = samples.groups() if isinstance(samples, Samples) else samples
    now = datetime.datetime.now().astimezone()
    ranking = {
        "kind": "timekit core ranking",
        "created": now.isoformat(timespec="seconds"),
        "created_epoch": now.timestamp(),
        "boot_time": read_boot_time() if boot_time is None else int(boot_time),
        "measured_from": measured_from,
        "host": platform.node(),
        "alpha": alpha,
        "test": f"Welch t (two-sided) on adjacent cores of the order by mean; Holm over the k-1 adjacent pairs; alpha {alpha}",
        "sources": [str(s) for s in sources],
        "workloads": {},
    }
    for workload, by_core in groups.items():
        by_core = {int(c): np.asarray(v, dtype=float) for c, v in by_core.items() if len(v)}
        summaries = {c: stats.summarize(v) for c, v in by_core.items()}
        order = sorted(by_core, key=lambda c: (summaries[c].mean, c))
        raw = []
        for faster, slower in zip(order, order[1:]):
            welch = stats.two_sample_tests(by_core[faster], by_core[slower], str(faster), str(slower), alpha,
                                           tests=(stats.WELCH,))[0]
            raw.append((faster, slower, welch))
        adjusted = stats.adjust([w for *_, w in raw])
        adjacent = []
        for (faster, slower, _), welch in zip(raw, adjusted):
            ratio = stats.ratio_of_means(by_core[faster], by_core[slower])
            adjacent.append({"faster": faster, "slower": slower, "n_faster": welch.n_a, "n_slower": welch.n_b,
                             "ratio": ratio.ratio, "ci_low": ratio.ci_low, "ci_high": ratio.ci_high,
                             "p": welch.p, "p_adjusted": welch.p_adjusted, "significant": welch.significant})
        spread = slowest_vs_fastest(by_core)
        ranking["workloads"][workload] = {
            "order": order,
            "cores": [{"core": c, **summaries[c].as_dict()} for c in order],
            "adjacent": adjacent,
            "slowest_vs_fastest": None if spread is None else {"fastest": spread[0], "slowest": spread[1],
                                                               **spread[2].as_dict()},
        }
    present = list(ranking["workloads"])
    ranking["pin_workload"] = "cachestress" if "cachestress" in present else (present[0] if present else None)
    return ranking


# ---------------------------------------------------------------------------------------------
# the report section


def _ms(seconds):
    return seconds * 1e3


def _sibling_pairs(topology_cpus):
    """The set of SMT sibling pairs (a < b)."""
    return {(a, b) for c in topology_cpus or () for a, b in itertools.combinations(sorted(c.siblings), 2)}


def _core_label(cpu, topology_cpus):
    for c in topology_cpus or ():
        if c.id == cpu:
            core = "?" if c.core is None else c.core
            package = "" if c.package in (None, 0) else f" pkg {c.package}"
            return f"CPU {cpu} (core {core}{package})"
    return f"CPU {cpu}"


def section(tables, facts=None, *, warmups=WARMUPS, notes=()):
    """The report section of core-heterogeneity results: (Section, data)."""
    samples = collect(tables, warmups)
    return analyse(samples, facts if facts is not None else machine_facts.for_results(tables), notes=notes)


def analyse(samples, facts, *, notes=()):
    """The section from Samples (collect) or None; `facts`: the measured machine as recorded
    (analysis.machine.facts.Facts: topology, CPU flags, RAPL)."""
    topology_cpus = facts.topology_cpus()
    from analysis.experiments.core_heterogeneity import plots as cores_plots

    sec = Section(id="core-heterogeneity", title="Core-to-core heterogeneity (one core at a time)")
    sec.paragraphs += [
        "Seed 002 (Reif et al., APSys 2020) ran sequential NAS kernels and a clflush cache-stress "
        "microbenchmark on one core at a time (10 warm-ups, then 1000 runs per core). On an Intel i5-8400 "
        "the mean cg time on the slowest core was more than 10 % above the fastest; the other kernels were "
        "equal on all cores; on a 96-thread Xeon server the gap exceeded 20 %, and SMT siblings behaved alike.",
        "Here: cachestress (touch + clflush one byte per cache line, mfence per pass), cg (sparse conjugate "
        "gradient at NAS class A's matrix size, irregular access) and isort (counting sort, the control), each "
        "benchexec invocation on one core (--allowedCores K --limitCores 1), cores interleaved over rounds. "
        "Time = the kernel's own CLOCK_MONOTONIC time (self-seconds).",
        f"Tests: per pair of cores k-sample Anderson-Darling (k = 2, alpha = {ALPHA}, the paper's level) with a "
        "permutation p where scipy's tabulated p is capped to 0.001-0.25, Holm-corrected over the k(k-1)/2 pairs; "
        "'similar' when the corrected p is at least alpha. The two-sample KS statistic D measures the distance. "
        "Slowest vs fastest core: ratio of means with a bootstrap (BCa) 95 % CI; the cores are chosen by their "
        "sample means, so with many cores the ratio is biased upwards (the largest of several noisy means).",
        *notes,
    ]
    data = {"alpha": ALPHA, "workloads": {}}
    if samples is None or not samples.counted.any():
        sec.warnings.append("No counted runs of the core-heterogeneity workloads: nothing to analyse.")
        sec.findings += _untestable_findings("no counted runs")
        return sec, data
    machine_flags = set(facts.cpu_flags)
    if "hypervisor" in machine_flags:
        sec.warnings.append("This machine is a virtual machine: its CPUs are vCPUs, which the hypervisor maps to "
                            "physical cores as it likes and may move at any time; a difference between vCPUs need "
                            "not be a property of one physical core.")
    groups = samples.groups()
    cores = samples.cores()
    warmups_dropped = int((samples.warmup & (samples.reason == "")).sum())
    rounds = sorted(set(samples.round[samples.counted].tolist()))
    data.update(cores=cores, rounds=rounds, warmups_dropped=warmups_dropped,
                warmups_per_invocation=_warmups_per_invocation(samples))
    sec.paragraphs.append(
        f"Cores measured: {', '.join(_core_label(c, topology_cpus) for c in cores)}; rounds: {len(rounds)}; "
        f"warm-ups dropped: {warmups_dropped} (the first {data['warmups_per_invocation']} of each workload in each "
        f"invocation); counted runs per workload and core: "
        + ", ".join(f"{w} {min(len(v) for v in groups[w].values())}-{max(len(v) for v in groups[w].values())}"
                    for w in groups) + ".")

    summary_rows, similarities, ratios = [], {}, {}
    for workload, by_core in groups.items():
        entry = data["workloads"][workload] = {"summary": []}
        for core, values in by_core.items():
            s = stats.summarize(values)
            mask = (samples.workload == workload) & (samples.core == core)
            excluded = int(((samples.reason != "") & mask).sum())
            summary_rows.append([workload, _core_label(core, topology_cpus), s.n, excluded, _ms(s.mean), _ms(s.sd),
                                 100 * s.cv, _ms(s.median), _ms(s.min), _ms(s.max),
                                 f"{_ms(s.ci_low):.4g} – {_ms(s.ci_high):.4g}"])
            entry["summary"].append({"core": core, "excluded": excluded, **s.as_dict()})
        sim = similarities[workload] = similarity(by_core)
        entry["similarity"] = sim.as_dict()
        spread = slowest_vs_fastest(by_core)
        if spread is not None:
            ratios[workload] = spread
            entry["slowest_vs_fastest"] = {"fastest": spread[0], "slowest": spread[1], **spread[2].as_dict()}

    sec.tables.append(Table(
        title="Kernel time (self-seconds) per workload and core",
        columns=["workload", "core", "n", "excluded", "mean (ms)", "sd (ms)", "CV (%)", "median (ms)", "min (ms)",
                 "max (ms)", "95 % CI (ms)"],
        rows=summary_rows,
        caption="n counts runs after warm-ups that finished and started and ended on the assigned core; "
                "'excluded' runs (failed, moved, wrong core) are left out of every statistic."))
    sec.tables.append(Table(
        title="Slowest core against fastest core, per workload (paper Fig. 2/3)",
        columns=["workload", "fastest", "slowest", "mean slowest / fastest", "95 % CI", "method"],
        rows=[[w, _core_label(f, topology_cpus), _core_label(s, topology_cpus), r.ratio, f"{r.ci_low:.4f} – {r.ci_high:.4f}",
               r.method] for w, (f, s, r) in ratios.items()],
        caption="Cores chosen by their mean; the paper normalised the slowest core's mean to the fastest's."))
    round_rows, consistency = _per_round(samples, ratios)
    data["per_round"] = consistency
    sec.tables.append(Table(
        title="Mean kernel time per round and core: is a core difference the same in every round?",
        columns=["workload", "round", *[_core_label(c, topology_cpus) for c in cores], "slowest core this round"],
        rows=round_rows,
        caption="Mean (ms) of the counted runs of each benchexec invocation. Runs within one invocation are not "
                "independent (they share its moment's machine state), so a difference that flips between rounds is "
                "drift, not a core property, however small its p."))
    sibling_pairs = _sibling_pairs(topology_cpus)
    pair_rows = []
    for workload, sim in similarities.items():
        for i, j in sim.pairs():
            a, b = sim.cores[i], sim.cores[j]
            pair_rows.append([workload, a, b, "yes" if (min(a, b), max(a, b)) in sibling_pairs else "no", sim.n[i], sim.n[j],
                              sim.ks[i, j], sim.ad_statistic[i, j], sim.p[i, j], sim.p_adjusted[i, j],
                              "similar" if sim.similar[i, j] else "different", sim.notes[i, j]])
    resamples = sorted({sim.resamples for sim in similarities.values()})
    sec.tables.append(Table(
        title="Core similarity: every pair of cores (paper Fig. 5)",
        columns=["workload", "CPU A", "CPU B", "SMT siblings", "n A", "n B", "KS D", "AD statistic", "AD p",
                 "AD p (Holm)", f"alpha {ALPHA}", "how p was obtained"],
        rows=pair_rows,
        caption=f"k-sample Anderson-Darling (k = 2, midrank); where scipy's p is capped (0.25) or floored (0.001), p "
                f"comes from a permutation test ({', '.join(map(str, resamples))} resamples); Holm over the k(k-1)/2 pairs "
                f"of each workload. From 7 cores on, no affordable permutation resolves alpha/m: a floored p is bounded "
                f"by the two-sample KS p and a capped one stays 'p >= 0.25' (similar under any correction); the last "
                f"column says which applied."))
    ranking = rank(groups)
    data["ranking"] = jsonable(ranking)
    sec.tables.append(_ranking_table(ranking, topology_cpus))

    energy_rows, energy_note = _energy(samples, facts.rapl)
    data["energy"] = {"available": bool(energy_rows), "note": energy_note}
    if energy_rows:
        sec.tables.append(Table(title="CPU energy per run (BenchExec's cpuenergy column)",
                                columns=["workload", "core", "n", "mean energy (J)", "mean power (W)"],
                                rows=energy_rows, caption=energy_note))
    else:
        sec.paragraphs.append(f"Energy (paper Fig. 4a): {energy_note}")

    excluded = samples.reason[samples.reason != ""]
    if excluded.size:
        counts = {}
        for why in excluded.tolist():
            counts[why] = counts.get(why, 0) + 1
        sec.warnings.append(f"{excluded.size} of {len(samples.reason)} runs were left out of every statistic: "
                            + "; ".join(f"{k}: {v}" for k, v in counts.items()))
    data["excluded"] = int(excluded.size)
    counted = samples.select(samples.counted)
    known = np.isfinite(counted.self_cputime)
    if known.any():
        contended = known & (counted.self_cputime < CONTENDED * counted.seconds)
        data["contended"] = {"runs": int(contended.sum()), "of": int(known.sum()), "threshold": CONTENDED}
        if contended.any():
            sec.warnings.append(
                f"{int(contended.sum())} of {int(known.sum())} counted runs got less than {CONTENDED:.0%} of their wall time "
                "as CPU time (self-cputime < 0.95 self-seconds): other processes shared their core, and their time "
                "says more about that load than about the core. Measure on a quiet machine.")

    sec.figures += [
        Figure("Kernel time CDF per core (paper Fig. 1)",
               cores_plots.to_png(cores_plots.cdf_per_core(groups, LABEL, topology_cpus)),
               "Empirical CDF of the kernel time of every counted run, one line per core; a core whose curve lies "
               "to the right is slower. Run-to-run spread is the width of each curve."),
        Figure("Slowest core normalised to the fastest (paper Fig. 2/3)",
               cores_plots.to_png(cores_plots.slowest_vs_fastest(ratios, LABEL, PAPER_GAP)),
               "Mean kernel time of the slowest core divided by the fastest core's, with bootstrap 95 % CI. "
               "The dashed line marks the paper's 10 % gap."),
        Figure("Core similarity matrices (paper Fig. 5)",
               cores_plots.to_png(cores_plots.similarity_matrices(similarities, LABEL, topology_cpus)),
               f"Colour: two-sample KS statistic D between the cores' kernel-time distributions (blue: close, red: far). "
               f"Black dot: 'similar' (Anderson-Darling, Holm, alpha {ALPHA}). Axes: Linux CPU numbers; "
               "white frames mark SMT siblings (CPUs of one physical core)."),
    ]
    correlation = _correlation(groups)
    data["correlation"] = correlation
    if correlation.get("points"):
        sec.figures.append(Figure(
            "cg against the microbenchmark, one point per core (paper Fig. 4b)",
            cores_plots.to_png(cores_plots.correlation(correlation["points"], "cachestress mean / fastest core",
                                                       "cg mean / fastest core", topology_cpus)),
            "Each core's mean kernel time, normalised to the fastest core of that workload."))
    sec.findings += _findings(groups, similarities, ratios, sibling_pairs, correlation, energy_rows, energy_note,
                              topology_cpus, consistency)
    return sec, data


def _per_round(samples, ratios):
    """Rows of mean ms per (workload, round) and core, and per workload in how many rounds the
    overall slowest core was the slowest."""
    counted = samples.select(samples.counted)
    all_cores = counted.cores()
    rows, consistency = [], {}
    for w in counted.workloads():
        slowest_overall = ratios[w][1] if w in ratios else None
        agree = total = 0
        for r in sorted(set(counted.round[counted.workload == w].tolist())):
            means = {}
            for c in all_cores:
                values = counted.seconds[(counted.workload == w) & (counted.round == r) & (counted.core == c)]
                if values.size:
                    means[c] = float(np.mean(values))
            slowest = max(means, key=means.get) if len(means) > 1 else None
            if slowest is not None:
                total += 1
                agree += slowest == slowest_overall
            rows.append([w, r, *[_ms(means[c]) if c in means else None for c in all_cores],
                         "" if slowest is None else f"CPU {slowest}"])
        consistency[w] = {"slowest": slowest_overall, "rounds_slowest": agree, "rounds": total}
    return rows, consistency


def _warmups_per_invocation(samples):
    counts = {}
    for inv, w in zip(samples.invocation[samples.warmup].tolist(), samples.workload[samples.warmup].tolist()):
        counts[(inv, w)] = counts.get((inv, w), 0) + 1
    return max(counts.values()) if counts else 0


def _ranking_table(ranking, topology_cpus):
    rows = []
    for workload, entry in ranking["workloads"].items():
        for position, core in enumerate(entry["order"], start=1):
            summary = entry["cores"][position - 1]
            pair = entry["adjacent"][position - 2] if position > 1 else None
            rows.append([workload, position, _core_label(core, topology_cpus), summary["n"], _ms(summary["mean"]),
                         None if pair is None else pair["ratio"], None if pair is None else pair["p_adjusted"],
                         "" if pair is None else ("significantly slower" if pair["significant"] else "~")])
    return Table(title="Ranking: cores fastest to slowest per workload",
                 columns=["workload", "rank", "core", "n", "mean (ms)", "ratio to the core before", "Welch p (Holm)",
                          "vs the core before"],
                 rows=rows,
                 caption=f"{ranking['test']}. 'timekit cores rank RESULTS' saves this ranking; 'timekit cores run -k K "
                         "-- COMMAND' runs a command on the K fastest cores (by the cache-stress microbenchmark, as the "
                         "paper's golden-run).")


def _energy(samples, rapl):
    """Rows of energy per (workload, core) if BenchExec recorded it, and a note."""
    counted = samples.select(samples.counted)
    if np.isfinite(counted.energy).any():
        rows = []
        for w in counted.workloads():
            for c in counted.cores():
                mask = (counted.workload == w) & (counted.core == c) & np.isfinite(counted.energy)
                if mask.any():
                    energy = counted.energy[mask]
                    power = energy / counted.walltime[mask]
                    rows.append([w, c, int(mask.sum()), float(np.mean(energy)), float(np.nanmean(power))])
        return rows, ("RAPL measures a whole package, not one core: with one run at a time the package's energy "
                      "is attributed to the core the run used; idle cores' share is included.")
    if rapl:
        return [], ("not measured: RAPL exists here (/sys/class/powercap) but BenchExec recorded no cpuenergy "
                    "(install cpu-energy-meter to get it in every run).")
    return [], "not available: this machine exposes no RAPL interface (no /sys/class/powercap; usual in VMs)."


def _correlation(groups):
    """Per-core means of cachestress and cg, normalised to each workload's fastest core, with
    Pearson's r across cores (paper Fig. 4b)."""
    if "cachestress" not in groups or "cg" not in groups:
        return {"testable": False, "why": "needs both cachestress and cg results"}
    common = sorted(set(groups["cachestress"]) & set(groups["cg"]))
    if len(common) < 3:
        return {"testable": False, "cores": common,
                "why": f"{len(common)} core(s) measured with both workloads; a correlation across cores needs at least 3 "
                       "(two points always lie on a line)"}
    micro = np.array([np.mean(groups["cachestress"][c]) for c in common])
    cg = np.array([np.mean(groups["cg"][c]) for c in common])
    micro, cg = micro / micro.min(), cg / cg.min()
    r = scipy.stats.pearsonr(micro, cg)
    return {"testable": True, "cores": common, "r": float(r.statistic), "p": float(r.pvalue), "n": len(common),
            "points": [(c, float(x), float(y)) for c, x, y in zip(common, micro, cg)]}


def _untestable_findings(why):
    return [Finding(claim="Some cores are more than 10 % faster than others for cache-heavy code (paper Fig. 1/2)",
                    verdict="not testable here", evidence=why)]


def _findings(groups, similarities, ratios, sibling_pairs, correlation, energy_rows, energy_note, topology_cpus,
              consistency=None):
    findings = []
    k = max((len(v) for v in groups.values()), default=0)

    # 1. cache-heavy code: some cores > 10 % faster
    for workload in CACHE_HEAVY:
        if workload not in groups:
            continue
        claim = (f"{workload}: some cores are more than {PAPER_GAP:.0%} faster than others for cache-heavy code "
                 "(paper Fig. 1/2: cg on an i5-8400)")
        if workload not in ratios:
            findings.append(Finding(claim, "not testable here", f"{len(groups[workload])} core measured; needs at least 2"))
            continue
        fast, slow, r = ratios[workload]
        sim = similarities[workload]
        i, j = sim.cores.index(fast), sim.cores.index(slow)
        rounds = (consistency or {}).get(workload, {"rounds_slowest": 0, "rounds": 0})
        steady = rounds["rounds"] <= 1 or rounds["rounds_slowest"] == rounds["rounds"]
        if r.ci_low > 1 + PAPER_GAP and not sim.similar[i, j] and steady:
            verdict = "confirmed"
        elif r.ci_high < 1 + PAPER_GAP:
            verdict = "refuted"
        else:
            verdict = "inconclusive"
        findings.append(Finding(claim, verdict,
                                f"slowest {_core_label(slow, topology_cpus)} / fastest {_core_label(fast, topology_cpus)}: "
                                f"ratio of means {r.ratio:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}] ({r.method}); "
                                f"Anderson-Darling p (Holm) {sim.p_adjusted[i, j]:.3g} at alpha {ALPHA}, "
                                f"n = {sim.n[i]} and {sim.n[j]}; {_pairs_different(sim)}; CPU {slow} was the slowest in "
                                f"{rounds['rounds_slowest']} of {rounds['rounds']} rounds. Confirmed needs the CI above "
                                f"{1 + PAPER_GAP:.2f}, a significant difference and the same slowest core in every round; "
                                "refuted when the CI lies below it."))

    # 2. the control: equal on all cores
    for workload in CONTROLS:
        if workload not in groups:
            continue
        claim = f"{workload}: most kernels run equally fast on all cores (paper Fig. 3: all NAS kernels but cg)"
        if workload not in ratios:
            findings.append(Finding(claim, "not testable here", f"{len(groups[workload])} core measured; needs at least 2"))
            continue
        fast, slow, r = ratios[workload]
        sim = similarities[workload]
        if r.ci_high < 1 + NEGLIGIBLE:
            verdict = "confirmed"
        elif r.ci_low > 1 + NEGLIGIBLE:
            verdict = "refuted"
        else:
            verdict = "inconclusive"
        findings.append(Finding(claim, verdict,
                                f"slowest / fastest core: ratio of means {r.ratio:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}]; "
                                f"'equal' = CI below {1 + NEGLIGIBLE:.2f} (a gap under {NEGLIGIBLE:.0%} is negligible), "
                                f"'refuted' = CI above it; {_pairs_different(sim)} "
                                f"(Anderson-Darling, Holm, alpha {ALPHA}, n = {min(sim.n)}-{max(sim.n)} per core)."))

    # 3. SMT siblings alike
    claim = "SMT siblings (two hardware threads of one core) perform alike (paper Fig. 5)"
    workload = "cg" if "cg" in similarities else next(iter(similarities), None)
    measured = [(a, b) for a, b in sorted(sibling_pairs)
                if workload and a in similarities[workload].cores and b in similarities[workload].cores]
    if not measured:
        why = ("no two measured CPUs are SMT siblings (thread_siblings_list)" if sibling_pairs or k else "no cores measured")
        findings.append(Finding(claim, "not testable here", why + "."))
    else:
        parts, alike = [], 0
        for w, sim in similarities.items():
            for a, b in measured:
                i, j = sim.cores.index(a), sim.cores.index(b)
                alike += bool(sim.similar[i, j]) if w == workload else 0
                parts.append(f"{w} CPU {a}/{b}: p (Holm) {sim.p_adjusted[i, j]:.3g}, KS D {sim.ks[i, j]:.3f} "
                             f"({'similar' if sim.similar[i, j] else 'different'})")
        verdict = "confirmed" if alike == len(measured) else "refuted"
        findings.append(Finding(claim, verdict,
                                f"judged on {workload} (the paper's workload): {alike} of {len(measured)} sibling pairs "
                                f"similar (Anderson-Darling, Holm, alpha {ALPHA}); " + "; ".join(parts) + "."))

    # 4. cg correlates with the microbenchmark across cores
    claim = "cg and the cache-stress microbenchmark rank the cores alike: their times correlate across cores (paper Fig. 4b)"
    if not correlation.get("testable"):
        findings.append(Finding(claim, "not testable here", correlation.get("why", "") + "."))
    else:
        r, p = correlation["r"], correlation["p"]
        verdict = ("confirmed" if r > 0 and p < CORRELATION_ALPHA else "refuted" if r < 0 and p < CORRELATION_ALPHA
                   else "inconclusive")
        findings.append(Finding(claim, verdict,
                                f"Pearson r = {r:.3f}, p = {p:.3g} over {correlation['n']} cores (per-core means "
                                f"normalised to the fastest core), alpha {CORRELATION_ALPHA}."))

    # 5. energy
    claim = "Slower cores do not need less energy for the same work (paper Fig. 4a, RAPL)"
    if not energy_rows:
        findings.append(Finding(claim, "not testable here", f"Energy {energy_note}"))
    else:
        cg_rows = [row for row in energy_rows if row[0] == "cg"]
        if len(cg_rows) < 3 or "cg" not in groups:
            findings.append(Finding(claim, "not testable here",
                                    f"energy of {len(cg_rows)} core(s) for cg; a correlation across cores needs at least 3."))
        else:
            times = np.array([np.mean(groups["cg"][row[1]]) for row in cg_rows])
            energy = np.array([row[3] for row in cg_rows])
            rho = scipy.stats.spearmanr(times, energy)
            verdict = "refuted" if rho.statistic < 0 and rho.pvalue < CORRELATION_ALPHA else (
                "confirmed" if rho.pvalue < CORRELATION_ALPHA else "inconclusive")
            findings.append(Finding(claim, verdict,
                                    f"cg: Spearman rho between per-core mean time and mean energy = {rho.statistic:.3f}, "
                                    f"p = {rho.pvalue:.3g}, {len(cg_rows)} cores. {energy_note}"))
    return findings


def _pairs_different(sim):
    m = len(list(sim.pairs()))
    different = sum(1 for i, j in sim.pairs() if not sim.similar[i, j])
    return f"{different} of {m} core pairs differ"
