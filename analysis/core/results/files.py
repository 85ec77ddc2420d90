"""Finding result files and reading their XML, decompressed, a chunk at a time.

Compression is told by content (bz2, gzip or none), as tablegenerator does. Reading and
decompressing run beside the parsing: the next chunk is read in a thread, and a large bz2 file
is decompressed by a child process for the fast reader.
"""

from __future__ import annotations

import bz2
import concurrent.futures
import contextlib
import fcntl
import functools
import gzip
import os
import pathlib
import subprocess
import sys

from analysis.core.results.model import NotSimple, ResultFileError

_RESULT_SUFFIXES = (".xml", ".xml.bz2", ".xml.gz")

# Bytes read at a time: about a thousand runs, few numpy calls per run and little memory.
CHUNK_SIZE = 1 << 20
# What the child process that decompresses bz2 for the fast reader runs.
_DECOMPRESS = "import bz2, shutil, sys; shutil.copyfileobj(bz2.BZ2File(sys.stdin.buffer), sys.stdout.buffer, 1 << 20)"
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)  # Linux's number; Python < 3.10 lacks the name
# Smaller bz2 files decompress in a thread: a child process takes longer to start than they take.
CHILD_MIN_BYTES = 1 << 18


def result_files(path):
    """The file itself, or a directory's result files (not its .logfiles.zip or .txt)."""
    path = pathlib.Path(path)
    if not path.is_dir():
        return [path]
    files = sorted(p for p in path.glob("*.results*") if p.name.endswith(_RESULT_SUFFIXES))
    if not files:
        raise ResultFileError(
            path, "directory holds no *.results*.xml[.bz2|.gz] file; run benchexec first "
            "or pass the result files themselves"
        )
    return files


def decompressed(raw, path):
    """A binary stream of the XML; compression is told by content, as tablegenerator does."""
    head = raw.read(4)
    raw.seek(0)
    if not head:
        raise ResultFileError(path, "file is empty; re-run the benchexec run that wrote it")
    if head.startswith(b"PK"):
        raise ResultFileError(
            path, "is a ZIP archive (BenchExec's .logfiles.zip), not a result file; "
            "pass the matching .results.*.xml.bz2 file"
        )
    if head.startswith(b"BZh"):
        return bz2.BZ2File(raw)
    if head.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw)
    return raw


def prefetched(pieces):
    """The pieces' bytes chunk by chunk, the next chunk read in a thread meanwhile.

    Reading and decompressing release the GIL, so they overlap with parsing on two cores.
    """
    with contextlib.closing(pieces), concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(next, pieces, b"")
        while chunk := pending.result():
            pending = pool.submit(next, pieces, b"")
            yield chunk


def pieces(stream):
    """The stream's bytes, CHUNK_SIZE at a time."""
    yield from iter(functools.partial(stream.read, CHUNK_SIZE), b"")


def fast_pieces(raw, stream, path):
    """The decompressed bytes for the fast reader: those of a large bz2 file from a child process."""
    if isinstance(stream, bz2.BZ2File) and sys.executable and os.fstat(raw.fileno()).st_size >= CHILD_MIN_BYTES:
        return _bz2_pieces(path)
    return pieces(stream)


def _bz2_pieces(path):
    """The bz2 file's bytes, decompressed by a child process, CHUNK_SIZE at a time.

    bz2 decompresses slower than the fast reader reads, and in a thread of this process the two
    would take turns at the GIL: bz2 releases it while it decompresses but must wait for it
    every few hundred KiB, which made loading take as long as decompressing and reading one
    after the other. A child process (Python's own bz2 again) has a GIL of its own. Errors are
    the strict reader's to report: a failing child only makes the fast reader give up.
    """
    with open(path, "rb") as source:  # a file offset of its own
        child = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _DECOMPRESS], stdin=source, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
    try:
        output = child.stdout.fileno()
        with contextlib.suppress(OSError):  # Linux: a chunk fits in the pipe, fewer handovers
            fcntl.fcntl(output, _F_SETPIPE_SZ, CHUNK_SIZE)
        while chunk := _read_fully(output, CHUNK_SIZE):
            yield chunk
        if child.wait():
            raise NotSimple("bz2 data the bz2 module cannot decompress")
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def _read_fully(descriptor, size):
    """size bytes from a pipe, fewer only at its end."""
    data = b""
    while len(data) < size and (more := os.read(descriptor, size - len(data))):
        data += more
    return data
