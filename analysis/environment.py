"""
The measuring machine's state, recorded next to every result set.

Each probe reads files under a root directory (normally `/`, in tests a recorded copy of another
machine's /proc and /sys), and says what it found, whether that is good for measuring, and why.
Anything unreadable is "unknown": a probe never guesses.
"""

import os
import platform
from dataclasses import asdict, dataclass
from pathlib import Path

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Probe:
    name: str
    value: str
    verdict: str  # "good", "noisy", "info" or "unknown"
    why: str


class Machine:
    """Reads a machine's /proc and /sys below `root`."""

    def __init__(self, root="/"):
        self.root = Path(root)

    def read(self, path):
        """Stripped text of a file below root, or None if it cannot be read."""
        try:
            return (self.root / path.lstrip("/")).read_text(errors="replace").strip()
        except OSError:
            return None

    def glob(self, pattern):
        return sorted((self.root).glob(pattern.lstrip("/")))

    def cpuinfo_field(self, field):
        text = self.read("/proc/cpuinfo") or ""
        for line in text.splitlines():
            key, _, value = line.partition(":")
            if key.strip() == field:
                return value.strip()
        return None

    def cpu_flags(self):
        return set((self.cpuinfo_field("flags") or "").split())

    def online_cpus(self):
        return self.read("/sys/devices/system/cpu/online")

    def per_cpu_values(self, relative):
        """Distinct values of /sys/devices/system/cpu/cpu*/<relative>, e.g. cpufreq/scaling_governor."""
        values = set()
        for cpu in self.glob("/sys/devices/system/cpu/cpu[0-9]*"):
            try:
                values.add((cpu / relative).read_text().strip())
            except OSError:
                pass
        return values


def _probe_cpu_model(m):
    model = m.cpuinfo_field("model name") or m.cpuinfo_field("Model") or UNKNOWN
    return Probe("CPU model", model, "info", "results hold only for this CPU")


def _probe_cores(m):
    online = m.online_cpus()
    count = _count_cpu_list(online) if online else None
    value = f"{count} ({online})" if count else UNKNOWN
    return Probe("online CPUs", value, "info", "background load saturates the machine at this count")


def _probe_kernel(m):
    release = m.read("/proc/sys/kernel/osrelease") or UNKNOWN
    return Probe("kernel", release, "info", "scheduler and timer behaviour depend on the kernel")


def _probe_virtualization(m):
    hypervisor = "hypervisor" in m.cpu_flags()
    vendor = m.read("/sys/class/dmi/id/sys_vendor")
    product = m.read("/sys/class/dmi/id/product_name")
    dmi = " ".join(v for v in (vendor, product) if v)
    if hypervisor:
        value = f"virtual machine ({dmi})" if dmi else "virtual machine"
        return Probe("virtualization", value, "noisy", "other guests share the host: absolute times drift; compare ratios from one run")
    if m.read("/proc/cpuinfo") is None:
        return Probe("virtualization", UNKNOWN, "unknown", "/proc/cpuinfo unreadable")
    return Probe("virtualization", f"bare metal ({dmi})" if dmi else "bare metal", "good", "no hypervisor flag in /proc/cpuinfo")


def _probe_smt(m):
    control = m.read("/sys/devices/system/cpu/smt/control")
    if control is None:
        return Probe("SMT", UNKNOWN, "unknown", "/sys/devices/system/cpu/smt/control unreadable")
    if control == "on":
        return Probe("SMT", control, "noisy", "sibling hardware threads share a core's execution units and caches")
    if control == "notsupported":
        return Probe("SMT", "not supported", "good", "no sibling threads share a core")
    return Probe("SMT", control, "good", "no sibling threads share a core")


def _probe_governor(m):
    governors = m.per_cpu_values("cpufreq/scaling_governor")
    if not governors:
        return Probe("frequency governor", "no cpufreq", "unknown", "the kernel exposes no frequency scaling here (common in VMs); the host decides")
    value = ", ".join(sorted(governors))
    good = governors == {"performance"}
    return Probe("frequency governor", value, "good" if good else "noisy",
                 "fixed at the highest frequency" if good else "the frequency follows the load, so run time does too")


