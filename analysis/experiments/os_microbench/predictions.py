"""
The model's predictions next to the measurements, in the seed's form.

Each operation's predicted cost comes from ``seed.MODEL`` (cycles per instruction class and
kernel operation) turned into ns with the core clock of the operation's own runs
(``samples.core_ghz``); one function per group of operations, in the order of the table.
"""

from __future__ import annotations

from functools import partial

from analysis.core import fmt
from analysis.experiments.os_microbench.levels import bandwidth_points
from analysis.experiments.os_microbench.samples import core_ghz
from analysis.experiments.os_microbench.seed import MODEL
from analysis.experiments.os_microbench.seed import SEED, SEED_GHZ


def _base(ghz):
    return f"1 cycle = {1 / ghz:.3f} ns ({ghz:.2f} GHz)"


def _row(data, operation, model, predicted, variant, ghz, seed=None):
    """One row for a variant measured in ns; ``seed``: the seed's predicted and measured figures."""
    v = data["variants"].get(variant)
    seed = seed or {}
    return {"operation": operation, "base": _base(ghz), "model": model, "predicted": predicted,
            "measured": v["median"] if v else None, "unit": "ns", "seed_predicted": seed.get("predicted"),
            "seed_measured": seed.get("measured")}


def _timer(data, ghz):
    c = 1 / ghz
    return [
        _row(data, "timer read (CPUID pattern, floor)", f"one TSC read: {MODEL['tsc_read']} cycles", MODEL["tsc_read"] * c,
             "tsc-cpuid", ghz, SEED["timer"]),
        _row(data, "timer read (LFENCE pattern, floor)", f"TSC read + 2 LFENCE: {MODEL['tsc_read'] + 2 * MODEL['lfence']} cycles",
             (MODEL["tsc_read"] + 2 * MODEL["lfence"]) * c, "tsc-lfence", ghz),
        _row(data, "clock_gettime (vDSO)", f"TSC read + {MODEL['vdso_work']} cycles of arithmetic",
             (MODEL["tsc_read"] + MODEL["vdso_work"]) * c, "clock-gettime", ghz),
    ]


def _loop(data, ghz):
    return [_row(data, "loop iteration", "1 taken branch per cycle: 1 cycle", MODEL["taken_branch"] / ghz, "loop", ghz,
                 SEED["loop"])]


def _calls(data, ghz):
    rows = []
    for k in (0, 3, 6, 7):
        cycles = 3 * MODEL["taken_branch"] + k / MODEL["issue_width"] + (1 if k > 6 else 0)
        seed = {"predicted": SEED["call"]["predicted_cycles"][k] / SEED_GHZ,
                "measured": SEED["call"]["measured_cycles"][k] / SEED_GHZ}
        rows.append(_row(data, f"procedure call, {k} args",
                         f"call, ret, loop branch (3 cycles) + {k} moves at {MODEL['issue_width']}/cycle"
                         + (" + 1 stack store" if k > 6 else "") + f" = {cycles:g} cycles", cycles / ghz, f"call{k}", ghz,
                         seed))
    return rows


def _syscall(data, ghz):
    return [_row(data, "system call (getppid)", f"kernel entry+exit: {MODEL['kernel_entry']} cycles", MODEL["kernel_entry"] / ghz,
                 "getppid", ghz, SEED["syscall"])]


def _process(data, ghz):
    fork_cycles = 3 * MODEL["kernel_entry"] + 2 * MODEL["switch"]
    exec_cycles = fork_cycles + MODEL["exec_entries"] * MODEL["kernel_entry"]
    return [
        _row(data, "fork + exit", f"3 kernel entries + 2 switches = {fork_cycles} cycles; page-table copy not modelled",
             fork_cycles / ghz, "fork-exit", ghz),
        _row(data, "fork + exec", f"fork + exit + {MODEL['exec_entries']} kernel entries of exec and ld.so = {exec_cycles} cycles",
             exec_cycles / ghz, "fork-exec", ghz, SEED["fork-exec"]),
    ]


def _thread(data, ghz):
    cycles = 4 * MODEL["kernel_entry"] + 2 * MODEL["switch"]
    return [_row(data, "pthread_create + join", f"4 kernel entries + 2 switches = {cycles} cycles", cycles / ghz, "pthread",
                 ghz, SEED["pthread"])]


