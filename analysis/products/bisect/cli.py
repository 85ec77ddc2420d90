"""
`timekit bisect GOOD BAD --build CMD RUN`: which commit made RUN slower. The parser and the one
place its argparse namespace is read (BisectOptions); what the command does is
analysis.products.bisect.run. `--resume --output DIR` alone continues a bisect.
"""

from __future__ import annotations

import sys
from pathlib import Path

from analysis.ab import designs
from analysis.core import argtypes, paths
from analysis.products.bisect.run import DEFAULTS, BisectOptions, bisect

DESIGNS = ("auto", *(d for d in designs.names() if d != "separate"))   # a step reads every execution's pair


def options(args) -> BisectOptions:
    """The one place `timekit bisect`'s argparse namespace is read."""
    typed = {"good": args.good, "bad": args.bad, "run": args.run, "build": args.build, "repo": args.repo,
             "threshold": args.threshold, "alpha": args.alpha, "budget": args.budget,
             "ignore_failure": args.ignore_failure, "container": False if args.no_container else None,
             "design": args.design}
    given = frozenset(k for k, v in typed.items() if v is not None)
    return BisectOptions(**{k: DEFAULTS.get(k) if v is None else v for k, v in typed.items()},
                         verbose=args.verbose, output=args.output, resume=args.resume, given=given)


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "bisect", help="find the commit that made a command slower, every step a decided A/B verdict",
        description="Bisect GOOD..BAD (BAD's first-parent line) for the first commit whose RUN is slower than "
                    "GOOD's beyond --threshold. Each commit is built in a git worktree under the repository's git "
                    "directory, removed once its step is done (your checkout and its git status are never "
                    "touched; a build that fails skips the commit, as git bisect skip; its log stays in the "
                    "results directory) and compared with GOOD as `timekit ab --until-decided` compares two "
                    "commands. The chance that the named commit is wrong is at most --alpha over all steps (each "
                    "step decided at alpha / planned steps). Exit 0 with a culprit, a range or a spread slowdown; "
                    "3 when BAD is not shown slower; 2 on bad input; 130 when interrupted (--resume --output DIR "
                    "continues).",
        epilog="example: timekit bisect v1.4 main --build 'make -j2' './prog data.txt'", intermixed=True)
    parser.add_argument("good", metavar="GOOD", nargs="?", help="a revision whose RUN is as fast as it should be")
    parser.add_argument("bad", metavar="BAD", nargs="?", help="a later revision whose RUN is slower")
    parser.add_argument("run", metavar="RUN", nargs="?", help="the command to time, run in each commit's worktree")
    parser.add_argument("--build", metavar="CMD", help="the build command, run in each worktree (sh -c); required "
                        "but with --resume")
    parser.add_argument("--repo", metavar="DIR", help="the git repository (default: the current directory)")
    parser.add_argument("--threshold", type=argtypes.probability,
                        help="the smallest slowdown that counts, as a fraction (default 0.02: 2 %%)")
    parser.add_argument("--alpha", type=argtypes.probability,
                        help="the chance that the named commit is wrong, over all steps (default 0.05)")
    parser.add_argument("--budget", type=argtypes.duration,
                        help="wall time of one step's A/B invocations before it stays undecided (default 2m)")
    parser.add_argument("--ignore-failure", action="store_true", default=None,
                        help="measure RUNs that exit non-zero (as timekit ab --ignore-failure) instead of stopping")
    parser.add_argument("--no-container", action="store_true", default=None,
                        help="run RUN without BenchExec's container (which hides /tmp, among others)")
    parser.add_argument("--design", choices=DESIGNS,
                        help="each step's A/B design, as timekit ab --design (default auto)")
    parser.add_argument("--verbose", action="store_true", help="each step says why its design was chosen")
    parser.add_argument("--output", type=Path, metavar="DIR", help="results directory (default: "
                        + paths.DEFAULT_HELP.format("bisect/DATE") + "; git ignores it)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the bisect in --output after an interruption (no other argument needed)")
    return parser


def run(args, out=sys.stderr):
    return bisect(options(args), out)
