"""
The Debian packages the kit needs, and installing them: the one list of them.

As root the kit installs what is missing with apt-get; otherwise it names the exact command and
goes on with what the machine has (a missing timer drops that timing API from the sweep).
Standard library only, so that `./demo` can run it before the kit's venv exists:
    python3 -m analysis.machine.packages          install what is missing (or say how)
    python3 -m analysis.machine.packages --list   the package names (for .ci/run)
"""

import importlib.util
import os
import shutil
import subprocess
import sys

# program on PATH (or "python:<module>", or the absolute path of a file) -> Debian package that provides
# it, and what is lost without it
REQUIREMENTS = {
    "fish": ("fish", "the fish timing API"),
    "time": ("time", "the GNU time timing API"),
    "fuse-overlayfs": ("fuse-overlayfs", "BenchExec's container mode"),
    "cc": ("gcc", "building programs/"),
    "make": ("make", "building programs/"),
    "bc": ("bc", "the wrapped upstream tool-info example (calculatepi)"),
    "numactl": ("numactl", "STREAM per NUMA node (memory-bandwidth)"),
    "python:ensurepip": ("python3-venv", "the kit's .venv"),
    "sbatch": ("slurm-wlm", "timekit fleet (SLURM) and the one-host SLURM cluster of its tests"),
    "munge": ("munge", "authentication of that one-host SLURM cluster"),
    "aarch64-linux-gnu-gcc": ("gcc-aarch64-linux-gnu", "the aarch64 build of programs/ (make -C programs cross-aarch64)"),
    "/usr/aarch64-linux-gnu/include/stdio.h": ("libc6-dev-arm64-cross", "the C library for that aarch64 build"),
    "qemu-aarch64": ("qemu-user", "running the aarch64 build in the tests (tests/test_aarch64.py)"),
    "chromium": ("chromium", "the tests' screenshot of the report (tests/browser.py)"),
    "hyperfine": ("hyperfine", "the benchmark of the kit's figures against hyperfine's (benchmarks/hyperfine_agreement.py)"),
}


def _present(requirement):
    if requirement.startswith("python:"):
        return importlib.util.find_spec(requirement.split(":", 1)[1]) is not None
    if requirement.startswith("/"):
        return os.path.exists(requirement)
    return shutil.which(requirement) is not None


def missing_packages():
    """{package: what is lost} for every requirement this machine lacks."""
    return {package: loss for requirement, (package, loss) in REQUIREMENTS.items() if not _present(requirement)}


def install_command(packages):
    return ["apt-get", "install", "-y", "--no-install-recommends", *sorted(packages)]


def ensure_packages(out=sys.stderr):
    """Install missing packages when root; else say what to run. Returns what is still missing."""
    missing = missing_packages()
    if not missing:
        return {}
    command = install_command(missing)
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print(f"installing {', '.join(sorted(missing))} ...", file=out, flush=True)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if result.returncode != 0:
            subprocess.run(["apt-get", "update"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        missing = missing_packages()
    for package, loss in missing.items():
        print(f"warning: {package} is not installed, so {loss} is unavailable; "
              f"to add it run: sudo {' '.join(install_command([package]))}", file=out)
    return missing


if __name__ == "__main__":
    if sys.argv[1:] == ["--list"]:
        print(" ".join(package for package, _ in REQUIREMENTS.values()))
    else:
        ensure_packages()
