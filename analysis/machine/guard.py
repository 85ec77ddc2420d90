"""
Children end with the kit: a guard between the kit and every benchexec it starts.

benchexec ignores its parent's death, and a SIGKILL to it leaves its runs behind. So the kit runs
`python guard.py KIT_PID -- benchexec ...`: a child subreaper that kills every process below it
when the kit dies, however it dies. Processes that do not fork (busy loads) get `die_with_kit` as
their preexec_fn instead. Runs as a script, importing nothing of the kit (docs/step-loop.md,
"The guard").
"""

import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option, value):
    if _libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def die_with_kit(parent=None, signum=signal.SIGKILL):
    """In a child before exec: get `signum` when the kit dies (also if it died a moment ago)."""
    _prctl(PR_SET_PDEATHSIG, signum)
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signum)


def in_own_group_dying_with_kit():
    """preexec_fn: a process group of its own (killable as one), SIGKILL when the kit dies."""
    parent = os.getppid()
    os.setpgrp()
    die_with_kit(parent)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def popen(command, preexec_fn, **kwargs):
    """subprocess.Popen with a preexec_fn, the kit's stop signals held back across the fork.

    Python runs at-fork hooks around such a fork (logging's lock among them), and an exception the
    kit's signal handler raises inside one is printed as "Exception ignored" and lost: the kit ran
    to its end after a SIGINT. Held back, the signal arrives once the fork is done; the child gets
    the mask it would have had before its preexec_fn runs. A child started in the moment the signal
    arrives is killed with its group, since its caller never learns of it.
    """
    import subprocess   # here: guard.py also runs as a script before every benchexec, where it is not needed

    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)

    def child():
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        preexec_fn()

    process = None
    try:
        process = subprocess.Popen(command, preexec_fn=child, **kwargs)
    finally:
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)   # a held signal's handler runs here
        except BaseException:
            if process is not None:
                _kill_group_of(process)
            raise
    return process


def _kill_group_of(process):
    try:
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
        else:
            process.kill()
    except ProcessLookupError:
        pass
    process.wait()


def wrap(command):
    """`command` run under the guard of this process."""
    return [sys.executable, os.path.abspath(__file__), str(os.getpid()), "--", *command]


def descendants(root):
    """Pids of every process below `root`, from /proc."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def kill_below(root, rounds=100):
    """SIGKILL everything below `root` until nothing is left (orphans come back to a subreaper)."""
    for _ in range(rounds):
        pids = descendants(root)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _reap()
        time.sleep(0.01)


def _reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main(argv):
    kit, command = int(argv[1]), argv[3:]
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    me = os.getpid()

    def kit_died(signum, frame):
        kill_below(me)
        os._exit(128 + signal.SIGKILL)

    child = 0

    def stop_child(signum, frame):
        if child:
            os.kill(child, signal.SIGTERM)
        else:
            os._exit(128 + signum)

    signal.signal(signal.SIGHUP, kit_died)
    signal.signal(signal.SIGTERM, stop_child)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C reaches the kit, which stops benchexec by SIGTERM
    die_with_kit(kit, signal.SIGHUP)
    child = os.fork()
    if child == 0:
        for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            break
    kill_below(me)  # what benchexec left behind (its tool-info worker, a run of a killed benchexec)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
