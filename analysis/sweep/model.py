"""
The sweep's model: what an experiment declares (presets, run definitions, how its steps are
planned, its report section) and what a sweep records (steps, conditions, environment, machine).

It sits below the experiments, which describe themselves with it, and below the runner, which
runs what they describe; it imports neither, so no layer reaches up.
"""

import datetime
import importlib
import importlib.util
import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from analysis.core.errors import UserError
from analysis.core.paths import PROGRAMS, REPO
from analysis.machine.disturbance import Record

MANIFEST = "sweep.json"


class SweepError(UserError):
    """A sweep cannot start or continue (one line for the user)."""


class Interrupted(Exception):
    """SIGINT, SIGTERM or SIGHUP arrived; raised so that every cleanup handler runs. `resume`: the
    command line that continues this run, set by the outermost command on the way out (an inner
    one, such as a bisect step's ab, sets its own first and is overwritten)."""

    def __init__(self, signal_name="SIGINT", resume=None):
        super().__init__(signal_name)
        self.signal_name, self.resume = signal_name, resume

    def continuing(self, resume):
        """This exception, naming `resume` as the way to continue (for `raise e.continuing(...)`)."""
        self.resume = resume
        return self


@dataclass(frozen=True)
class Preset:
    reps: int  # distinct runs per (task, run definition) in one benchexec invocation
    loads: tuple  # numbers of background busy processes, one benchexec invocation each
    reruns: int  # benchexec invocations per load level
    tasksets: tuple = ()  # benchexec --tasks selection; empty = all task sets


@dataclass
class Step:
    """One benchexec invocation and the conditions the runner sets around it."""

    load: int  # background busy processes
    rerun: int  # which repetition of the invocation (a round, for per-core sweeps)
    name: str  # benchexec --name, unique in the sweep
    condition: str = ""  # what else sets this step apart (e.g. 'core1', 'same-core'); '' = load and rerun only
    benchexec_args: list = field(default_factory=list)  # e.g. --allowedCores 1 --limitCores 1
    load_cpus: list = None  # CPUs the busy processes are pinned to (None: wherever the scheduler puts them)
    load_nice: int = 0  # niceness of the busy processes
    scheduling: dict = None  # with a niced competitor: its and a run's scheduling group (analysis.machine.scheduling)
    order: list = None  # run definitions in the order this invocation runs them (None: the definition's)
    chunk: int = 0  # ab: the chunk of the task set it runs (analysis.ab.task_chunks); 0: all of it
    status: str = "pending"  # pending, running (started; after a crash: cut short), done, failed
    result_files: list = field(default_factory=list)
    started: str = ""
    seconds: float = 0.0
    redone: int = 0  # times it ran again because an earlier run of it was cut short (analysis.sweep.steps_loop)
    disturbance: Record = None  # what ran beside it outside the kit (analysis.machine.disturbance)

    def __post_init__(self):
        self.disturbance = Record.from_dict(self.disturbance)

    @property
    def disturbed(self):
        """Done, but with outside work beyond disturbance.LEVEL: its results are set aside."""
        return self.status == "done" and self.disturbance is not None and self.disturbance.disturbed


def rotated(items, by):
    """`items` rotated left by `by`: rerun r starts with the (r-1)-th item, so over reruns every
    condition runs early and late, and drift is not taken for a difference between conditions."""
    items = list(items)
    by = by % len(items) if items else 0
    return items[by:] + items[:by]


def load_steps(preset, cpus):
    """Every load level in every rerun; reruns outermost, the levels' order rotated per rerun."""
    return [Step(load=load, rerun=rerun, name=f"load{load}-rerun{rerun}")
            for rerun in range(1, preset.reruns + 1) for load in rotated(preset.loads, rerun - 1)]


