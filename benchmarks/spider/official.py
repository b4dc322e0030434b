"""The official Spider execution-match verdict, written here from its published description.

test-suite-sql-eval (Zhong, Yu and Klein, 2020; taoyds/test-suite-sql-eval, Apache-2.0)
decides "execution match" like this; this module is an independent implementation of that
published rule (no code is taken from it), used only to measure our agreement with it:

1. Both queries are post-processed: ``> =``, ``< =`` and ``! =`` lose their inner space, and
   -- unless ``keep_distinct`` -- every ``DISTINCT`` keyword is deleted from both queries,
   including the one inside ``COUNT(DISTINCT x)``.
2. Order matters when the gold query's text contains ``order by`` anywhere (subqueries too).
3. ``result_eq``: two empty results are equal; otherwise the row counts and the column counts
   must be equal, and some permutation of the predicted columns must make the predicted rows
   equal to the gold rows -- as a list when order matters, else as a multiset. Values compare
   with Python ``==`` (so ``1 == 1.0``, ``'1' != 1``, no float tolerance, NULL equals NULL).
4. A prediction that fails to execute is wrong; the gold query must execute.
"""

from __future__ import annotations

import itertools
import re
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import attrs

__all__ = ["OfficialVerdict", "execute", "official_exec_match", "official_order_matters", "postprocess", "remove_distinct", "result_eq"]

_STRINGS = re.compile(r"('(?:[^']|'')*'|\"(?:[^\"]|\"\")*\")")
_DISTINCT = re.compile(r"\bdistinct\b", re.IGNORECASE)


def postprocess(sql: str) -> str:
    """Join the spaced comparison operators the official metric repairs (``! =`` -> ``!=``)."""
    return sql.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=")


def remove_distinct(sql: str) -> str:
    """Delete every DISTINCT keyword outside string literals (the official default)."""
    parts = _STRINGS.split(sql)
    return "".join(p if i % 2 else _DISTINCT.sub("", p) for i, p in enumerate(parts))


def official_order_matters(gold_sql: str) -> bool:
    """The official test: the gold text contains ``order by`` (case-insensitive), anywhere."""
    return "order by" in gold_sql.lower()


def _columns_match(gold: list[tuple], pred: list[tuple], perm: tuple[int, ...], order_matters: bool) -> bool:
    projected = [tuple(row[j] for j in perm) for row in pred]
    if order_matters:
        return projected == gold
    return Counter(projected) == Counter(gold)


def result_eq(gold: Sequence[tuple], pred: Sequence[tuple], order_matters: bool) -> bool:
    """The published ``result_eq`` rule (see the module docstring, point 3)."""
    gold, pred = list(gold), list(pred)
    if not gold and not pred:
        return True
    if len(gold) != len(pred):
        return False
    width = len(gold[0])
    if len(pred[0]) != width:
        return False
    # a predicted column can stand for a gold column only if all its values occur there
    gold_values = [{row[i] for row in gold} for i in range(width)]
    pred_values = [{row[j] for row in pred} for j in range(width)]
    candidates = [[j for j in range(width) if pred_values[j] <= gold_values[i]] for i in range(width)]
    for perm in itertools.product(*candidates):
        if len(set(perm)) == width and _columns_match(gold, pred, perm, order_matters):
            return True
    return False


def execute(db_path: str | Path, sql: str, *, timeout_s: float = 60.0) -> list[tuple]:
    """Run ``sql`` on a SQLite file, read-only, as the official metric does (undecodable text
    bytes dropped); raises ``sqlite3.Error`` (or ``TimeoutError``)."""
    conn = sqlite3.connect(f"file:{Path(db_path).resolve()}?mode=ro", uri=True)
    conn.text_factory = lambda b: b.decode(errors="ignore")
    deadline = time.monotonic() + timeout_s
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10000)
    try:
        return conn.execute(sql).fetchall()
    except sqlite3.OperationalError as exc:
        if time.monotonic() > deadline:
            raise TimeoutError(f"query ran longer than {timeout_s}s") from None
        raise exc
    finally:
        conn.close()


@attrs.frozen
class OfficialVerdict:
    """The official verdict on one pair; ``error`` says why a query did not run."""

    matched: bool
    order_matters: bool
    error: str | None = None
    gold_failed: bool = False


def official_exec_match(db_path: str | Path, gold_sql: str, pred_sql: str, *, keep_distinct: bool = False) -> OfficialVerdict:
    """The official execution-match verdict for one (gold, prediction) pair."""
    gold_sql, pred_sql = postprocess(gold_sql), postprocess(pred_sql)
    if not keep_distinct:
        gold_sql, pred_sql = remove_distinct(gold_sql), remove_distinct(pred_sql)
    order = official_order_matters(gold_sql)
    try:
        gold = execute(db_path, gold_sql)
    except (sqlite3.Error, TimeoutError) as exc:
        return OfficialVerdict(False, order, f"gold: {exc}", gold_failed=True)
    try:
        pred = execute(db_path, pred_sql)
    except (sqlite3.Error, TimeoutError) as exc:
        return OfficialVerdict(False, order, f"prediction: {exc}")
    return OfficialVerdict(result_eq(gold, pred, order), order)