def _switch(data, ghz, kind):
    return [_row(data, f"context switch, {kind}es" if kind == "process" else "context switch, threads",
                 f"scheduler + state save/restore: {MODEL['switch']} cycles", MODEL["switch"] / ghz, f"{kind}-switch", ghz,
                 SEED[f"{kind}-switch"])]


def _latency(data, ghz, found):
    """One row per plateau of the latency curve: cycles per cache level, DRAM in ns."""
    rows = []
    for p in found:
        level = p["label"]
        cycles = {"L1": MODEL["l1"], "L2": MODEL["l2"], "L3": MODEL["l3"]}.get(level)
        predicted = cycles / ghz if cycles else (MODEL["dram_ns"] if level == "memory" else None)
        text = f"{cycles} cycles" if cycles else (f"DRAM {MODEL['dram_ns']:g} ns" if level == "memory" else "not modelled")
        rows.append({"operation": f"memory latency, {level}", "base": _base(ghz), "model": text, "predicted": predicted,
                     "measured": p["ns"], "unit": "ns", "seed_predicted": SEED["latency"]["predicted"],
                     "seed_measured": SEED["latency"]["measured"]})
    return rows


def _bandwidth(data, ghz, points):
    """Read and write bandwidth at the L1 point (bytes per cycle) and beyond the caches (Little's
    law over the misses in flight)."""
    bw = data.get("bandwidth")
    rows = []
    for level, i in points.items():
        for kind in ("read", "write"):
            if level == "L1":
                per_cycle = MODEL["load_bytes_per_cycle"] if kind == "read" else MODEL["store_bytes_per_cycle"]
                predicted, text = per_cycle * ghz, f"{per_cycle} B per cycle"
            else:
                predicted = MODEL["outstanding_misses"] * 64 / MODEL["dram_ns"] / (1 if kind == "read" else 2)
                text = (f"{MODEL['outstanding_misses']} misses in flight x 64 B / {MODEL['dram_ns']:g} ns"
                        + (" / 2 (write-allocate)" if kind == "write" else ""))
            seed = SEED["read-bw" if kind == "read" else "write-bw"] if level == "L1" else {}
            rows.append({"operation": f"{kind} bandwidth, {level} ({fmt.binary_size(bw['bytes'][i])})", "base": _base(ghz),
                         "model": text, "predicted": predicted, "measured": bw[kind]["median"][i], "unit": "GB/s",
                         "seed_predicted": seed.get("predicted"), "seed_measured": seed.get("measured")})
    return rows


def _page_faults(data, ghz):
    write = MODEL["kernel_entry"] + MODEL["page_alloc"] + 4096 / MODEL["store_bytes_per_cycle"]
    read = (MODEL["kernel_entry"] + 16 * MODEL["pte_per_page"]) / 16
    return [
        _row(data, "page fault, anonymous write", f"kernel entry + page allocation + zeroing 4 KiB at "
             f"{MODEL['store_bytes_per_cycle']} B/cycle = {write:g} cycles", write / ghz, "anon-write-fault", ghz),
        _row(data, "page fault, file read (per page)", f"(kernel entry + 16 pages x {MODEL['pte_per_page']} cycles) / 16 pages = "
             f"{read:g} cycles", read / ghz, "file-read-page", ghz, SEED["page-fault"]),
    ]


def predictions(data, caches, found):
    """The predicted-vs-measured rows in the seed's form: operation, base performance, model,
    predicted (ns or GB/s), measured, seed predicted, seed measured. ``found``: the labelled
    plateaus of the latency curve (levels.plateaus, levels.label_plateaus). An operation whose
    runs have no core clock is left out."""
    groups = (("timer", _timer), ("loop", _loop), ("call", _calls), ("syscall", _syscall), ("process", _process),
              ("thread", _thread), ("ctxsw-process", partial(_switch, kind="process")),
              ("ctxsw-thread", partial(_switch, kind="thread")), ("mem-latency", partial(_latency, found=found)),
              ("mem-bandwidth", partial(_bandwidth, points=bandwidth_points(data, caches))), ("page-fault", _page_faults))
    rows = []
    for measure, predict in groups:
        ghz = core_ghz(data, measure)
        if ghz:
            rows += predict(data, ghz)
    return rows
