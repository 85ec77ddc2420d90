"""Argument types of plan and ab --until-decided: a relative effect and a duration (light: no numpy)."""

import argparse
import re

FIRST_LOOK = 3   # invocations (a side) before the sequential rule's first look: t on 2 has 1-2 df


def effect_size(text):
    """'2%' or 0.02 -> 0.02."""
    value = str(text).strip()
    try:
        number = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        number = -1.0
    if not 0 < number < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a relative effect like 2% or 0.02")
    return number


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(h|min|m|s)")
_SECONDS = {"h": 3600, "min": 60, "m": 60, "s": 1}


def duration(text):
    """'30m', '1h30m', '90s', '1.5h' -> seconds; a bare number is minutes."""
    value = str(text).strip().lower()
    try:
        return float(value) * 60 if float(value) > 0 else _bad_duration(text)
    except ValueError:
        pass
    parts = _DURATION.findall(value)
    if not parts or _DURATION.sub("", value).strip():
        _bad_duration(text)
    return sum(float(n) * _SECONDS[unit] for n, unit in parts)


def _bad_duration(text):
    raise argparse.ArgumentTypeError(f"'{text}' is not a duration like 30m, 1h30m or 90s")
