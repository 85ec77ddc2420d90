"""How many modes a sample's density has: a KDE with a narrow bandwidth and a prominence rule,
plus the bimodality coefficient beside it.

Timing distributions are often bi- or tri-modal (caches warm or cold, a tick or none); the
time-APIs experiment counts the modes per API and load. Apart from analysis.core.stats because
it describes one sample's shape, not a test between samples.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import List

import numpy as np
import scipy.stats

from analysis.core.stats import finite_values
from analysis.core.timers import timer_resolution

KDE_MAX_N = 5000           # modality() fits the KDE on at most this many order statistics


@dataclass(frozen=True)
class Modality:
    """Number and places of the modes of a sample's density."""

    modes: int
    mode_locations: List[float]
    method: str
    bimodality_coefficient: float   # (g^2+1)/(k + 3(n-1)^2/((n-2)(n-3))); > 5/9 hints at bimodality
    note: str = ""

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def _bimodality_coefficient(a: np.ndarray) -> float:
    n = a.size
    if n < 4 or np.ptp(a) == 0:
        return float("nan")
    g = scipy.stats.skew(a, bias=False)
    k = scipy.stats.kurtosis(a, bias=False)  # excess kurtosis
    return float((g * g + 1) / (k + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))))


def modality(x, min_prominence: float = 0.05, max_valley: float = 0.8, min_mass: float = 0.05,
             min_count: int = 8, grid_points: int = 1024) -> Modality:
    """Count the modes of the finite values of x on a Gaussian KDE.

    The bandwidth is Silverman's rule, never narrower than the values' grid (a coarse timer's
    lattice is no mode). A mode is a local maximum of at least `min_prominence` x the highest, parted
    from its neighbour by a valley of at most `max_valley` x the lower, and holding max(`min_mass`,
    `min_count`/n) of the density; n < 10 gives one mode at the median. The rule and its checks:
    docs/experiments.md, "Modes".
    """
    a = finite_values(x)
    n = int(a.size)
    bc = _bimodality_coefficient(a)
    if n == 0:
        return Modality(0, [], "no finite values", bc, "n=0")
    if n < 10:
        return Modality(1, [float(np.median(a))], "median (too few values for a density)", bc,
                        f"n={n} < 10: assumed unimodal")
    if np.ptp(a) == 0:
        return Modality(1, [float(a[0])], "all values identical", bc)
    note = ""
    fit = np.sort(a)
    if n > KDE_MAX_N:
        fit = fit[np.linspace(0, n - 1, KDE_MAX_N).round().astype(int)]
        note = f"KDE fitted on {KDE_MAX_N} evenly spaced order statistics of n={n}"
    m = fit.size
    sd = float(np.std(fit, ddof=1))
    iqr = float(np.subtract(*np.percentile(fit, [75, 25])))
    spread = min(sd, iqr / 1.34) if iqr > 0 else sd
    h = 0.9 * spread * m ** -0.2
    how = "Silverman's rule of thumb 0.9 min(sd, IQR/1.34) n^-1/5"
    grid_step = timer_resolution(a).step
    if np.isfinite(grid_step) and h < grid_step:
        h = grid_step
        how = f"raised to the values' grid step {grid_step:g}"
    kde = scipy.stats.gaussian_kde(fit, bw_method=h / sd)
    xs = np.linspace(fit[0] - 3 * h, fit[-1] + 3 * h, grid_points)
    dens = kde(xs)
    cdf = np.cumsum(dens)
    cdf /= cdf[-1]
    inner = dens[1:-1]
    peaks = np.flatnonzero((inner > dens[:-2]) & (inner >= dens[2:])) + 1
    peaks = [int(p) for p in peaks if dens[p] >= min_prominence * dens.max()]
    least = max(min_mass, min_count / n)
    changed = True
    while changed and len(peaks) > 1:
        changed = False
        valleys = [p + int(np.argmin(dens[p:q + 1])) for p, q in zip(peaks, peaks[1:])]
        for j, v in enumerate(valleys):
            p, q = peaks[j], peaks[j + 1]
            if dens[v] > max_valley * min(dens[p], dens[q]):
                peaks.pop(j + 1 if dens[p] >= dens[q] else j)
                changed = True
                break
        if changed:
            continue
        bounds = [0] + valleys + [grid_points - 1]
        mass = np.diff(cdf[bounds])
        j = int(np.argmin(mass))
        if mass[j] < least:
            peaks.pop(j)
            changed = True
    method = (f"gaussian_kde, h={h:.3g} ({how}); maxima >= {min_prominence:g} of the highest, "
              f"valley <= {max_valley:g} of the lower maximum, mass >= {least:.3g}")
    return Modality(len(peaks), [float(xs[p]) for p in peaks], method, bc, note)
