"""The failure taxonomy of a ``result_match`` miss, and what other benchmarks' rules would say.

For every allowed item whose rows did not match, ``classify`` names what kind of difference it
is, the first that applies (docs/report.md#failure-taxonomy):

``no_answer`` (the engine gave none), ``truncated`` (cut at the row limit), ``column_count``,
``empty_vs_nonempty``, ``order_only`` (the same rows in another order), ``duplicates_only``
(the same distinct rows, counted differently), ``float_only`` (numbers differ only within 1%
and a float is involved), ``value_format`` (equal once text is trimmed and case-folded, numeric
text read as numbers, ``x.0`` as ``x``, a midnight timestamp as its date), else ``missing_rows``
and/or ``extra_rows``; ``match_rule`` when the rows are equal under the default rule and the
case's ``match:`` settings (names required, exact floats, order) failed them.

And, per miss, whether two published rules would have passed the same rows:

* **BIRD** (``bird_set``): ``set(predicted) == set(gold)`` -- rows as tuples in the columns'
  given order, duplicates and order ignored, Python ``==`` on values.
* **Spider** (``spider``): the official ``result_eq`` (test-suite-sql-eval, as
  benchmarks/spider/official.py reimplements it): equal row and column counts, some permutation
  of the predicted columns making the rows equal, as a list when the gold SQL contains
  ``order by`` anywhere, else as a multiset; Python ``==``. Judged on the rows the run saw: the
  official metric's deletion of DISTINCT from both queries cannot be replayed without running
  them again.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

__all__ = ["KINDS", "SPIDER_NOT_COMPUTED", "bird_set_match", "classify", "for_item", "spider_result_eq"]

KINDS = (
    "no_answer",
    "truncated",
    "column_count",
    "empty_vs_nonempty",
    "order_only",
    "duplicates_only",
    "float_only",
    "value_format",
    "missing_rows",
    "extra_rows",
    "match_rule",
)
_MAX_WIDTH_PERMUTED = 7  # past it, the answer's columns are aligned greedily
#: Spider's column-permutation search gives up (the verdict: not computed) after this much work.
SPIDER_BUDGET_CELLS = 2_000_000
SPIDER_NOT_COMPUTED = "not computed: too many column candidates"
#: Aligning the answer's columns (the taxonomy only) is skipped past this many cells.
_ALIGN_BUDGET_CELLS = 4_000_000
_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T]00:00:00(?:\.0+)?$")


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


def _rows(rows: Sequence[Any] | None, columns: Sequence[str] = ()) -> list[tuple]:
    out = []
    getter = itemgetter(*columns) if len(columns) > 1 else None
    for r in rows or []:
        if type(r) is tuple:
            t = r
        elif getter is not None and type(r) is dict:
            try:
                t = getter(r)
            except KeyError:  # a missing column reads as None
                t = tuple(r.get(k) for k in columns)
        elif isinstance(r, (tuple, list)):
            t = tuple(r)
        elif isinstance(r, Mapping):
            keys = list(columns) or list(r)
            t = tuple(r.get(k) for k in keys)
        else:
            t = (r,)
        try:
            hash(t)
        except TypeError:  # an unhashable value (a list in a cell): its repr stands for it
            t = tuple(_hashable(v) for v in t)
        out.append(t)
    return out


def bird_set_match(gold: Sequence[tuple], pred: Sequence[tuple]) -> bool:
    """BIRD's execution rule: the sets of row tuples are equal."""
    return set(pred) == set(gold)


def _column_keys(rows: Sequence[tuple], width: int, order_matters: bool) -> list[Any]:
    """Each column's values as a multiset (a list when order matters)."""
    cols = [[row[i] for row in rows] for i in range(width)]
    return cols if order_matters else [Counter(c) for c in cols]


