"""Aligning the answer's columns with the gold's: a bipartite matching, with a hard bound.

Which answer column answers which gold column is a bipartite matching problem. Each pair is
first checked by a necessary condition on the two columns alone (``compatible``: the same
multiset of values, within the tolerance where a float is involved), and, for results of
the same width, by the rows the values stand in (``refined``). A maximum matching
(Hopcroft-Karp, in pairing.py) over the compatible pairs rules out every result no
arrangement can fit at once; otherwise ``Search`` backtracks over the compatible pairs,
cutting a branch as soon as the partial projection of the rows differs, with identical
columns on either side treated as one. The search stops after ``SEARCH_BUDGET_CELLS`` cells
of work or ``SEARCH_MAX_LEAVES`` full comparisons, and the caller reports that it stopped.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections import Counter
from typing import Any

from pytest_nl2sql.scoring.pairing import (
    NUM,
    PLAIN_NUMS,
    Budget,
    Verdict,
    compare,
    fl,
    is_num,
    num_close,
)
from pytest_nl2sql.scoring.rule import MatchRule, Tolerance
from pytest_nl2sql.suitefile.values import NAN

__all__ = ["SEARCH_BUDGET_CELLS", "SEARCH_MAX_LEAVES", "Column", "Search", "compatible", "refined", "row_contents"]

#: The search for a column arrangement gives up (and says so) after this much work:
#: cells hashed while projecting rows, plus this many per row and gold column.
SEARCH_BUDGET_CELLS = 300_000
#: At most this many complete arrangements are compared row by row.
SEARCH_MAX_LEAVES = 64


class Column:
    """One column's values and what any column that matches it must share."""

    def __init__(self, values: list[Any]) -> None:
        self.values = values
        self.types = set(map(type, values))
        self.all_numbers = self.types <= PLAIN_NUMS and NAN not in values
        self.has_float = float in self.types and any(type(v) is float and v is not NAN for v in values)

    @functools.cached_property
    def counts(self) -> Counter:
        return Counter(self.values)

    @functools.cached_property
    def distinct(self) -> set:
        return set(self.values)

    @functools.cached_property
    def exact(self) -> list:
        return [] if self.all_numbers else [v for v in self.values if not is_num(v)]

    @functools.cached_property
    def nums(self) -> list[float]:
        if self.all_numbers:
            try:
                return sorted(map(float, self.values))
            except OverflowError:
                pass
        return sorted(fl(v) for v in self.values if is_num(v))

    @functools.cached_property
    def lenient(self) -> list:
        if self.all_numbers:
            return [NUM] * len(self.values)
        return [NUM if is_num(v) else v for v in self.values]


def _sorted_close(xs: list[float], ys: list[float], tol: Tolerance) -> bool:
    for x, y in zip(xs, ys, strict=True):
        if x != y:
            if math.isinf(x) or math.isinf(y):
                return False
            d = abs(x - y)
            if not (d <= tol.abs or d <= tol.rel * max(abs(x), abs(y))):
                return False
    return True


def _covered(xs: list[float], ys: list[float], tol: Tolerance) -> bool:
    """Every x has a y within the tolerance (both sorted)."""
    for x in xs:
        k = bisect.bisect_left(ys, x)
        if not any(0 <= i < len(ys) and _sorted_close([x], [ys[i]], tol) for i in (k - 1, k)):
            return False
    return True


def compatible(g: Column, p: Column, rule: MatchRule, tol: Tolerance) -> bool:
    """A necessary condition for gold column ``g`` to be answered by column ``p``."""
    if rule.order_matters:
        t = tol if (g.has_float or p.has_float) else None
        return all(x is y or x == y or (is_num(x) and is_num(y) and num_close(x, y, t)) for x, y in zip(g.values, p.values, strict=True))
    exact = not (g.has_float or p.has_float)
    if rule.duplicates == "ignore":
        if exact:
            return g.distinct == p.distinct
        if set(g.exact) != set(p.exact) or bool(g.nums) != bool(p.nums):
            return False
        return _covered(g.nums, p.nums, tol) and _covered(p.nums, g.nums, tol)
    if exact:
        return g.counts == p.counts
    if len(g.nums) != len(p.nums) or Counter(g.exact) != Counter(p.exact):
        return False
    # rows paired one to one pair this column's values one to one; for a tolerance of this
    # form the sorted order is a best pairing, so it decides whether any pairing exists
    return _sorted_close(g.nums, p.nums, tol)


def row_contents(rows: list[tuple], loose: bool) -> list[int]:
    """Each row's multiset of values (numbers as a marker when some column holds floats), hashed."""
    # a row's values' hashes, sorted: the multiset up to hash collisions, which can only make
    # two rows look alike (so "they differ" stays exact, and refining stays a necessary condition)
    if loose:
        return [hash(tuple(sorted(hash(NUM if is_num(v) else v) for v in r))) for r in rows]
    return [hash(tuple(sorted(map(hash, r)))) for r in rows]


