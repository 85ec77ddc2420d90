"""
What the machine did besides the kit while a benchexec invocation ran.

A run that shares the machine with someone else's work is slower for a reason the experiment does
not vary. So every invocation records the CPU time spent outside the kit's process tree, the time
a hypervisor stole, the load average and the busiest outside process, and where it ran: per CPU,
each outside process's work on the CPU it ran on, and the hypervisor's steal; work no process can
be found for (processes that came and went between the readings) is `unplaced`. Kernel threads and
interrupts are left out: most of them serve the kit's own runs.

Once the CPUs of the invocation's runs are known (`on_cpus`), work on them and on the rest of the
machine are judged apart, as shares of those CPUs' time: work on the run's CPUs beyond OWN_LEVEL
always disturbs it; work elsewhere beyond LEVEL only where the design is not shown to stay right
beside it (`others_matter`). Unplaced work counts as work elsewhere: on the run's own CPUs it
shows as its CPU-bound runs waiting (the wall / CPU sign of analysis.sweep.disturbed). Without
the run's CPUs, outside work beyond LEVEL CPUs on average disturbs it (docs/verdicts.md,
"Invocations disturbed from outside").

Steal is shown, never judged here: the CPU time the kernel gives a run leaves it out, a shared
VM's steal can stay beyond a quarter of a CPU for minutes (0.27-0.55 CPUs through one test on the
project's CI VM), and what it does to wall time is judged
against the other invocations by the wall / CPU sign, so a steadily stolen machine still decides.
"""

import math
import os
import resource
import time
from dataclasses import asdict, dataclass, field, replace

from analysis.machine.reader import each_process

# outside work, in CPUs averaged over the invocation, beyond which it is disturbed: a quarter of
# one CPU slows a single-threaded run by up to a quarter where it lands on the run's core
LEVEL = 0.25
# outside work on the run's own CPUs, as a share of their time, beyond which it is disturbed: a
# twentieth of its core taken is a change of the size a gate looks for
OWN_LEVEL = 0.05
# where work beside the kit is meant (a test suite running sweeps side by side), this sets the level
LEVEL_VARIABLE = "TIMEKIT_OUTSIDE_LEVEL"
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Reading:
    at: float  # time.monotonic()
    busy: float  # CPU seconds every CPU spent on anything but idle, iowait and steal, since boot
    steal: float  # CPU seconds the hypervisor ran others on this VM's CPUs, since boot
    own: float  # CPU seconds of this process and its waited-for children
    processes: dict  # pid -> (name, start ticks, CPU seconds, the CPU it last ran on) outside this session
    steal_by_cpu: dict = field(default_factory=dict)  # CPU -> its steal seconds since boot
    kernel: float = 0.0  # CPU seconds of kernel threads since they started


@dataclass(frozen=True)
class Record:
    """What happened outside the kit during one invocation (kept in the manifest)."""

    seconds: float  # wall time of the invocation
    outside: float  # CPU seconds of work outside the kit's process tree
    steal: float  # CPU seconds stolen by the hypervisor
    load: float  # 1-minute load average at its end
    busiest: str = ""  # the outside process that used the most CPU, "name (pid N): S s"
    level: float | None = LEVEL  # the level in force when it ran; None: work beside the kit was meant
    by_cpu: dict = field(default_factory=dict)  # "CPU" -> CPU seconds of outside processes' work there
    steal_by_cpu: dict = field(default_factory=dict)  # "CPU" -> seconds the hypervisor stole from it
    unplaced: float = 0.0  # CPU seconds of outside work no process could be found for
    run_cpus: tuple = ()  # the CPUs the invocation's runs used (set once known: on_cpus)
    others_matter: bool = True  # whether work on the other CPUs disturbs its design

    @property
    def outside_cpus(self):
        """Outside work, in CPUs averaged over the invocation (steal apart)."""
        return self.outside / self.seconds if self.seconds > 0 else 0.0

    @property
    def judged(self):
        return self.level is not None

    @property
    def placed(self):
        """Whether work on the run's CPUs and elsewhere can be told apart."""
        return bool(self.run_cpus) and bool(self.by_cpu)

    @property
    def others(self):
        return tuple(sorted(int(c) for c in self.by_cpu if int(c) not in self.run_cpus))

    def share_on(self, cpus):
        """Outside work on `cpus` as a share of their time (0: none, 1: all of it)."""
        if not cpus or self.seconds <= 0:
            return 0.0
        return sum(self.by_cpu.get(str(c), 0.0) for c in cpus) / (self.seconds * len(cpus))

    @property
    def on_run(self):
        return self.share_on(self.run_cpus)

    @property
    def elsewhere(self):
        others = self.others
        if not others or self.seconds <= 0:
            return 0.0
        return self.share_on(others) + self.unplaced / (self.seconds * len(others))

    @property
    def disturbed(self):
        if not self.judged:
            return False
        if not self.placed:
            return self.outside_cpus > self.level
        return self.on_run > min(OWN_LEVEL, self.level) or (self.others_matter and self.elsewhere > self.level)

    def on_cpus(self, run_cpus, others_matter):
        """This record with the invocation's CPUs and its design's sensitivity to the others."""
        return replace(self, run_cpus=tuple(sorted(run_cpus)), others_matter=others_matter)

    def describe(self):
        if self.placed:
            cpus = ",".join(map(str, self.run_cpus))
            what = (f"{100 * self.on_run:.0f} % of its CPU {cpus} taken by outside work, "
                    f"{100 * self.elsewhere:.0f} % of the other CPUs")
        else:
            what = f"{self.outside_cpus:.2f} CPUs of outside work"
        if self.steal > 0.05 * self.seconds:
            what += f" ({self.steal / self.seconds:.2f} CPUs stolen by the hypervisor)"
        return what + (f", most by {self.busiest}" if self.busiest else "")

    def verdict(self):
        """What was done with the invocation, in words: set aside, or kept and why."""
        if not self.disturbed:
            if self.placed and self.elsewhere > self.level:
                return "kept: work on other CPUs leaves this design's answer as it is alone"
            return "kept"
        return "set aside"

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, data):
        if not isinstance(data, dict):
            return data
        return cls(**{**data, "run_cpus": tuple(data.get("run_cpus", ()))})


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
        lines = f.read().splitlines()
    # user nice system idle iowait irq softirq steal guest guest_nice (guest is inside user)
    fields = [int(v) for v in lines[0].split()[1:]]
    busy = sum(fields[0:3])
    steal = fields[7] if len(fields) > 7 else 0
    steal_by_cpu = {}
    for line in lines[1:]:
        name, *values = line.split()
        if name.startswith("cpu") and len(values) > 7:
            steal_by_cpu[int(name[3:])] = int(values[7]) / _TICK
    own = sum(getattr(resource.getrusage(who), part)
              for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for part in ("ru_utime", "ru_stime"))
    processes, kernel = _outside_processes(proc)
    return Reading(time.monotonic(), busy / _TICK, steal / _TICK, own, processes, steal_by_cpu, kernel)


