"""
What the machine did besides the kit while a benchexec invocation ran.

A run that shares the machine with someone else's work is slower for a reason the experiment does
not vary. So every invocation records the CPU time spent outside the kit's process tree, the time
a hypervisor stole, the load average and the busiest outside process; one whose outside work
averaged more than LEVEL CPUs is disturbed, and the analysis sets it aside (docs/verdicts.md,
"Invocations disturbed from outside").
"""

import math
import os
import resource
import time
from dataclasses import asdict, dataclass

from analysis.machine.reader import each_process

# outside work, in CPUs averaged over the invocation, beyond which it is disturbed: a quarter of
# one CPU slows a single-threaded run by up to a quarter where it lands on the run's core
LEVEL = 0.25
# where work beside the kit is meant (a test suite running sweeps side by side), this sets the level
LEVEL_VARIABLE = "TIMEKIT_OUTSIDE_LEVEL"
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Reading:
    at: float  # time.monotonic()
    busy: float  # CPU seconds every CPU spent on anything but idle, iowait and steal, since boot
    steal: float  # CPU seconds the hypervisor ran others on this VM's CPUs, since boot
    own: float  # CPU seconds of this process and its waited-for children
    processes: dict  # pid -> (name, start ticks, CPU seconds) of processes outside this session


@dataclass(frozen=True)
class Record:
    """What happened outside the kit during one invocation (kept in the manifest)."""

    seconds: float  # wall time of the invocation
    outside: float  # CPU seconds of work outside the kit's process tree
    steal: float  # CPU seconds stolen by the hypervisor
    load: float  # 1-minute load average at its end
    busiest: str = ""  # the outside process that used the most CPU, "name (pid N): S s"
    level: float | None = LEVEL  # the level in force when it ran; None: work beside the kit was meant

    @property
    def outside_cpus(self):
        """Outside work and steal, in CPUs averaged over the invocation."""
        return (self.outside + self.steal) / self.seconds if self.seconds > 0 else 0.0

    @property
    def judged(self):
        return self.level is not None

    @property
    def disturbed(self):
        return self.judged and self.outside_cpus > self.level

    def describe(self):
        what = f"{self.outside_cpus:.2f} CPUs of outside work"
        if self.steal > 0.05 * self.seconds:
            what += f" ({self.steal / self.seconds:.2f} stolen by the hypervisor)"
        return what + (f", most by {self.busiest}" if self.busiest else "")

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        return cls(**data) if isinstance(data, dict) else data


def level():
    """LEVEL, or the level the environment sets (LEVEL_VARIABLE); None where it says 'inf': then
    nothing is judged, by the record or by the runs' wall / CPU (analysis.sweep.disturbed)."""
    try:
        found = float(os.environ.get(LEVEL_VARIABLE, LEVEL))
    except ValueError:
        return LEVEL
    return found if math.isfinite(found) else None


def read(proc="/proc"):
    """A Reading of the machine and of the kit now."""
    with open(f"{proc}/stat") as f:
        fields = [int(v) for v in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
    busy = sum(fields[0:3]) + sum(fields[5:7])
    steal = fields[7] if len(fields) > 7 else 0
    own = sum(getattr(resource.getrusage(who), part)
              for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for part in ("ru_utime", "ru_stime"))
    return Reading(time.monotonic(), busy / _TICK, steal / _TICK, own, _outside_processes(proc))


def _outside_processes(proc):
    """pid -> (name, start ticks, CPU seconds) of every process in another session than the kit's
    (benchexec, its runs and the kit's busy loads share the kit's session)."""
    session, found = os.getsid(0), {}
    for pid, text in each_process("stat", proc):
        if b")" not in text:  # gone while read
            continue
        name = text[text.index(b"(") + 1:text.rindex(b")")].decode(errors="replace")
        fields = text.rsplit(b")", 1)[1].split()
        # after the name: state ppid pgrp session ... utime(11) stime(12) ... starttime(19)
        if int(fields[3]) == session or int(fields[3]) == 0:  # 0: kernel threads
            continue
        found[pid] = (name, int(fields[19]), (int(fields[11]) + int(fields[12])) / _TICK)
    return found


def between(before, after, load=None):
    """The Record of the time from `before` to `after`."""
    outside = max(0.0, (after.busy - before.busy) - (after.own - before.own))
    return Record(seconds=round(after.at - before.at, 3), outside=round(outside, 3),
                  steal=round(after.steal - before.steal, 3),
                  load=_load_average() if load is None else load, busiest=_busiest(before, after), level=level())


def _busiest(before, after):
    used = {}
    for pid, (name, start, cpu) in after.processes.items():
        earlier = before.processes.get(pid)
        used[pid] = (name, cpu - earlier[2] if earlier and earlier[1] == start else cpu)
    if not used:
        return ""
    pid, (name, cpu) = max(used.items(), key=lambda item: item[1][1])
    return f"{name} (pid {pid}): {cpu:.1f} s" if cpu >= 0.05 * max(after.at - before.at, 1e-9) else ""


def _load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])
