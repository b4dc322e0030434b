"""Plan nodes back to plain data, in canonical (shortest) form. Imports :mod:`.nodes`."""

from __future__ import annotations

from typing import Any

from pytest_nl2sql.engine.plan.nodes import (
    Call,
    Case,
    Cast,
    Column,
    DateFormat,
    Exists,
    Expr,
    InList,
    InQuery,
    Join,
    Literal,
    OrderItem,
    Query,
    RawSQL,
    SelectItem,
    Source,
    Subquery,
    Table,
    Window,
)
from pytest_nl2sql.engine.plan.vocabulary import FUNCTIONS

# --------------------------------------------------------------------------------------------
# Dumping (canonical form)


def _dump_query(q: Query) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if q.with_:
        out["with"] = [{"name": c.name, "query": _dump_query(c.query)} for c in q.with_]
    if q.from_ is not None:
        out["from"] = _dump_source(q.from_)
    if q.joins:
        out["joins"] = [_dump_join(j) for j in q.joins]
    out["select"] = [_dump_select_item(s) for s in q.select]
    if q.distinct:
        out["distinct"] = True
    if q.where is not None:
        out["where"] = dump_expr(q.where)
    if q.group_by:
        out["group_by"] = [dump_expr(e) for e in q.group_by]
    if q.having is not None:
        out["having"] = dump_expr(q.having)
    if q.order_by:
        out["order_by"] = [_dump_order_item(o) for o in q.order_by]
    if q.limit is not None:
        out["limit"] = q.limit
    if q.offset is not None:
        out["offset"] = q.offset
    return out


def _dump_source(s: Source) -> Any:
    if isinstance(s, Table):
        return s.name if s.alias is None else {"table": s.name, "alias": s.alias}
    return {"query": _dump_query(s.query), "alias": s.alias}


def _dump_join(j: Join) -> dict[str, Any]:
    src = _dump_source(j.source)
    out = dict(src) if isinstance(src, dict) else {"table": src}
    if j.on is not None:
        out["on"] = dump_expr(j.on)
    if j.type != "inner":
        out["type"] = j.type
    return out


def _dump_select_item(s: SelectItem) -> Any:
    if s.alias is None:
        return dump_expr(s.expr)
    out = {"expr": dump_expr(s.expr)}
    if s.alias is not None:
        out["alias"] = s.alias
    return out


def _dump_order_item(o: OrderItem) -> Any:
    if not o.desc and o.nulls is None:
        return dump_expr(o.expr)
    out: dict[str, Any] = {"expr": dump_expr(o.expr)}
    if o.desc:
        out["desc"] = True
    if o.nulls is not None:
        out["nulls"] = o.nulls
    return out


def dump_expr(e: Expr) -> Any:
    """One expression as plain data in canonical form."""
    if isinstance(e, Column):
        return e.ref
    if isinstance(e, Literal):
        return {"value": e.value} if e.value is None or isinstance(e.value, str) else e.value
    if isinstance(e, Call):
        spec = FUNCTIONS[e.fn]
        if len(e.args) == 1 and spec.max_args == 1:
            return {e.fn: dump_expr(e.args[0])}
        return {e.fn: [dump_expr(a) for a in e.args]}
    if isinstance(e, InList):
        return {"in": {"expr": dump_expr(e.expr), "values": list(e.values)}}
    if isinstance(e, InQuery):
        return {"in": {"expr": dump_expr(e.expr), "query": _dump_query(e.query)}}
    if isinstance(e, Cast):
        return {"cast": {"expr": dump_expr(e.expr), "to": e.to}}
    if isinstance(e, DateFormat):
        return {"date_format": {"expr": dump_expr(e.expr), "format": e.format}}
    if isinstance(e, Case):
        case: dict[str, Any] = {
            "when": [{"if": dump_expr(w.condition), "then": dump_expr(w.result)} for w in e.whens]
        }
        if e.default is not None:
            case["else"] = dump_expr(e.default)
        return {"case": case}
    if isinstance(e, Window):
        over: dict[str, Any] = {"expr": dump_expr(e.expr)}
        if e.partition_by:
            over["partition_by"] = [dump_expr(p) for p in e.partition_by]
        if e.order_by:
            over["order_by"] = [_dump_order_item(o) for o in e.order_by]
        return {"over": over}
    if isinstance(e, Subquery):
        return {"query": _dump_query(e.query)}
    if isinstance(e, Exists):
        return {"exists": _dump_query(e.query)}
    if isinstance(e, RawSQL):
        return {"sql": e.sql}
    raise TypeError(f"not a plan expression: {e!r}")

