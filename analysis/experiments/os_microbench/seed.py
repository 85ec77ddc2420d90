"""
What seed 003 and the literature say about the os-microbench operations, in one place so the
published figures can be checked against their sources.

``SEED`` holds the figures printed in the seed (course report "Performance Measurement",
CSC-501: an Intel i7-4710HQ at 2.5 GHz, memory latency on an AMD A10-8700P), ``RANGES``
generous published orders of magnitude for modern x86-64 Linux with their ``SOURCES``
(lmbench, Paoloni, Agner Fog, the Intel SDM, Drepper, kernel sources; "kit" marks the kit's
own estimates), and ``MODEL`` the cycle costs behind "predicted".
"""

# ---------------------------------------------------------------------------------------------
# the seed's figures (course report CSC-501, i7-4710HQ 2.5 GHz, 0.4 ns per cycle; memory latency
# on an AMD A10-8700P 1.8 GHz): predicted and measured, ns unless named otherwise

SEED_GHZ = 2.5
SEED = {
    "timer": {"predicted": 2.0, "measured": 8.0, "note": "CPUID;RDTSC..RDTSCP;CPUID, 5 vs 23 cycles"},
    "loop": {"predicted": 3.6, "measured": 0.8, "note": "9 vs 2 cycles"},
    "call": {"predicted_cycles": [9, 10, 11, 12, 13, 14, 15, 16], "measured_cycles": [2, 2, 3, 3, 4, 5, 5, 6]},
    "syscall": {"predicted": 14.0, "measured": 42.0, "note": "getppid, 36 vs 107 cycles"},
    "fork-exec": {"predicted": 200e3, "measured": 174e3},
    "pthread": {"predicted": 2e3, "measured": 2e3},
    "process-switch": {"predicted": None, "measured": 67e3, "note": "predicted: 'difficult to measure exactly'"},
    "thread-switch": {"predicted": 1.34e3, "measured": 1.25e3},
    "latency": {"predicted": "5–50 ns", "measured": "5–40 ns", "edges": "2^18 and 2^22 bytes"},
    "read-bw": {"predicted": 71.0, "measured": 83.0, "note": "GB/s, 4 KB array"},
    "write-bw": {"predicted": 35.0, "measured": 55.0, "note": "GB/s, 4 KB array"},
    "page-fault": {"predicted": 63.0, "measured": 100.0, "note": "per page of a 5 MB file mapping"},
}

# ---------------------------------------------------------------------------------------------
# published ranges: generous orders of magnitude for modern x86-64 Linux, with their sources

SOURCES = {
    "lmbench": "L. McVoy, C. Staelin: lmbench: Portable Tools for Performance Analysis. USENIX ATC 1996; "
               "C. Staelin: lmbench: an extensible micro-benchmark suite. Softw. Pract. Exper. 35(11), 2005 "
               "(null call = getppid, lat_proc fork/exec, lat_ctx, lat_mem_rd, bw_mem, lat_pagefault).",
    "paoloni": "G. Paoloni: How to Benchmark Code Execution Times on Intel IA-32 and IA-64 Instruction Set "
               "Architectures. Intel white paper, 2010 (CPUID;RDTSC..RDTSCP;CPUID; overhead of tens of cycles).",
    "fog": "A. Fog: Instruction tables, and The microarchitecture of Intel, AMD and VIA CPUs (agner.org/optimize): "
           "RDTSC/RDTSCP take tens of cycles, ADD 1 cycle latency, at most one or two taken branches per cycle.",
    "sdm": "Intel 64 and IA-32 Architectures Software Developer's Manual, Vol. 3C: CPUID causes a VM exit "
           "unconditionally in a VMX guest (a round trip to the hypervisor, of the order of a microsecond).",
    "vdso": "Linux man page vdso(7): clock_gettime is answered in user space, without entering the kernel.",
    "gregg": "B. Gregg: KPTI/KAISER Meltdown Initial Performance Regressions, 2018: the Meltdown/Spectre "
             "mitigations raise the cost of every kernel entry.",
    "li": "C. Li, C. Ding, K. Shen: Quantifying the Cost of Context Switch. ExpCS 2007: pipe ping-pong of two "
          "processes on one CPU, direct cost a few microseconds.",
    "memory": "U. Drepper: What Every Programmer Should Know About Memory, 2007; Chips and Cheese: AMD's Zen 4, "
              "Part 2: Memory Subsystem, 2022: L1 ~4-5, L2 ~12-15, L3 ~40-50 cycles, DRAM ~70-120 ns; "
              "per-core bandwidth tens to hundreds of GB/s in L1, 10-40 GB/s from DRAM.",
    "faultaround": "Linux mm/memory.c, fault_around_bytes (default 64 KiB = 16 pages of 4 KiB): a read fault on "
                   "a file mapping maps the neighbouring page-cache pages too.",
    "kit": "kit estimate: no published figure for exactly this operation; an order-of-magnitude bound from "
           "the parts it consists of (see the operation's note).",
}

