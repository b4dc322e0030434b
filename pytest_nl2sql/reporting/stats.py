"""The statistics of comparing two runs: the exact McNemar test and a paired bootstrap interval
(Wilson intervals are in ``intervals``).

Plain Python (no numpy), deterministic (the bootstrap takes a seed), so a report is the same
every time it is computed from the same records.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = ["mcnemar_exact", "paired_bootstrap_ci"]


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b items that passed only in one run and c only in
    the other: the binomial test of b against Binomial(b + c, 1/2). 1.0 when b + c is 0."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired_bootstrap_ci(
    base: Sequence[bool], new: Sequence[bool], *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of accuracy(new) - accuracy(base) over paired items
    (the same items resampled for both runs)."""
    n = len(base)
    if n == 0:
        return (0.0, 0.0)
    diffs = [int(b2) - int(b1) for b1, b2 in zip(base, new, strict=True)]
    rng = random.Random(seed)
    stats = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    lo_i = int(math.floor((1 - level) / 2 * resamples))
    hi_i = min(resamples - 1, int(math.ceil((1 + level) / 2 * resamples)) - 1)
    return (round(stats[lo_i], 4), round(stats[hi_i], 4))
