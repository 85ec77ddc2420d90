"""Load BenchExec result files (``*.results.*.xml``, ``.xml.bz2``, ``.xml.gz``) as column arrays.

Statistics over 100,000 runs want one numpy array per column, not BenchExec's tree of objects, so
a file is read a chunk at a time into one accumulator per column, in SI units. A fast reader
(regular expressions) reads what BenchExec writes; on anything else the strict one (lxml) reads
the file again and decides. The modules: model, files, columns, fast_reader, strict_reader
(docs/architecture.md, "Reading result files").
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import zlib

from lxml import etree

from analysis.core.results import fast_reader, files, strict_reader
from analysis.core.results.columns import TEXT_ONLY, run_table
from analysis.core.results.model import NotSimple, ResultFileError, RunTable, TextAfterNumbers, without_duplicate_blocks

__all__ = ["ResultFileError", "RunTable", "load_result", "load_results", "without_duplicate_blocks"]


def load_results(paths, columns=None) -> list[RunTable]:
    """Load result files; a directory stands for its ``*.results*.xml[.bz2|.gz]`` files, sorted."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    found = [file for path in paths for file in files.result_files(path)]
    if len(found) < 2:
        return [load_result(file, columns) for file in found]
    # two files at a time: one decompresses (bz2 releases the GIL) while the other is parsed; a
    # file of a sweep is often one chunk, so within a file the two cannot overlap. map keeps the
    # order, and the first bad file in that order raises, as one after the other would.
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return list(pool.map(functools.partial(load_result, columns=columns), found))


def load_result(path, columns=None) -> RunTable:
    """Load one result file; any problem with it becomes a one-line ResultFileError.

    columns: the titles of the columns to keep (status and category are always kept), for
    analyses that need a few of many; the others are skipped while reading. None keeps all.
    The runs' `files` attribute is kept with None or when 'files' is among them, else ''.
    """
    return _load(path, columns, fast=True)


def _load(path, columns, fast):
    """load_result, with or without trying the fast reader first (the tests compare both)."""
    if isinstance(columns, str):
        columns = [columns]
    wanted = None if columns is None else set(columns) | set(TEXT_ONLY)
    try:
        with open(path, "rb") as raw:
            return run_table(path, _collect(raw, path, wanted, fast))
    except FileNotFoundError:
        raise ResultFileError(path, "no such file; check the path") from None
    except IsADirectoryError:
        raise ResultFileError(path, "is a directory; use load_results for directories") from None
    except EOFError:
        raise ResultFileError(
            path, "compressed data ends early, the file is truncated; copy it again "
            "or re-run benchexec"
        ) from None
    except (OSError, zlib.error) as e:
        raise ResultFileError(
            path, f"cannot be read ({e}); check that it is a complete BenchExec result file"
        ) from None
    except etree.LxmlError as e:
        raise ResultFileError(
            path, f"is not well-formed XML ({getattr(e, 'msg', e)}); pass a BenchExec result "
            "file (*.results.*.xml.bz2), complete and unmodified"
        ) from None


# Whatever stops the fast reader makes the strict one read the file from the start: it raises
# its own error for a broken file, so that both give the same message.
_FALLBACK = (NotSimple, UnicodeDecodeError, ResultFileError, etree.LxmlError, EOFError, OSError, zlib.error)


def _collect(raw, path, wanted, fast):
    """The file's runs and attributes in a Collector, read fast if the file allows it."""
    stream = files.decompressed(raw, path)
    if fast:
        for keep_text in (False, True):
            try:
                return fast_reader.collect(files.fast_pieces(raw, stream, path), path, wanted, keep_text)
            except _FALLBACK as problem:
                raw.seek(0)
                stream = files.decompressed(raw, path)
                if not isinstance(problem, TextAfterNumbers):
                    break
    return strict_reader.collect(files.pieces(stream), path, wanted)
