"""
Changepoints in a short series of result-set means: E-Divisive means (Matteson & James 2014), the
method behind MongoDB's and Apache Otava's regression detection, with its permutation test kept
and seeded, so that every changepoint is reproducible and carries a p-value.

The method, and why the kit keeps its own search rather than MongoDB's: docs/calibration.md,
"Changepoints over many invocations".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PERMUTATIONS = 999        # permutations per significance test (p resolution 0.001)
P_THRESHOLD = 0.05        # a candidate is a changepoint when its permutation p is below this
MIN_SIZE = 2              # values per segment, at least
SEED = 0
_BATCH_ELEMENTS = 4_000_000   # permuted distance matrices are processed in batches of this many floats


# --------------------------------------------------------------------------------------------
# E-Divisive means with a permutation test


@dataclass(frozen=True)
class Split:
    """One changepoint found by e_divisive: `position` is the index of the first value after it."""

    position: int
    p: float
    q: float          # the energy statistic Q of the best (tau, kappa)
    kappa: int        # end (exclusive) of the stretch Y the statistic compared against


def _prefix(d):
    """P[..., a, b] = sum of d[..., i, j] over i < a, j < b (a leading batch axis is allowed)."""
    shape = d.shape[:-2] + (d.shape[-2] + 1, d.shape[-1] + 1)
    p = np.zeros(shape)
    p[..., 1:, 1:] = d.cumsum(axis=-2).cumsum(axis=-1)
    return p


def _candidates(s, e, min_size):
    """Every (tau, kappa) with s + min_size <= tau and tau + min_size <= kappa <= e."""
    taus, kappas = [], []
    for tau in range(s + min_size, e - min_size + 1):
        k = np.arange(tau + min_size, e + 1)
        taus.append(np.full(k.size, tau))
        kappas.append(k)
    if not taus:
        return None
    return np.concatenate(taus), np.concatenate(kappas)


def _q(p, s, tau, kappa):
    """Energy statistic Q(Z[s:tau], Z[tau:kappa]; alpha=1) from prefix sums p (batch, T+1, T+1) of
    the distance matrix; tau and kappa are arrays of candidates. Returns (batch, candidates)."""
    m, n = tau - s, kappa - tau
    between = p[:, tau, kappa] - p[:, s, kappa] - p[:, tau, tau] + p[:, s, tau]
    within_x = (p[:, tau, tau] - 2 * p[:, s, tau] + p[:, s, s][:, None]) / 2     # each pair i < k once
    within_y = (p[:, kappa, kappa] - 2 * p[:, tau, kappa] + p[:, tau, tau]) / 2
    pairs_x, pairs_y = m * (m - 1) / 2, n * (n - 1) / 2
    mean_x = np.divide(within_x, pairs_x, out=np.zeros_like(within_x), where=pairs_x > 0)
    mean_y = np.divide(within_y, pairs_y, out=np.zeros_like(within_y), where=pairs_y > 0)
    energy = 2 * between / (m * n) - mean_x - mean_y
    return m * n / (m + n) * energy


def _best(p, segments):
    """Per batch entry, the largest Q over all segments and candidates: (q, tau, kappa) arrays."""
    batch = p.shape[0]
    best_q = np.full(batch, -np.inf)
    best_tau = np.zeros(batch, dtype=int)
    best_kappa = np.zeros(batch, dtype=int)
    for s, tau, kappa in segments:
        q = _q(p, s, tau, kappa)
        i = np.argmax(q, axis=1)
        qi = q[np.arange(batch), i]
        better = qi > best_q
        best_q = np.where(better, qi, best_q)
        best_tau = np.where(better, tau[i], best_tau)
        best_kappa = np.where(better, kappa[i], best_kappa)
    return best_q, best_tau, best_kappa


def e_divisive(values, permutations=PERMUTATIONS, p_threshold=P_THRESHOLD, min_size=MIN_SIZE, seed=SEED):
    """Changepoints of a 1-D series by E-Divisive means (alpha = 1) with a permutation test.

    Returns the significant splits in the order they were found (most pronounced first), each with
    its permutation p. `seed` makes the permutations, and so the result, reproducible.
    """
    z = np.asarray(values, dtype=float).ravel()
    if not np.isfinite(z).all():
        raise ValueError("e_divisive: the series has NaN or infinite values")
    if permutations < 1 or min_size < 1:
        raise ValueError("e_divisive: permutations and min_size must be at least 1")
    t = z.size
    d = np.abs(z[:, None] - z[None, :])
    rng = np.random.default_rng(seed)
    found = []
    while True:
        bounds = [0] + sorted(s.position for s in found) + [t]
        segments = [(s, *c) for s, e in zip(bounds[:-1], bounds[1:]) for c in [_candidates(s, e, min_size)] if c is not None]
        if not segments:
            break
        q_obs, tau, kappa = (a[0] for a in _best(_prefix(d)[None], segments))
        # permute within each current segment; the whole search is repeated on each permutation
        batch = max(1, min(permutations, _BATCH_ELEMENTS // (t * t)))
        exceed, done = 0, 0
        tolerance = 1e-9 * abs(q_obs)   # equal statistics summed in another order
        while done < permutations:
            b = min(batch, permutations - done)
            order = np.empty((b, t), dtype=int)
            for s, e in zip(bounds[:-1], bounds[1:]):
                order[:, s:e] = rng.permuted(np.broadcast_to(np.arange(s, e), (b, e - s)), axis=1)
            permuted = d[order[:, :, None], order[:, None, :]]
            q_perm = _best(_prefix(permuted), segments)[0]
            exceed += int(np.count_nonzero(q_perm >= q_obs - tolerance))
            done += b
        p = (1 + exceed) / (1 + permutations)
        if not p < p_threshold:
            break
        found.append(Split(int(tau), float(p), float(q_obs), int(kappa)))
    return found


# --------------------------------------------------------------------------------------------
# result sets in date order
