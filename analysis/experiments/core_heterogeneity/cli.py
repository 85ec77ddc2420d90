"""`timekit cores rank|run`: the parser and the command (analysis/cli.py lists it)."""

import argparse
from pathlib import Path

from analysis.core.argtypes import positive_int

def add_parser(commands):
    cores_cmd = commands.add_parser(
        "cores", help="rank the cores from core-heterogeneity results; run a command on the fastest",
        description="rank RESULTS: the cores fastest to slowest per workload (Welch t on adjacent cores, Holm, "
        "alpha 0.01), written to results/cores-ranking.json. run -k K -- COMMAND: run COMMAND pinned to the K "
        "fastest cores of that ranking; refused when there is none, or it predates the machine's last boot.")
    cores_actions = cores_cmd.add_subparsers(dest="action", metavar="ACTION", required=True)
    cores_rank = cores_actions.add_parser("rank", help="rank the cores from result files, directories or sweeps")
    cores_rank.add_argument("results", nargs="+", type=Path)
    cores_rank.add_argument("--output", type=Path, help="ranking file (default results/cores-ranking.json)")
    cores_run = cores_actions.add_parser("run", help="run a command on the K fastest cores of the last ranking")
    cores_run.add_argument("-k", type=positive_int, required=True, help="how many of the fastest cores")
    cores_run.add_argument("--workload", help="rank by this workload (default: the ranking's cache-heavy one)")
    cores_run.add_argument("--ranking", type=Path, help="ranking file (default results/cores-ranking.json)")
    cores_run.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]", help="what to run")


def run(args):
    from analysis.experiments.core_heterogeneity import pinning as cores_pinning
    from analysis.experiments.core_heterogeneity.samples import CoresError

    if args.action == "rank":
        return cores_pinning.rank_command(args.results, args.output)
    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not command:
        raise CoresError("no command given; usage: timekit cores run -k K -- COMMAND [ARGS...]")
    return cores_pinning.run_command(args.k, command, ranking_path=args.ranking, workload=args.workload)