# key: (low, high, unit, sources, note). Keys are variants, or 'lat-L1'... / 'bw-...' for the curves.
RANGES = {
    "tsc-cpuid": (5, 60, "ns", ("paoloni", "fog"), "RDTSC to RDTSCP with nothing between"),
    "tsc-lfence": (5, 60, "ns", ("fog",), "LFENCE;RDTSCP;LFENCE twice, nothing between"),
    "tsc-cpuid-cost": (50, 5000, "ns", ("fog", "sdm"), "two CPUIDs and two TSC reads; in a VM each CPUID exits"),
    "tsc-lfence-cost": (10, 120, "ns", ("fog",), "two fenced RDTSCP"),
    "clock-gettime": (10, 100, "ns", ("vdso",), "vDSO with a TSC clock source"),
    "clock": (100, 2000, "ns", ("kit", "gregg"), "a system call that sums the process's CPU time"),
    "loop": (0.1, 1, "ns", ("fog",), "1-2 cycles at 1-5 GHz"),
    "add": (0.15, 1, "ns", ("fog",), "1 cycle at 1-5 GHz"),
    **{f"call{k}": (0.4, 5, "ns", ("fog",), "a few cycles: call, ret, argument moves") for k in range(8)},
    "getppid": (40, 1000, "ns", ("lmbench", "gregg"), "lmbench's null call; higher with mitigations and in VMs"),
    "vdso": (10, 100, "ns", ("vdso",), "no kernel entry"),
    "fork-exit": (20e3, 1000e3, "ns", ("lmbench",), "lat_proc fork; grows with the parent's page tables"),
    "fork-exec": (100e3, 3000e3, "ns", ("lmbench",), "lat_proc exec; a dynamically linked target"),
    "pthread": (3e3, 100e3, "ns", ("kit",), "clone, stack set-up, futex wake and wait, two switches"),
    "process-switch": (500, 20e3, "ns", ("li", "lmbench"), "lat_ctx 2 processes, no working set"),
    "thread-switch": (500, 20e3, "ns", ("li",), "as process, same address space"),
    "process-pipe": (200, 5000, "ns", ("kit",), "two system calls on a pipe"),
    "thread-pipe": (200, 5000, "ns", ("kit",), "two system calls on a pipe"),
    "lat-L1": (0.5, 2.5, "ns", ("memory",), "dependent load, L1 hit"),
    "lat-L2": (2, 8, "ns", ("memory",), "dependent load, L2 hit"),
    "lat-L3": (6, 40, "ns", ("memory",), "dependent load, L3 hit"),
    "lat-memory": (50, 250, "ns", ("memory",), "dependent load, DRAM (VMs at the upper end)"),
    "bw-read-L1": (30, 400, "GB/s", ("memory",), "one core, L1-resident buffer"),
    "bw-read-memory": (5, 60, "GB/s", ("memory",), "one core, buffer 4x the last-level cache"),
    "bw-write-L1": (15, 250, "GB/s", ("memory",), "one core, L1-resident buffer"),
    "bw-write-memory": (3, 50, "GB/s", ("memory",), "one core; write-allocate reads every line first"),
    "anon-write-fault": (300, 5000, "ns", ("kit",), "kernel entry, page allocation, zeroing 4 KiB"),
    "anon-read-fault": (200, 3000, "ns", ("kit",), "kernel entry, map the shared zero page"),
    "file-read-fault": (1000, 30e3, "ns", ("faultaround", "kit"), "one fault maps up to 16 cached pages"),
    "file-read-page": (50, 2000, "ns", ("faultaround", "kit"), "per page: a fault's cost spread over its pages"),
}

# ---------------------------------------------------------------------------------------------
# the model behind "predicted": cycles per instruction class and per kernel operation

MODEL = {
    "tsc_read": 35,          # cycles of one RDTSC or RDTSCP (fog: tens of cycles)
    "lfence": 5,             # cycles one LFENCE adds
    "vdso_work": 20,         # cycles of arithmetic in clock_gettime besides the TSC read
    "taken_branch": 1,       # at most one taken branch per cycle (call, ret, loop back)
    "issue_width": 4,        # independent simple instructions per cycle
    "kernel_entry": 250,     # SYSCALL + SYSRET and the entry/exit code with mitigations
    "pipe_op": 250,          # VFS and pipe work of one read or write of one byte
    "switch": 1000,          # scheduler pass, register and FPU state, address-space switch
    "exec_entries": 30,      # kernel entries of exec plus ld.so loading the C library
    "l1": 4, "l2": 14, "l3": 50,  # load-to-use latency in cycles per cache level
    "dram_ns": 100.0,        # DRAM latency in ns
    "load_bytes_per_cycle": 32,   # two 16-byte loads per cycle
    "store_bytes_per_cycle": 16,  # one 16-byte store per cycle
    "outstanding_misses": 20,     # cache misses a core keeps in flight (Little's law for DRAM bandwidth)
    "page_alloc": 500,       # cycles to allocate a page and install its page-table entry
    "pte_per_page": 100,     # cycles to map one more page-cache page in a fault-around
}
