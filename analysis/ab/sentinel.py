"""
The sentinel of the co-located designs (interleaved, duet): after every invocation, whether
running both sides at once leaves each side's cost as it is alone (analysis.ab.colocation, from
the back-to-back pairs every co-located invocation also times). The co-located pairs give the
verdict only while the sentinel shows the design harmless (Check.shown); until then the rows come
from the back-to-back pairs. Once flagged, or not shown by SENTINEL_INVOCATIONS under
--until-decided, the co-located pairs lose their say for good and the invocations that follow run
as blocks.
"""

import sys

from analysis.ab import designs
SENTINEL = 8              # under interleaved and duet, one couple of pairs in every SENTINEL runs back to back
SENTINEL_INVOCATIONS = 5  # --until-decided: a co-located design not shown harmless by then goes on as blocks


def watch(run, found, threshold, alpha, out=sys.stderr):
    """The co-location Check of each run definition in the result tables `found`, kept in the
    run. The first flagged one ends the co-located pairs' say, as does, under --until-decided, a
    design still not shown harmless after SENTINEL_INVOCATIONS; returns True where the design goes
    on as blocks from the next invocation (the caller writes the definition again, then saves)."""
    from analysis.tools.commands import executions
    from analysis.ab import colocation

    co_located = designs.get(run.design).co_located
    if not co_located and not run.switched:
        return False
    design = run.design if co_located else run.colocation["design"]
    checks = {name: colocation.check(executions.of_tables(found, name), design, threshold, alpha)
              for name in run.rundefinitions}
    run.colocation = {"design": design, "checks": {name: c.to_dict() for name, c in checks.items()}}
    if run.flagged:
        return False
    flagged = [(name, c) for name, c in checks.items() if c.flagged]
    unshown = [(name, c) for name, c in checks.items() if not c.shown]
    if flagged:
        name, c = flagged[0]
        run.flagged = colocation.reason(c)
    elif run.until_decided and unshown and run.reruns >= SENTINEL_INVOCATIONS:
        name, c = unshown[0]
        run.flagged = f"{colocation.unshown(c)} after {run.reruns} invocations"
    else:
        return False
    run.flagged += f" ({name})" if len(run.rundefinitions) > 1 else ""
    if not run.until_decided:
        print(f"  sentinel: {run.flagged}; the verdict comes from back-to-back pairs only", file=out, flush=True)
        return False
    run.switched, run.design = run.reruns + 1, "blocks"
    print(f"  sentinel: {run.flagged}; from invocation {run.switched} on, both sides run back to back "
          "(blocks), and the verdict comes from back-to-back pairs only", file=out, flush=True)
    return True


def colocation_lines(run, flagged_only=False):
    """The co-location check's lines for the output (none for a run that never was co-located;
    `flagged_only`: only where the check moved the verdict to the back-to-back pairs)."""
    from analysis.ab import colocation

    lines = []
    for name, data in (run.colocation.get("checks") or {}).items():
        check = colocation.Check.from_dict(data)
        if flagged_only and check.shown:
            continue
        found = colocation.render(check)
        lines += [f"{name}: {found[0]}", *found[1:]] if len(run.colocation["checks"]) > 1 else found
    if run.switched:
        lines.append(f"  invocations {run.switched} to {run.reruns} ran as blocks (both sides back to back)")
    return lines


def pairs_under_design_count(run):
    """Whether the rows rest on the pairs timed under the run's design: always under blocks; under
    a co-located design only while the sentinel shows it harmless, else on the back-to-back pairs."""
    from analysis.ab import colocation

    if run.flagged:
        return False
    if not designs.get(run.design).co_located:
        return True
    checks = (run.colocation.get("checks") or {}).values()
    return bool(checks) and all(colocation.Check.from_dict(c).shown for c in checks)


def undecided_by_design(run):
    """Why the run ends undecided because its design changes what it measures ("" where it does not):
    flagged, and not gone on as blocks."""
    return run.flagged if run.flagged and not run.switched else ""
