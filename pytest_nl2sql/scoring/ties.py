"""Does a query's ``ORDER BY ... LIMIT n`` cut inside a tie on some data?

The audit's ``tie-at-limit`` check (``upkeep.audit``) and the test-suite neighbours share it:
on a neighbour where the gold's own ``LIMIT`` cuts inside a tie, which rows the gold keeps is
up to the database, so that neighbour does not judge the answer (docs/scoring.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlglot import exp

__all__ = ["tie_at_limit"]

#: ``execute(sql, at_least_rows)`` -> (columns, rows); raises on a failed query.
Execute = Callable[[str, int], tuple[Sequence[str], Sequence[tuple]]]


def tie_at_limit(
    tree: exp.Expression | None, dialect: str, execute: Execute, *, identical: bool = False
) -> tuple[int, tuple] | None:
    """(n, the tied sort keys) when ``tree``'s top-level ``ORDER BY ... LIMIT n`` cuts inside a
    tie on the data ``execute`` runs on (rows n and n + 1 equal on the sort keys, and the rows
    kept could differ), else None. Any failure to tell is None. With ``identical``, a tie of
    identical rows counts too (the gold's rows are then determined, but not how many of the
    tied rows a right answer returns: a neighbour judging an answer needs that)."""
    if tree is None:
        return None
    order, limit = tree.args.get("order"), tree.args.get("limit")
    if not order or not isinstance(limit, exp.Limit):
        return None
    literal = limit.expression
    if not (isinstance(literal, exp.Literal) and literal.is_int):
        return None
    n = int(literal.this)
    probe = tree.copy()
    outputs = [e.alias_or_name for e in tree.expressions] if isinstance(tree, exp.Select) else []
    keys: list[tuple[str, Any]] = []
    extra: list[exp.Expression] = []
    for ordered in order.expressions:
        term = ordered.this
        if isinstance(term, exp.Literal) and term.is_int:
            keys.append(("index", int(term.this) - 1))
        elif isinstance(term, exp.Column) and not term.table and (term.name in outputs or not isinstance(tree, exp.Select)):
            keys.append(("name", term.name))
        elif isinstance(tree, exp.Select) and not tree.args.get("distinct"):
            keys.append(("extra", len(extra)))
            extra.append(term)
        else:
            return None  # a sort key we cannot read back without changing the query
    if extra:
        probe.select(*(e.copy().as_(f"nl2sql_sort_key_{i}") for i, e in enumerate(extra)), copy=False)
    probe.args["limit"].set("expression", exp.Literal.number(n + 1))
    try:
        columns, rows = execute(probe.sql(dialect=dialect), n + 1)
    except Exception:
        return None
    if len(rows) <= n or n == 0:
        return None
    columns = [str(c).lower() for c in columns]
    width = len(columns) - len(extra)

    def key(row: tuple) -> tuple | None:
        out = []
        for how, what in keys:
            if how == "index":
                if not 0 <= what < width:
                    return None
                out.append(row[what])
            elif how == "name":
                if what.lower() not in columns[:width]:
                    return None
                out.append(row[columns.index(what.lower())])
            else:
                out.append(row[width + what])
        return tuple(out)

    last, first_cut = tuple(rows[n - 1]), tuple(rows[n])
    tie = key(last)
    if tie is None or tie != key(first_cut):
        return None
    if last[:width] == first_cut[:width] and not identical:
        # identical rows on both sides of the cut: is any other row with the same keys different?
        whole = probe.copy()
        whole.set("limit", None)
        whole.set("offset", None)
        try:
            _, every = execute(whole.sql(dialect=dialect), 0)
        except Exception:
            return None
        if not any(key(tuple(row)) == tie and tuple(row)[:width] != last[:width] for row in every):
            return None
    return n, tie
