"""
auto's choice of design, kept per pair of commands on this machine (results/designs.json), so that
the same pair gets the same design every time: a pilot near its limit could choose differently
from run to run, and a gate that changes its method is hard to read. The sentinel still checks
every co-located invocation; deleting the entry pilots the pair again.
"""

import json
import socket
from pathlib import Path

from analysis.core import paths
from analysis.sweep.model import now, write_atomically

FILE = "designs.json"


def key(rundefinition, options, threshold):
    """What makes two auto runs the same question: host, both commands, how they run, the threshold."""
    return json.dumps([socket.gethostname(), rundefinition["base"], rundefinition["new"], rundefinition["prepare"],
                       options.shell, options.cwd or "", threshold])


def _path(root=None):
    return Path(root or paths.user_results().root) / FILE


def _load(path):
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def recall(wanted, root=None):
    """The recorded choice {"design", "why", "check", "date"} of this key, or None."""
    entry = _load(_path(root)).get(wanted)
    return entry if isinstance(entry, dict) and entry.get("design") else None


def remember(wanted, design, why, check, root=None):
    """Record a pilot's choice for later auto runs of the same pair here."""
    path = _path(root)
    data = _load(path)
    data[wanted] = {"design": design, "why": why, "check": check, "date": now()}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(data, indent=2))
    return path