def _outside_processes(proc):
    """(pid -> (name, start ticks, CPU seconds, last CPU) of every process in another session than
    the kit's (benchexec, its runs and the kit's busy loads share the kit's session), the CPU
    seconds of kernel threads)."""
    session, found, kernel = os.getsid(0), {}, 0.0
    for pid, text in each_process("stat", proc):
        if b")" not in text:  # gone while read
            continue
        name = text[text.index(b"(") + 1:text.rindex(b")")].decode(errors="replace")
        fields = text.rsplit(b")", 1)[1].split()
        # after the name: state ppid pgrp session ... utime(11) stime(12) ... starttime(19) ... processor(36)
        cpu = (int(fields[11]) + int(fields[12])) / _TICK
        if int(fields[3]) == 0:  # kernel threads
            kernel += cpu
            continue
        if int(fields[3]) == session:
            continue
        found[pid] = (name, int(fields[19]), cpu, int(fields[36]) if len(fields) > 36 else -1)
    return found, kernel


def between(before, after, load=None):
    """The Record of the time from `before` to `after`."""
    kernel = max(0.0, after.kernel - before.kernel)
    outside = max(0.0, (after.busy - before.busy) - (after.own - before.own) - kernel)
    by_cpu = _by_cpu(before, after)
    steal = {str(c): round(max(0.0, after.steal_by_cpu[c] - before.steal_by_cpu.get(c, 0.0)), 3) for c in after.steal_by_cpu}
    unplaced = max(0.0, outside - sum(by_cpu.values()))
    return Record(seconds=round(after.at - before.at, 3), outside=round(outside, 3),
                  steal=round(after.steal - before.steal, 3),
                  load=_load_average() if load is None else load, busiest=_busiest(before, after), level=level(),
                  by_cpu=by_cpu, steal_by_cpu=steal, unplaced=round(unplaced, 3))


def _used(before, after):
    """pid -> (name, CPU seconds in the interval, the CPU it ran on last) of outside processes."""
    used = {}
    for pid, (name, start, cpu, *where) in after.processes.items():   # (a reading may lack the CPU)
        earlier = before.processes.get(pid)
        used[pid] = (name, cpu - earlier[2] if earlier and earlier[1] == start else cpu, where[0] if where else -1)
    return used


def _by_cpu(before, after):
    """"CPU" -> outside CPU seconds there: each outside process's work on the CPU it ran on last (at
    most that CPU's time)."""
    cpus = sorted(after.steal_by_cpu)
    if not cpus:
        return {}
    placed = {c: 0.0 for c in cpus}
    for _, used, where in _used(before, after).values():
        if where in placed and used > 0:
            placed[where] += used
    seconds = max(0.0, after.at - before.at)
    placed = {c: min(used, seconds) for c, used in placed.items()}   # a process that moved ran on others too
    return {str(c): round(placed[c], 3) for c in cpus}


def _busiest(before, after):
    used = {pid: (name, cpu) for pid, (name, cpu, _) in _used(before, after).items()}
    if not used:
        return ""
    pid, (name, cpu) = max(used.items(), key=lambda item: item[1][1])
    return f"{name} (pid {pid}): {cpu:.1f} s" if cpu >= 0.05 * max(after.at - before.at, 1e-9) else ""


def _load_average():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])
