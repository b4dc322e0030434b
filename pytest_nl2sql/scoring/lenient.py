"""The lenient reading of a ``result_match`` miss: would the rows have matched if only their
presentation differed? (docs/scoring.md#the-lenient-reading)

The verdict stays the configured rule. Beside it, for every allowed item whose rows missed,
the rows are read again with three allowances, one after the other, and the first that makes
them match is named:

1. ``column_order`` -- the answer's columns in any order (names ignored);
2. ``extra_columns`` -- the answer may carry columns the gold lacks;
3. ``period_label`` -- a month written as a label (``2013-12``) equals the first day of that
   month as a date (``2013-12-01``, ``2013-12-01 00:00:00``), on either side.

A miss that matches under one of them is a **presentation-only miss**: the report counts them
(``summary.lenient``) so a team sees how many misses a reader would not call wrong. The
reading is the non-gating score ``lenient_match`` (``value`` 1.0 when it matches, 0.0 when
it does not; ``data.kind`` names the allowance it first matched under).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from typing import Any

import attrs

from pytest_nl2sql.scoring.matching import MatchRule, answer_rows, match_rows, rows_to_tuples

__all__ = ["ALLOWANCES", "lenient_reading", "period_label"]

ALLOWANCES = ("column_order", "extra_columns", "period_label")
_FIRST_OF_MONTH = re.compile(r"^(\d{4}-\d{2})-01(?:[ T]00:00(?::00(?:\.0+)?)?)?$")


def period_label(value: Any) -> Any:
    """The first day of a month (a date, a midnight timestamp, or their ISO text) as its month
    label ``YYYY-MM``; any other value as it is."""
    if isinstance(value, dt.datetime):
        if value.day == 1 and value.time() == dt.time(0):
            return f"{value.year:04d}-{value.month:02d}"
        return value
    if isinstance(value, dt.date):
        return f"{value.year:04d}-{value.month:02d}" if value.day == 1 else value
    if isinstance(value, str):
        if "-01" not in value:  # every first of a month holds it (_FIRST_OF_MONTH)
            return value
        m = _FIRST_OF_MONTH.match(value.strip())
        return m.group(1) if m else value
    return value


#: Values ``period_label`` returns as they are, by exact type: no call for them (nor for a
#: text without "-01", which no first of a month lacks).
_NEVER_A_PERIOD = frozenset({int, float, bool, type(None), bytes})


def _labelled(rows: Sequence[tuple]) -> list[tuple]:
    return [
        tuple([v if (t := type(v)) in _NEVER_A_PERIOD or (t is str and "-01" not in v) else period_label(v) for v in r])
        for r in rows
    ]


def lenient_reading(answer: Any, case: Any, rule: MatchRule) -> dict[str, Any] | None:
    """The lenient reading of an answer whose rows missed under ``rule``: ``{"matched": bool,
    "kind": the allowance it first matched under (None)}``, or None when there are no rows to
    read again (no answer, a cut result, a case without rows)."""
    if answer is None or answer.status != "ok" or answer.truncated or case.rows is None:
        return None
    try:
        pred_cols, pred_rows = answer_rows(answer.rows, answer.columns)
        golds = [rows_to_tuples(g) for g in (case.rows, *case.alt_rows)]
    except ValueError:
        return None
    loose = attrs.evolve(rule, column_order="any", column_names="ignore")
    wider = max((len(r) for r in pred_rows[:1]), default=len(pred_cols)) > min((len(cols) or (len(rows[0]) if rows else 0)) for cols, rows in golds)
    labelled_pred = _labelled(pred_rows)
    steps = (
        # a step that cannot change the reading is not run: the strict rule already failed it
        ("column_order", loose, False, loose != rule),
        ("extra_columns", attrs.evolve(loose, extra_columns="allow"), False, wider and loose.extra_columns != "allow"),
        ("period_label", attrs.evolve(loose, extra_columns="allow"), True, True),
    )
    for kind, lenient, labels, useful in steps:
        if not useful:
            continue
        for cols, rows in golds:
            gold = _labelled(rows) if labels else rows
            if labels and gold == rows and labelled_pred == pred_rows:
                continue  # no month on either side
            if match_rows(cols, gold, pred_cols, labelled_pred if labels else pred_rows, lenient).matched:
                return {"matched": True, "kind": kind}
    return {"matched": False, "kind": None}
