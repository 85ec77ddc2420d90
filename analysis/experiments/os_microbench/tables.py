"""
The tables of the os-microbench section: every measurement against its published range, the
model's predictions in the seed's form, the latency plateaus against the cache sizes, context
switches, page faults, and each measurement's calibration and placement.
"""

from __future__ import annotations

from analysis.core import fmt
from analysis.core.report import Table
from analysis.experiments.os_microbench.levels import MERGE_RATIO, rise_bracket
from analysis.experiments.os_microbench.output import MEASURES
from analysis.experiments.os_microbench.samples import clock_check, clock_reading, core_ghz
from analysis.experiments.os_microbench.seed import MODEL, SOURCES

def clock_caption(data):
    """The core clock the cycle figures rest on, or why there are none."""
    why = clock_check(data)
    if why:
        return f"No figure in cycles: {why}."
    clock = clock_reading(data)
    return f"Core clock {clock.value:.3f} GHz ({clock.how})."


def measurement_table(rows, data):
    out = []
    for r in rows:
        rng = f"{fmt.quantity(r['range'][0], r['unit'])} – {fmt.quantity(r['range'][1], r['unit'])}" if r["range"] else "–"
        ghz = core_ghz(data, r["measure"])
        cycles = r["median"] * ghz if ghz and r["unit"] == "ns" else None
        out.append([r["label"], fmt.quantity(r["median"], r["unit"]), cycles,
                    f"{fmt.quantity(r['p10'], r['unit'])} – {fmt.quantity(r['p90'], r['unit'])}", r["n"], r["runs"], rng,
                    r["in_range"], ", ".join(r["sources"]) or "–"])
    return Table(
        title="Every measurement: median, spread, n, and whether it lies in a published range",
        columns=["operation", "median", "core cycles", "p10 – p90", "n", "runs", "published range", "in range", "source"],
        rows=out,
        caption="n counts samples (a sample is one operation, or the mean of a batch of `iterations` operations; see "
                "programs/inputs/os-microbench/). With several runs per measurement the median, p10 and p90 are medians "
                "over the runs. Core cycles = ns x the run's core clock (kit probe: dependent add and imul chains, "
                "perf cycles where there is a PMU); TSC ticks are not core cycles. " + clock_caption(data)
                + " Ranges are deliberately wide orders of magnitude for modern x86-64 Linux "
                "from the sources below, not expectations for this CPU: " + " ".join(f"[{k}] {v}" for k, v in SOURCES.items()),
    )


def prediction_table(rows, data):
    def cell(value, unit):
        if isinstance(value, str):
            return value
        return fmt.quantity(value, unit)

    return Table(
        title="Predicted vs measured, in the seed's form (base hardware performance, model, prediction)",
        columns=["operation", "base hardware performance", "model (software overhead estimate)", "predicted", "measured",
                 "measured / predicted", "seed predicted", "seed measured"],
        rows=[[r["operation"], r["base"], r["model"], cell(r["predicted"], r["unit"]), cell(r["measured"], r["unit"]),
               (r["measured"] / r["predicted"]) if isinstance(r["predicted"], float) and r["predicted"] and r["measured"] else None,
               cell(r["seed_predicted"], r["unit"]) if r["seed_predicted"] is not None else "–",
               cell(r["seed_measured"], r["unit"]) if r["seed_measured"] is not None else "–"] for r in rows],
        caption="The model, stated once: " + ", ".join(f"{k} = {v}" for k, v in MODEL.items())
                + " (cycles unless named; sources: [fog], [memory], [sdm] in the table above). Cycles become ns with this "
                "machine's core clock; an operation whose runs have none is left out. " + clock_caption(data)
                + " Seed: i7-4710HQ at 2.5 GHz (0.4 ns per cycle; memory "
                "latency on an AMD A10-8700P), its figures as printed in its tables; procedure-call figures converted from "
                "its cycles at 2.5 GHz.",
    )


def latency_tables(found, matches, data):
    rows = []
    lat = data["latency"]
    ghz = core_ghz(data, "mem-latency")
    for p in found:
        rows.append([p["label"], f"{fmt.binary_size(p['first_bytes'])} – {fmt.binary_size(p['last_bytes'])}", p["points"],
                     p["ns"], p["ns"] * ghz if ghz else None])
    level_rows = []
    for mt in matches:
        level_rows.append([f"L{mt['level']}", fmt.binary_size(mt["bytes"]), _rise_text(mt),
                           "–" if mt["match"] is None else ("yes" if mt["match"] else "no")])
    info = data["info"].get("mem-latency", {})
    return [
        Table(title="Plateaus of the latency curve, found from the data", columns=["plateau", "working sets", "points",
              "latency (ns)", "core cycles"], rows=rows,
              caption=f"Neighbouring sizes merge while their medians differ by less than {MERGE_RATIO:g}x or their p10-p90 "
                      f"bands overlap (see plateaus()); {len(lat['bytes'])} sizes, "
                      f"{int(info.get('lat-loads', 0))} dependent loads per sample, {int(info.get('lat-n', 0))} samples per size; "
                      f"transparent huge pages: mode '{info.get('thp-mode', '?')}', {int(info.get('anon-huge-kib', 0) or 0)} KiB "
                      "of the buffer backed by huge pages (so TLB misses do not mask the caches)."),
        Table(title="Cache sizes the OS reports against where the latency rises",
              columns=["level", "size (/sys)", "rise between", "within a factor 2"], rows=level_rows,
              caption="A level matches when the sizes between its plateau's last point and the next plateau's first point "
                      "overlap [size/2, 2 x size]."),
    ]