@dataclass(frozen=True)
class Experiment:
    """One experiment, declared once in its own folder under analysis/experiments/.

    Its benchmark definition, table config and task directory follow from its name, so adding an
    experiment edits no list anywhere: the folder, benchmark-defs/NAME.xml, table-configs/NAME.xml,
    programs/tasks/NAME/, a tool-info module and a program.
    """

    name: str  # as benchmark-defs/<name>.xml
    inputs: tuple
    rundefinitions: tuple
    columns: tuple = ()  # result columns the section reads
    section: Callable = None  # section(Context) -> SectionResult
    summary: str = ""  # one line for `timekit run --help`
    order: int = 0  # position in the report
    presets: dict = field(default_factory=dict)
    requires: dict = field(default_factory=dict)  # run definition ('*': every one) -> program it needs on PATH
    default_reps: int = 30  # what set-up writes, so plain `benchexec` yields this many
    planner: Callable = load_steps  # (preset, usable CPUs) -> steps
    one_table: bool = False  # one table-generator page per sweep (conditions side by side), not per step
    adapt: Callable = None  # () -> (this machine's run definitions, rewrite of the definition's XML text)
    conditions: str = "load levels"  # what --loads/--reruns vary, for help text
    # derived from the name unless given (tests point them elsewhere)
    benchmark: Path = None
    table: Path = None
    task_dir: Path = None

    def __post_init__(self):
        derived = {"benchmark": REPO / "benchmark-defs" / f"{self.name}.xml",
                   "table": REPO / "table-configs" / f"{self.name}.xml",
                   "task_dir": PROGRAMS / "tasks" / self.name / "reps"}
        for attribute, path in derived.items():
            if getattr(self, attribute) is None:
                object.__setattr__(self, attribute, path)

    @property
    def takes_loads(self):
        return self.planner is load_steps

    def claim_specs(self):
        """The ClaimSpecs (analysis.core.verdicts.ClaimSpec) of its findings, for `calibrate --claims`: the
        CALIBRATION of its folder's claims.py, imported only when asked (it needs scipy)."""
        module = f"analysis.experiments.{self.name.replace('-', '_')}.claims"
        if importlib.util.find_spec(module) is None:
            return ()
        return getattr(importlib.import_module(module), "CALIBRATION", ())

    def machine_rundefinitions(self):
        return self.adapt()[0] if self.adapt else self.rundefinitions

    def plan(self, preset):
        """The sweep's steps (benchexec invocations) in run order."""
        return self.planner(preset, sorted(os.sched_getaffinity(0)))

    def available_rundefinitions(self):
        """(run definitions whose programs exist, {skipped one: reason})."""
        rundefinitions = self.machine_rundefinitions()
        missing = {r: p for r in rundefinitions for key, p in self.requires.items() if key in (r, "*") and not shutil.which(p)}
        available = tuple(r for r in rundefinitions if r not in missing)
        return available, {r: f"'{p}' is not installed" for r, p in missing.items()}

    def runs_per_invocation(self, reps, tasksets, rundefinitions):
        """Runs of one benchexec invocation (a task set here holds one input's repetitions)."""
        return reps * (len(tasksets) or len(self.inputs)) * len(rundefinitions)


class StepsRecord:
    """A manifest whose dataclass has `steps`, kept as DIR/<file> (sweep.json, ab.json, bench.json):
    saved atomically by the step loop after every change, loaded by a resume. A subclass names
    its file, its one-line error class and what it is."""

    file, error, kind = MANIFEST, SweepError, "sweep"

    def save(self, directory):
        write_atomically(Path(directory) / self.file, json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, directory):
        path = Path(directory) / cls.file
        try:
            data = json.loads(path.read_text())
            data["steps"] = [Step(**s) for s in data["steps"]]
            return cls(**data)
        except (OSError, ValueError, TypeError, KeyError) as e:
            raise cls.error(f"{path}: not a readable {cls.kind} manifest ({e}); start anew without --resume") from None