def spider_result_eq(gold: Sequence[tuple], pred: Sequence[tuple], order_matters: bool) -> bool | None:
    """The official Spider ``result_eq`` on two results; None when it is not computed (the
    search for a column permutation would pass its bound: ``SPIDER_NOT_COMPUTED``).

    Bounded: a predicted column may stand for a gold column only when both hold the same
    multiset of values (a list when order matters), and each row must hold the same multiset
    of values on both sides -- both follow from any permutation that makes the rows equal, so
    the verdict is the official one. Identical columns are tried once; the search backtracks
    over the remaining candidates, cutting a branch as soon as the partial rows differ, and
    gives up after ``SPIDER_BUDGET_CELLS`` cells of work."""
    gold, pred = list(gold), list(pred)
    if not gold and not pred:
        return True
    if len(gold) != len(pred):
        return False
    width = len(gold[0])
    if any(len(r) != width for r in gold) or any(len(r) != width for r in pred):
        return False
    try:
        # each row's multiset of values (hashed: a collision only lets the search confirm)
        contents_g = [tuple(sorted(map(hash, r))) for r in gold]
        contents_p = [tuple(sorted(map(hash, r))) for r in pred]
        if (contents_g != contents_p) if order_matters else (Counter(contents_g) != Counter(contents_p)):
            return False
        gkeys, pkeys = _column_keys(gold, width, order_matters), _column_keys(pred, width, order_matters)
    except TypeError:
        return None
    if width == 1:
        return gkeys[0] == pkeys[0]
    pclass: dict[int, int] = {}
    classes: list[list[int]] = []
    for j in range(width):  # identical predicted columns are interchangeable: one class
        column = tuple(row[j] for row in pred)
        for k, members in enumerate(classes):
            if tuple(row[members[0]] for row in pred) == column:
                members.append(j)
                pclass[j] = k
                break
        else:
            pclass[j] = len(classes)
            classes.append([j])
    cands = [[k for k, members in enumerate(classes) if pkeys[members[0]] == gkeys[i]] for i in range(width)]
    if any(not c for c in cands):
        return False
    order = sorted(range(width), key=lambda i: len(cands[i]))
    used = [0] * len(classes)
    perm = [0] * width
    budget = [SPIDER_BUDGET_CELLS]
    n = len(gold)

    def same(kg: list[int], kp: list[int]) -> bool:
        return kg == kp if order_matters else Counter(kg) == Counter(kp)

    def rec(depth: int, kg: list[int], kp: list[int]) -> bool | None:
        if depth == width:  # the hashes say the rows are equal: confirm on the values
            projected = [tuple(row[j] for j in perm) for row in pred]
            return (projected == gold) if order_matters else (Counter(projected) == Counter(gold))
        i = order[depth]
        for k in cands[i]:
            if used[k] >= len(classes[k]):
                continue
            budget[0] -= 2 * n
            if budget[0] < 0:
                return None
            j = classes[k][used[k]]
            nkg = [hash((h, row[i])) for h, row in zip(kg, gold, strict=True)]
            nkp = [hash((h, row[j])) for h, row in zip(kp, pred, strict=True)]
            if not same(nkg, nkp):
                continue
            used[k] += 1
            perm[i] = j
            found = rec(depth + 1, nkg, nkp)
            used[k] -= 1
            if found is not False:
                return found
        return False

    return rec(0, [0] * n, [0] * n)


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _float(v: Any) -> float:
    try:
        return float(v)
    except OverflowError:  # an integer past the float range
        return math.inf if v > 0 else -math.inf


def _close(a: Any, b: Any, tol: float) -> bool:
    if a == b:
        return True
    if type(a) is float and type(b) is float:
        fa, fb = a, b
    elif not (_num(a) and _num(b)):
        return False
    else:
        fa, fb = _float(a), _float(b)
    if math.isinf(fa) or math.isinf(fb):
        return False
    return abs(fa - fb) <= tol * max(1.0, abs(fa), abs(fb))


#: Integers up to this size are exact as floats: they sort as their float does.
_EXACT_INT = 2**53


def _key(row: tuple) -> tuple:
    return tuple([
        (1, v, "") if (t := type(v)) is float or (t is int and -_EXACT_INT <= v <= _EXACT_INT) else _value_key(v)
        for v in row
    ])