def _probe_boost(m):
    no_turbo = m.read("/sys/devices/system/cpu/intel_pstate/no_turbo")
    if no_turbo is not None:
        on = no_turbo == "0"
        return Probe("turbo/boost", "on" if on else "off", "noisy" if on else "good",
                     "boost clocks depend on temperature and on how many cores are busy" if on else "boost disabled (intel_pstate)")
    boost = m.read("/sys/devices/system/cpu/cpufreq/boost")
    if boost is not None:
        on = boost == "1"
        return Probe("turbo/boost", "on" if on else "off", "noisy" if on else "good",
                     "boost clocks depend on temperature and on how many cores are busy" if on else "boost disabled (cpufreq/boost)")
    return Probe("turbo/boost", UNKNOWN, "unknown", "neither intel_pstate/no_turbo nor cpufreq/boost exists")


def _probe_aslr(m):
    value = m.read("/proc/sys/kernel/randomize_va_space")
    if value is None:
        return Probe("ASLR", UNKNOWN, "unknown", "/proc/sys/kernel/randomize_va_space unreadable")
    good = value == "0"
    return Probe("ASLR", value, "good" if good else "noisy",
                 "addresses are the same in every run" if good else "address layout changes per run, and with it cache and alignment effects")


def _probe_load(m):
    loadavg = m.read("/proc/loadavg")
    if loadavg is None:
        return Probe("load average", UNKNOWN, "unknown", "/proc/loadavg unreadable")
    fields = loadavg.split()
    one_minute, running = float(fields[0]), fields[3].split("/")[0]
    online = m.online_cpus()
    cpus = _count_cpu_list(online) if online else os.cpu_count() or 1
    busy = one_minute >= 0.5 * cpus
    return Probe("load average", f"{' '.join(fields[:3])} ({running} runnable)", "noisy" if busy else "good",
                 "other work competes for the CPUs" if busy else "the machine is mostly idle")


def _probe_frequency_range(m):
    lows = m.per_cpu_values("cpufreq/scaling_min_freq")
    highs = m.per_cpu_values("cpufreq/scaling_max_freq")
    if not lows or not highs:
        return Probe("frequency range", UNKNOWN, "unknown", "no cpufreq scaling_min_freq/scaling_max_freq")
    low, high = min(map(int, lows)), max(map(int, highs))
    fixed = len(lows | highs) == 1
    return Probe("frequency range", f"{low / 1e6:g}-{high / 1e6:g} GHz", "good" if fixed else "noisy",
                 "minimum = maximum: one clock for every run" if fixed else "the clock may move between these bounds")


def _probe_isolation(m):
    isolated = m.read("/sys/devices/system/cpu/isolated")
    nohz = m.read("/sys/devices/system/cpu/nohz_full")
    if isolated is None and nohz is None:
        return Probe("isolated CPUs", UNKNOWN, "unknown", "neither cpu/isolated nor cpu/nohz_full is readable")
    value = f"isolated: {isolated or 'none'}, nohz_full: {nohz or ('none' if nohz is not None else 'unknown')}"
    good = bool(isolated)
    return Probe("isolated CPUs", value, "good" if good else "info",
                 "benchmarks pinned there see no other tasks" if good else "every CPU also runs other tasks and the timer tick")


def _probe_thp(m):
    text = m.read("/sys/kernel/mm/transparent_hugepage/enabled")
    if text is None:
        return Probe("transparent huge pages", UNKNOWN, "unknown", "transparent_hugepage/enabled unreadable")
    mode = text[text.index("[") + 1:text.index("]")] if "[" in text else text
    return Probe("transparent huge pages", mode, "noisy" if mode == "always" else "good",
                 "khugepaged may merge pages during a run" if mode == "always" else "huge pages only where asked for")