@dataclass
class Sweep(StepsRecord):
    experiment: str
    preset: str
    reps: int
    loads: list
    reruns: int
    tasksets: list
    container: bool
    created: str
    steps: list
    rundefinitions: list = field(default_factory=list)
    skipped: dict = field(default_factory=dict)  # run definition -> why it is not run
    environment: dict = field(default_factory=dict)
    build: str = ""
    machine: dict = field(default_factory=dict)  # facts the report needs (analysis.machine.facts), as recorded
    sizes: dict = field(default_factory=dict)  # the buffers' planned sizes and memory limit (analysis.sweep.memory)
    sequential: dict = field(default_factory=dict)  # --until-decided: budget, looks, decisions (analysis.tools.plan.run_looks)

    @classmethod
    def plan(cls, experiment, preset_name, preset, container):
        steps = experiment.plan(preset)
        rundefinitions, skipped = experiment.available_rundefinitions()
        if not rundefinitions:
            raise SweepError(f"{experiment.name}: no run definition can run here ({'; '.join(skipped.values())})")
        if len(rundefinitions) > 1:  # inside one invocation they run one after another: rotate them too
            for step in steps:
                step.order = rotated(rundefinitions, step.rerun - 1)
        return cls(
            rundefinitions=list(rundefinitions),
            skipped=skipped,
            experiment=experiment.name,
            preset=preset_name,
            reps=preset.reps,
            loads=list(preset.loads),
            reruns=preset.reruns,
            tasksets=list(preset.tasksets),
            container=container,
            created=now(),
            steps=steps,
        )



def write_atomically(path, text):
    """Write `text` to a temporary file beside `path`, fsync it, rename it over `path` and fsync
    the directory: a kill or a crash at any moment leaves the old file or the new one, never half
    of one. A full disk raises OSError and leaves the old file as it was."""
    path = Path(path)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w") as f:
            data = text.encode()
            f.buffer.write(data[: len(data) // 2])
            if path.suffix == ".json":   # the crash benchmark's kills land in manifest writes
                _fault_point()
            f.buffer.write(data[len(data) // 2:])
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


_writes = 0


def _fault_point():
    """Fault injection for the crash tests: with TIMEKIT_KILL_IN_WRITE=N the process SIGKILLs
    itself halfway through its Nth atomic write, a moment no outside timer can hit."""
    global _writes
    wanted = os.environ.get("TIMEKIT_KILL_IN_WRITE")
    if wanted:
        _writes += 1
        if _writes == int(wanted):
            os.kill(os.getpid(), 9)


@dataclass
class Context:
    """What every report section gets: the result tables of its experiment, the sweep step each
    result file came from, the sweeps (directory, Sweep) and the measured machine as recorded."""

    tables: list
    conditions: dict = field(default_factory=dict)  # result file name -> Step
    sweeps: list = field(default_factory=list)
    environment: dict = field(default_factory=dict)  # the recorded env check (probes)
    machine: object = None  # analysis.machine.facts.Facts of the measured machine

    def cpu_count(self):
        """Online CPUs of the measured machine: the recorded env check, else the recorded topology."""
        for probe in self.environment.get("probes", []):
            if probe["name"] == "online CPUs" and probe["value"] != "unknown":
                return int(probe["value"].split()[0])
        return len(self.machine.cpus) if self.machine is not None and self.machine.cpus else None

    def sweep_notes(self):
        """One sentence per sweep on what ran, and one per skipped run definition."""
        notes = []
        for directory, s in self.sweeps:
            reruns = f"{s.reruns} rerun{'s' if s.reruns != 1 else ''}"
            conditions = (f"{reruns} of each of the load levels {', '.join(map(str, s.loads))}" if s.loads
                          else f"{reruns} of: {', '.join(dict.fromkeys(step.condition for step in s.steps))}")
            notes.append(f"Sweep {directory.name}: preset {s.preset}, {s.reps} runs per task in each of {len(s.steps)} "
                         f"benchexec invocations ({conditions}); run definitions run one after another inside each "
                         f"invocation. Build: {s.build.replace(chr(10), '; ')}.")
            for rundefinition, why in s.skipped.items():
                notes.append(f"Run definition {rundefinition} was skipped: {why}.")
        return notes


@dataclass
class SectionResult:
    """A section and the data for report.json (samples.csv holds every run of every result file,
    built in one place: analysis.sweep.run_rows)."""

    section: object
    data: dict


def now():
    return datetime.datetime.now().astimezone().isoformat(timespec="seconds")