def _value_key(v: Any) -> tuple:
    return (0, 0.0, "") if v is None else (1, _float(v), "") if _num(v) else (2, 0.0, str(v))


def _pairs_close(left_g: list[tuple], left_p: list[tuple], tol: float) -> bool:
    """Rows left over by a multiset difference, both sorted: pairwise within ``tol``."""
    return len(left_g) == len(left_p) and all(
        len(g) == len(p) and all(map(_close, g, p, repeat(tol)))
        for g, p in zip(left_g, left_p, strict=True)
    )


def _same_bag(gold: list[tuple], pred: list[tuple], tol: float) -> bool:
    """The same rows as multisets, numbers within ``tol``: the rows a multiset difference
    leaves are paired in sort order (linear in the rows, n log n in the leftovers)."""
    if len(gold) != len(pred):
        return False
    gc, pc = Counter(gold), Counter(pred)
    if gc == pc:
        return True
    return _pairs_close(sorted((gc - pc).elements(), key=_key), sorted((pc - gc).elements(), key=_key), tol)


def _canon(v: Any) -> Any:
    t = type(v)
    if t is float:
        return v if math.isinf(v) else int(v) if v.is_integer() else round(v, 9)
    if t is int and -_EXACT_INT <= v <= _EXACT_INT:
        return v  # int(float(v)) == v
    if isinstance(v, bool):
        return int(v)
    if _num(v):
        f = _float(v)
        if math.isinf(f):
            return v
        return int(f) if f.is_integer() else round(f, 9)
    if isinstance(v, str):
        t = v.strip()
        m = _MIDNIGHT.match(t)
        if m:
            return m.group(1)
        try:
            f = float(t.replace(",", "")) if t else None
        except ValueError:
            return t.casefold()
        if f is None:
            return ""
        return int(f) if f.is_integer() else round(f, 9)
    return v


def _align(gold: list[tuple], pred: list[tuple]) -> list[tuple]:
    """The answer's columns in the order that best fits the gold's (by column values): the
    overlap of every pair of columns once, then the best permutation of up to
    ``_MAX_WIDTH_PERMUTED`` columns (greedy past it); the answer's own order when its columns
    already hold the gold's values, or when the overlaps would cost more than the bound."""
    width = len(gold[0])
    gold_cols = [Counter(r[i] for r in gold) for i in range(width)]
    pred_cols = [Counter(r[j] for r in pred) for j in range(width)]
    if gold_cols == pred_cols:
        return pred
    cost = sum(min(len(g), len(p)) for g in gold_cols for p in pred_cols)
    if cost > _ALIGN_BUDGET_CELLS:
        return pred
    score = [[sum((g & p).values()) for p in pred_cols] for g in gold_cols]
    identity = tuple(range(width))
    best, best_score = identity, sum(score[i][i] for i in range(width))
    if width <= _MAX_WIDTH_PERMUTED:
        for perm in itertools.permutations(range(width)):
            total = sum(score[i][j] for i, j in enumerate(perm))
            if total > best_score:
                best, best_score = perm, total
    else:
        pairs = sorted(((score[i][j], -abs(i - j), i, j) for i in range(width) for j in range(width)), reverse=True)
        chosen: dict[int, int] = {}
        taken: set[int] = set()
        for _s, _d, i, j in pairs:
            if i not in chosen and j not in taken:
                chosen[i] = j
                taken.add(j)
        greedy = tuple(chosen[i] for i in range(width))
        if sum(score[i][j] for i, j in enumerate(greedy)) > best_score:
            best = greedy
    return pred if best == identity else [tuple(r[j] for j in best) for r in pred]