def refined(g: Column, p: Column, rkg: list[int], rkp: list[int], rule: MatchRule) -> bool:
    """Column ``p`` holds the values of ``g`` in rows of the same contents (a necessary condition)."""
    exact = not (g.has_float or p.has_float)
    gv = zip(g.values if exact else g.lenient, rkg, strict=True)
    pv = zip(p.values if exact else p.lenient, rkp, strict=True)
    if rule.duplicates == "ignore":
        return set(gv) == set(pv)
    return Counter(gv) == Counter(pv)


def _classes(cols: list[Column]) -> list[list[int]]:
    """Columns with identical values, grouped (each group in index order)."""
    seen: dict[tuple, list[int]] = {}
    for j, c in enumerate(cols):
        seen.setdefault(tuple(c.values), []).append(j)
    return list(seen.values())


class Search:
    """Find an injective map gold column -> answer column under which the rows match.

    Gold columns with identical values are interchangeable, and so are answer columns: the
    search assigns a gold column a *class* of answer columns (taking its first free member)
    and, within a class of identical gold columns, classes in non-decreasing order -- every
    arrangement up to these symmetries is visited once. Each partial arrangement must keep
    the multiset (set, list) of projected rows equal on both sides, else the branch is cut."""

    def __init__(self, gold: list[tuple], pred: list[tuple], gcols: list[Column], pcols: list[Column],
                 compat: list[list[bool]], rule: MatchRule, tols: list[Tolerance], prefer: list[list[int]]) -> None:
        self.gold, self.pred, self.g, self.p = gold, pred, gcols, pcols
        self.rule, self.tols = rule, tols
        n = len(gcols)
        self.pclasses = _classes(pcols)
        self.pclass_of = {j: k for k, members in enumerate(self.pclasses) for j in members}
        gclasses = _classes(gcols)
        # most constrained gold class first; members stay together, in index order
        def n_cands(members: list[int]) -> int:
            return sum(compat[members[0]])

        self.order: list[int] = []
        self.same_as_prev: list[bool] = []
        for members in sorted(gclasses, key=lambda ms: (n_cands(ms), ms[0])):
            for k, i in enumerate(members):
                self.order.append(i)
                self.same_as_prev.append(k > 0)
        self.cands: dict[int, list[int]] = {}
        for i in range(n):
            classes: list[int] = []
            for j in prefer[i] + list(range(len(pcols))):
                if compat[i][j] and self.pclass_of[j] not in classes:
                    classes.append(self.pclass_of[j])
            self.cands[i] = classes
        self.rows = max(len(gold), len(pred), 1)
        self.budget = Budget(SEARCH_BUDGET_CELLS + 4 * n * self.rows)
        self.leaves = 0
        self.gave_up = False
        self.first_failure: tuple[tuple[int, ...], Verdict] | None = None

    def _same(self, kg: list[int], kp: list[int]) -> bool:
        if self.rule.order_matters:
            return kg == kp
        if self.rule.duplicates == "ignore":
            return set(kg) == set(kp)
        return Counter(kg) == Counter(kp)

    def run(self) -> tuple[int, ...] | None:
        n = len(self.order)
        assign = [-1] * len(self.g)
        used_in_class = [0] * len(self.pclasses)
        chosen_class = [-1] * n
        init = [0] * len(self.gold)
        initp = [0] * len(self.pred)

        def rec(depth: int, kg: list[int], kp: list[int]) -> tuple[int, ...] | None:
            if depth == n:
                align = tuple(assign)
                self.leaves += 1
                projected = [tuple(r[j] for j in align) for r in self.pred]
                self.budget.spend(len(self.pred) * n)
                floats = [self.g[i].has_float or self.p[j].has_float for i, j in enumerate(align)]
                verdict = compare(self.gold, projected, self.rule, self.tols, floats)
                if verdict.ok:
                    return align
                if self.first_failure is None:
                    self.first_failure = (align, verdict)
                if self.leaves >= SEARCH_MAX_LEAVES:
                    self.gave_up = True
                return None
            i = self.order[depth]
            floor = chosen_class[depth - 1] if depth and self.same_as_prev[depth] else -1
            for c in self.cands[i]:
                if self.gave_up or self.budget.exceeded:
                    self.gave_up = True
                    return None
                if c < floor or used_in_class[c] >= len(self.pclasses[c]):
                    continue
                j = self.pclasses[c][used_in_class[c]]
                gcol, pcol = self.g[i], self.p[j]
                exact = not (gcol.has_float or pcol.has_float)
                gv = gcol.values if exact else gcol.lenient
                pv = pcol.values if exact else pcol.lenient
                self.budget.spend(len(gv) + len(pv))
                nkg = [hash((k, v)) for k, v in zip(kg, gv, strict=True)]
                nkp = [hash((k, v)) for k, v in zip(kp, pv, strict=True)]
                if not self._same(nkg, nkp):
                    continue
                assign[i] = j
                used_in_class[c] += 1
                chosen_class[depth] = c
                found = rec(depth + 1, nkg, nkp)
                if found is not None:
                    return found
                assign[i] = -1
                used_in_class[c] -= 1
            return None

        return rec(0, init, initp)


