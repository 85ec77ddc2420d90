"""
Every machine setting that makes measurements noisy, described once (as pyperf's _system.py does):
how `env check` judges it, and, where the kit can change it, which kernel files `env tune` writes
and to what. A probe reads through a Machine (analysis.machine.environment) below a root, so tests
use recorded /proc and /sys trees of other machines.
"""

import os
from dataclasses import dataclass
from typing import Callable

from analysis.core.lists import parse_int_list
from analysis.machine.reader import UNKNOWN, Unreadable


@dataclass(frozen=True)
class Knob:
    """Kernel files `env tune` sets to the quiet value."""

    paths: tuple  # glob patterns below root; every match is set
    value: str  # what makes measurements quieter
    absent: str  # what it means when no path exists


@dataclass(frozen=True)
class Setting:
    name: str
    probe: Callable  # Machine -> (value, verdict, why)
    why: str = ""  # why `env tune` changes it
    knobs: tuple = ()  # empty: checked only


def _count_cpu_list(text):
    """Number of CPUs in a kernel CPU list such as '0-3,8,10-11'."""
    return len(parse_int_list(text))


def _judged(value, good, why_good, why_noisy):
    """(value, verdict, why) of a setting that is either good for measuring or noisy."""
    return (value, "good", why_good) if good else (value, "noisy", why_noisy)


def _probe_cpu_model(m):
    return m.cpuinfo_field("model name") or m.cpuinfo_field("Model") or UNKNOWN, "info", "results hold only for this CPU"


def _probe_cores(m):
    online = m.require("/sys/devices/system/cpu/online")
    return f"{_count_cpu_list(online)} ({online})", "info", "background load saturates the machine at this count"


def _probe_kernel(m):
    return m.require("/proc/sys/kernel/osrelease"), "info", "scheduler and timer behaviour depend on the kernel"


def _probe_virtualization(m):
    m.require("/proc/cpuinfo")
    dmi = " ".join(v for v in (m.read("/sys/class/dmi/id/sys_vendor"), m.read("/sys/class/dmi/id/product_name")) if v)
    virtual = "hypervisor" in m.cpu_flags()
    kind = "virtual machine" if virtual else "bare metal"
    return _judged(f"{kind} ({dmi})" if dmi else kind, not virtual, "no hypervisor flag in /proc/cpuinfo",
                   "other guests share the host: absolute times drift; compare ratios from one run")


def _probe_smt(m):
    control = m.require("/sys/devices/system/cpu/smt/control")
    return _judged("not supported" if control == "notsupported" else control, control != "on",
                   "no sibling threads share a core", "sibling hardware threads share a core's execution units and caches")


def _probe_governor(m):
    governors = m.per_cpu_values("cpufreq/scaling_governor")
    if not governors:
        return "no cpufreq", "unknown", "the kernel exposes no frequency scaling here (common in VMs); the host decides"
    return _judged(", ".join(sorted(governors)), governors == {"performance"},
                   "fixed at the highest frequency", "the frequency follows the load, so run time does too")


def _probe_boost(m):
    no_turbo = m.read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    boost = m.read("/sys/devices/system/cpu/cpufreq/boost")
    if no_turbo is None and boost is None:
        raise Unreadable("neither intel_pstate/no_turbo nor cpufreq/boost exists")
    on = no_turbo == "0" if no_turbo is not None else boost == "1"
    return _judged("on" if on else "off", not on, "boost disabled",
                   "boost clocks depend on temperature and on how many cores are busy")


def _probe_aslr(m):
    value = m.require("/proc/sys/kernel/randomize_va_space")
    return _judged(value, value == "0", "addresses are the same in every run",
                   "address layout changes per run, and with it cache and alignment effects")


def _probe_load(m):
    fields = m.require("/proc/loadavg").split()
    one_minute, running = float(fields[0]), fields[3].split("/")[0]
    online = m.online_cpus()
    cpus = _count_cpu_list(online) if online else os.cpu_count() or 1
    return _judged(f"{' '.join(fields[:3])} ({running} runnable)", one_minute < 0.5 * cpus,
                   "the machine is mostly idle", "other work competes for the CPUs")


def _probe_frequency_range(m):
    lows = m.per_cpu_values("cpufreq/scaling_min_freq")
    highs = m.per_cpu_values("cpufreq/scaling_max_freq")
    if not lows or not highs:
        raise Unreadable("no cpufreq scaling_min_freq/scaling_max_freq")
    low, high = min(map(int, lows)), max(map(int, highs))
    return _judged(f"{low / 1e6:g}-{high / 1e6:g} GHz", len(lows | highs) == 1,
                   "minimum = maximum: one clock for every run", "the clock may move between these bounds")


