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
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["KINDS", "bird_set_match", "classify", "for_item", "spider_result_eq"]

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
_MAX_WIDTH_PERMUTED = 6
_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T]00:00:00(?:\.0+)?$")


def _hashable(v: Any) -> Any:
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


def _rows(rows: Sequence[Any] | None, columns: Sequence[str] = ()) -> list[tuple]:
    out = []
    for r in rows or []:
        if isinstance(r, Mapping):
            keys = list(columns) or list(r)
            out.append(tuple(_hashable(r.get(k)) for k in keys))
        elif isinstance(r, (list, tuple)):
            out.append(tuple(_hashable(v) for v in r))
        else:
            out.append((_hashable(r),))
    return out


def bird_set_match(gold: Sequence[tuple], pred: Sequence[tuple]) -> bool:
    """BIRD's execution rule: the sets of row tuples are equal."""
    return set(pred) == set(gold)


def spider_result_eq(gold: Sequence[tuple], pred: Sequence[tuple], order_matters: bool) -> bool:
    """The official Spider ``result_eq`` on two results."""
    gold, pred = list(gold), list(pred)
    if not gold and not pred:
        return True
    if len(gold) != len(pred):
        return False
    width = len(gold[0])
    if len(pred[0]) != width or any(len(r) != width for r in (*gold, *pred)):
        return False
    gold_values = [{row[i] for row in gold} for i in range(width)]
    pred_values = [{row[j] for row in pred} for j in range(width)]
    candidates = [[j for j in range(width) if pred_values[j] <= gold_values[i]] for i in range(width)]
    for perm in itertools.product(*candidates):
        if len(set(perm)) != width:
            continue
        projected = [tuple(row[j] for j in perm) for row in pred]
        if (projected == gold) if order_matters else (Counter(projected) == Counter(gold)):
            return True
    return False


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _close(a: Any, b: Any, tol: float) -> bool:
    if a == b:
        return True
    return _num(a) and _num(b) and abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def _key(row: tuple) -> tuple:
    return tuple((0, 0.0, "") if v is None else (1, float(v), "") if _num(v) else (2, 0.0, str(v)) for v in row)


def _same_bag(gold: list[tuple], pred: list[tuple], tol: float) -> bool:
    if len(gold) != len(pred):
        return False
    if Counter(gold) == Counter(pred):
        return True
    return all(
        len(g) == len(p) and all(_close(x, y, tol) for x, y in zip(g, p, strict=True))
        for g, p in zip(sorted(gold, key=_key), sorted(pred, key=_key), strict=True)
    )


def _canon(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)
    if _num(v):
        f = float(v)
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
    """The answer's columns in the order that best fits the gold's (by column values)."""
    width = len(gold[0])
    if width > _MAX_WIDTH_PERMUTED:
        return pred
    best, best_score = pred, -1
    gold_cols = [Counter(r[i] for r in gold) for i in range(width)]
    for perm in itertools.permutations(range(width)):
        score = sum(sum((gold_cols[i] & Counter(r[j] for r in pred)).values()) for i, j in enumerate(perm))
        if score > best_score:
            best, best_score = [tuple(r[j] for j in perm) for r in pred], score
    return best


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
    if _same_bag(gold, aligned, tolerance):
        if order_matters:
            out["kinds"].append("order_only")
        return out
    if set(gold) == set(aligned):
        out["kinds"].append("duplicates_only")
        return out
    if _same_bag(gold, aligned, 1e-2) and any(isinstance(v, float) for r in (*gold, *aligned) for v in r):
        out["kinds"].append("float_only")
        return out
    canon_g = [tuple(_canon(v) for v in r) for r in gold]
    canon_p = [tuple(_canon(v) for v in r) for r in aligned]
    if _same_bag(canon_g, canon_p, tolerance) or (order_matters and canon_g == canon_p):
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
    result["spider"] = not answer.truncated and any(spider_result_eq(g, pred, spider_order) for g in golds)
    if not result["kinds"]:
        result["kinds"] = ["match_rule"]  # equal under the default rule: the case's match settings failed it
    return result
