"""bisect.json: every step's result as it finishes, written atomically, so that --resume reuses them.

The search is deterministic given its verdicts, so a resumed search takes the same path: it reuses
the recorded steps in order and measures from the first one missing. `running` names the commit
whose step was cut short (its measurement may resume in its own directory). `params` holds every
option of the bisect (GOOD, BAD, RUN, --build, --repo, --threshold, ...), so that `--resume --output
DIR` alone continues it; one resumed with other parameters is refused: that would mix verdicts of
two questions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

from analysis.core.errors import UserError
from analysis.sweep.model import now, write_atomically
from analysis.products.bisect.search import Step, Taken

NAME = "bisect.json"
VERSION = 1


class ManifestError(UserError):
    """No bisect to resume, one already there, or one recorded with other parameters."""


class Manifest:
    """The steps of one bisect, keyed by commit, in the order taken; `params` identifies the bisect."""

    def __init__(self, path, params: dict, steps=(), running=None, created=None):
        self.path, self.params = Path(path), dict(params)
        self.steps, self.running, self.created = list(steps), running, created or now()
        self.extra = {}   # what the caller keeps beside the steps (builds, the answer)

    @classmethod
    def open(cls, directory, params: dict, resume: bool = False) -> "Manifest":
        """A new manifest in DIRECTORY, or with resume the one there, checked against `params`."""
        path = Path(directory) / NAME
        if not resume:
            if path.exists():
                raise ManifestError(f"{path}: a bisect is recorded here already; continue it with --resume "
                                    "or give another --output")
            manifest = cls(path, params)
            manifest.save()
            return manifest
        data = _read(path)
        recorded = data.get("params", {})
        differ = [k for k in sorted(recorded) if k in params and params[k] != recorded[k]]
        if differ:
            raise ManifestError(f"{path}: recorded with other {', '.join(differ)}; resume with the same "
                                "arguments (or none but --resume --output) or give another --output")
        manifest = cls(path, {**recorded, **params}, data.get("steps", ()), data.get("running"), data.get("created"))
        manifest.extra = dict(data.get("extra", {}))
        return manifest

    @staticmethod
    def params_in(directory) -> dict:
        """The parameters recorded in DIRECTORY: what `--resume --output DIR` alone continues with."""
        return dict(_read(Path(directory) / NAME).get("params", {}))

    def step(self, commit: str) -> Optional[Step]:
        """The recorded step of `commit` (the last, where there are several), or None."""
        found = [s for s in self.steps if s["commit"] == commit]
        return Step.from_dict(found[-1]) if found else None

    def start(self, commit: str) -> None:
        self.running = commit
        self.save()

    def add(self, taken: Taken) -> None:
        self.steps.append({**taken.to_dict(), "finished": now()})
        self.running = None
        self.save()

    def to_dict(self) -> dict:
        return {"version": VERSION, "created": self.created, "params": self.params, "running": self.running,
                "steps": self.steps, "extra": self.extra}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, json.dumps(self.to_dict(), indent=1, allow_nan=False) + "\n")


def _read(path: Path) -> dict:
    if not path.exists():
        raise ManifestError(f"{path}: no bisect recorded here, nothing to resume (give the --output of "
                            "the bisect to continue)")
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ManifestError(f"{path}: unreadable bisect record ({e})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path}: unreadable bisect record (not a JSON object)")
    return data
