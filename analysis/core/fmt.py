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


def pct(fraction, digits=2, missing=MISSING):
    """0.0123 -> '1.23%' (the report's form); ``missing`` ('–', or None for an empty table cell)
    when missing."""
    return f"{fraction:.{digits}%}" if _finite(fraction) else missing


def p_value(p):
    """A p-value in 3 digits; one below the smallest float scipy can return is 0.0, shown as such."""
    if p != p:
        return MISSING
    return "< 1e-300" if p == 0 else f"{p:.3g}"


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


def quantity(value, unit):
    """A value in its unit, 3 significant digits: ns as duration_ns ('1.5 µs'), else '12.3 GB/s';
    '–' when missing."""
    if unit == "ns":
        return duration_ns(value)
    return f"{value:.3g} {unit}" if _finite(value) else MISSING


def binary_size(nbytes):
    """'1 KiB', '1.5 MiB', '128 MiB': bytes in the largest binary unit that keeps them >= 1."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= factor:
            return f"{nbytes / factor:.3g} {unit}"
    return f"{nbytes:.0f} B"


def finite(value):
    """``value`` when it is a finite number, else None: a table cell the report shows as missing,
    whether the value is absent or NaN (the sd of a single run)."""
    return value if _finite(value) else None
