"""Number formatting shared by every section, so 'ms' or '%' means one thing across the report.

Conversions (ms, us) return numbers for tables; the text helpers return strings, with '–' for a
value that is missing or not finite.
"""

import math

MISSING = "–"


def _finite(value):
    return value is not None and isinstance(value, (int, float)) and math.isfinite(value)


def ms(seconds):
    """Seconds -> milliseconds; None stays None (a table cell with no value)."""
    return None if seconds is None else seconds * 1e3


def us(seconds):
    """Seconds -> microseconds."""
    return None if seconds is None else seconds * 1e6


def pct(fraction, digits=2):
    """0.0123 -> '1.23%' (the report's form); '–' when missing."""
    return f"{fraction:.{digits}%}" if _finite(fraction) else MISSING


def value_range(values, scale=1.0, digits=4):
    """'lo – hi' of the finite values (one value when they agree), '–' when there are none."""
    values = [v * scale for v in values if _finite(v)]
    if not values:
        return MISSING
    lo, hi = min(values), max(values)
    return f"{lo:.{digits}g}" if lo == hi else f"{lo:.{digits}g} – {hi:.{digits}g}"


def duration_ns(ns):
    """ns in the largest of ms, µs, ns that keeps the value >= 1, 3 significant digits."""
    if not _finite(ns):
        return MISSING
    for unit, factor in (("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= factor:
            return f"{ns / factor:.3g} {unit}"
    return f"{ns:.3g} ns"
