"""
Kill -9 anywhere, resume, nothing lost and nothing measured twice: `timekit ab` (two shell
commands, 3 reruns) and `timekit run` of a short sweep are SIGKILLed at random moments (during
an invocation, right after one finished, halfway through a manifest write), resumed each time,
and checked against an uninterrupted run of the same command:

- within 5 s of each kill no process of that results directory is left (benchexec, its runs,
  the guard, the kit);
- every manifest parses after every kill;
- in the end every invocation is done exactly once: one result file per step and run
  definition beside the manifest, each with every run, what cut-short steps wrote only under
  incomplete/;
- the verdicts rest on as many invocations and runs as the uninterrupted run's.

With --disk-full the results directory is a small tmpfs (mounted inside the checkout, which
BenchExec's container sees; needs root): the kit stops with one line and exit 2, and resumes to
the end once space is freed.

    python benchmarks/crash_resume.py --kills 20             # the full size (benchmarks/README.md)
    python benchmarks/crash_resume.py --kills 20 --disk-full
The test suite runs a short version (tests/test_crash_resume.py).
"""

import argparse
import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from analysis.core import results  # noqa: E402
from analysis.sweep import steps_loop  # noqa: E402

TIMEKIT = [sys.executable, "-m", "analysis.cli"]
MANIFESTS = ("ab.json", "sweep.json", "bench.json", "commands.json", "paired.json")
AB = ["ab", "gzip -c -1 README.md > /dev/null", "gzip -c -9 README.md > /dev/null", "--design", "blocks",
      "--reruns", "3", "--runs", "3", "--repeat", "5", "--column", "cputime", "--column", "walltime",
      "--format", "json"]
RUN = ["run", "memory-bandwidth", "--reps", "2", "--reruns", "3"]
# a run that finished: 0 or 1, a verdict; 3, an answer its fixed invocations left open (a busy machine). The
# verdict is not what this benchmark checks: that every invocation is measured once, whatever the kills
FINISHED = (0, 1, 3)
MODES = ("during an invocation", "after an invocation", "in a manifest write", "at any moment")


class Failed(AssertionError):
    pass


def check(condition, what):
    if not condition:
        raise Failed(what)


def start(argv, output, log, env=None):
    return subprocess.Popen(TIMEKIT + argv + ["--output", str(output)], cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True, env=env)


def command(base, output):
    """The command line for `output`: anew while it holds no manifest yet, else --resume."""
    if not any((Path(output) / m).exists() for m in MANIFESTS):
        return list(base)
    if base[0] == "ab":  # ab CMD1 CMD2 [options]: the commands and plan are on record
        return ["ab", "--resume", *[a for a in base[3:] if a in ("--format", "json")]]
    return [*base[:2], "--resume"]


def manifests(output):
    return [p for p in Path(output).rglob("*.json") if p.name in MANIFESTS and "incomplete" not in p.parts]


def steps(output):
    found = []
    for path in manifests(output):
        try:
            found += [(path.parent, s) for s in json.loads(path.read_text()).get("steps", [])]
        except (OSError, ValueError):
            pass
    return found


def gone_within(output, seconds=5.0):
    """Seconds until no process names `output` any more (None: still there after `seconds`)."""
    begin = time.monotonic()
    while time.monotonic() - begin < seconds:
        if not strays(output):
            return time.monotonic() - begin
        time.sleep(0.05)
    return None


def strays(output):
    """Pids of any process whose command line names the directory (the kit, the guard, benchexec)."""
    needle = re.compile(re.escape(str(Path(output).resolve()).encode()) + rb"(/|\x00|$)")
    found = []
    for entry in os.listdir("/proc"):
        try:
            line = Path(f"/proc/{entry}/cmdline").read_bytes() if entry.isdigit() else b""
        except OSError:
            continue
        if needle.search(line):
            found.append(int(entry))
    return found


