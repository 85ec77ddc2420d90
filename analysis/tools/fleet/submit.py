"""
`timekit fleet submit`: one exclusive SLURM batch job per node, each running the experiment's
sweep with `timekit run` into the fleet directory, which every node must see (shared filesystem).

BenchExec keeps measuring inside each node with its cgroups, as on one machine; SLURM only places
the work (`--exclusive --nodelist NODE`), so nothing else of the cluster's shares the node while
it measures. `--resume` submits again only the nodes whose sweep did not finish, each continuing
its own sweep (`timekit run --resume`); a node whose job failed or was cancelled never touches
the others' results.
"""

import dataclasses
import math
import shlex
import sys
from pathlib import Path

from lxml import etree

from analysis.core.argtypes import benchexec_seconds
from analysis.core.paths import REPO, RESULTS
from analysis.sweep.model import MANIFEST as SWEEP_MANIFEST
from analysis.sweep.model import Sweep, SweepError, now
from analysis.tools.fleet import slurm
from analysis.tools.fleet.manifest import MANIFEST, Fleet, FleetError, Job, kit_commit, node_dir, slurm_dir
from analysis.tools.fleet.status import node_states

MARGIN_SECONDS = 600  # set-up (build, lint), table-generator pages and the node's report
SLOWER_NODES = 2.0  # a node may be this much slower than the sweeps the estimate comes from

def _runs(experiment, preset, cpus, sockets):
    """Runs of the whole sweep on a node with `cpus` CPUs (core-heterogeneity: one step per core)
    and `sockets` sockets: an experiment that adapts its run definitions to the machine
    (memory-bandwidth: one per pair of NUMA nodes) runs sockets^2 of them there, not the
    committed definition's one."""
    steps = experiment.planner(preset, list(range(cpus)))
    rundefinitions = experiment.rundefinitions
    if experiment.adapt:
        rundefinitions = range(max(len(rundefinitions), sockets ** 2))
    return len(steps) * experiment.runs_per_invocation(preset.reps, preset.tasksets, rundefinitions)


def _recorded_seconds_per_run(experiment, roots):
    """The slowest seconds per run among finished sweeps of this experiment under `roots`."""
    rates = []
    for root in roots:
        for manifest in Path(root).rglob(SWEEP_MANIFEST):
            try:
                sweep = Sweep.load(manifest.parent)
            except SweepError:
                continue
            done = [s for s in sweep.steps if s.status == "done" and s.seconds > 0]
            if sweep.experiment != experiment.name or not done:
                continue
            runs = len(done) * experiment.runs_per_invocation(sweep.reps, sweep.tasksets, sweep.rundefinitions)
            rates.append(sum(s.seconds for s in done) / runs)
    return max(rates) if rates else None


def time_limit(experiment, preset, cpus, roots=(RESULTS,), sockets=1):
    """(minutes, how they were found) for one node's job: the preset's runs times the seconds per
    run of earlier sweeps of the experiment (x2 for slower nodes), else times the benchmark
    definition's hard time limit per run (an upper bound), plus a margin for set-up and report."""
    runs = _runs(experiment, preset, cpus, sockets)
    per_run = _recorded_seconds_per_run(experiment, [r for r in roots if Path(r).is_dir()])
    if per_run is not None:
        seconds, how = SLOWER_NODES * runs * per_run, f"{runs} runs x {per_run:.3g} s per run in earlier sweeps x {SLOWER_NODES:g}"
    else:
        root = etree.parse(str(experiment.benchmark), etree.XMLParser(load_dtd=False, no_network=True)).getroot()
        bound = benchexec_seconds(root.get("hardtimelimit")) or benchexec_seconds(root.get("timelimit")) or 900
        seconds, how = runs * bound, f"{runs} runs x {bound:g} s (the definition's time limit per run; no earlier sweep)"
    return math.ceil((seconds + MARGIN_SECONDS) / 60), f"{how} + {MARGIN_SECONDS // 60} min for set-up and report"


def job_script(fleet, directory, node, resume):
    """The batch script of one node's job: mark that it started (where the submitter can see it),
    then run the sweep in place of the shell, so SLURM's signals reach the runner."""
    out = slurm_dir(directory)
    command = [fleet.python, "-m", "analysis.cli", "run", fleet.experiment, "--preset", fleet.preset, *fleet.sized,
               "--output", str(node_dir(directory, node))]
    if resume:
        command.append("--resume")
    options = [f"--job-name=timekit-{fleet.experiment}-{node}", f"--nodelist={node}", "--nodes=1", "--exclusive",
               f"--time={fleet.time_limit_minutes}", f"--output={out}/{node}.%j.out", f"--chdir={fleet.kit_path}"]
    if fleet.partition:
        options.append(f"--partition={fleet.partition}")
    marker = shlex.quote(str(out / node)) + '."$SLURM_JOB_ID".started'
    return "\n".join([
        "#!/bin/bash",
        *(f"#SBATCH {o}" for o in options),
        f"# written by 'timekit fleet submit' for {directory}: {fleet.experiment} ({fleet.label}) on {node}",
        f'printf "%s %s %s %s\\n" "$SLURM_JOB_ID" "$SLURMD_NODENAME" "$(hostname)" "$(date -Ins)" > {marker} || exit 3',
        "exec " + " ".join(map(shlex.quote, command)),
        "",
    ])


