"""Reading a machine's /proc and /sys below a root directory: the live one, or a recorded copy of
another machine's in the tests. Anything unreadable is "unknown": nothing here guesses."""

import os
from pathlib import Path

UNKNOWN = "unknown"


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

    def require(self, path):
        """Like read, but a missing file makes the probe's value unknown."""
        text = self.read(path)
        if text is None:
            raise Unreadable(f"{path} unreadable")
        return text

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


class Unreadable(Exception):
    """What a probe needs cannot be read: its value is unknown."""


def each_process(name, proc="/proc"):
    """(pid, bytes of /proc/PID/NAME) of every process that still exists while it is read."""
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(f"{proc}/{entry}/{name}", "rb") as f:
                yield int(entry), f.read()
        except OSError:
            continue
