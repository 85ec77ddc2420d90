"""
A throw-away SLURM cluster on this one host, for the fleet tests and benchmark: its own munged
(own key and socket), one slurmctld and N `slurmd -N nK`, every file inside one directory of the
checkout, every port picked free, and every daemon stopped by the PID it was started with (never
by name: other people's daemons on a shared machine stay untouched).

The nodes n1..nN all live on this host (NodeHostname = this host, one port each), track job
processes without cgroups (proctrack/linuxproc, task/none), and have no accounting database:
`sacct` is unavailable, as on many small clusters, and job completions go to a text file.
They share this machine's CPUs, so their measurements are not a fleet's.

    python -m tests.slurm up DIR [--nodes 2]     start; prints the SLURM_CONF to export
    python -m tests.slurm down DIR               stop what `up` started in DIR
"""

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol")


def missing_reason():
    """Why a simulated cluster cannot start here, or None."""
    if os.geteuid() != 0:
        return "the simulated SLURM cluster needs root (slurmd runs jobs as their user; munged and slurmd as root)"
    from shutil import which
    absent = [d for d in DAEMONS if not which(d) and not Path("/usr/sbin", d).exists()]
    if absent:
        return f"{', '.join(absent)} not installed (Debian packages slurm-wlm and munge)"
    return None