def _rise_text(mt):
    """Where the latency rises after a level: the union over the invocations where there are
    several (levels.rise_bracket), each invocation's own after it where they differ."""
    if not mt["edge"]:
        return "no rise found"
    if not mt.get("invocation_edges"):
        return f"{fmt.binary_size(mt['edge'][0])} – {fmt.binary_size(mt['edge'][1])}"
    low, high, agree = rise_bracket(mt)
    text = f"{fmt.binary_size(low)} – {fmt.binary_size(high)}"
    if agree:
        return text
    each = ", ".join(f"{fmt.binary_size(e[0])} – {fmt.binary_size(e[1])}" if e else "none"
                     for e in mt["invocation_edges"])
    return f"{text} (per invocation: {each})"


def fault_table(data):
    info = data["info"].get("page-fault", {})
    rows = []
    for kind, label in (("anon-write", "anonymous, written (MADV_NOHUGEPAGE)"), ("anon-read", "anonymous, read (zero page)"),
                        ("file-read", "private file mapping, read")):
        page, fault = data["variants"].get(f"{kind}-page"), data["variants"].get(f"{kind}-fault")
        if not page:
            continue
        rows.append([label, info.get(f"{kind}-faults-per-page"), page["median"], fault["median"] if fault else None, page["n"]])
    return Table(title="Page faults: faults per page (getrusage ru_minflt) and service time",
                 columns=["mapping", "minor faults per page", "ns per page", "ns per fault", "n"], rows=rows,
                 caption=f"{int(info.get('pages', 0))} pages of {int(info.get('page-bytes', 0))} B per mapping; file on "
                         f"{info.get('file-fs', '?')}, in the page cache (minor faults only; disk reads are not measured); "
                         f"THP mode '{info.get('thp-mode', '?')}'. A file read fault maps up to 16 cached pages at once "
                         "(fault-around), so per page it looks cheap.")


def switch_table(data):
    rows = []
    for kind in ("process", "thread"):
        rt, own, sw = (data["variants"].get(f"{kind}-{x}") for x in ("roundtrip", "pipe", "switch"))
        if rt and own and sw:
            rows.append([kind + "es" if kind == "process" else "threads", rt["median"], own["median"], sw["median"],
                         f"{fmt.duration_ns(sw['p10'])} – {fmt.duration_ns(sw['p90'])}", sw["n"]])
    return Table(title="Context switch: pipe round trip minus the pipe cost without switching",
                 columns=["between", "round trip (ns)", "own pipe write+read (ns)", "switch (ns)", "switch p10 – p90", "n"],
                 rows=rows,
                 caption="Both partners pinned to the same CPU. A round trip is two switches, two writes and two reads: "
                         "switch = (round trip - 2 x own pipe) / 2, per sample, with the median own-pipe cost.")


def environment_table(data):
    rows = []
    for measure in MEASURES:
        info = data["info"].get(measure)
        if not info:
            continue
        clock = clock_reading(data, measure)
        rows.append([measure, data["runs"][measure], info.get("cpu"), info.get("timer-source"), info.get("tsc-ghz"),
                     info.get("tsc-calibration-spread-ppm"), core_ghz(data, measure), clock_check(data, measure) or clock.how,
                     info.get("migrations"), info.get("regions")])
    return Table(title="Calibration and placement per measurement",
                 columns=["measurement", "runs", "pinned CPU", "timer", "TSC GHz (vs CLOCK_MONOTONIC_RAW)",
                          "TSC calibration spread (ppm)", "core GHz", "core clock: estimates or check", "migrations",
                          "timed regions"],
                 rows=rows,
                 caption="Core GHz: the kit's probe (programs/kit.h), shown only where a chain of dependent adds (1 cycle "
                         "each), a chain of imul (3 cycles each) and perf's cycle counter (where the kernel exposes a PMU) "
                         "agree within 5 % and lie in a CPU's physical range. Migrations: timed regions whose RDTSCP "
                         "TSC_AUX (CPU number) differed at start and end.")
