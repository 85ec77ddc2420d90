"""
What the files a pair of commands runs and reads hold, so that auto's kept choice of design
(analysis.ab.choices) applies to the same executables and inputs only: a nightly gate names the
same `./build-a/prog` every night, but not the same program.

A command's files: its programs (a word in command position: the first, or one after `;`, `&&`,
`|` …, leading `NAME=value` assignments skipped), looked up on PATH where the word has no slash,
and every other word that names an existing regular file (relative to the commands' cwd; the
value of `--opt=value` too), symlinks followed. An output redirection's target is left out: the
command writes it. Words that name no file are ignored; a command shlex cannot split has no
files (its string still keys the choice). A file up to WHOLE bytes is hashed whole (sha256), a
larger one by its first WHOLE bytes, its size and its modification time. Shared libraries and
files a command opens without naming them are not followed.
"""

import hashlib
import os
import shlex
import shutil
from pathlib import Path

WHOLE = 64 << 20
CONTROL = {";", "&", "&&", "||", "|", "|&", "(", ")", ";;"}


def words(command):
    """The command's shell words, operators (a line break as `;`) words of their own; [] where shlex cannot split it."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, ""
    try:
        return list(lexer)
    except ValueError:
        return []


def _assignment(word):
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def _operator(word):
    return bool(word) and set(word) <= set("<>&|;()")


def named(command):
    """[(word, is_program)] of the words that may name a file: programs where a command starts."""
    out, starts, follows = [], True, ""
    for word in words(command):
        if word in CONTROL:
            starts = True
        elif _operator(word):
            pass
        elif _operator(follows) and follows not in CONTROL:
            if ">" not in follows:            # a redirection's target: read (<), or written and left out
                out.append((word, False))
        elif starts and _assignment(word):
            out.append((word.partition("=")[2], False))
        else:
            out.append((word, starts))
            starts = False
        follows = word
    return out


def _path(word, program, cwd):
    """The file a word names, or None."""
    word = os.path.expanduser(word)
    if program and "/" not in word:
        found = shutil.which(word)
        return Path(found) if found else None
    return Path(cwd) / word


def _candidates(word, program):
    """A word, and the value of an argument `--opt=value`."""
    return (word, word.partition("=")[2]) if "=" in word and not program else (word,)


def files(command, cwd):
    """{word: the existing regular file it names, resolved} of one command."""
    found = {}
    for word, program in named(command):
        for candidate in filter(None, _candidates(word, program)):
            try:
                path = _path(candidate, program, cwd)
                if path is not None and path.is_file():
                    found.setdefault(candidate, path.resolve())
            except (OSError, ValueError):     # a name too long, a NUL byte, a loop of symlinks: no file
                continue
    return found


def digest(path):
    """sha256 of the file (a larger than WHOLE one: of its first WHOLE bytes, size and mtime); "" unreadable."""
    sha = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            stat = os.fstat(f.fileno())
            left = WHOLE
            while left and (chunk := f.read(min(left, 1 << 20))):
                sha.update(chunk)
                left -= len(chunk)
    except OSError:
        return ""
    if stat.st_size > WHOLE:
        sha.update(f"\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return sha.hexdigest()


def content(commands, cwd):
    """{word: sha256} of the files that the commands (run in cwd) name."""
    out = {}
    for command in commands:
        for word, path in files(command or "", cwd).items():
            out.setdefault(word, digest(path))
    return {word: out[word] for word in sorted(out)}


def changed(kept, now):
    """The words whose file is not what it was (added or gone too), in order."""
    return [word for word in sorted(set(kept) | set(now)) if kept.get(word) != now.get(word)]
