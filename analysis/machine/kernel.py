"""
What the running kernel says about time: its tick (CONFIG_HZ), its TSC frequency (kernel log) and
its boot time. Read below a root directory (normally `/`, in tests a recorded copy of another
machine) and recorded with every sweep (analysis.machine.facts), so a report never asks the host
it happens to be built on.
"""

import gzip
import os
import re
from pathlib import Path

from analysis.machine.reader import Machine


def kernel_hz(root="/"):
    """(CONFIG_HZ or None, where it came from or why not), from /boot/config-<release> or
    /proc/config.gz below root."""
    machine = Machine(root)
    release = machine.read("/proc/sys/kernel/osrelease")
    texts = []
    if release:
        text = machine.read(f"/boot/config-{release}")
        if text:
            texts.append((f"/boot/config-{release}", text))
    try:
        texts.append(("/proc/config.gz", gzip.decompress((Path(root) / "proc/config.gz").read_bytes()).decode(errors="replace")))
    except (OSError, EOFError, gzip.BadGzipFile):
        pass
    for source, text in texts:
        match = re.search(r"^CONFIG_HZ=(\d+)$", text, re.M)
        if match:
            nohz = "nohz_full" if re.search(r"^CONFIG_NO_HZ_FULL=y", text, re.M) else (
                "nohz idle" if re.search(r"^CONFIG_NO_HZ_IDLE=y", text, re.M) else "periodic")
            return int(match.group(1)), f"{source} ({nohz})"
    return None, "unknown: neither /boot/config-<release> nor /proc/config.gz is readable"


_LOG_TSC = (("kernel log, refined calibration", re.compile(r"Refined TSC clocksource calibration: ([0-9.]+) MHz")),
            ("kernel log, detected", re.compile(r"tsc: Detected ([0-9.]+) MHz processor")))


def kernel_log_tsc(text):
    """(MHz, which line) of the kernel's TSC frequency in a kernel log, (None, None) if absent;
    a refined calibration wins over the first estimate."""
    for label, pattern in _LOG_TSC:
        found = pattern.findall(text or "")
        if found:
            return float(found[-1]), label
    return None, None


def read_kernel_log(path="/dev/kmsg"):
    """The kernel log as text (needs root or kernel.dmesg_restrict=0), None if unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            except BrokenPipeError:  # a record was overwritten while reading: go on
                continue
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk.decode(errors="replace"))
    finally:
        os.close(fd)
    return "\n".join(chunks)


def read_boot_time(root="/"):
    """The machine's boot time (seconds since the epoch) from /proc/stat's btime, or None."""
    try:
        text = (Path(root) / "proc" / "stat").read_text()
    except OSError:
        return None
    match = re.search(r"^btime\s+(\d+)", text, re.M)
    return int(match.group(1)) if match else None
