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


#: Up to this many resampled draws (resamples x items), the bootstrap draws every item; past it,
#: each resample draws the counts of items that gained and lost a pass at once (a multinomial
#: draw: the same distribution, linear in the resamples, not in the items).
EXACT_DRAWS = 2_000_000


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b items that passed only in one run and c only in
    the other: the binomial test of b against Binomial(b + c, 1/2). 1.0 when b + c is 0.

    Bounded: the tail is summed in floating point from its largest term down, and stops once a
    term no longer changes the sum (a few times sqrt(b + c) terms at most)."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    if n <= 1000:
        tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
        return min(1.0, 2 * tail)
    log_term = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) - n * math.log(2)
    term, total, i = 1.0, 0.0, k  # terms relative to the largest one, C(n, k) / 2**n
    while i >= 0:
        total += term
        if term < total * 1e-17:
            break
        term *= i / (n - i + 1)  # C(n, i-1) / C(n, i)
        i -= 1
    log_tail = log_term + math.log(total)
    return min(1.0, 2 * math.exp(log_tail)) if log_tail < 0 else 1.0


def _binomial(rng: random.Random, n: int, p: float) -> int:
    """A Binomial(n, p) draw: by inversion for a small mean, else the normal approximation
    (rounded, clipped to 0..n) -- accurate far beyond a bootstrap's percentiles."""
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    mean = n * p
    if mean < 30 or n * (1 - p) < 30:
        flip = p > 0.5
        q = 1 - p if flip else p
        # inversion: count successes by geometric skips (expected O(n q) steps, small here)
        count, pos = 0, 0
        log_q = math.log1p(-q)
        while True:
            pos += int(math.log(1.0 - rng.random()) / log_q) + 1
            if pos > n:
                break
            count += 1
        return n - count if flip else count
    draw = round(rng.gauss(mean, math.sqrt(mean * (1 - p))))
    return max(0, min(n, draw))


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
    if n * resamples <= EXACT_DRAWS:
        stats = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    else:
        up, down = diffs.count(1), diffs.count(-1)
        stats = []
        for _ in range(resamples):
            ups = _binomial(rng, n, up / n)
            downs = _binomial(rng, n - ups, down / (n - up)) if n > up else 0
            stats.append((ups - downs) / n)
        stats.sort()
    lo_i = int(math.floor((1 - level) / 2 * resamples))
    hi_i = min(resamples - 1, int(math.ceil((1 + level) / 2 * resamples)) - 1)
    return (round(stats[lo_i], 4), round(stats[hi_i], 4))
