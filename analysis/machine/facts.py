"""
The measured machine's facts that a report needs, recorded into sweep.json when the sweep runs.

A report is often rebuilt later or elsewhere; it must state the measured machine's CPUs, caches,
tick and NUMA distances, never those of the host it is rebuilt on. So every section reads these
facts from the sweep, and `for_results` reads the live machine only when the results were made on
this very host and no sweep recorded them.
"""

import platform
from dataclasses import asdict, dataclass, field, replace

from analysis.machine import kernel, numa, topology
from analysis.machine.reader import Machine


@dataclass
class Facts:
    hostname: str = ""
    cpus: list = field(default_factory=list)  # topology.Cpu as dicts
    caches: dict = field(default_factory=dict)  # data-cache level -> bytes (CPU 0)
    config_hz: int = None
    config_hz_source: str = "unknown: not recorded"
    kernel_log: str = None  # kernel log lines about the TSC (the whole log is not kept)
    cpu_flags: list = field(default_factory=list)
    boot_time: int = None
    clocksource: str = None
    numa: dict = None  # {"nodes", "distance", "cpus"} from /sys, None where the machine has no node directory
    rapl: bool = False  # /sys/class/powercap has a RAPL zone
    origin: str = "recorded by the sweep"
    kernel_log_origin: str = ""  # where kernel_log came from when not from `origin` (another sweep of the same boot)

    def topology_cpus(self):
        return [topology.Cpu(id=c["id"], package=c["package"], core=c["core"], siblings=tuple(c["siblings"]),
                             caches=tuple(topology.Cache(**{**k, "shared_with": tuple(k["shared_with"])}) for k in c["caches"]))
                for c in self.cpus]

    def numa_hardware(self):
        if not self.numa:
            return None
        import numpy as np

        return numa.Hardware(nodes=list(self.numa["nodes"]), distance=np.array(self.numa["distance"], dtype=float),
                             cpus={int(k): v for k, v in self.numa["cpus"].items()}, size_mb={},
                             source=f"/sys of {self.hostname or 'the measured machine'} ({self.origin})")

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        known = {k: v for k, v in (data or {}).items() if k in cls.__dataclass_fields__}
        known["caches"] = {int(k): v for k, v in known.get("caches", {}).items()}  # JSON keys are strings
        return cls(**known)


_TSC_WORDS = ("TSC", "tsc")


def record(root="/", kernel_log_path="/dev/kmsg"):
    """The facts of the machine below `root` (the live one by default)."""
    machine = Machine(root)
    hz, hz_source = kernel.kernel_hz(root)
    log = kernel.read_kernel_log(kernel_log_path) if root == "/" else None
    hardware = numa.sysfs_hardware(root)
    powercap = machine.root / "sys" / "class" / "powercap"
    return Facts(
        hostname=platform.node() if root == "/" else (machine.read("/proc/sys/kernel/hostname") or ""),
        cpus=topology.snapshot(root),
        caches=topology.data_cache_sizes(root=root),
        config_hz=hz,
        config_hz_source=hz_source,
        kernel_log="\n".join(line for line in (log or "").splitlines() if any(w in line for w in _TSC_WORDS)) or None,
        cpu_flags=sorted(machine.cpu_flags()),
        boot_time=kernel.read_boot_time(root),
        clocksource=machine.read("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        numa=None if hardware is None else {"nodes": hardware.nodes, "distance": hardware.distance.tolist(),
                                             "cpus": {str(k): v for k, v in hardware.cpus.items()}},
        rapl=powercap.is_dir() and any(powercap.glob("*rapl*")),
        origin="recorded by the sweep",
    )


def with_kernel_log(facts, others):
    """`facts` with the kernel log's TSC lines that another sweep of the same machine and boot
    recorded, where its own sweep recorded none (/dev/kmsg read by one sweep and not by the next).
    `others`: [(experiment, Facts)]."""
    if facts.kernel_log:
        return facts
    for experiment, other in others:
        if other.kernel_log and (other.hostname, other.boot_time) == (facts.hostname, facts.boot_time):
            return replace(facts, kernel_log=other.kernel_log, kernel_log_origin=f"recorded by the {experiment} sweep")
    return facts


def _hosts(tables):
    return {info.get("hostname") for t in tables for info in t.systeminfo} - {None}


def made_here(tables):
    """Whether every result file was made on this host (BenchExec records the host name)."""
    return _hosts(tables) <= {platform.node()}


def for_results(tables):
    """Facts for result files no sweep recorded: this host's when every file was made here,
    else nothing but the host name, and the report says so."""
    hosts = _hosts(tables)
    if made_here(tables):
        facts = record()
        facts.origin = "read from this host, where the results were made (no sweep recorded them)"
        return facts
    return Facts(hostname=", ".join(sorted(hosts)),
                 origin=f"not recorded: the results come from {', '.join(sorted(hosts))} and no sweep recorded its facts")