def _submit_nodes(fleet, directory, nodes, resume_nodes, after=()):
    """Write each node's script and submit it; with fleet.serial each job waits for the one before."""
    slurm_dir(directory).mkdir(parents=True, exist_ok=True)
    previous, commit = list(after), kit_commit()
    for node in nodes:
        script = slurm_dir(directory) / f"{node}.sh"
        resume = node in resume_nodes
        script.write_text(job_script(fleet, directory, node, resume))
        job = slurm.submit(script, after=previous if fleet.serial else ())
        fleet.add_job(node, Job(id=job, submitted=now(), resume=resume, kit_commit=commit))
        fleet.save(directory)  # after every job: an error later still leaves the ids on record
        previous = [job]


def submit(experiment, preset_name, directory, *, nodes=None, partition=None, count=None, serial=False,
           minutes=None, sizes=None, out=sys.stderr):
    """Submit one job per node for a new fleet in `directory`; returns the Fleet. `sizes`: {'reps': N,
    'reruns': M} over the preset's, as `timekit run --reps --reruns` takes them."""
    directory = Path(directory).resolve()
    if preset_name not in experiment.presets:
        raise FleetError(f"unknown preset '{preset_name}'; {experiment.name} has: {', '.join(experiment.presets)}")
    if (directory / MANIFEST).exists():
        raise FleetError(f"{directory}: already holds a fleet; use --resume or another --output")
    found = slurm.node_cpus(nodes=nodes, partition=partition)
    if not nodes:
        found = {n: v for n, v in found.items() if slurm.usable(v.state)}
        if count:
            if count > len(found):
                raise FleetError(f"partition '{partition}' has {len(found)} usable node(s), not {count}")
            found = dict(list(found.items())[:count])
        if not found:
            raise FleetError(f"partition '{partition}' has no usable node (all down, drained or failing)")
    sizes = {k: v for k, v in (sizes or {}).items() if v}
    preset = dataclasses.replace(experiment.presets[preset_name], **sizes)
    estimate, how = time_limit(experiment, preset, max(n.cpus for n in found.values()),
                               sockets=max(n.sockets for n in found.values()))
    fleet = Fleet(experiment=experiment.name, preset=preset_name, nodes=list(found), created=now(),
                  kit_commit=kit_commit(), kit_path=str(REPO), python=sys.executable,
                  time_limit_minutes=minutes or estimate, time_estimate="--time" if minutes else how,
                  partition=partition or "", serial=serial, sizes=sizes)
    directory.mkdir(parents=True, exist_ok=True)
    fleet.save(directory)
    _submit_nodes(fleet, directory, fleet.nodes, resume_nodes=())
    print(f"fleet {directory}: {experiment.name} ({fleet.label}) on {len(fleet.nodes)} node(s), time limit "
          f"{fleet.time_limit_minutes} min ({fleet.time_estimate}); jobs "
          + ", ".join(f"{n} {fleet.last_job(n).id}" for n in fleet.nodes), file=out)
    return fleet


def resume(experiment, directory, out=sys.stderr):
    """Submit again the nodes whose sweep did not finish and whose job is not queued or running."""
    directory = Path(directory).resolve()
    fleet = Fleet.load(directory)
    if fleet.experiment != experiment.name:
        raise FleetError(f"{directory}: holds a fleet of '{fleet.experiment}', not '{experiment.name}'")
    states = node_states(fleet, directory)
    again = [s.node for s in states if s.state == "failed"]
    if not again:
        print(f"fleet {directory}: nothing to resume ("
              + ", ".join(f"{s.node} {s.state}" for s in states) + ")", file=out)
        return fleet
    # resumed nodes wait for the fleet's jobs still queued or running, when nodes share hardware
    busy = [s.job for s in states if s.state in ("pending", "running")]
    resume_nodes = {n for n in again if (node_dir(directory, n) / SWEEP_MANIFEST).exists()}
    _submit_nodes(fleet, directory, again, resume_nodes, after=busy[-1:])
    print(f"fleet {directory}: submitted again " + ", ".join(f"{n} (job {fleet.last_job(n).id})" for n in again),
          file=out)
    return fleet