def wait_until(process, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def one_kill(base, output, mode, rng, log):
    """Start (or resume) the command, SIGKILL it as `mode` says; returns (killed, seconds until
    nothing of the directory ran, the kit's exit code if it ended first)."""
    env = dict(os.environ)
    if mode == "in a manifest write":
        env["TIMEKIT_KILL_IN_WRITE"] = str(rng.randint(1, 4))
    process = start(command(base, output), output, log, env)
    running = lambda: any(s["status"] == "running" for _, s in steps(output))  # noqa: E731
    done_now = sum(s["status"] == "done" for _, s in steps(output))
    if mode == "during an invocation":
        if wait_until(process, running, 120):
            time.sleep(rng.uniform(0.2, 2.0))
    elif mode == "after an invocation":
        wait_until(process, lambda: sum(s["status"] == "done" for _, s in steps(output)) > done_now, 180)
    elif mode == "at any moment":
        wait_until(process, lambda: False, rng.uniform(0.1, 8.0))
    else:  # it kills itself
        process.wait(timeout=180)
    killed = process.poll() is None or process.returncode == -signal.SIGKILL
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    code = process.wait()
    return killed, gone_within(output), code


def run_files(output):
    """{(directory, step name): [result files]} of the done steps, and the runs in each file."""
    found = {}
    for directory, step in steps(output):
        check(step["status"] == "done", f"{directory}: step {step['name']} is {step['status']}, not done")
        folder = directory / step["condition"] if step["condition"] and (directory / step["condition"]).is_dir() else directory
        found[(folder, step["name"])] = step["result_files"]
    return found


def verify(output, reference):
    """Every invocation once and complete, and as many as in the uninterrupted `reference`."""
    for path in manifests(output):
        json.loads(path.read_text())
    files, expected = run_files(output), run_files(reference)
    check(len(files) == len(expected), f"{len(files)} invocations, the uninterrupted run has {len(expected)}")
    for (directory, name), names in files.items():
        check(names, f"{directory}: step {name} has no result file")
        on_disk = sorted(p.name for p in directory.glob(f"*.{name}.*.xml.bz2"))
        check(on_disk == sorted(names), f"{directory}: step {name} has {on_disk} on disk, manifest {names}")
    mine = sum(len(t.tasks) for t in results.load_results([k[0] / n for k, ns in files.items() for n in ns]))
    theirs = sum(len(t.tasks) for t in results.load_results([k[0] / n for k, ns in expected.items() for n in ns]))
    check(mine == theirs, f"{mine} runs, the uninterrupted run has {theirs}")
    return mine


def scenario(name, base, workdir, kills, rng, out):
    """`kills` SIGKILLs of `base` and resumes; returns the figures."""
    reference, output = workdir / f"{name}-reference", workdir / f"{name}-killed"
    with open(workdir / f"{name}.log", "ab") as log:
        began = time.monotonic()
        check(start(list(base), reference, log).wait() in FINISHED, f"{name}: the uninterrupted run failed, see {log.name}")
        reference_seconds = time.monotonic() - began
        figures = {"kills": 0, "by mode": {m: 0 for m in MODES}, "slowest cleanup s": 0.0, "kit ended first": 0}
        began = time.monotonic()
        while figures["kills"] < kills:
            mode = rng.choice(MODES)
            killed, cleanup, code = one_kill(base, output, mode, rng, log)
            check(cleanup is not None, f"{name}: 5 s after the kill ({mode}) {strays(output)} still run")
            for path in manifests(output):
                try:
                    json.loads(path.read_text())
                except ValueError as e:
                    raise Failed(f"{path} does not parse after a kill {mode}: {e}") from None
            if killed:
                figures["kills"] += 1
                figures["by mode"][mode] += 1
                figures["slowest cleanup s"] = max(figures["slowest cleanup s"], round(cleanup, 2))
            elif code in FINISHED:  # finished before the kill: measure it all again, elsewhere
                figures["kit ended first"] += 1
                shutil.move(str(output), str(workdir / f"{name}-finished-{figures['kit ended first']}"))
            else:
                raise Failed(f"{name}: the kit exited {code} before the kill ({mode}); see {log.name}")
            print(f"{name}: kill {figures['kills']}/{kills} {mode}: gone after {cleanup:.2f} s", file=out, flush=True)
        last = start(command(base, output), output, log)
        check(last.wait() in FINISHED, f"{name}: the final resume failed (exit {last.returncode}); see {log.name}")
        figures["seconds with kills"] = round(time.monotonic() - began, 1)
        figures["seconds uninterrupted"] = round(reference_seconds, 1)
    check(not strays(output), f"{name}: processes left after the end: {strays(output)}")
    finished = [output] + sorted(workdir.glob(f"{name}-finished-*"))  # each a run the kills went through
    figures["runs per run"] = [verify(directory, reference) for directory in finished]
    figures["redone"] = sum(s.get("redone", 0) for d in finished for _, s in steps(d))
    figures["incomplete"] = sum(len(list(d.rglob(f"{steps_loop.INCOMPLETE}/*"))) for d in finished)
    return figures


def disk_full(base, name, workdir, out):
    """A small tmpfs as results directory, filled up once the first invocation is done: one line
    and exit 2; once the filler is gone, --resume runs to the end."""
    mount = workdir / f"{name}-tmpfs"
    mount.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], check=True)
    try:
        output, filler, log_path = mount / "out", mount / "filler", workdir / f"{name}-full.log"
        with open(log_path, "wb") as log:
            kit = start(list(base), output, log)
            wait_until(kit, lambda: any(s["status"] == "done" for _, s in steps(output)), 180)
            with contextlib.suppress(OSError), open(filler, "wb", buffering=0) as f:
                while True:  # every byte that is left; unbuffered, so closing has nothing to flush
                    f.write(b"\0" * 65536)
            code = kit.wait(timeout=300)
        text = log_path.read_text()
        errors = [line for line in text.splitlines() if line.startswith("timekit: error")]
        check(code == 2, f"{name}: on a full disk the kit exited {code}, not 2; see {log_path}")
        check("Traceback" not in text and len(errors) == 1 and ("full" in errors[0] or "No space left" in errors[0]),
              f"{name}: on a full disk not one line: {errors or text[-300:]}")
        check(gone_within(output) is not None, f"{name}: left running on a full disk: {strays(output)}")
        filler.unlink()
        with open(log_path, "ab") as log:
            code = start(command(base, output), output, log).wait()
        check(code in FINISHED, f"{name}: the resume after freeing space exited {code}; see {log_path}")
        for _, step in steps(output):
            check(step["status"] == "done", f"{name}: step {step['name']} is {step['status']} after the resume")
        print(f"{name}: full disk: {errors[0]}", file=out, flush=True)
        return {"line": errors[0], "resumed": True}
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20, help="SIGKILLs per command (default 20)")
    parser.add_argument("--only", choices=["ab", "run"], help="one command only")
    parser.add_argument("--disk-full", action="store_true", help="also the full-disk case (needs root)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=REPO / "results" / "crash-resume",
                        help="inside the checkout: BenchExec's container does not see /tmp")
    args = parser.parse_args(argv)
    workdir = args.workdir.resolve() / time.strftime("%Y-%m-%d_%H-%M-%S")
    workdir.mkdir(parents=True)
    rng, figures = random.Random(args.seed), {}
    for name, base in (("ab", AB), ("run", RUN)):
        if args.only in (None, name):
            figures[name] = scenario(name, base, workdir, args.kills, rng, sys.stderr)
            if args.disk_full:
                figures[name]["disk full"] = disk_full(base, name, workdir, sys.stderr)
    print(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print(f"crash_resume: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