def _free_ports(count):
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(("", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _program(name):
    from shutil import which
    return which(name) or str(Path("/usr/sbin") / name)


class SimulatedCluster:
    """munged + slurmctld + `nodes` slurmd daemons with state, logs and sockets under `root`."""

    def __init__(self, root, nodes=2, cpus=None):
        self.root = Path(root).resolve()
        self.nodes = [f"n{i}" for i in range(1, nodes + 1)]
        self.cpus = cpus or os.cpu_count()
        self.host = socket.gethostname().split(".")[0]
        self.conf = self.root / "slurm.conf"
        self.socket = self.root / "munge" / "munge.socket"
        self.pids = {}  # name -> pid, as started

    @property
    def env(self):
        """Environment for SLURM's commands (sbatch, squeue, ...) to talk to this cluster."""
        return {"SLURM_CONF": str(self.conf)}

    # ---------------------------------------------------------------------------------------
    def write_config(self):
        for sub in ("munge", "state", "log", "spool"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
            os.chmod(self.root / sub, 0o700)
        ctld_port, *node_ports = _free_ports(1 + len(self.nodes))
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20 // len(self.nodes)
        lines = [
            "ClusterName=timekit-sim",
            f"SlurmctldHost={self.host}",
            f"SlurmctldPort={ctld_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={self.root / 'state'}",
            f"SlurmdSpoolDir={self.root / 'spool'}/%n",
            f"SlurmctldPidFile={self.root / 'slurmctld.pid'}",
            f"SlurmdPidFile={self.root}/slurmd.%n.pid",
            f"SlurmctldLogFile={self.root / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={self.root / 'log'}/slurmd.%n.log",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/linear",
            "SchedulerType=sched/builtin",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={self.root / 'log' / 'jobcomp.txt'}",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "ReturnToService=2",
            "KillWait=10",  # scancel: SIGTERM, then SIGKILL 10 s later (the runner's cleanup fits)
            "MinJobAge=600",  # finished jobs stay visible to squeue for the tests' duration
            "SlurmdTimeout=60",
            "InactiveLimit=0",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
        ]
        for node, port in zip(self.nodes, node_ports):
            lines.append(f"NodeName={node} NodeHostname={self.host} Port={port} CPUs={self.cpus} "
                         f"RealMemory={memory} State=UNKNOWN")
        lines.append(f"PartitionName=sim Nodes={','.join(self.nodes)} Default=YES MaxTime=INFINITE State=UP")
        self.conf.write_text("\n".join(lines) + "\n")
        for node in self.nodes:
            (self.root / "spool" / node).mkdir(parents=True, exist_ok=True)

    def _key(self):
        key = self.root / "munge" / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
        os.chmod(key, 0o400)
        return key

    def _daemon(self, name, argv, pid_file):
        """Start a daemon that forks itself into the background; its PID from its pid file."""
        log = self.root / "log" / f"{name}.start.log"
        with open(log, "w") as out:
            done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ, **self.env),
                                  stdin=subprocess.DEVNULL, timeout=60)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if pid_file.exists() and pid_file.read_text().strip():
                self.pids[name] = int(pid_file.read_text().split()[0])
                self._save_pids()
                return
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not start (exit {done.returncode}): {log.read_text().strip()[-500:]}")

    def _save_pids(self):
        (self.root / "pids").write_text("".join(f"{n} {p}\n" for n, p in self.pids.items()))

    def start(self, timeout=60):
        self.write_config()
        self._daemon("munged", [_program("munged"), "--force", f"--socket={self.socket}", f"--key-file={self._key()}",
                                f"--log-file={self.root / 'log' / 'munged.log'}",
                                f"--pid-file={self.root / 'munge' / 'munged.pid'}",
                                f"--seed-file={self.root / 'munge' / 'munged.seed'}"],
                     self.root / "munge" / "munged.pid")
        self._daemon("slurmctld", [_program("slurmctld"), "-f", str(self.conf), "-i"], self.root / "slurmctld.pid")
        for node in self.nodes:
            self._daemon(f"slurmd-{node}", [_program("slurmd"), "-f", str(self.conf), "-N", node],
                         self.root / f"slurmd.{node}.pid")
        self.wait_idle(timeout)
        return self

    def run(self, *argv, check=True):
        done = subprocess.run(argv, env=dict(os.environ, **self.env), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=60)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: {done.stdout.strip()}")
        return done.stdout

    def wait_idle(self, timeout=60):
        """Until every node is idle (slurmd registered with slurmctld)."""
        deadline, states = time.monotonic() + timeout, ""
        while time.monotonic() < deadline:
            states = self.run("sinfo", "-h", "-N", "-o", "%N %t", check=False)
            idle = {line.split()[0] for line in states.splitlines() if line.split()[1:] == ["idle"]}
            if idle >= set(self.nodes):
                return
            time.sleep(0.5)
        raise RuntimeError(f"nodes not idle after {timeout} s: {states.strip()}; logs in {self.root / 'log'}")

    def stop(self):
        """SIGTERM each daemon this object started (by PID), SIGKILL what is left after 15 s."""
        pids = dict(self.pids)
        if not pids and (self.root / "pids").exists():
            pids = {n: int(p) for n, p in (line.split() for line in (self.root / "pids").read_text().splitlines())}
        order = sorted(pids, key=lambda n: ("slurmd" not in n, n == "munged"))  # nodes, controller, munge
        for name in order:
            _signal(pids[name], signal.SIGTERM)
            deadline = time.monotonic() + 15
            while _alive(pids[name]) and time.monotonic() < deadline:
                time.sleep(0.1)
            _signal(pids[name], signal.SIGKILL)
        for pid in _step_daemons(self.conf):  # a job's slurmstepd may outlive its slurmd
            _signal(pid, signal.SIGKILL)
        self.pids = {}
        (self.root / "pids").unlink(missing_ok=True)

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()
        return False


def _step_daemons(conf):
    """PIDs of the slurmstepd processes our slurmds started: those whose environment names our
    slurm.conf (the slurmds pass it on), so another cluster's on this host are left alone."""
    mark = f"SLURM_CONF={conf}".encode()
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if proc.joinpath("comm").read_text().strip() == "slurmstepd" and mark in proc.joinpath("environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie child of ours counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def _signal(pid, signum):
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tests.slurm", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["up", "down"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--nodes", type=int, default=2)
    args = parser.parse_args(argv)
    cluster = SimulatedCluster(args.directory, args.nodes)
    if args.action == "down":
        cluster.stop()
        return 0
    reason = missing_reason()
    if reason:
        print(f"cannot start: {reason}", file=sys.stderr)
        return 2
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    print(f"export SLURM_CONF={cluster.conf}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