def _probe_swap(m):
    meminfo = m.read("/proc/meminfo")
    vmstat = m.read("/proc/vmstat")
    if meminfo is None or vmstat is None:
        return Probe("swap", UNKNOWN, "unknown", "/proc/meminfo or /proc/vmstat unreadable")
    fields = dict(line.split(":", 1) for line in meminfo.splitlines() if ":" in line)
    total_kib = int(fields["SwapTotal"].split()[0])
    counters = dict(line.split() for line in vmstat.splitlines() if line.startswith("pswp"))
    pages = int(counters.get("pswpin", 0)) + int(counters.get("pswpout", 0))
    used = total_kib - int(fields["SwapFree"].split()[0])
    value = f"{total_kib // 1024} MiB, {used // 1024} MiB used, {pages} pages swapped since boot"
    return Probe("swap", value, "noisy" if pages else "good",
                 "pages went to swap: a run can stall on I/O" if pages else "nothing swapped since boot")


def _probe_perf_rate(m):
    rate = m.read("/proc/sys/kernel/perf_event_max_sample_rate")
    if rate is None:
        return Probe("perf sample rate", UNKNOWN, "unknown", "perf_event_max_sample_rate unreadable")
    return Probe("perf sample rate", f"{rate} Hz", "info",
                 "the kernel lowers it after slow perf interrupts, a sign of interrupt overhead (pyperf checks it)")


def _probe_irqbalance(m):
    proc = m.root / "proc"
    if not proc.is_dir():
        return Probe("IRQ balancing", UNKNOWN, "unknown", "/proc unreadable")
    running = any(m.read(f"/proc/{pid.name}/comm") == "irqbalance" for pid in proc.iterdir() if pid.name.isdigit())
    return Probe("IRQ balancing", "irqbalance running" if running else "no irqbalance", "noisy" if running else "good",
                 "interrupts move between CPUs during runs" if running else "interrupt affinity stays as set")


def _probe_clocksource(m):
    source = m.read("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    if source is None:
        return Probe("clock source", UNKNOWN, "unknown", "current_clocksource unreadable")
    good = source == "tsc"
    return Probe("clock source", source, "good" if good else "noisy",
                 "TSC: cheap, fine-grained time reads" if good else "slower time reads than the TSC, coarser in some VMs")


PROBES = {
    "CPU model": _probe_cpu_model,
    "online CPUs": _probe_cores,
    "kernel": _probe_kernel,
    "virtualization": _probe_virtualization,
    "SMT": _probe_smt,
    "frequency governor": _probe_governor,
    "turbo/boost": _probe_boost,
    "ASLR": _probe_aslr,
    "load average": _probe_load,
    "frequency range": _probe_frequency_range,
    "isolated CPUs": _probe_isolation,
    "transparent huge pages": _probe_thp,
    "swap": _probe_swap,
    "perf sample rate": _probe_perf_rate,
    "IRQ balancing": _probe_irqbalance,
    "clock source": _probe_clocksource,
}


def check(root="/"):
    """Run every probe; a probe that meets an odd file says unknown instead of raising."""
    machine = Machine(root)
    probes = []
    for name, probe in PROBES.items():
        try:
            probes.append(probe(machine))
        except (ValueError, IndexError, KeyError) as e:
            probes.append(Probe(name, UNKNOWN, "unknown", f"unparseable: {e}"))
    return probes


def snapshot(root="/"):
    """The probes as a JSON-ready dict, plus the Python that ran the analysis."""
    return {
        "probes": [asdict(p) for p in check(root)],
        "hostname": platform.node(),
        "python": platform.python_version(),
    }


def _count_cpu_list(text):
    """Number of CPUs in a kernel CPU list such as '0-3,8,10-11'."""
    count = 0
    for part in text.split(","):
        if "-" in part:
            low, high = part.split("-")
            count += int(high) - int(low) + 1
        elif part.strip():
            count += 1
    return count
