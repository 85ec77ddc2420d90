"""Argument types the commands share: one line of error for a value argparse cannot take; and
time spans, the kit's own and BenchExec's (light: no numpy, benchexec imported when used)."""

import argparse
import math
import re


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a positive integer")
    return value


def percent(text):
    """A percentage (--until PCT): 1.5 or 1.5%, between 0 and 100."""
    try:
        value = float(str(text).rstrip("% "))
    except ValueError:
        value = -1.0
    if not 0 < value < 100:
        raise argparse.ArgumentTypeError(f"'{text}' is not a percentage between 0 and 100, e.g. 1.5")
    return value


def probability(text):
    """A fraction or a probability (--threshold, --alpha, ...): 0.05, or 5% for the same; a bare
    5 is refused, not guessed: it could mean 5 % or 500 %."""
    text = str(text).strip()
    percent = text.endswith("%")
    try:
        value = float(text[:-1] if percent else text)
    except ValueError:
        value = math.nan
    value = value / 100 if percent else value
    if 0 < value < 1:
        return value
    if not percent and 1 <= value < 100:
        raise argparse.ArgumentTypeError(f"'{text}' is not a fraction between 0 and 1: write {value / 100:g} or {value:g}%")
    raise argparse.ArgumentTypeError(f"'{text}' is not a number between 0 and 1 (or a percentage, e.g. 5%)")


# ---------------------------------------------------------------------------------------------
# Time spans: the kit's own (--budget) and BenchExec's (the limits of its files)

_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*(h|min|m|s)")
_SECONDS = {"h": 3600, "min": 60, "m": 60, "s": 1}


def duration(text):
    """A wall-time budget: '30m', '1h30m', '90s', '1.5h' -> seconds; a bare number is minutes."""
    value = str(text).strip().lower()
    try:
        minutes = float(value)
    except ValueError:
        minutes = None
    if minutes is not None and minutes > 0:
        return minutes * 60
    parts = _SPAN.findall(value)
    if minutes is not None or not parts or _SPAN.sub("", value).strip():
        raise argparse.ArgumentTypeError(f"'{text}' is not a duration like 30m, 1h30m or 90s")
    return sum(float(n) * _SECONDS[unit] for n, unit in parts)


def benchexec_seconds(value):
    """Seconds of a time limit as BenchExec reads its own (a definition's timelimit or
    hardtimelimit, a result file's timelimit: '900 s', '15min', '2h'), by BenchExec's
    util.parse_timespan_value; None where there is none, BenchExec would not take it, or it sets
    no limit (BenchExec's -1)."""
    from benchexec.util import parse_timespan_value

    try:
        seconds = parse_timespan_value(value) if value else None
    except ValueError:  # benchexec.util.InputValueError included
        return None
    return float(seconds) if seconds is not None and seconds > 0 else None
