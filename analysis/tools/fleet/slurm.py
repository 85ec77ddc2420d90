"""
SLURM's client commands, as the fleet uses them: which nodes there are, submitting a batch job,
and what state a job is in. Nothing here measures: SLURM only places one exclusive job per node,
and BenchExec measures inside it as on one machine.

The commands read the cluster from slurm.conf (or $SLURM_CONF), as they would for the user.
`sacct` needs SLURM's accounting database; where there is none it fails and the fleet judges a
job that left the queue from the node's own sweep manifest instead.
"""

import os
import shutil
import subprocess
from typing import NamedTuple

from analysis.core.errors import UserError

PENDING = {"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD", "SPECIAL_EXIT"}
RUNNING = {"RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT", "RESIZING"}
# states a node must not be given work in (sinfo's short forms; a trailing * means not responding)
UNUSABLE = ("down", "drain", "drng", "fail", "maint", "unk", "futr", "inval", "npc", "plnd", "boot", "pow")


class Node(NamedTuple):
    cpus: int
    sockets: int  # the fleet's guess at its NUMA nodes, for memory-bandwidth's pairs
    state: str  # sinfo's short form


class SlurmError(UserError):
    """A SLURM command failed or is missing (one line for the user)."""


def _run(argv, check=True):
    if not shutil.which(argv[0]):
        raise SlurmError(f"'{argv[0]}' not found: the fleet needs SLURM's client commands "
                         "(Debian package slurm-client) and the cluster's slurm.conf")
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{argv[0]} did not answer within 120 s: is slurmctld reachable?") from None
    if check and done.returncode != 0:
        why = (done.stderr.strip() or done.stdout.strip() or f"exit code {done.returncode}").splitlines()[-1]
        raise SlurmError(f"{' '.join(argv[:3])}: {why}")
    return done


def expand_nodes(nodelist):
    """'n[1-3],gpu7' -> ['n1', 'n2', 'n3', 'gpu7'], by SLURM's own hostlist syntax."""
    names = _run(["scontrol", "show", "hostnames", nodelist]).stdout.split()
    if not names:
        raise SlurmError(f"--nodes '{nodelist}' names no node")
    return names


def node_cpus(nodes=None, partition=None):
    """{node: Node(CPUs, sockets, sinfo state)} of the given nodes or of a partition, in sinfo's order."""
    argv = ["sinfo", "-h", "-N", "-o", "%N %c %X %t"]
    if partition:
        argv += ["-p", partition]
    if nodes:
        argv += ["-n", ",".join(nodes)]
    found = {}
    for line in _run(argv).stdout.splitlines():
        name, cpus, sockets, state = line.split()
        found.setdefault(name, Node(int(cpus.rstrip("+")), int(sockets.rstrip("+")), state))
    missing = [n for n in nodes or () if n not in found]
    if missing:
        raise SlurmError(f"node {', '.join(missing)} is not in this cluster (sinfo knows {', '.join(found) or 'none'})")
    if partition and not found:
        raise SlurmError(f"partition '{partition}' has no nodes (or does not exist: sinfo -p {partition})")
    return found


def usable(state):
    return not state.rstrip("*~#!%$@^-").startswith(UNUSABLE) and not state.endswith("*")


def submit(script, after=()):
    """sbatch SCRIPT (its #SBATCH lines say where and how); returns the job id. `after`: job ids
    that must have ended first (any way), so nodes sharing hardware never measure together."""
    argv = ["sbatch", "--parsable"]
    if after:
        argv.append("--dependency=afterany:" + ":".join(after))
    output = _run(argv + [str(script)]).stdout.strip()
    job = output.split(";")[0]
    if not job.isdigit():
        raise SlurmError(f"sbatch {script}: unexpected answer '{output}'")
    return job


def job_states(job_ids):
    """{job id: state} for the jobs SLURM still knows: the queue (recently ended jobs included),
    then accounting for the rest where it exists. Jobs neither knows are missing from the result."""
    wanted = set(map(str, job_ids))
    if not wanted:
        return {}
    states = {}
    done = _run(["squeue", "-h", "--states=all", "-o", "%i %T", "-u", str(os.getuid())], check=False)
    if done.returncode == 0:
        for line in done.stdout.splitlines():
            job, state = line.split()[:2]
            if job in wanted:
                states[job] = state
    rest = sorted(wanted - set(states))
    if rest and shutil.which("sacct"):
        done = _run(["sacct", "-n", "-X", "-P", "-o", "JobID,State", "-j", ",".join(rest)], check=False)
        if done.returncode == 0:  # fails where the cluster keeps no accounting
            for line in done.stdout.splitlines():
                job, _, state = line.partition("|")
                if job in wanted and state:
                    states[job] = state.split()[0]  # "CANCELLED by 0" -> CANCELLED
    return states
