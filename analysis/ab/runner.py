"""
The one loop every A/B record runs its invocations on: analysis.sweep.steps_loop (resume, the
lock, outside work recorded around each invocation), a progress line after each invocation with
the count done and an ETA, and the line that says how to continue after an interrupt.
"""

import sys
from pathlib import Path

from analysis.sweep import steps_loop
from analysis.tools.commands import progress


class RunCount:
    """The runs benchexec reported finished in one invocation (runner.run_step's progress interface)."""

    def __init__(self):
        self.runs = 0

    def run_finished(self, label=""):
        self.runs += 1


def run_pending(record, outdir, invoke, line, where=None, after=None, out=sys.stderr):
    """Run every unfinished invocation of `record` in order. invoke(step, count) runs one (count: its
    RunCount); line(step, count) is its progress line, to which the count done is added and, where
    it met outside work that the record's design sets aside, why; after(step) follows the line.
    where(step): the directory and benchmark stem of its files (default: DIR and the record's)."""
    outdir = Path(outdir)
    counts = {}

    def counted(step):
        counts[step.name] = RunCount()
        return invoke(step, counts[step.name])

    def finished(step):
        record.place(step, (where or (lambda s: (outdir, record.stem)))(step)[0])
        record.save(outdir)
        done = sum(s.status == "done" for s in record.steps)
        aside = outside_note(step, record.sets_aside_disturbed)
        progress.lines(out).invocation(line(step, counts[step.name]) + aside, done, len(record.steps))
        if after:
            after(step)

    steps_loop.run_pending(record, outdir, where or (lambda step: (outdir, record.stem)), counted, record.error,
                           finished, out)


def resume_command(outdir):
    """The command that continues an interrupted `timekit ab` in OUTDIR (analysis.cli says it last)."""
    return f"timekit ab --resume --output {outdir}"


def outside_note(step, sets_aside):
    """What an invocation's progress line says of the outside work it met, and what was done with
    it: set aside, or kept where only other CPUs were busy and the design is shown to stay right."""
    record = step.disturbance
    if record is None or not record.judged:
        return ""
    if step.disturbed and sets_aside:
        return f"; disturbed from outside ({record.describe()}): set aside"
    if record.placed and record.elsewhere > record.level:
        return f"; outside work on other CPUs ({record.describe()}): kept, the design stays right beside it"
    return ""