def classify(
    gold: Sequence[tuple],
    pred: Sequence[tuple],
    *,
    order_matters: bool = False,
    truncated: bool = False,
    tolerance: float = 1e-6,
) -> dict[str, Any]:
    """The kinds of difference between two results (first one the primary), with counts."""
    gold, pred = list(gold), list(pred)
    out: dict[str, Any] = {"kinds": [], "missing": 0, "extra": 0}
    if truncated:
        out["kinds"].append("truncated")
    if bool(gold) != bool(pred):
        out["kinds"].append("empty_vs_nonempty")
        out["missing"], out["extra"] = len(gold), len(pred)
        return out
    if not gold:
        return out
    gw, pw = len(gold[0]), len(pred[0])
    if gw != pw:
        out["kinds"].append("column_count")
        out["columns"] = {"gold": gw, "answer": pw}
        return out
    aligned = _align(gold, pred)
    gc, pc = Counter(gold), Counter(aligned)
    out["missing"], out["extra"] = sum((gc - pc).values()), sum((pc - gc).values())
    # the rows equal as they are cancel; the leftovers are sorted once for every check below
    left_g, left_p = sorted((gc - pc).elements(), key=_key), sorted((pc - gc).elements(), key=_key)
    same_size = len(gold) == len(aligned)
    # pairs within the tolerance are within 1e-2 (closeness grows with the tolerance): when
    # they are not within 1e-2, one pass over the leftovers says so for both checks
    near = same_size and _pairs_close(left_g, left_p, 1e-2)
    if same_size and (gc == pc or ((near or tolerance > 1e-2) and _pairs_close(left_g, left_p, tolerance))):
        if order_matters:
            out["kinds"].append("order_only")
        return out
    if set(gold) == set(aligned):
        out["kinds"].append("duplicates_only")
        return out
    if near and any(isinstance(v, float) for r in (*left_g, *left_p) for v in r):
        out["kinds"].append("float_only")
        return out
    canon_g = [tuple(map(_canon, r)) for r in left_g]
    canon_p = [tuple(map(_canon, r)) for r in left_p]
    in_order = False
    if order_matters and len(gold) == len(aligned):
        differ = [(g, p) for g, p in zip(gold, aligned, strict=True) if g != p]
        in_order = all(tuple(map(_canon, g)) == tuple(map(_canon, p)) for g, p in differ)
    if _same_bag(canon_g, canon_p, tolerance) or in_order:
        out["kinds"].append("value_format")
        return out
    if out["missing"]:
        out["kinds"].append("missing_rows")
    if out["extra"]:
        out["kinds"].append("extra_rows")
    return out


def for_item(case: Any, answer: Any, scores: Sequence[Any]) -> dict[str, Any] | None:
    """The taxonomy entry of an item's record: None unless ``result_match`` failed."""
    miss = next((s for s in scores if s.name == "result_match" and s.passed is False), None)
    if miss is None:
        return None
    if answer is None or answer.status != "ok":
        return {"kinds": ["no_answer"], "bird_set": False, "spider": False}
    if getattr(case, "rows", None) is None:
        return None  # the case has no gold rows yet: nothing to compare
    gold_columns = tuple(case.rows[0]) if case.rows and isinstance(case.rows[0], Mapping) else ()
    gold = _rows(case.rows, gold_columns)
    pred = _rows(answer.rows, tuple(answer.columns or ()))
    order_matters = bool(getattr(case, "order_matters", False))
    result = classify(gold, pred, order_matters=order_matters, truncated=bool(answer.truncated))
    spider_order = "order by" in (case.sql or "").lower()
    golds = [gold] + [_rows(alt, tuple(alt[0]) if alt and isinstance(alt[0], Mapping) else ()) for alt in (getattr(case, "alt_rows", None) or ())]
    result["bird_set"] = not answer.truncated and any(bird_set_match(g, pred) for g in golds)
    result["spider"] = False
    if not answer.truncated:
        verdicts = [spider_result_eq(g, pred, spider_order) for g in golds]
        result["spider"] = True if True in verdicts else (None if None in verdicts else False)
        if result["spider"] is None:
            result["not_computed"] = f"spider: {SPIDER_NOT_COMPUTED}"
    if not result["kinds"]:
        result["kinds"] = ["match_rule"]  # equal under the default rule: the case's match settings failed it
    return result
