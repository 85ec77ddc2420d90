"""`timekit fleet submit|status|report`: the parser and the dispatch (analysis/cli.py adds both)."""

import argparse
import datetime
import importlib
import textwrap
import threading
from pathlib import Path

from analysis.core.paths import RESULTS
from analysis.experiments import EXPERIMENTS
from analysis.tools.fleet import machines
from analysis.tools.fleet import status as fleet_status
from analysis.tools.fleet import submit as fleet_submit
from analysis.tools.fleet.manifest import MANIFEST, FleetError

FLEETS = RESULTS / "fleet"


def _positive(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer")
    return int(text)


def _given(text):
    try:
        return machines.given(text)
    except FleetError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_parser(commands):
    fleet = commands.add_parser(
        "fleet", help="run an experiment on many machines through SLURM; judge its claims across them",
        description=textwrap.fill(
            "submit: one exclusive SLURM batch job per node (sbatch --exclusive --nodelist NODE), each running "
            "'timekit run EXPERIMENT --output FLEET/NODE/' under BenchExec, as on one machine. The fleet directory "
            "must be on a filesystem the nodes share, and the kit installed at the same path on every node. "
            "status: per node pending, running, finished or failed. report: each node's report and the fleet's, over "
            "fleet folders and/or machines' sweeps recorded anywhere (see 'fleet report --help'): "
            "claims per node and across the fleet, one core ranking of all (node, core) pairs and the fleet's "
            "fastest cores, outlier nodes per measurement, nodes ranked by noise.", 78),
        epilog="examples:\n"
        "  timekit fleet submit core-heterogeneity --partition bench --count 8\n"
        "  timekit fleet submit os-microbench --nodes 'n[1-4]' --serial     # VMs of one host: one at a time\n"
        "  timekit fleet status results/fleet/os-microbench/DATE --wait\n"
        "  timekit fleet submit os-microbench --resume                      # again only the nodes that failed\n"
        "  timekit fleet report results/fleet/*/DATE                        # fleet report over experiments\n"
        "  timekit fleet report results/fleet/os-microbench/DATE --wait     # once every node has finished\n"
        "  timekit fleet report results/demo-DATE tests/data/machines/intel-vm-2026-11-25  # machines, no fleet.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    actions = fleet.add_subparsers(dest="action", metavar="ACTION", required=True)

    submit = actions.add_parser("submit", help="one exclusive batch job per node running the experiment's sweep")
    submit.add_argument("experiment", choices=sorted(EXPERIMENTS))
    submit.add_argument("--preset", default="quick", help="the experiment's preset (default quick)")
    submit.add_argument("--reps", type=_positive, help="runs per task and run definition in one invocation, on every "
                                                       "node (overrides the preset, as in `timekit run`)")
    submit.add_argument("--reruns", type=_positive, help="benchexec invocations per condition on every node "
                                                         "(overrides the preset)")
    where = submit.add_mutually_exclusive_group()
    where.add_argument("--nodes", help="SLURM node list, e.g. 'n[1-3],gpu7'")
    where.add_argument("--partition", help="the usable nodes of this partition")
    submit.add_argument("--count", type=_positive, help="with --partition: only the first N usable nodes")
    submit.add_argument("--serial", action="store_true",
                        help="one node after another (afterany dependencies): for nodes that share hardware, "
                             "e.g. VMs on one host or a simulated cluster")
    submit.add_argument("--time", type=_positive, metavar="MINUTES",
                        help="job time limit (default: estimated from the preset and earlier sweeps)")
    submit.add_argument("--output", type=Path, help="fleet directory (default results/fleet/EXPERIMENT/DATE)")
    submit.add_argument("--resume", action="store_true",
                        help="submit again the nodes of the fleet in --output (default: the latest) whose sweep did not finish")

    status = actions.add_parser("status", help="per node: pending, running, finished or failed (exit 0 when all finished)")
    status.add_argument("directory", type=Path)
    status.add_argument("--wait", action="store_true", help="return once no node is pending or running")

    report = actions.add_parser(
        "report", help="each node's report and the fleet's claims, cores and outliers across nodes",
        description=textwrap.fill(
            "Judges claims across machines: one row per claim (lined up by the finding's id) with each node's verdict. "
            "Each DIR is either a fleet folder written by 'fleet submit' (fleet.json: its nodes), or ONE MACHINE's "
            "sweeps recorded anywhere, no fleet.json needed: a sweep folder (sweep.json), or a folder whose "
            "sub-folders are sweeps (a demo's results/demo-DATE, or a recording such as "
            "tests/data/machines/intel-vm-2026-11-25). NAME=DIR names that machine; the same NAME on several DIRs "
            "makes them one machine (its sweeps kept in separate folders). Unnamed, a machine is called by the host "
            "name its sweeps recorded, or by its folder's name where two machines recorded the same host name. "
            "A machine's report is the one in DIR/report when current, else it is made in OUTPUT/machines/NODE; "
            "nothing is written into the folders given.", 78),
        epilog="examples:\n"
        "  timekit fleet report results/fleet/os-microbench/DATE            # a fleet of 'fleet submit'\n"
        "  timekit fleet report results/demo-DATE tests/data/recorded-demo \\\n"
        "      tests/data/machines/intel-vm-2026-11-25                       # three machines, no fleet.json\n"
        "  timekit fleet report amd=results/time-apis/D1 amd=results/discipline/D2 intel=/mnt/intel/demo",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    report.add_argument("directories", nargs="+", type=_given, metavar="DIR",
                        help="a fleet folder, or one machine's sweep folder or folder of sweeps ([NAME=]DIR)")
    report.add_argument("--output", type=Path,
                        help="report directory (default: FLEET/fleet-report for a fleet first, else results/fleet/report-DATE)")
    report.add_argument("--wait", action="store_true",
                        help="first wait until no node of the fleets given is pending or running (as status --wait)")
    report.add_argument("--golden", type=_positive, metavar="K",
                        help="size of the golden sample: the K fastest cores of the fleet (default: the cores of the smallest node)")
    return fleet


def _latest(experiment):
    fleets = sorted(p.parent for p in (FLEETS / experiment).glob("*/" + MANIFEST))
    if not fleets:
        raise FleetError(f"no fleet of {experiment} under {FLEETS / experiment} to resume; give --output")
    return fleets[-1]


def run(args, node_report):
    """Dispatch `timekit fleet ACTION`; node_report(paths, outdir) writes one node's report
    (analysis.pipeline.tables_and_report, handed down by the CLI: the pipeline is a layer above)."""
    if args.action == "status":
        return fleet_status.status_command(args.directory, wait=args.wait)
    if args.action == "report":
        # the report's modules (scipy, matplotlib: ~1.5 s) load while the nodes still run, not after
        loading = threading.Thread(target=importlib.import_module, args=("analysis.tools.fleet.report",), daemon=True)
        loading.start()
        for given in args.directories if args.wait else ():
            if machines.is_fleet(given.path):  # a machine's folder has no jobs to wait for
                fleet_status.status_command(given.path, wait=True)
        loading.join()
        from analysis.tools.fleet import report as fleet_report

        paths = fleet_report.fleet_report(args.directories, node_report, args.output, golden=args.golden)
        print(f"fleet report: {paths['html']}")
        return 0
    experiment = EXPERIMENTS[args.experiment]
    if args.resume:
        fleet_submit.resume(experiment, args.output or _latest(experiment.name))
        return 0
    if args.count and not args.partition:
        raise FleetError("--count needs --partition")
    if not (args.nodes or args.partition):
        raise FleetError("say where: --nodes LIST or --partition P [--count N]")
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
    directory = args.output or FLEETS / experiment.name / stamp
    nodes = fleet_submit.slurm.expand_nodes(args.nodes) if args.nodes else None
    fleet_submit.submit(experiment, args.preset, directory, nodes=nodes, partition=args.partition, count=args.count,
                        serial=args.serial, minutes=args.time, sizes={"reps": args.reps, "reruns": args.reruns})
    print(f"fleet: {Path(directory).resolve()}\n  status: timekit fleet status {directory}\n"
          f"  report: timekit fleet report {directory}")
    return 0
