"""
auto's choice of design, kept per pair of commands on this machine (results/designs.json), so that
the same pair gets the same design every time: a pilot near its limit could choose differently
from run to run, and a gate that changes its method is hard to read. The sentinel still checks
every co-located invocation; deleting the entry pilots the pair again. A choice holds for the
files the commands run and read as they were (analysis.ab.fingerprint): the same command strings
over other programs or inputs are piloted again, and the run says which file changed.
"""

import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from analysis.ab import fingerprint
from analysis.core import paths
from analysis.sweep.model import now, write_atomically

FILE = "designs.json"
LISTED = 3   # changed files a reason names; more are counted


@dataclass(frozen=True)
class Key:
    """The question (host, commands, how they run, threshold) and what its files hold: {word: sha256}."""

    question: str
    content: dict = field(default_factory=dict, hash=False)


def key(rundefinition, options, threshold):
    """What makes two auto runs the same question: host, both commands, how they run, the threshold,
    and the content of the programs and files the commands name."""
    commands = (rundefinition["base"], rundefinition["new"], rundefinition["prepare"])
    question = json.dumps([socket.gethostname(), *commands, options.shell, options.cwd or "", threshold])
    return Key(question, fingerprint.content(commands, Path(os.getcwd()) / (options.cwd or ".")))


def _path(root=None):
    return Path(root or paths.user_results().root) / FILE


def _load(path):
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _entry(wanted, root):
    entry = _load(_path(root)).get(wanted.question)
    return entry if isinstance(entry, dict) and entry.get("design") else None


def recall(wanted, root=None):
    """The recorded choice {"design", "why", "check", "date", "content"} of this key, or None (also
    where the commands' files hold other content than when it was chosen)."""
    entry = _entry(wanted, root)
    return entry if entry and entry.get("content") == wanted.content else None


def stale(wanted, root=None):
    """Why a kept choice of the same commands is not taken ("piloted again: ./a changed since …"), or ""."""
    entry = _entry(wanted, root)
    if not entry or entry.get("content") == wanted.content:
        return ""
    since = f"the kept choice of {entry.get('date', 'an earlier run')}"
    if not isinstance(entry.get("content"), dict):
        return f"piloted again: {since} did not record what the commands' files held"
    names = fingerprint.changed(entry["content"], wanted.content)
    more = f" and {len(names) - LISTED} more" if len(names) > LISTED else ""
    return f"piloted again: {', '.join(names[:LISTED])}{more} changed since {since}"


def remember(wanted, design, why, check, root=None):
    """Record a pilot's choice for later auto runs of the same pair, over the same files, here."""
    path = _path(root)
    data = _load(path)
    data[wanted.question] = {"design": design, "why": why, "check": check, "date": now(), "content": wanted.content}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps(data, indent=2))
    return path
