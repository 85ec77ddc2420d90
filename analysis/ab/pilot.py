"""
Before the first invocation of `timekit ab 'A' 'B'`: the pair timed outside BenchExec, back to
back, as the user runs it: its time (the batch is sized from it), how busy each side keeps a core
and how many cores it uses (threads); from it auto's design. For a co-located design asked for
by name, rounds on one core with half of the couples interleaved (analysis.ab.colocation) until
it is shown harmless, or cannot be in the pilot's time; one it flags runs as blocks.
"""

import math
import os
import shlex
import signal
import subprocess
import time
from dataclasses import dataclass

import numpy as np

from analysis.core.deferred import scipy_stats
from analysis.machine import guard
from analysis.sweep import runner
from analysis.tools.commands import executions
from analysis.ab import colocation, designs

SHORT_PAIR = 0.1       # s: a pair this short is timed five more times
BUSY = 0.5             # a side whose CPU time is under this share of its wall time waits: blocks
WAITS = 0.2            # under this share it mostly waits: wall time alone is compared (a 20 ms compute loop
                       # beside three busy loops on two CPUs read 0.51-0.83: near BUSY, far above this)
THREADS = 1.1          # a side whose CPU time is above this share of its wall time runs threads
SOLO = 0.9             # both sides' CPU time at least this share of their wall time, and no threads: each keeps
                       # one core busy, and its wall time is its CPU time plus what the machine adds
                       # (PairedRun.only_column: CPU time alone is compared)
ROUND_SECONDS = 0.25   # pairs per pilot round: about this long, at least ROUND_PAIRS
ROUND_PAIRS = 4        # two couples: one interleaved, one back to back (--sentinel 2)
MIN_ROUNDS, MAX_ROUNDS = 4, 12
PILOT_SECONDS = 4.0    # the co-location pilot stops after this long, precise enough or not


@dataclass(frozen=True)
class Alone:
    """A pair timed back to back, unpinned, before the first invocation."""

    seconds: float     # a pair's wall time (nan: not timed)
    cpu_share: float   # the lower of the two sides' CPU time / wall time (nan: not timed)
    cores: float       # the higher of the two sides' CPU time / wall time: cores used at once

    @property
    def threaded(self):
        return math.isfinite(self.cores) and self.cores > THREADS

    @property
    def cores_used(self):
        """Cores to give a run so that both sides run as they do alone."""
        return max(1, min(len(os.sched_getaffinity(0)), math.ceil(self.cores - 0.05))) if self.threaded else 1


def _cmdrun_line(rundefinition, options, *flags):
    cmdrun = runner.PROGRAMS / "bin" / "cmdrun"
    sides = [rundefinition["base"], "---", rundefinition["new"]]
    if options.shell == "none":
        sides = [*shlex.split(rundefinition["base"]), "---", *shlex.split(rundefinition["new"])]
    prepare = ["--prepare", rundefinition["prepare"]] if rundefinition["prepare"] else []
    output = ["--output", options.output] if options.output != "null" else []
    return [str(cmdrun), "--shell", options.shell, "--cwd", options.cwd or ".", *flags, *prepare, *output], ["--", *sides]


