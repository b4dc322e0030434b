"""The byte budget of a result (``max_result_bytes``): how a value's size is counted, and the
PostgreSQL wrapper that makes the server refuse a row past the budget before sending it."""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_MAX_RESULT_BYTES", "PG_OVER_BUDGET", "OverBudget", "pg_bounded", "row_bytes", "value_bytes"]

#: The most bytes one result may hold (its values' sizes, counted while fetching), by default.
DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024
#: The text of the error the wrapped PostgreSQL query raises past the budget.
PG_OVER_BUDGET = "nl2sql: the result exceeds max_result_bytes at"


class OverBudget(Exception):
    """A result over the byte budget (raised while fetching)."""


def value_bytes(value: Any, depth: int = 0) -> int:
    """About how many bytes ``value`` holds (strings and blobs by length, containers summed)."""
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return len(value) + 8
    if depth < 4 and isinstance(value, (tuple, list)):
        return 8 + sum(value_bytes(v, depth + 1) for v in value)
    if depth < 4 and isinstance(value, dict):
        return 8 + sum(value_bytes(k, depth + 1) + value_bytes(v, depth + 1) for k, v in value.items())
    if depth >= 4 and isinstance(value, (tuple, list, dict)):
        return len(repr(value))
    return 16


#: Values counted as 16 bytes (``value_bytes``), by exact type.
_FIXED_SIZE = frozenset({int, float, bool, type(None)})


def row_bytes(row: Any) -> int:
    """``value_bytes(row)``, without a call per value for a tuple of the scalars a database
    driver returns (the budget is counted for every row fetched)."""
    if type(row) is not tuple:
        return value_bytes(row)
    size = 8
    for v in row:
        kind = type(v)
        if kind is str or kind is bytes:
            size += len(v) + 8
        elif kind in _FIXED_SIZE:
            size += 16
        else:
            size += value_bytes(v, 1)
    return size


def pg_bounded(sql: str, max_result_bytes: int) -> str:
    """``sql`` wrapped so the server refuses a row that takes the result past the budget.

    The rows keep their order and columns; one column is added (the caller drops it on fetch)
    that raises an error naming the size once the running total of the rows' text length
    passes ``max_result_bytes`` -- the server builds a huge value, the client never receives
    it. Built after the guard admitted ``sql``; a trailing ``;`` and comments after the last
    token go. The error-raising expression depends on the row, so the planner cannot fold it.
    """
    from sqlglot.dialects.postgres import Postgres

    tokens = [t for t in Postgres().tokenize(sql) if t.token_type.name != "SEMICOLON"]
    body = sql[: tokens[-1].end + 1] if tokens else sql
    size = "length(ROW(nl2sql_q.*)::text)"
    return (
        f"SELECT nl2sql_q.*, CASE WHEN sum({size}) OVER (ROWS UNBOUNDED PRECEDING) > {int(max_result_bytes)} "
        f"THEN ('{PG_OVER_BUDGET} ' || {size})::integer END AS nl2sql_budget FROM (\n{body}\n) AS nl2sql_q"
    )
