"""
What programs/osbench.c prints: its eleven measurements, their variants and the column of each
value, in the benchmark definition's order. Plain names without imports, so that the experiment's
declaration (its columns) costs nothing to import.
"""

MEASURES = ("timer", "loop", "call", "syscall", "process", "thread", "ctxsw-process", "ctxsw-thread",
            "mem-latency", "mem-bandwidth", "page-fault")
# variants per measurement, main one first; every variant V has V-median-ns, ... V-n
VARIANTS = {
    "timer": ("tsc-lfence", "tsc-cpuid", "tsc-lfence-cost", "tsc-cpuid-cost", "clock-gettime", "clock"),
    "loop": ("loop", "add"),
    "call": tuple(f"call{k}" for k in range(8)),
    "syscall": ("getppid", "vdso"),
    "process": ("fork-exec", "fork-exit"),
    "thread": ("pthread",),
    "ctxsw-process": ("process-switch", "process-roundtrip", "process-pipe"),
    "ctxsw-thread": ("thread-switch", "thread-roundtrip", "thread-pipe"),
    "mem-latency": (),
    "mem-bandwidth": (),
    "page-fault": ("anon-write-page", "anon-write-fault", "anon-read-page", "anon-read-fault",
                   "file-read-page", "file-read-fault"),
}
STATS = ("median", "p10", "p90", "min")
INVOCATION = "result-file"  # key under which each run keeps the result file (invocation) it came from
MAX_POINTS = 48  # curve points the program prints at most (MAX_POINTS in osbench.c)
MAIN_KEYS = ("variant", "unit", "median", "p10", "p90", "min", "n")
INFO_KEYS = (
    "measure", "cpu", "allowed-cpus", "timer-source", "tsc-invariant", "rdtscp", "tsc-ghz",
    "tsc-calibration-spread-ppm", "core-ghz", "arch", "core-ghz-add", "core-ghz-imul", "core-ghz-eor", "core-ghz-xor",
    "core-ghz-perf", "cpufreq-min-ghz", "cpufreq-max-ghz", "migrations", "regions",
    "tsc-note", "tsc-cpuid-cost-calls",
    "exec-target", "llc-source", "llc-bytes", "max-capped", "budget-bytes", "thp-mode", "hugepages-requested", "anon-huge-kib",
    "lat-points", "lat-loads", "lat-n", "bw-points", "bw-kernel", "bw-n", "page-bytes", "pages", "file-fs",
    "anon-write-faults-per-page", "anon-read-faults-per-page", "file-read-faults-per-page",
)
# printed for the run's log only: their values hold blanks, which a result column cannot (tool_info.keyvalue)
NOTES = ("core-clock-chains", "core-clock-note", "core-ghz-perf-note", "exec-note")
LAT_KEYS = ("lat-bytes-{:02d}", "lat-median-ns-{:02d}", "lat-p10-ns-{:02d}", "lat-p90-ns-{:02d}")
BW_KEYS = ("bw-bytes-{:02d}", "bw-read-median-gbs-{:02d}", "bw-read-p10-gbs-{:02d}", "bw-read-p90-gbs-{:02d}",
           "bw-write-median-gbs-{:02d}", "bw-write-p10-gbs-{:02d}", "bw-write-p90-gbs-{:02d}")


def variant_keys(variant):
    return [f"{variant}-{s}-ns" for s in STATS] + [f"{variant}-n"]


#: every column identifier of benchmark-defs/os-microbench.xml, in its order (a test checks it)
COLUMNS = tuple(
    list(MAIN_KEYS) + list(INFO_KEYS)
    + [key for m in MEASURES for v in VARIANTS[m] for key in variant_keys(v)]
    + [k.format(i) for i in range(MAX_POINTS) for k in LAT_KEYS]
    + [k.format(i) for i in range(MAX_POINTS) for k in BW_KEYS]
)
