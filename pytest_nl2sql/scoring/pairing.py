"""Comparing rows once their columns are aligned: values within a tolerance, and pairing the
rows that are not equal exactly.

Two rows that differ only in a float compare within the column's tolerance. Leftover rows
(those a multiset difference does not cancel) are grouped by their *exact* parts first --
text, dates, NULL, exact numbers of columns with no float -- and inside a group paired by a
maximum bipartite matching (Hopcroft-Karp) over the pairs within the tolerance, never by
sort order alone -- unless the rows of a group differ in one number only: then the sort order
is a best pairing, and one pass pairs them. The pairing has a hard bound (``PAIR_BUDGET`` pair checks); past it the
verdict is a mismatch that says so.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Sequence
from decimal import Decimal
from fractions import Fraction
from operator import itemgetter
from typing import Any

import attrs

from pytest_nl2sql.scoring.rule import MatchRule, Tolerance
from pytest_nl2sql.suitefile.values import NAN

__all__ = [
    "NUM",
    "PAIR_BUDGET",
    "PLAIN_NUMS",
    "Budget",
    "Verdict",
    "column_tolerances",
    "compare",
    "fl",
    "has_float",
    "is_num",
    "max_matching",
    "num_close",
    "rows_close",
]

#: Pairing rows within a tolerance gives up (and says so) after this many pair checks.
PAIR_BUDGET = 2_000_000

_NUM_TYPES = (int, float, Decimal, Fraction)
PLAIN_NUMS = {int, float}
_NUM_TYPE_SET = frozenset(_NUM_TYPES)


class _Num:
    """Stands for "a number" in the exact part of a row."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<number>"


NUM = _Num()


def is_num(v: Any) -> bool:
    """A finite or infinite number of the comparison form (not NaN, which is compared exactly)."""
    return type(v) in _NUM_TYPES and v is not NAN


