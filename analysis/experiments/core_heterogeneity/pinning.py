"""
The core ranking file and pinning: `timekit cores rank RESULTS` and `timekit cores run -k K -- COMMAND`.

Ranking the cores takes a long measurement and pinning a command must not, so `rank_command`
saves ranking.rank() as JSON and `pin_command` reads it back. A ranking is trusted only for
the host and boot it was measured in: pinning refuses one from another host or from before the
last boot rather than pin to cores that may no longer be the fastest.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from analysis.core.paths import RESULTS
from analysis.experiments.core_heterogeneity.ranking import rank
from analysis.experiments.core_heterogeneity.samples import WARMUPS, CoresError, load
from analysis.experiments.core_heterogeneity.similarity import ALPHA
from analysis.machine.kernel import read_boot_time
from analysis.core.report import jsonable

RANKING = RESULTS / "cores-ranking.json"
FLEET_KIND = "timekit fleet core ranking"  # one ranking per node: a fleet's golden sample (analysis.tools.fleet)


def save_ranking(ranking, path=RANKING):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(jsonable(ranking), indent=1) + "\n")
    tmp.replace(path)
    return path


def load_ranking(path=RANKING):
    path = Path(path)
    if not path.exists():
        raise CoresError(f"no core ranking at {path}; make one with 'timekit cores rank RESULTS' first")
    try:
        ranking = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise CoresError(f"{path}: not a readable core ranking ({e}); make a new one with 'timekit cores rank RESULTS'") from None
    if isinstance(ranking, dict) and ranking.get("kind") == FLEET_KIND:
        ranking = _this_node(ranking, path)
    if not isinstance(ranking, dict) or ranking.get("kind") != "timekit core ranking" or not ranking.get("workloads"):
        raise CoresError(f"{path}: not a core ranking written by 'timekit cores rank'")
    return ranking


def _this_node(fleet, path):
    """This node's ranking in a fleet's golden sample: by SLURM's node name inside a job, else by host."""
    nodes = fleet.get("nodes") or {}
    name = os.environ.get("SLURMD_NODENAME")
    ranking = nodes.get(name) if name else next((r for r in nodes.values() if r.get("host") == platform.node()), None)
    if not isinstance(ranking, dict):
        raise CoresError(f"{path}: none of the fleet's golden cores is on this node ({name or platform.node()}); "
                         f"they are on {', '.join(nodes) or 'no node'}")
    return ranking


def _when(epoch):
    return datetime.datetime.fromtimestamp(epoch).astimezone().isoformat(timespec="seconds")


def pin_command(k, ranking_path, command, workload=None, *, boot_time=None):
    """argv that runs `command` on the `k` fastest cores of the ranking at `ranking_path`
    (of `workload`, default the ranking's pin_workload: the cache-stress microbenchmark, which
    the paper's golden-run used). Raises CoresError when there is no ranking, when it predates
    the machine's last boot (or was made on another host), or when k or the cores do not fit.
    """
    command = list(command)
    if not command:
        raise CoresError("no command given; usage: timekit cores run -k K -- COMMAND [ARGS...]")
    ranking = load_ranking(ranking_path)
    booted = read_boot_time() if boot_time is None else boot_time
    created = ranking.get("created_epoch")
    measured = ranking.get("measured_from")
    if booted is not None and (not isinstance(created, (int, float)) or created < booted
                               or (isinstance(measured, (int, float)) and measured < booted)):
        when = _when(measured if isinstance(measured, (int, float)) and measured < booted else created or 0)
        raise CoresError(f"core ranking {ranking_path} was measured {when}, before this machine's boot at "
                         f"{_when(booted)}; measure and rank again ('timekit cores rank RESULTS')")
    if ranking.get("host") and ranking["host"] != platform.node():
        raise CoresError(f"core ranking {ranking_path} was made on host {ranking['host']}, not on {platform.node()}; "
                         "rank this machine's cores first")
    workload = workload or ranking.get("pin_workload")
    if workload not in ranking["workloads"]:
        raise CoresError(f"core ranking {ranking_path} has no workload '{workload}' "
                         f"(it has {', '.join(ranking['workloads'])})")
    order = [int(c) for c in ranking["workloads"][workload]["order"]]
    if not isinstance(k, int) or not 1 <= k <= len(order):
        raise CoresError(f"-k must be between 1 and {len(order)} (the ranked cores of {workload}), got {k}")
    chosen = order[:k]
    allowed = os.sched_getaffinity(0)
    missing = [c for c in chosen if c not in allowed]
    if missing:
        raise CoresError(f"CPU {', '.join(map(str, missing))} of the ranking is not available to this process "
                         f"(allowed: {', '.join(map(str, sorted(allowed)))})")
    cpu_list = ",".join(map(str, chosen))
    taskset = shutil.which("taskset")
    if taskset:
        return [taskset, "--cpu-list", cpu_list, *command]
    launcher = "import os, sys; os.sched_setaffinity(0, {int(c) for c in sys.argv[1].split(',')}); os.execvp(sys.argv[2], sys.argv[2:])"
    return [sys.executable, "-c", launcher, cpu_list, *command]


def _measured_from(tables):
    """Epoch of the earliest run set's start, from the result files."""
    starts = []
    for t in tables:
        text = t.attributes.get("starttime")
        if text:
            try:
                starts.append(datetime.datetime.fromisoformat(text).timestamp())
            except ValueError:
                pass
    return min(starts) if starts else None


def rank_command(paths, out=None, warmups=WARMUPS, stdout=None):
    """`timekit cores rank RESULTS`: rank the cores from result files/directories, write the JSON
    (default results/cores-ranking.json) and print the order; returns the exit code."""
    stdout = stdout or sys.stdout
    if not paths:
        raise CoresError("no result files given; usage: timekit cores rank RESULTS...")
    samples, tables = load(paths, warmups)
    measured = _measured_from(tables)
    ranking = rank(samples, sources=[t.path for t in tables], measured_from=measured)
    path = save_ranking(ranking, out or RANKING)
    for workload, entry in ranking["workloads"].items():
        steps = [str(entry["order"][0])]
        for pair in entry["adjacent"]:
            sign = "<" if pair["significant"] else "~"
            steps.append(f"{sign} {pair['slower']} (+{100 * (pair['ratio'] - 1):.1f} %)")
        n = min(c["n"] for c in entry["cores"])
        print(f"{workload}: {' '.join(steps)}   (fastest first; '<' significant, Welch t, Holm, alpha {ALPHA}; n >= {n} per core)",
              file=stdout)
    booted = read_boot_time()
    if measured is not None and booted is not None and measured < booted:
        print(f"warning: these results predate the last boot ({_when(booted)}); 'timekit cores run' will refuse them",
              file=stdout)
    print(f"ranking written to {path}", file=stdout)
    return 0


def run_command(k, command, ranking_path=None, workload=None, stderr=None):
    """`timekit cores run -k K -- COMMAND`: run COMMAND on the K fastest cores of the last
    ranking; returns the command's exit code."""
    argv = pin_command(k, ranking_path or RANKING, command, workload)
    cpus = argv[2] if argv[1] == "--cpu-list" else argv[3]
    print(f"timekit cores: running on CPU {cpus}", file=stderr or sys.stderr, flush=True)
    try:
        return subprocess.run(argv).returncode
    except OSError as e:
        raise CoresError(f"cannot run {command[0]}: {e.strerror}") from None
