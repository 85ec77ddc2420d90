"""
The fleet directory and its manifest, `fleet.json`: which experiment and preset ran on which
nodes, every job submitted for each node (the last one counts), and the kit that ran them.

    FLEET/fleet.json              this manifest
    FLEET/<node>/                 the node's sweep: `timekit run EXPERIMENT --output FLEET/<node>/`
    FLEET/slurm/<node>.sh         the batch script of the node's last job
    FLEET/slurm/<node>.<job>.out  SLURM's output of that job
    FLEET/slurm/<node>.<job>.started   written by the job on the node: the filesystem is shared
"""

import json
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

from analysis.core.errors import UserError
from analysis.core.paths import REPO
from analysis.sweep.model import MANIFEST as SWEEP_MANIFEST
from analysis.sweep.model import Sweep, SweepError, write_atomically

MANIFEST = "fleet.json"
KIND = "timekit fleet"


class FleetError(UserError):
    """A fleet cannot be submitted, resumed or read (one line for the user)."""


@dataclass
class Job:
    id: str
    submitted: str
    resume: bool = False  # ran `timekit run --resume` on the node's earlier sweep
    kit_commit: str = ""  # the kit's commit when this job was submitted


@dataclass
class Fleet:
    experiment: str
    preset: str
    nodes: list
    created: str
    kit_commit: str
    kit_path: str  # the kit must be installed at this path on every node
    python: str  # ... and so must this interpreter (the kit's venv)
    time_limit_minutes: int
    time_estimate: str  # where the time limit came from, in words
    partition: str = ""
    serial: bool = False  # each node's job waits for the one before (nodes that share hardware)
    sizes: dict = field(default_factory=dict)  # --reps and --reruns given over the preset's ({} none)
    jobs: dict = field(default_factory=dict)  # node -> [Job as dict], oldest first
    kind: str = KIND

    @property
    def sized(self):
        """The preset and the sizes given over it, as `timekit run` takes them: ['--reps', '1', ...]."""
        return [a for key, value in sorted(self.sizes.items()) for a in (f"--{key}", str(value))]

    @property
    def label(self):
        """What the lines say ran: 'quick', or 'quick --reps 1 --reruns 2'."""
        return " ".join([self.preset, *self.sized])

    def last_job(self, node):
        jobs = self.jobs.get(node) or []
        return Job(**jobs[-1]) if jobs else None

    def add_job(self, node, job):
        self.jobs.setdefault(node, []).append(asdict(job))

    def save(self, directory):
        write_atomically(Path(directory) / MANIFEST, json.dumps(asdict(self), indent=1) + "\n")

    @classmethod
    def load(cls, directory):
        path = Path(directory) / MANIFEST
        if not path.exists():
            raise FleetError(f"{directory}: no {MANIFEST}; not a fleet directory written by 'timekit fleet submit'")
        try:
            data = json.loads(path.read_text())
            if data.get("kind") != KIND:
                raise ValueError(f"kind is {data.get('kind')!r}")
            return cls(**data)
        except (OSError, ValueError, TypeError) as e:
            raise FleetError(f"{path}: not a readable fleet manifest ({e})") from None


def node_dir(directory, node):
    return Path(directory) / node


def slurm_dir(directory):
    return Path(directory) / "slurm"


def report_current(sweep_directory):
    """The node's report (report/report.json, written last of its files by the job's own `timekit
    run`) is newer than its sweep manifest: the node's work is done, whatever SLURM says yet."""
    report = Path(sweep_directory) / "report" / "report.json"
    manifest = Path(sweep_directory) / SWEEP_MANIFEST
    try:
        return report.stat().st_mtime >= manifest.stat().st_mtime
    except FileNotFoundError:
        return False


def node_sweep(directory, node):
    """The node's Sweep as its manifest says now, or None when it has none (yet)."""
    path = node_dir(directory, node)
    if not (path / SWEEP_MANIFEST).exists():
        return None
    try:
        return Sweep.load(path)
    except SweepError:
        return None  # being rewritten right now, or broken: the node did not finish


def sweep_finished(sweep):
    return sweep is not None and bool(sweep.steps) and all(s.status == "done" for s in sweep.steps)


def kit_commit(repo=REPO):
    """The kit's git commit, '+dirty' when the checkout has uncommitted changes, or 'unknown'."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