def fl(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def num_close(a: Any, b: Any, tol: Tolerance | None) -> bool:
    """Two numbers of one column: equal, or (in a float column, ``tol`` not None) within ``tol``."""
    if a == b:
        return True
    if tol is None:
        return False  # a column of exact numbers only: exactly
    fa = a if type(a) is float else fl(a)
    fb = b if type(b) is float else fl(b)
    if fa == fb:
        return True
    if math.isinf(fa) or math.isinf(fb):
        return False
    d = abs(fa - fb)
    return d <= tol.abs or d <= tol.rel * max(abs(fa), abs(fb))


def rows_close(a: tuple, b: tuple, tols: Sequence[Tolerance | None]) -> bool:
    """Row ``a`` equals row ``b`` value by value, numbers of float columns within their tolerance."""
    for x, y, t in zip(a, b, tols, strict=True):
        if not (x is y or x == y or (t is not None and is_num(x) and is_num(y) and num_close(x, y, t))):
            return False
    return True


def has_float(rows: Iterable[tuple], width: int) -> list[bool]:
    """Which positions hold a float (NaN aside) in some row."""
    out = [False] * width
    for r in rows:
        for i, v in enumerate(r):
            if type(v) is float and v is not NAN:
                out[i] = True
    return out


def column_tolerances(tols: Sequence[Tolerance], *floats: Sequence[bool]) -> list[Tolerance | None]:
    """The tolerance of each position, None where neither side holds a float there: a column
    of exact numbers (int, Decimal) compares exactly."""
    return [t if any(f[i] for f in floats) else None for i, t in enumerate(tols)]


# -- pairing rows within a tolerance --------------------------------------------------------
class Budget:
    def __init__(self, limit: int) -> None:
        self.left = limit
        self.exceeded = False

    def spend(self, n: int) -> bool:
        self.left -= n
        if self.left < 0:
            self.exceeded = True
        return not self.exceeded


def max_matching(adj: list[list[int]], n_right: int) -> tuple[int, list[int], list[int]]:
    """Hopcroft-Karp: (size, match of each left node or -1, match of each right node or -1)."""
    nl = len(adj)
    ml, mr = [-1] * nl, [-1] * n_right
    for u in range(nl):  # a greedy start
        for v in adj[u]:
            if mr[v] == -1:
                ml[u], mr[v] = v, u
                break
    size = sum(1 for v in ml if v != -1)
    while size < nl:
        dist = [-1] * nl
        q = deque(u for u in range(nl) if ml[u] == -1)
        for u in q:
            dist[u] = 0
        found = False
        while q:
            u = q.popleft()
            for v in adj[u]:
                w = mr[v]
                if w == -1:
                    found = True
                elif dist[w] == -1:
                    dist[w] = dist[u] + 1
                    q.append(w)
        if not found:
            break
        it = [0] * nl
        for s in range(nl):
            if ml[s] != -1:
                continue
            stack, path = [s], []
            while stack:
                u = stack[-1]
                if it[u] < len(adj[u]):
                    v = adj[u][it[u]]
                    it[u] += 1
                    w = mr[v]
                    if w == -1:
                        path.append(v)
                        for uu, vv in zip(stack, path, strict=True):
                            ml[uu], mr[vv] = vv, uu
                        size += 1
                        break
                    if dist[w] == dist[u] + 1:
                        stack.append(w)
                        path.append(v)
                else:
                    dist[u] = -2
                    stack.pop()
                    if path:
                        path.pop()
    return size, ml, mr


def _loose(tols: Sequence[Tolerance | None]) -> frozenset[int]:
    """The positions of float columns: only there may numbers differ a little."""
    return frozenset(i for i, t in enumerate(tols) if t is not None)


def _key(row: tuple, loose: frozenset[int]) -> tuple:
    """The exact part of a row: its values, with the numbers of loose positions as a marker."""
    key = list(row)
    for i in loose:
        if is_num(key[i]):
            key[i] = NUM
    return tuple(key)


def _close_at(numpos: list[int], tols: Sequence[Tolerance | None]) -> Any:
    """``rows_close`` for two rows of one group: their exact parts are equal (the group's key),
    so only the numbers at ``numpos`` (of float columns) may differ."""
    if len(numpos) == 1:
        p, t = numpos[0], tols[numpos[0]]
        return lambda a, b: num_close(a[p], b[p], t)
    at = [(i, tols[i]) for i in numpos]
    return lambda a, b: all(num_close(a[i], b[i], t) for i, t in at)


def _sort_key(rows: list[tuple], numpos: list[int]) -> Any:
    """The sort key of a group's rows: their numbers, as floats (a float is its own key)."""
    if len(numpos) == 1:
        get = itemgetter(numpos[0])
        if all(type(v) is float for v in map(get, rows)):
            return get
        return lambda r, p=numpos[0]: fl(r[p])  # one number: the same order as a 1-tuple of it
    return lambda r: tuple(fl(r[i]) for i in numpos)


class _Index:
    """One side's rows of one exact part, sorted by their first number (for window look-ups)."""

    def __init__(self, rows: list[tuple], numpos: list[int]) -> None:
        self.rows = rows
        # index on the most selective number (a 0.0 / 1.0 flag column would put half the rows
        # in every window and exhaust the pairing bound on equal results)
        self.first = max(numpos, key=lambda i: len({r[i] for r in rows})) if len(numpos) > 1 else (numpos[0] if numpos else None)
        if self.first is None:
            self.order = list(range(len(rows)))
            self.keys: list[float] = []
        else:
            f = self.first
            self.order = sorted(range(len(rows)), key=lambda i: fl(rows[i][f]))
            self.keys = [fl(rows[i][f]) for i in self.order]

    def candidates(self, row: tuple, tols: Sequence[Tolerance | None]) -> Iterable[int]:
        if self.first is None:
            return self.order
        x = fl(row[self.first])
        t = tols[self.first]
        assert t is not None
        w = max(t.abs * (1 + 1e-9), t.window_factor * abs(x)) if not math.isinf(x) else 0.0
        if math.isinf(w) or math.isnan(w):
            return self.order
        lo = bisect.bisect_left(self.keys, x - w)
        hi = bisect.bisect_right(self.keys, x + w)
        return self.order[lo:hi]


def _group(rows: list[tuple], loose: frozenset[int]) -> dict[tuple, list[tuple]]:
    """The rows by their exact part (``_key``; the keys made a column at a time)."""
    groups: dict[tuple, list[tuple]] = defaultdict(list)
    if not rows:
        return groups
    cols: list[Any] = list(zip(*rows, strict=True))
    for i in loose:
        cols[i] = [NUM if type(v) in _NUM_TYPE_SET and v is not NAN else v for v in cols[i]]
    for key, r in zip(zip(*cols, strict=True), rows, strict=True):
        groups[key].append(r)
    return groups


def _pair_multisets(missing: list[tuple], unexpected: list[tuple], tols: Sequence[Tolerance | None], budget: Budget):
    """Pair gold leftovers with answer leftovers one to one within the tolerance.

    Returns (all paired, unpaired gold rows, unpaired answer rows). Rows are grouped by their
    exact part first; inside a group a sort-order pairing is tried, then a maximum matching."""
    loose = _loose(tols)
    if not loose:  # no float on either side: the rows that differ differ exactly
        return False, missing, unexpected
    gm, gu = _group(missing, loose), _group(unexpected, loose)
    left_m: list[tuple] = []
    left_u: list[tuple] = []
    for key in list(gm) + [k for k in gu if k not in gm]:
        ms, us = gm.get(key, []), gu.get(key, [])
        if not ms or not us:
            left_m += ms
            left_u += us
            continue
        numpos = [i for i, v in enumerate(key) if v is NUM]
        close = _close_at(numpos, tols)
        if len(ms) == len(us) or len(numpos) == 1:
            sm, su = sorted(ms, key=_sort_key(ms, numpos)), sorted(us, key=_sort_key(us, numpos))
            if len(ms) == len(us):
                budget.spend(len(ms))
                if all(map(close, sm, su)):
                    continue
            if len(numpos) == 1:  # one number differs: pairing in sort order is best (linear)
                lm, lu = _pair_sorted(sm, su, numpos[0], close)
                left_m += lm
                left_u += lu
                continue
        index = _Index(us, numpos)
        adj: list[list[int]] = []
        for r in ms:
            cands = index.candidates(r, tols)
            if not budget.spend(len(cands) + 1):
                return False, missing, unexpected
            adj.append([j for j in cands if close(r, us[j])])
        _, ml, mr = max_matching(adj, len(us))
        left_m += [r for r, j in zip(ms, ml, strict=True) if j == -1]
        left_u += [r for r, i in zip(us, mr, strict=True) if i == -1]
    return not left_m and not left_u, left_m, left_u


def _pair_sorted(ms: list[tuple], us: list[tuple], pos: int, close: Any) -> tuple[list[tuple], list[tuple]]:
    """Rows alike but for the number at ``pos``, both sorted by it: pair them in one pass (a
    row pairs with the first row of the other side within the tolerance, ``close``); the unpaired ones."""
    left_m: list[tuple] = []
    left_u: list[tuple] = []
    i = j = 0
    while i < len(ms) and j < len(us):
        if close(ms[i], us[j]):
            i += 1
            j += 1
        elif fl(ms[i][pos]) < fl(us[j][pos]):
            left_m.append(ms[i])
            i += 1
        else:
            left_u.append(us[j])
            j += 1
    return left_m + ms[i:], left_u + us[j:]


def _uncovered(rows: Iterable[tuple], other: list[tuple], tols: Sequence[Tolerance | None], budget: Budget) -> list[tuple]:
    """The rows with no row of ``other`` within the tolerance (set semantics)."""
    rows = list(rows)
    loose = _loose(tols)
    groups = _group(other, loose)
    indexes: dict[tuple, _Index] = {}
    out = []
    for r in rows:
        key = _key(r, loose)
        if key not in groups:
            out.append(r)
            continue
        if key not in indexes:
            indexes[key] = _Index(groups[key], [i for i, v in enumerate(key) if v is NUM])
        index = indexes[key]
        cands = index.candidates(r, tols)
        if not budget.spend(len(cands) + 1):
            return list(rows)
        if not any(rows_close(r, index.rows[j], tols) for j in cands):
            out.append(r)
    return out


@attrs.frozen
class Verdict:
    ok: bool
    missing: list = attrs.field(factory=list)
    unexpected: list = attrs.field(factory=list)
    note: str = ""


def compare(
    gold: list[tuple], pred: list[tuple], rule: MatchRule, tols: Sequence[Tolerance], floats: Sequence[bool] | None = None
) -> Verdict:
    """Compare canonical rows of the same width, the answer's already in gold column order.

    ``floats`` says which positions hold a float on either side (computed when None); only
    those compare within ``tols``. Rows equal value by value pair first; the rest are paired
    by a maximum matching within the tolerance."""
    if floats is None:
        floats = [a or b for a, b in zip(has_float(gold, len(tols)), has_float(pred, len(tols)), strict=True)]
    tols = column_tolerances(tols, floats)
    if rule.order_matters:
        if len(gold) == len(pred) and all(g == p or rows_close(g, p, tols) for g, p in zip(gold, pred, strict=True)):
            return Verdict(True)
        missing = [g for i, g in enumerate(gold) if i >= len(pred) or not rows_close(g, pred[i], tols)]
        unexpected = [p for i, p in enumerate(pred) if i >= len(gold) or not rows_close(gold[i], p, tols)]
        return Verdict(False, missing, unexpected)
    budget = Budget(PAIR_BUDGET)
    note = "; too many near-equal rows to pair within the bound, so the rows were not all paired"
    if rule.duplicates == "ignore":
        gs, ps = set(gold), set(pred)
        if gs == ps:
            return Verdict(True)
        missing = _uncovered([r for r in gs if r not in ps], list(ps), tols, budget)
        unexpected = _uncovered([r for r in ps if r not in gs], list(gs), tols, budget)
        if budget.exceeded:
            return Verdict(False, missing, unexpected, note)
        return Verdict(not missing and not unexpected, missing, unexpected)
    gs, ps = set(gold), set(pred)
    if len(gs) == len(gold) and len(ps) == len(pred):  # no row repeats: sets are multisets
        if gs == ps:
            return Verdict(True)
        missing, unexpected = [r for r in gold if r not in ps], [r for r in pred if r not in gs]
    else:
        gc, pc = Counter(gold), Counter(pred)
        if gc == pc:
            return Verdict(True)
        missing = list((gc - pc).elements())
        unexpected = list((pc - gc).elements())
    if len(gold) != len(pred):
        return Verdict(False, missing, unexpected)
    ok, left_m, left_u = _pair_multisets(missing, unexpected, tols, budget)
    if budget.exceeded:
        return Verdict(False, missing, unexpected, note)
    return Verdict(ok, left_m, left_u)


