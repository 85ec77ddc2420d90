"""
`env tune` / `env restore`: set the knobs the talk and pyperf name for quiet measurements, and put
them back.

Each knob is a kernel file and the value that makes runs less noisy. `tune` writes the previous
values to a state file before it changes anything, changes only knobs that exist and are not
already set, and reports every change; `restore` writes the saved values back and deletes the
state file, so running it twice is harmless. Both work below a `root` so that tests can use a
recorded machine layout instead of this machine's /sys and /proc.
"""

import json
import os
from pathlib import Path

from analysis.core.errors import UserError
from analysis.core.paths import RESULTS
from analysis.machine.reader import Machine
from analysis.machine.settings import SETTINGS

STATE_FILE = RESULTS / "env-tune-state.json"


class TuneError(UserError):
    """Tuning cannot go ahead (one line for the user)."""


def _unsettable(machine, path, value):
    """Why `value` cannot be written to `path`, or None if it can."""
    current = machine.read(path)
    if current is None:
        return "unreadable"
    if path.endswith("smt/control") and current in ("notsupported", "forceoff", "notimplemented"):
        return f"SMT is {current}"
    if path.endswith("scaling_governor"):
        available = (machine.read(path.replace("scaling_governor", "scaling_available_governors")) or "").split()
        if available and value not in available:
            return f"governor '{value}' not offered ({' '.join(available)})"
    return None


def plan(root="/"):
    """[(setting, path, current, wanted)] to change, and [(setting, reason)] for knobs left alone."""
    machine = Machine(root)
    changes, left = [], []
    for setting, knob in ((s, k) for s in SETTINGS for k in s.knobs):
        paths = ["/" + str(p.relative_to(machine.root)) for pattern in knob.paths for p in machine.glob(pattern)]
        if not paths:
            left.append((setting, f"not on this machine: {knob.absent}"))
            continue
        for path in paths:
            reason = _unsettable(machine, path, knob.value)
            current = machine.read(path)
            if reason:
                left.append((setting, f"{path}: {reason}"))
            elif current == knob.value:
                left.append((setting, f"{path}: already {knob.value}"))
            else:
                changes.append((setting, path, current, knob.value))
    return changes, left


def _require_root(euid):
    if (os.geteuid() if euid is None else euid) != 0:
        raise TuneError("env tune/restore write to /sys and /proc and need root; run it with sudo")


def tune(root="/", state_file=STATE_FILE, euid=None, out=print):
    """Apply the plan; the first tune's previous values are kept in `state_file` until restore."""
    _require_root(euid)
    changes, left = plan(root)
    for knob, reason in left:
        out(f"skipped {knob.name}: {reason}")
    if not changes:
        raise TuneError("nothing to tune: every knob is missing, not settable or already set (see above)")
    state = _read_state(state_file)
    for _, path, current, _ in changes:
        state.setdefault(path, current)  # a second tune keeps the value from before the first
    _write_state(state_file, state)
    machine = Machine(root)
    for knob, path, current, wanted in changes:
        _write(machine, path, wanted)
        out(f"set {knob.name}: {path} {current} -> {wanted} ({knob.why})")
    out(f"previous values saved in {state_file}; undo with: timekit env restore")


def restore(root="/", state_file=STATE_FILE, euid=None, out=print):
    """Write the saved values back and delete the state file; without one, nothing to do."""
    _require_root(euid)
    state = _read_state(state_file)
    if not state:
        out(f"nothing to restore: no saved state in {state_file}")
        return
    machine = Machine(root)
    for path, value in state.items():
        _write(machine, path, value)
        out(f"restored {path} -> {value}")
    Path(state_file).unlink()


def _write(machine, path, value):
    try:
        (machine.root / path.lstrip("/")).write_text(value + "\n")
    except OSError as e:
        raise TuneError(f"cannot write {path}: {e.strerror}; earlier changes are saved, undo with: timekit env restore") from None


def _read_state(state_file):
    try:
        return json.loads(Path(state_file).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise TuneError(f"{state_file}: unreadable tune state ({e}); fix or delete it") from None


def _write_state(state_file, state):
    path = Path(state_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2))
    os.replace(tmp, path)
