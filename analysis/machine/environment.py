"""
The measuring machine's state, recorded next to every result set.

Each probe reads files under a root directory (normally `/`, in tests a recorded copy of another
machine's /proc and /sys), and says what it found, whether that is good for measuring, and why.
Anything unreadable is "unknown": a probe never guesses.
"""

import platform
from dataclasses import asdict, dataclass

from analysis.machine import settings
from analysis.machine.reader import UNKNOWN, Machine, Unreadable  # noqa: F401 (the probes' vocabulary)


@dataclass(frozen=True)
class Probe:
    name: str
    value: str
    verdict: str  # "good", "noisy", "info" or "unknown"
    why: str


def check(root="/"):
    """Check every setting (analysis.machine.settings); one that cannot read or parse its files
    says unknown instead of raising."""
    machine = Machine(root)
    probes = []
    for setting in settings.SETTINGS:
        name = setting.name
        try:
            probes.append(Probe(name, *setting.probe(machine)))
        except Unreadable as e:
            probes.append(Probe(name, UNKNOWN, "unknown", str(e)))
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



def advice(probes):
    """The check's last line, the same advice the README and the reports' opening give: what to
    gate on here and how, given the settings found noisy."""
    noisy = [p.name for p in probes if p.verdict == "noisy"]
    head = ("advice: gate on CPU time (BenchExec's cputime) and compare several invocations a side "
            "(timekit ab; timekit plan says how many)")
    if not noisy:
        return head + "; wall time is usable too: no setting above adds noise."
    return (head + f"; trust wall time less: {len(noisy)} setting(s) above add noise ({', '.join(noisy)}), "
            "timekit env tune fixes those it can.")