def _probe_isolation(m):
    isolated = m.read("/sys/devices/system/cpu/isolated")
    nohz = m.read("/sys/devices/system/cpu/nohz_full")
    if isolated is None and nohz is None:
        raise Unreadable("neither cpu/isolated nor cpu/nohz_full is readable")
    value = f"isolated: {isolated or 'none'}, nohz_full: {nohz or ('none' if nohz is not None else 'unknown')}"
    if isolated:
        return value, "good", "benchmarks pinned there see no other tasks"
    return value, "info", "every CPU also runs other tasks and the timer tick"


def _probe_thp(m):
    text = m.require("/sys/kernel/mm/transparent_hugepage/enabled")
    mode = text[text.index("[") + 1:text.index("]")] if "[" in text else text
    return _judged(mode, mode != "always", "huge pages only where asked for", "khugepaged may merge pages during a run")


def _probe_swap(m):
    fields = dict(line.split(":", 1) for line in m.require("/proc/meminfo").splitlines() if ":" in line)
    counters = dict(line.split() for line in m.require("/proc/vmstat").splitlines() if line.startswith("pswp"))
    total_kib = int(fields["SwapTotal"].split()[0])
    used = total_kib - int(fields["SwapFree"].split()[0])
    pages = int(counters.get("pswpin", 0)) + int(counters.get("pswpout", 0))
    return _judged(f"{total_kib // 1024} MiB, {used // 1024} MiB used, {pages} pages swapped since boot", not pages,
                   "nothing swapped since boot", "pages went to swap: a run can stall on I/O")


def _probe_perf_rate(m):
    rate = m.require("/proc/sys/kernel/perf_event_max_sample_rate")
    return f"{rate} Hz", "info", "the kernel lowers it after slow perf interrupts, a sign of interrupt overhead (pyperf checks it)"


def _probe_irqbalance(m):
    proc = m.root / "proc"
    if not proc.is_dir():
        raise Unreadable("/proc unreadable")
    running = any(m.read(f"/proc/{pid.name}/comm") == "irqbalance" for pid in proc.iterdir() if pid.name.isdigit())
    return _judged("irqbalance running" if running else "no irqbalance", not running,
                   "interrupt affinity stays as set", "interrupts move between CPUs during runs")


def _probe_clocksource(m):
    source = m.require("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    return _judged(source, source == "tsc", "TSC: cheap, fine-grained time reads",
                   "slower time reads than the TSC, coarser in some VMs")


SETTINGS = (
    Setting("CPU model", _probe_cpu_model),
    Setting("online CPUs", _probe_cores),
    Setting("kernel", _probe_kernel),
    Setting("virtualization", _probe_virtualization),
    Setting("SMT", _probe_smt, "sibling threads would share a core's execution units",
            (Knob(("/sys/devices/system/cpu/smt/control",), "off", "no SMT control file"),)),
    Setting("frequency governor", _probe_governor, "a fixed high clock instead of one that follows the load",
            (Knob(("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor",), "performance",
                  "no cpufreq (the hypervisor or firmware sets the clock)"),)),
    Setting("turbo/boost", _probe_boost, "boost clocks depend on temperature and on busy cores",
            (Knob(("/sys/devices/system/cpu/intel_pstate/no_turbo",), "1", "no intel_pstate"),
             Knob(("/sys/devices/system/cpu/cpufreq/boost",), "0", "no cpufreq boost switch"))),
    Setting("ASLR", _probe_aslr, "the same address layout in every run",
            (Knob(("/proc/sys/kernel/randomize_va_space",), "0", "no randomize_va_space"),)),
    Setting("load average", _probe_load),
    Setting("frequency range", _probe_frequency_range),
    Setting("isolated CPUs", _probe_isolation),
    Setting("transparent huge pages", _probe_thp),
    Setting("swap", _probe_swap),
    Setting("perf sample rate", _probe_perf_rate, "perf sampling interrupts stay rare (as pyperf tune does)",
            (Knob(("/proc/sys/kernel/perf_event_max_sample_rate",), "1", "no perf_event_max_sample_rate"),)),
    Setting("IRQ balancing", _probe_irqbalance),
    Setting("clock source", _probe_clocksource),
)


