"""
`timekit fleet status`: per node pending, running, finished or failed.

SLURM says whether a node's job is queued or running; once it has left the queue, the node's own
sweep manifest says whether the sweep finished (every step done), so the answer holds on clusters
without accounting (no `sacct`) and after SLURM has forgotten the job. The marker a job writes
first thing shows the fleet directory is shared: a job that ran but whose marker never appeared
here wrote its results where the submitter cannot see them.
"""

import sys
import time
from dataclasses import dataclass
from pathlib import Path

from analysis.tools.fleet import slurm
from analysis.tools.fleet.manifest import Fleet, node_dir, node_sweep, report_current, slurm_dir, sweep_finished

POLL_SECONDS = 2.0  # squeue (~10 ms of CPU) at this pace while waiting: it may share the measured machine
REPORT_POLL_SECONDS = 0.1  # a node report appearing (one stat per running node) is noticed within this


@dataclass
class NodeState:
    node: str
    job: str  # the node's last job id ('' when none was submitted)
    slurm: str  # SLURM's state of that job, '' when SLURM no longer knows it
    steps: str  # 'done/total' steps of the node's sweep, '-' when it has no manifest yet
    state: str  # pending, running, finished, failed
    note: str = ""


def node_states(fleet, directory):
    """NodeState of every node of the fleet, now."""
    directory = Path(directory)
    jobs = {n: fleet.last_job(n) for n in fleet.nodes}
    slurm_states = slurm.job_states([j.id for j in jobs.values() if j])
    found = []
    for node in fleet.nodes:
        job = jobs[node]
        state_of_job = slurm_states.get(job.id, "") if job else ""
        sweep = node_sweep(directory, node)
        steps = f"{sum(s.status == 'done' for s in sweep.steps)}/{len(sweep.steps)}" if sweep else "-"
        started = job is not None and (slurm_dir(directory) / f"{node}.{job.id}.started").exists()
        if state_of_job in slurm.PENDING:
            state, note = "pending", ""
        elif state_of_job in slurm.RUNNING and sweep_finished(sweep) and report_current(node_dir(directory, node)):
            state, note = "finished", "its job is ending"  # the report is the job's last act: no need to wait for SLURM
        elif state_of_job in slurm.RUNNING:
            state = "running"
            note = "" if started else "no start marker here yet: if none appears, the nodes do not share this directory"
        elif sweep_finished(sweep):
            state, note = "finished", ("" if state_of_job in ("", "COMPLETED") else f"job ended {state_of_job}")
        else:
            state = "failed"
            note = f"job {state_of_job or 'gone'}, sweep {'not started' if sweep is None else 'incomplete'}"
            if job is None:
                note = "no job submitted"
            elif not started:
                note += f"; its start marker never appeared in {slurm_dir(directory)}: is the directory shared with the node?"
        found.append(NodeState(node, job.id if job else "", state_of_job, steps, state, note))
    return found


def render(fleet, directory, states):
    lines = [f"fleet {directory}: {fleet.experiment} ({fleet.label}), {len(fleet.nodes)} node(s), "
             f"kit {fleet.kit_commit[:12]}"]
    width = max([4] + [len(s.node) for s in states])
    lines.append(f"{'node':{width}}  {'job':>8}  {'slurm':11}  {'steps':7}  state")
    for s in states:
        lines.append(f"{s.node:{width}}  {s.job:>8}  {s.slurm or '-':11}  {s.steps:7}  {s.state}"
                     + (f" ({s.note})" if s.note else ""))
    failed = [s.node for s in states if s.state == "failed"]
    if failed:
        lines.append(f"to run the failed nodes again: timekit fleet submit {fleet.experiment} --resume --output {directory}")
    return "\n".join(lines)


def status_command(directory, wait=False, out=None, poll=POLL_SECONDS):
    """Print the fleet's state (with `wait`: once no node is pending or running, reporting each
    node as it finishes). Exit code 0 when every node finished, 1 otherwise."""
    out = out or sys.stdout
    fleet = Fleet.load(directory)
    states = node_states(fleet, directory)
    seen = {s.node: s.state for s in states}
    checked = time.monotonic()
    while wait and any(s.state in ("pending", "running") for s in states):
        time.sleep(min(poll, REPORT_POLL_SECONDS))
        running = [s.node for s in states if s.state == "running"]
        if time.monotonic() - checked < poll and not any(report_current(node_dir(directory, n)) for n in running):
            continue
        states, checked = node_states(fleet, directory), time.monotonic()
        for s in states:
            if seen[s.node] != s.state:
                print(f"{s.node}: {s.state}" + (f" ({s.note})" if s.note else ""), file=out, flush=True)
                seen[s.node] = s.state
    print(render(fleet, directory, states), file=out)
    return 0 if all(s.state == "finished" for s in states) else 1
