"""
Seeded orders in couples: draws 2j - 1 and 2j of a sequence are a permutation drawn from the seed
and its reverse. Over a couple every item stands in every position as often as its mirror, so an
order effect (the first one warms a cache, the second meets a hotter machine) and a drift that is
linear over the couple cancel, where independent shuffles leave them to chance (three invocations
of two definitions came out "BN BN BN" at seed 0). A seed repeats its orders. programs/cmdrun.c
orders the pairs of a batch by the same rule.
"""

import numpy as np


def couple_order(n, seed, draw, *key):
    """The order of n items (indices) at `draw` = 1, 2, ...; `key` separates independent sequences
    of one seed (a rerun's chunks, say)."""
    order = np.random.default_rng([seed, (draw + 1) // 2, *key]).permutation(n)
    return order if draw % 2 else order[::-1]
