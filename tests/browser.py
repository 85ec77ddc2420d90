"""Screenshots of the report page with headless Chromium, to check what a reader will see.

Chromium runs in its own process group with a fresh, throw-away profile and with networking
features off; the page itself loads nothing (see ``analysis.core.report``).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import signal
import subprocess
import tempfile

__all__ = ["BrowserError", "BrowserUnavailable", "find_chromium", "screenshot"]

_CANDIDATES = ("chromium", "chromium-browser")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class BrowserError(RuntimeError):
    """Chromium ran but produced no usable screenshot."""


class BrowserUnavailable(BrowserError):
    """No Chromium executable was found."""


def find_chromium() -> str:
    """Path of the Chromium executable (``chromium`` or ``chromium-browser`` on PATH)."""
    for name in _CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    raise BrowserUnavailable(
        "screenshot: no Chromium found on PATH (looked for " + ", ".join(_CANDIDATES)
        + "); the kit's package list has it: as root, python3 -m analysis.machine.packages installs it")


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill what is left of the process group started for ``proc`` (Chromium forks helpers)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def screenshot(html_path, png_path, width: int = 1200, height: int = 3000, timeout: float = 60,
               executable: str | None = None) -> pathlib.Path:
    """Render ``html_path`` in headless Chromium at ``width`` x ``height`` CSS pixels and write the
    visible part of the page to ``png_path``; return the PNG's path.

    Raises BrowserUnavailable when no Chromium is installed and BrowserError when it fails, times
    out or writes no PNG.
    """
    html_path = pathlib.Path(html_path).resolve()
    png_path = pathlib.Path(png_path).resolve()
    if not html_path.is_file():
        raise FileNotFoundError(f"screenshot: {html_path} does not exist")
    exe = executable or find_chromium()
    png_path.parent.mkdir(parents=True, exist_ok=True)
    if png_path.exists():
        png_path.unlink()  # so that an old file cannot pass for a new screenshot

    profile = tempfile.mkdtemp(prefix="timekit-chromium-")
    cmd = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--window-size={int(width)},{int(height)}",
        f"--screenshot={png_path}",
        html_path.as_uri(),
    ]
    # Output goes to a file, not a pipe: helpers that outlive Chromium (crash handler) could
    # hold a pipe open and make us wait for them.
    with tempfile.TemporaryFile() as log:
        try:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    start_new_session=True)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                proc.wait()
                raise BrowserError(f"screenshot: {exe} did not finish within {timeout} s "
                                   f"rendering {html_path}") from None
            finally:
                _kill_group(proc)
        finally:
            shutil.rmtree(profile, ignore_errors=True)
        log.seek(0)
        err = log.read()

    if not png_path.is_file() or png_path.stat().st_size == 0:
        lines = [ln for ln in err.decode("utf-8", "replace").splitlines()
                 if ln.strip() and "dbus" not in ln]
        tail = lines[-3:]
        raise BrowserError(f"screenshot: {exe} exited with {proc.returncode} and wrote no PNG to "
                           f"{png_path}" + (": " + " | ".join(tail) if tail else ""))
    with open(png_path, "rb") as handle:
        if handle.read(8) != _PNG_SIGNATURE:
            raise BrowserError(f"screenshot: {png_path} is not a PNG")
    return png_path
