"""The rule that decides whether an answer's rows equal the gold rows (``result_match``).

The default rule (docs/scoring.md defends it):

* **Rows** are compared as a multiset (duplicates count) unless the case says
  ``order_matters: true``, then as a list.
* **Columns** are matched by position after the best permutation: column names are ignored
  (``COUNT(*)`` and ``n`` are the same answer), the same number of columns is required, and
  the columns of the answer may come in any order (Spider's rule).
* **Values**: ints, floats and Decimals compare as numbers, floats within a tolerance of
  ``1e-6`` relative (``|a - b| <= tol * max(1, |a|, |b|)``), so summation order does not
  decide a verdict; NULL equals NULL; text compares exactly; dates compare as the ISO text
  the adapter normalizes them to (values.py).
* A truncated answer never matches.

Each part can be changed per suite (top-level ``match:``) or per case (``match:``):
``column_names: require`` (names must match, case-insensitively, and decide the alignment),
``duplicates: ignore`` (compare as sets), ``extra_columns: allow`` (the answer may carry
more columns than the gold), ``float_tolerance: 0`` (exact).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

__all__ = ["MatchResult", "MatchRule", "match_rows", "rows_to_tuples"]

DEFAULT_TOLERANCE = 1e-6
_MAX_PERMUTATIONS = 5040  # 7 columns; wider results are aligned by column signature


@attrs.frozen
class MatchRule:
    column_names: str = "ignore"
    duplicates: str = "count"
    extra_columns: str = "forbid"
    float_tolerance: float = DEFAULT_TOLERANCE
    order_matters: bool = False

    @classmethod
    def build(cls, *layers: Mapping[str, Any] | None, order_matters: bool = False) -> MatchRule:
        """The rule from suite and case ``match:`` settings, later layers winning."""
        merged: dict[str, Any] = {}
        for layer in layers:
            if layer:
                merged.update(layer)
        return cls(order_matters=order_matters, **merged)


@attrs.frozen
class MatchResult:
    matched: bool
    reason: str = ""
    missing: tuple[tuple, ...] = ()
    unexpected: tuple[tuple, ...] = ()
    columns: tuple[int, ...] | None = None  # answer column for each gold column


def rows_to_tuples(rows: Sequence[Mapping[str, Any]]) -> tuple[tuple[str, ...], list[tuple]]:
    """Gold rows (``{column: value}`` maps) as a column tuple and row tuples."""
    if not rows:
        return (), []
    columns = tuple(rows[0])
    return columns, [tuple(r.get(c) for c in columns) for r in rows]


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _close(a: Any, b: Any, tol: float) -> bool:
    if a == b:
        return True
    if _is_num(a) and _is_num(b):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return abs(a - b) <= tol * max(1.0, abs(a), abs(b))
    return False


def _rows_close(a: tuple, b: tuple, tol: float) -> bool:
    return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b, strict=True))


def _sort_key(row: tuple) -> tuple:
    return tuple((0, 0.0, "") if v is None else (1, float(v), "") if _is_num(v) else (2, 0.0, str(v)) for v in row)


def _compare(gold: list[tuple], pred: list[tuple], rule: MatchRule) -> tuple[bool, list[tuple], list[tuple]]:
    """Compare equally-shaped row tuples; return (matched, missing, unexpected)."""
    if rule.order_matters:
        if len(gold) == len(pred) and gold == pred:
            return True, [], []
        if len(gold) == len(pred) and all(_rows_close(g, p, rule.float_tolerance) for g, p in zip(gold, pred, strict=True)):
            return True, [], []
        missing = [g for i, g in enumerate(gold) if i >= len(pred) or not _rows_close(g, pred[i], rule.float_tolerance)]
        unexpected = [p for i, p in enumerate(pred) if i >= len(gold) or not _rows_close(gold[i], p, rule.float_tolerance)]
        return False, missing, unexpected
    if rule.duplicates == "ignore":
        gc, pc = Counter(set(gold)), Counter(set(pred))
    else:
        if len(gold) != len(pred):
            gc, pc = Counter(gold), Counter(pred)
            return False, list((gc - pc).elements()), list((pc - gc).elements())
        gc, pc = Counter(gold), Counter(pred)
    if gc == pc:
        return True, [], []
    missing = list((gc - pc).elements())
    unexpected = list((pc - gc).elements())
    if rule.float_tolerance > 0 and len(missing) == len(unexpected):
        # only inexact numbers differ? pair them up in sorted order, within tolerance
        ms, us = sorted(missing, key=_sort_key), sorted(unexpected, key=_sort_key)
        if all(_rows_close(m, u, rule.float_tolerance) for m, u in zip(ms, us, strict=True)):
            return True, [], []
    return False, missing, unexpected


def _alignments(gold_cols: tuple[str, ...], pred_cols: tuple[str, ...], gold: list[tuple], pred: list[tuple], rule: MatchRule):
    """Candidate maps gold column i -> answer column j, most likely first."""
    n, m = len(gold_cols), len(pred_cols)
    identity = tuple(range(n))
    if rule.column_names == "require":
        lower = [c.lower() for c in pred_cols]
        try:
            yield tuple(lower.index(c.lower()) for c in gold_cols)
        except ValueError:
            return
        return
    tried: set[tuple[int, ...]] = set()
    if n == m:
        tried.add(identity)
        yield identity
    by_name = {c.lower(): j for j, c in enumerate(pred_cols)}
    named = tuple(by_name.get(c.lower(), -1) for c in gold_cols)
    if -1 not in named and len(set(named)) == n and named not in tried:
        tried.add(named)
        yield named
    # a column's values (as a multiset over all rows, floats rounded) must match for it to be
    # a candidate; a gold column no answer column matches keeps every column as a candidate
    def signature(rows: list[tuple], j: int) -> Counter:
        return Counter(round(v, 4) if isinstance(v, float) else v for v in (r[j] for r in rows))

    if not gold or not pred:
        if n <= m:
            yield from itertools.islice(itertools.permutations(range(m), n), _MAX_PERMUTATIONS)
        return
    gsig = [signature(gold, i) for i in range(n)]
    psig = [signature(pred, j) for j in range(m)]
    options = [[j for j in range(m) if psig[j] == gsig[i]] or list(range(m)) for i in range(n)]
    count = 0
    for combo in itertools.product(*options):
        if len(set(combo)) != n or combo in tried:
            continue
        yield combo
        count += 1
        if count >= _MAX_PERMUTATIONS:
            return


def match_rows(
    gold_columns: Sequence[str],
    gold_rows: list[tuple],
    pred_columns: Sequence[str],
    pred_rows: Sequence[tuple],
    rule: MatchRule = MatchRule(),
    *,
    truncated: bool = False,
) -> MatchResult:
    """Do the answer's rows equal the gold rows under ``rule``?"""
    if truncated:
        return MatchResult(False, "the answer was truncated at the row limit (a cut result never matches)")
    gold_cols, pred_cols = tuple(gold_columns), tuple(pred_columns)
    pred = pred_rows if isinstance(pred_rows, list) else list(pred_rows)
    if not gold_rows and not pred:
        return MatchResult(True)
    n = len(gold_cols) if gold_cols else (len(gold_rows[0]) if gold_rows else 0)
    m = len(pred_cols) if pred_cols else (len(pred[0]) if pred else 0)
    if not gold_cols:
        gold_cols = tuple(f"_{i}" for i in range(n))
    if not pred_cols:
        pred_cols = tuple(f"_{j}" for j in range(m))
    if gold_rows and pred and n != m and rule.extra_columns == "forbid":
        return MatchResult(False, f"the answer has {m} columns, the gold has {n}")
    if n > m:
        return MatchResult(False, f"the answer has {m} columns, the gold has {n}")
    first_missing: list[tuple] = []
    first_unexpected: list[tuple] = []
    tried = False
    for align in _alignments(gold_cols, pred_cols, gold_rows, pred, rule):
        projected = pred if align == tuple(range(m)) else [tuple(r[j] for j in align) for r in pred]
        ok, missing, unexpected = _compare(gold_rows, projected, rule)
        if ok:
            return MatchResult(True, columns=align)
        if not tried:
            first_missing, first_unexpected, tried = missing, unexpected, True
    if not tried:
        if rule.column_names == "require":
            return MatchResult(False, f"no column of the answer {list(pred_cols)} matches the gold columns {list(gold_cols)} by name")
        return MatchResult(False, f"no arrangement of the answer's columns {list(pred_cols)} matches the gold columns {list(gold_cols)}")
    what = "rows differ"
    if len(gold_rows) != len(pred):
        what = f"{len(pred)} rows, the gold has {len(gold_rows)}"
    elif rule.order_matters:
        what = "rows differ or come in another order (order matters for this case)"
    return MatchResult(False, what, tuple(first_missing), tuple(first_unexpected))