def _timed(line, tail, repeat, seed=0):
    """cmdrun's executions of one pilot batch ([] where it could not run). Its output is read as
    bytes (under --command-output inherit it holds the commands' own), decoded with replacement;
    an interrupt ends cmdrun's whole process group, the commands with it, also one that arrives
    while cmdrun is being started (guard.popen)."""
    process = guard.popen([*line, "--repeat", str(repeat), "--seed", str(seed), *tail], os.setsid,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        stdout, _ = process.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        return []
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return executions.parse(stdout.decode(errors="replace"))


def time_alone(rundefinition, options):
    """The Alone of a pair: one pair, and for a short one five more (a single short pair moves by a
    factor of two on a shared VM)."""
    line, tail = _cmdrun_line(rundefinition, options)
    found, timed = [], []
    for repeat in (1, 5):
        batch = _timed(line, tail, repeat)
        timed += batch
        found += [sum(e.wall for e in batch if e.index == k) for k in sorted({e.index for e in batch})]
        if not found or found[0] > SHORT_PAIR:
            break
    if not found:
        return Alone(math.nan, math.nan, math.nan)
    shares = []
    for side in "ab":
        wall = sum(e.wall for e in timed if e.side == side)
        shares.append(sum(e.cpu for e in timed if e.side == side) / wall if wall > 0 else math.nan)
    return Alone(float(np.median(found)), min(shares), max(shares))


def colocation_pilot(rundefinition, options, alone, threshold, design="interleaved"):
    """The co-location Check of the design (interleaved: on one core of this process's set; duet:
    on its first two) from rounds of cmdrun runs with every other couple back to back."""
    chosen = designs.get(design)
    flag, cpus = chosen.cmdrun_option, sorted(os.sched_getaffinity(0))[:chosen.cpus]
    line, tail = _cmdrun_line(rundefinition, options, flag, "--sentinel", "2")
    pairs = ROUND_PAIRS * max(1, math.ceil(ROUND_SECONDS / alone.seconds / ROUND_PAIRS)) if alone.seconds > 0 else ROUND_PAIRS
    rounds, start = [], time.monotonic()
    while len(rounds) < MAX_ROUNDS:
        batch = _timed(["taskset", "-c", ",".join(map(str, cpus)), *line], tail, pairs, seed=len(rounds) + 1)
        if not batch:
            break
        rounds.append(executions.Invocation(("pilot", len(rounds)), [[e for e in batch if e.status == 0]]))
        result = colocation.check(rounds, design, threshold)
        precise = result.judged and math.log(result.bias.high / result.bias.low) / 2 <= math.log1p(result.tolerance)
        seconds = time.monotonic() - start
        last = min(MAX_ROUNDS, int(PILOT_SECONDS / (seconds / len(rounds))))   # the rounds the pilot's time holds
        if len(rounds) >= MIN_ROUNDS and (precise or seconds > PILOT_SECONDS or result.flagged
                                          or not _within_reach(result, last, 4 * result.tolerance)):
            break
    return colocation.check(rounds, design, threshold)


def _within_reach(check, rounds, threshold):
    """Whether `rounds` rounds could show the bias within ±threshold (Check.shown_harmless) at the
    spread met so far: where they cannot, more rounds only delay blocks."""
    if not check.judged:
        return True
    n = check.bias.units
    t_now = scipy_stats.t.ppf(1 - colocation.LEVEL / 2, n - 1)
    sd = math.log(check.bias.high / check.bias.low) / 2 * math.sqrt(n) / t_now
    half = scipy_stats.t.ppf(1 - colocation.LEVEL / 2, max(rounds, n) - 1) * sd / math.sqrt(max(rounds, n))
    return abs(math.log(check.bias.ratio)) + half <= math.log1p(threshold)


@dataclass(frozen=True)
class Choice:
    """The design auto chose, the facts it chose by, and why (rendered last)."""

    design: str
    alone: Alone
    check: colocation.Check = None
    why: str = ""


def checked(choice, rundefinition, options, threshold):
    """A co-located design asked for by name, piloted: where the pilot flags it (it
    changes what a side costs), blocks runs instead, and the first line says why; a pilot that
    only could not show it harmless keeps it, and its pairs count once the sentinel shows it."""
    check = colocation_pilot(rundefinition, options, choice.alone, threshold, choice.design)
    if not check.flagged:
        return Choice(choice.design, choice.alone, check)
    return Choice("blocks", choice.alone, check, (f"--design {choice.design} was asked for, but its pilot flagged it: "
                                                  f"{colocation.reason(check)}; blocks runs instead"))


def choose(rundefinition, options, columns):
    """auto's Choice: blocks, back to back as the commands run alone (on as many cores as a command
    that runs threads uses). No co-location pilot: on the project's VMs it cost 2-4.5 s of every
    fresh pair and chose blocks in 65 of 66 (docs/designs.md, "Why auto runs blocks"); a
    co-located design asked for by name is piloted and watched (checked, analysis.ab.sentinel)."""
    alone = time_alone(rundefinition, options)
    pin = "; --design interleaved pilots a co-located design"
    if any(c in ("walltime", "exec-walltime") for c in columns or ()):
        return Choice("blocks", alone, why="wall time is asked for, which only back-to-back pairs compare")
    if not math.isfinite(alone.cpu_share):
        return Choice("blocks", alone, why="the pilot pair could not be timed")
    if alone.threaded:
        return Choice("blocks", alone, why=(f"a command runs threads (CPU time {alone.cores:.0%} of wall time alone): "
                                            f"back to back on {alone.cores_used} cores, as it runs alone"))
    if alone.cpu_share < BUSY:
        return Choice("blocks", alone, why=(f"a command waits (CPU time {alone.cpu_share:.0%} of wall time alone), "
                                            "so its wall time counts too"))
    return Choice("blocks", alone, why=f"both commands keep one core busy: back to back, as they run alone{pin}")
