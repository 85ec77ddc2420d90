"""
Machines given to `timekit fleet report` by folder: sweeps recorded anywhere, by hand or by
`timekit demo`, with no fleet.json. Each DIR given is one machine: a sweep folder (sweep.json), or
a folder whose sub-folders are sweeps (a demo's results, one machine's recording). NAME=DIR names
the machine, and the same NAME on several DIRs makes them one machine (sweeps of one machine kept
in separate folders). Unnamed, a machine is called by the host name its sweeps recorded when no
other machine given has that name (two VMs are often both 'vm'), else by its folder's name.
"""

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from analysis.sweep.model import MANIFEST as SWEEP_MANIFEST
from analysis.sweep.model import Sweep, SweepError
from analysis.tools.fleet.manifest import MANIFEST, FleetError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Given:
    """One DIR of the command line, and the machine name given with it (None: find one)."""

    path: Path
    name: str = None


@dataclass
class Machine:
    name: str
    folders: list  # the DIRs given for it
    sweeps: list = field(default_factory=list)  # [(sweep directory, Sweep)] in the order found


def given(text):
    """A command-line DIR or NAME=DIR (an existing path with '=' in it stays a path)."""
    name, sep, path = str(text).partition("=")
    if sep and not Path(text).exists():
        if not _NAME.match(name) or not path:
            raise FleetError(f"'{text}': NAME=DIR needs a NAME of letters, digits, '.', '_' or '-' and a DIR")
        return Given(Path(path), name)
    return Given(Path(text))


def is_fleet(path):
    return (Path(path) / MANIFEST).exists()


def sweep_dirs(directory):
    """The sweep folders a machine DIR holds: itself, or its sub-folders that are sweeps."""
    directory = Path(directory)
    if (directory / SWEEP_MANIFEST).exists():
        return [directory]
    found = sorted(p for p in directory.iterdir() if (p / SWEEP_MANIFEST).exists()) if directory.is_dir() else []
    if not directory.exists():
        raise FleetError(f"{directory}: no such folder")
    if not found:
        raise FleetError(f"{directory}: neither a fleet ({MANIFEST}), nor a sweep ({SWEEP_MANIFEST}), "
                         "nor a folder whose sub-folders are sweeps")
    return found


def _load(directory):
    try:
        return Sweep.load(directory)
    except SweepError as e:
        raise FleetError(f"{directory}: not a readable sweep ({e})") from None


def _host(sweeps):
    for _, sweep in sweeps:
        host = sweep.machine.get("hostname") or sweep.environment.get("hostname")
        if host:
            return host
    return ""


def machines(givens, taken=()):
    """Machine per distinct NAME, and one per unnamed DIR; `taken`: names already in use (a fleet's
    nodes). Two machines that would have the same name are an error, never merged."""
    named, unnamed = {}, []
    for g in givens:
        if g.name:
            named.setdefault(g.name, Machine(g.name, [])).folders.append(g.path)
        else:
            unnamed.append(Machine("", [g.path]))
    for machine in [*named.values(), *unnamed]:
        machine.sweeps = [(d, _load(d)) for folder in machine.folders for d in sweep_dirs(folder)]
    hosts = Counter(_host(m.sweeps) for m in unnamed)
    for machine in unnamed:
        host = _host(machine.sweeps)
        unique = host and hosts[host] == 1 and host not in named and host not in taken
        machine.name = host if unique else Path(machine.folders[0]).resolve().name
    names = Counter([*taken, *(m.name for m in [*named.values(), *unnamed])])
    clash = sorted(n for n, k in names.items() if k > 1)
    if clash:
        raise FleetError(f"two machines would both be called '{clash[0]}'; name them: NAME=DIR")
    return [*named.values(), *unnamed]
