"""Argument types of plan and ab --until-decided: a relative effect, and a duration (one helper for
the kit's time spans, analysis.core.argtypes; light: no numpy)."""

import argparse

from analysis.core.argtypes import duration as duration  # re-exported: ab.py and cli.py import it from here

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
