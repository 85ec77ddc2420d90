"""
Where the kernel schedules the measured runs and a competitor: recorded by the runner for a step
with a niced competitor, read by the report to say whether nice could act at all.

CFS weighs nice only within a task group (cpu cgroup, autogroup). The runner starts the
competitor in benchexec's session and records here, for the report to check rather than assume,
sched_autogroup_enabled and the groups of the competitor and of a probe run started by runexec
(docs/verdicts.md, "Not testable here").
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from analysis.machine import guard

AUTOGROUP_SWITCH = Path("/proc/sys/kernel/sched_autogroup_enabled")
_BEGIN, _AUTOGROUP, _END = "timekit-probe-begin", "timekit-probe-autogroup", "timekit-probe-end"


def autogroup_enabled(switch=AUTOGROUP_SWITCH):
    """'1' or '0' as the kernel says, None where the kernel has no autogroup."""
    try:
        return switch.read_text().strip()
    except OSError:
        return None


def parse(cgroup_text, autogroup_text):
    """{'cpu_cgroup', 'cgroups', 'autogroup'} from the text of /proc/PID/cgroup and /proc/PID/autogroup:
    the path in the cgroup-v1 hierarchy holding the cpu controller, else the unified (v2) path."""
    cpu, unified = None, None
    for line in cgroup_text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3:
            continue
        if parts[1] == "":
            unified = parts[2]
        elif "cpu" in parts[1].split(","):
            cpu = parts[2]
    autogroup = autogroup_text.split()[0] if autogroup_text.strip() else None
    return {"cpu_cgroup": cpu if cpu is not None else unified, "cgroups": "v1" if cpu is not None else "v2",
            "autogroup": autogroup}


def of_process(pid):
    """Where process `pid` is scheduled (see `parse`), None when it has gone."""
    try:
        cgroup = Path(f"/proc/{pid}/cgroup").read_text()
    except OSError:
        return None
    try:
        autogroup = Path(f"/proc/{pid}/autogroup").read_text()
    except OSError:
        autogroup = ""
    return parse(cgroup, autogroup)


def of_a_run(directory, container=True):
    """Where a run of runexec, started as BenchExec starts its runs (from this session, with or
    without its container), is scheduled; None when the probe fails. `directory` must be visible
    to runexec (not /tmp); its output file is removed again. `container`: False, True (BenchExec's
    default container) or the container options the runs get, so that the probe sees what they see."""
    output = Path(directory) / "scheduling-probe.log"
    script = f"echo {_BEGIN}; cat /proc/self/cgroup; echo {_AUTOGROUP}; cat /proc/self/autogroup 2>/dev/null; echo; echo {_END}"
    command = [sys.executable, "-m", "benchexec.runexecutor", "--output", str(output)]
    command += (list(container) if isinstance(container, (list, tuple)) else []) if container else ["--no-container"]
    try:
        subprocess.run(guard.wrap(command + ["--", "/bin/sh", "-c", script]), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60, check=False)
        text = output.read_text()
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        output.unlink(missing_ok=True)
    lines = [line.strip() for line in text.splitlines()]  # runexec's header repeats the command: whole lines only
    if not {_BEGIN, _AUTOGROUP, _END} <= set(lines):
        return None
    begin, middle, end = lines.index(_BEGIN), lines.index(_AUTOGROUP), lines.index(_END)
    return parse("\n".join(lines[begin + 1:middle]), "\n".join(lines[middle + 1:end]))


def record(competitor_pids, directory, container=True):
    """What was in effect for a step with a competitor: the autogroup switch, the competitor's and
    a probe run's scheduling group."""
    return {"sched_autogroup_enabled": autogroup_enabled(),
            "competitor": of_process(competitor_pids[0]) if competitor_pids else None,
            "run": of_a_run(directory, container)}


def _group(place, autogroups_on):
    """A process's CFS task group: its cpu cgroup, and its autogroup where that applies (the root
    cgroup with autogroup on)."""
    in_autogroup = autogroups_on and place["cpu_cgroup"] == "/"
    return place["cpu_cgroup"], place["autogroup"] if in_autogroup else None


def describe(place):
    return f"cpu cgroup {place['cpu_cgroup']} ({place['cgroups']}), {place['autogroup'] or 'no autogroup'}"


def nice_can_act(recorded):
    """(True, False or None, why) for one recorded step: whether the competitor's nice weighs against
    the measured runs, i.e. both are tasks of one CFS group; None when the record cannot tell."""
    if not recorded:
        return None, ("this sweep did not record where the competitor and the runs were scheduled (sweeps before "
                      "the runner recorded it started the competitor in a session of its own)")
    competitor, run, switch = recorded.get("competitor"), recorded.get("run"), recorded.get("sched_autogroup_enabled")
    if not (competitor and run):
        read = [f"{who}'s: {describe(probe)}" for who, probe in (("the competitor", competitor), ("a run", run)) if probe]
        unread = [who for who, probe in (("the competitor's", competitor), ("a run's", run)) if not probe]
        return None, (f"{' and '.join(unread)} scheduling group could not be read (the probe recorded nothing)"
                      + (f"; read: {'; '.join(read)}" if read else ""))
    if "v2" in (competitor["cgroups"], run["cgroups"]):
        return None, (f"competitor: {describe(competitor)}; runs: {describe(run)}: under cgroups v2 a run's cgroup path "
                      "is seen through BenchExec's cgroup namespace and cannot be compared with the competitor's")
    setting = f"sched_autogroup_enabled = {switch if switch is not None else 'absent (no autogroup)'}"
    autogroups_on = switch == "1"
    same = _group(competitor, autogroups_on) == _group(run, autogroups_on)
    where = f"competitor: {describe(competitor)}; runs: {describe(run)}; {setting}"
    if same:
        return True, f"the competitor and the runs were tasks of one scheduling group ({where})"
    return False, (f"the competitor and the runs were in different scheduling groups ({where}): CFS weighs nice only "
                   "between tasks of one group, so nice 19 could not act against the runs")
