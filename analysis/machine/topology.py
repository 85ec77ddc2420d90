"""
CPU topology and caches as Linux describes them under /sys/devices/system/cpu.

Experiments need it to name what they measured: which core a run was pinned to, which CPUs are
SMT siblings of one core, which caches they share, and where the cache sizes lie on a latency
curve. Read through `reader.Machine`, so recorded layouts of other machines can be tested.
"""

from dataclasses import asdict, dataclass

from analysis.core.lists import parse_int_list
from analysis.machine.reader import Machine

_SIZE_SUFFIX = {"K": 1024, "M": 1024**2, "G": 1024**3}


parse_cpu_list = parse_int_list  # CPUs of a kernel CPU list such as '0-3,8,10-11'


def parse_size(text):
    """Bytes of a sysfs cache size such as '32K' or '1024K'."""
    text = text.strip()
    factor = _SIZE_SUFFIX.get(text[-1:].upper(), 1)
    return int(text.rstrip("KMGkmg")) * factor


@dataclass(frozen=True)
class Cache:
    level: int
    type: str  # Data, Instruction, Unified
    size: int  # bytes
    shared_with: tuple  # CPUs sharing this cache instance


@dataclass(frozen=True)
class Cpu:
    id: int
    package: int | None
    core: int | None
    siblings: tuple  # SMT threads of the same core, this CPU included
    caches: tuple


def cpus(root="/"):
    """Every online CPU with its package, core, SMT siblings and caches (None where unreadable)."""
    machine = Machine(root)
    online = parse_cpu_list(machine.read("/sys/devices/system/cpu/online") or "")
    return [_cpu(machine, n) for n in online]


def _cpu(machine, n):
    base = f"/sys/devices/system/cpu/cpu{n}"
    package, core = (machine.read(f"{base}/topology/{name}") for name in ("physical_package_id", "core_id"))
    siblings = parse_cpu_list(machine.read(f"{base}/topology/thread_siblings_list") or str(n))
    return Cpu(id=n, package=_int(package), core=_int(core), siblings=tuple(siblings), caches=tuple(caches(n, root=machine.root)))


def caches(cpu=0, root="/"):
    """The caches one CPU sees, smallest level first (data before instruction)."""
    machine = Machine(root)
    found = []
    for index in machine.glob(f"/sys/devices/system/cpu/cpu{cpu}/cache/index[0-9]*"):
        base = "/" + str(index.relative_to(machine.root))
        level, kind, size = (machine.read(f"{base}/{name}") for name in ("level", "type", "size"))
        if level is None or kind is None or size is None:
            continue
        shared = parse_cpu_list(machine.read(f"{base}/shared_cpu_list") or str(cpu))
        found.append(Cache(level=int(level), type=kind, size=parse_size(size), shared_with=tuple(shared)))
    return sorted(found, key=lambda c: (c.level, c.type != "Data", c.type))


def data_cache_sizes(cpu=0, root="/"):
    """{level: bytes} of the caches that hold data (Data or Unified), e.g. {1: 32768, 2: ..., 3: ...}."""
    return {c.level: c.size for c in caches(cpu, root) if c.type in ("Data", "Unified")}


def last_level_cache(cpu=0, root="/"):
    """Bytes of the largest data cache, or None where the machine does not say."""
    sizes = data_cache_sizes(cpu, root)
    return sizes[max(sizes)] if sizes else None


def snapshot(root="/"):
    """The topology as plain data, for a sweep's manifest."""
    return [asdict(c) for c in cpus(root)]


def _int(text):
    try:
        return int(text)
    except (TypeError, ValueError):
        return None
