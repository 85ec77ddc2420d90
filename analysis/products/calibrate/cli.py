"""`timekit calibrate`: the parser and the command (analysis/cli.py lists it)."""

import sys
import textwrap
from pathlib import Path

from analysis.core import argtypes
from analysis.core.argtypes import probability
from analysis.core.verdicts import DRIFT
from analysis.experiments import EXPERIMENTS


def add_parser(commands):
    calibrate = commands.add_parser(
        "calibrate", help="compare's A/A false-positive rate and power at a measured or given CV",
        description=textwrap.fill(
            "A/A: random halvings of one measured sample (and fresh lognormal pairs) judged by compare's rule (Welch t at "
            "--alpha; verdict also needs --threshold), rates with binomial CIs. Power to flag 1, 2 and 5 % slowdowns at "
            "10, 30 and 100 runs per side, simulated and analytic (noncentral t). One calibration per run definition and "
            "input of a result set, at its measured CV of --column; or at --cv. Given 4+ benchexec invocations of one run "
            "definition and input (a directory), between invocations instead: A/A of compare's rerun rule and of the old "
            "per-run rule over random splits into M = 3, 5, 7, 10 a side, power against --slower invocations, --until. Given "
            "the directory of a paired `timekit ab` (blocks or duet) of a command against itself: A/A of the paired rule at "
            "M = 3, 5, 7, 10 and under --until-decided, power against --slower (a paired run of A against B).", 78))
    source = calibrate.add_mutually_exclusive_group(required=True)
    source.add_argument("results", nargs="?", type=Path, help="a result file, a directory of one invocation or of 4+, or a sweep")
    source.add_argument("--cv", type=probability, help="coefficient of variation as a fraction, e.g. 0.014 for 1.4 %%")
    source.add_argument("--claims", action="store_true",
                        help="the report's findings instead: each claim simulated true, false and at its bound with "
                             "drift between invocations (--drift), wrong verdicts counted per claim and preset")
    calibrate.add_argument("--drift", type=probability, default=DRIFT,
                           help="with --claims: CV of a mean between invocations (default %(default)s, measured here)")
    calibrate.add_argument("--column", action="append", dest="columns",
                           help="column of the command calibrated (repeatable; default: compare's and ab's, cputime and "
                                "walltime); all of them form one Holm family, as in compare")
    calibrate.add_argument("--alpha", type=probability, default=0.05, help="significance level (default 0.05)")
    calibrate.add_argument("--threshold", type=probability, default=0.02, help="compare's noise threshold (default 0.02 = 2 %%)")
    calibrate.add_argument("--slower", type=Path, help="between invocations: invocations of a slower variant, for power at M = 3, 5, 7, 10")
    calibrate.add_argument("--until", type=argtypes.percent, metavar="PCT", help="between invocations: also the sequential rule of ab --until PCT")
    calibrate.add_argument("--until-decided", action="store_true",
                           help="between invocations, with --slower: the sequential rule of ab --until-decided, resampled")
    calibrate.add_argument("--plot", type=Path, help="write the power figure (power against runs per side) as PNG")
    calibrate.add_argument("--format", choices=["text", "markdown", "json"], default="text")


def run(args):
    from analysis.tools.calibrate import within as calibration
    from analysis.tools.calibrate import between as calibration_between
    from analysis.tools.calibrate import between_report
    from analysis.tools.calibrate import claims as claims_calibration
    from analysis.products.calibrate import paired
    from analysis.tools.calibrate import family

    if args.claims:
        specs = [spec for experiment in EXPERIMENTS.values() for spec in experiment.claim_specs()]
        outcomes = claims_calibration.calibrate_claims(specs, drift=args.drift)
        print(claims_calibration.render(outcomes, args.format))
        return 0
    if args.results is not None and paired.holds_paired(args.results):
        import json

        result = paired.check(args.results, args.slower, args.alpha, args.threshold, args.columns)
        print(json.dumps(result, indent=2, default=str) if args.format == "json" else paired.render(result))
        return 0
    columns = tuple(args.columns or family.DEFAULT_COLUMNS)
    if args.until_decided:
        return _until_decided(args.results, args.slower, columns, args.alpha, args.threshold, args.format)
    if args.results is not None and calibration_between.holds_invocations(args.results, columns):
        return between_report.command(args.results, args.slower, sys.stdout, args.format, args.plot, columns=columns,
                                           alpha=args.alpha, threshold=args.threshold, until=args.until)
    source = args.cv if args.cv is not None else args.results
    return calibration.calibration_command(source, sys.stdout, args.format, args.plot, columns=columns,
                                           alpha=args.alpha, threshold=args.threshold)


def _until_decided(results, slower_results, columns, alpha, threshold, output_format):
    import json

    from analysis.tools.calibrate import family, until_decided
    from analysis.tools.calibrate.between import BetweenError

    if results is None or slower_results is None:
        raise BetweenError("--until-decided needs a directory of 4+ invocations and --slower invocations")
    base = family.load_groups([results], columns, BetweenError)
    slower = family.load_groups([slower_results], columns, BetweenError)
    keys = [k for k, g in sorted(base.items()) if len(g.invocations) >= 4 and k in slower]
    if not keys:
        raise BetweenError(f"{results} and {slower_results}: no run definition and input with 4+ invocations on both")
    result = until_decided.check([base[k] for k in keys], [slower[k] for k in keys], alpha, threshold)
    print(json.dumps(result, indent=2, default=str) if output_format == "json" else until_decided.render(result))
    return 0
