"""Plain data (parsed YAML/JSON) to plan nodes, strictly, naming the path of every problem
(``plan.select[2].expr: unknown function 'cnt' ...``). Imports :mod:`.vocabulary` and :mod:`.nodes`."""

from __future__ import annotations

import datetime as _dt
import difflib
import math
import re
from collections.abc import Mapping
from typing import Any

from pytest_nl2sql.engine.plan.nodes import (
    CTE,
    Call,
    Case,
    Cast,
    Column,
    DateFormat,
    DerivedTable,
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
    When,
    Window,
)
from pytest_nl2sql.engine.plan.vocabulary import (
    _COLUMN_RE,
    _NAME_RE,
    CAST_TYPES,
    DATE_FORMAT_CODES,
    FUNCTIONS,
    JOIN_TYPES,
    NULLS,
    SPECIAL_FORMS,
    FunctionSpec,
    PlanError,
    Scalar,
)

# --------------------------------------------------------------------------------------------
# Parsing

_QUERY_KEYS = (
    "with", "from", "joins", "select", "distinct", "where", "group_by", "having", "order_by",
    "limit", "offset",
)
_PLAN_KEYS = ("kind", "datasource", "reason", "clarification", *_QUERY_KEYS)


def _known(names: Any) -> str:
    return ", ".join(sorted(names))


def _mapping(data: Any, path: str, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise PlanError(path, f"expected {what} (a mapping), got {_show(data)}")
    for key in data:
        if not isinstance(key, str):
            raise PlanError(path, f"keys must be text, got {_show(key)}")
    return data


def _check_keys(data: Mapping[str, Any], path: str, allowed: tuple[str, ...]) -> None:
    for key in data:
        if key not in allowed:
            raise PlanError(path, f"unknown key '{key}' (known: {_known(allowed)})")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _opt(data: Mapping[str, Any], key: str) -> Any:
    """A value that may be absent; an explicit null counts as absent."""
    return data.get(key)


def _text(value: Any, path: str, what: str = "text") -> str:
    if not isinstance(value, str) or not value.strip():
        raise PlanError(path, f"expected {what} (non-empty text), got {_show(value)}")
    return value


def _name(value: Any, path: str, what: str) -> str:
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise PlanError(
            path, f"expected {what} (letters, digits and _, not starting with a digit), "
            f"got {_show(value)}"
        )
    return value


def _list(value: Any, path: str, what: str) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise PlanError(path, f"expected a list of {what}, got {_show(value)}")
    return list(value)


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise PlanError(path, f"expected true or false, got {_show(value)}")
    return value


def _count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PlanError(path, f"expected a non-negative integer, got {_show(value)}")
    return value



def _parse_query(data: Any, path: str, allowed: tuple[str, ...] = _QUERY_KEYS) -> Query:
    data = _mapping(data, path, "a query")
    _check_keys(data, path, allowed)
    select_raw = _opt(data, "select")
    if select_raw is None:
        raise PlanError(path, "missing 'select': the list of output columns")
    select = tuple(
        _parse_select_item(item, f"{path}.select[{i}]")
        for i, item in enumerate(_list(select_raw, f"{path}.select", "output columns"))
    )
    if not select:
        raise PlanError(f"{path}.select", "needs at least one output column")
    with_ = ()
    if _opt(data, "with") is not None:
        with_ = tuple(
            _parse_cte(c, f"{path}.with[{i}]")
            for i, c in enumerate(_list(data["with"], f"{path}.with", "named queries"))
        )
    from_ = None
    if _opt(data, "from") is not None:
        from_ = _parse_source(data["from"], f"{path}.from")
    joins: tuple[Join, ...] = ()
    if _opt(data, "joins") is not None:
        if from_ is None:
            raise PlanError(f"{path}.joins", "joins need a 'from'")
        joins = tuple(
            _parse_join(j, f"{path}.joins[{i}]")
            for i, j in enumerate(_list(data["joins"], f"{path}.joins", "joins"))
        )
    distinct = False
    if _opt(data, "distinct") is not None:
        distinct = _bool(data["distinct"], f"{path}.distinct")
    where = having = None
    if _opt(data, "where") is not None:
        where = _parse_expr(data["where"], f"{path}.where")
    group_by: tuple[Expr, ...] = ()
    if _opt(data, "group_by") is not None:
        group_by = tuple(
            _parse_expr(e, f"{path}.group_by[{i}]")
            for i, e in enumerate(_list(data["group_by"], f"{path}.group_by", "expressions"))
        )
    if _opt(data, "having") is not None:
        having = _parse_expr(data["having"], f"{path}.having")
    order_by: tuple[OrderItem, ...] = ()
    if _opt(data, "order_by") is not None:
        order_by = _parse_order_by(data["order_by"], f"{path}.order_by")
    limit = offset = None
    if _opt(data, "limit") is not None:
        limit = _count(data["limit"], f"{path}.limit")
    if _opt(data, "offset") is not None:
        offset = _count(data["offset"], f"{path}.offset")
    return Query(
        select=select, from_=from_, joins=joins, with_=with_, distinct=distinct, where=where,
        group_by=group_by, having=having, order_by=order_by, limit=limit, offset=offset,
    )


def _parse_cte(data: Any, path: str) -> CTE:
    data = _mapping(data, path, "a named query {name, query}")
    _check_keys(data, path, ("name", "query"))
    if _opt(data, "query") is None:
        raise PlanError(path, "missing 'query'")
    return CTE(_name(data.get("name"), f"{path}.name", "a name"),
               _parse_query(data["query"], f"{path}.query"))


def _parse_source(data: Any, path: str, extra: tuple[str, ...] = ()) -> Source:
    if isinstance(data, str):
        return Table(_name(data, path, "a table name"))
    data = _mapping(data, path, "a table name, {table, alias} or {query, alias}")
    _check_keys(data, path, ("table", "query", "alias", *extra))
    alias = _opt(data, "alias")
    if alias is not None:
        alias = _name(alias, f"{path}.alias", "an alias")
    has_table, has_query = _opt(data, "table") is not None, _opt(data, "query") is not None
    if has_table == has_query:
        raise PlanError(path, "give exactly one of 'table' (a table name) or 'query' (a subquery)")
    if has_table:
        return Table(_name(data["table"], f"{path}.table", "a table name"), alias)
    if alias is None:
        raise PlanError(path, "a subquery in from/joins needs an 'alias'")
    return DerivedTable(_parse_query(data["query"], f"{path}.query"), alias)


def _parse_join(data: Any, path: str) -> Join:
    data = _mapping(data, path, "a join {table, alias, on, type}")
    source = _parse_source(data, path, extra=("on", "type"))
    type_ = data.get("type") or "inner"
    if type_ not in JOIN_TYPES:
        raise PlanError(f"{path}.type", f"unknown join type {_show(type_)} "
                        f"(known: {', '.join(JOIN_TYPES)})")
    on = None
    if _opt(data, "on") is not None:
        if type_ == "cross":
            raise PlanError(f"{path}.on", "a cross join has no 'on'")
        on = _parse_expr(data["on"], f"{path}.on")
    elif type_ != "cross":
        raise PlanError(path, "missing 'on': the join condition (or type: cross)")
    return Join(source, on, type_)


def _parse_select_item(data: Any, path: str) -> SelectItem:
    if isinstance(data, Mapping) and "expr" in data:
        _check_keys(data, path, ("expr", "alias"))
        alias = _opt(data, "alias")
        if alias is not None:
            alias = _name(alias, f"{path}.alias", "an output name")
        return SelectItem(_parse_expr(data["expr"], f"{path}.expr", star=True), alias)
    if isinstance(data, Mapping) and "alias" in data:
        raise PlanError(path, "an item with 'alias' needs 'expr' too: {expr: ..., alias: name}")
    return SelectItem(_parse_expr(data, path, star=True))


def _parse_order_by(data: Any, path: str) -> tuple[OrderItem, ...]:
    return tuple(
        _parse_order_item(item, f"{path}[{i}]")
        for i, item in enumerate(_list(data, path, "sort keys"))
    )


def _parse_order_item(data: Any, path: str) -> OrderItem:
    if isinstance(data, Mapping) and "expr" in data:
        _check_keys(data, path, ("expr", "desc", "nulls"))
        desc = False
        if _opt(data, "desc") is not None:
            desc = _bool(data["desc"], f"{path}.desc")
        nulls = _opt(data, "nulls")
        if nulls is not None and nulls not in NULLS:
            raise PlanError(f"{path}.nulls", f"expected first or last, got {_show(nulls)}")
        return OrderItem(_parse_expr(data["expr"], f"{path}.expr"), desc, nulls)
    if isinstance(data, Mapping) and ("desc" in data or "nulls" in data):
        raise PlanError(path, "a sort key with 'desc'/'nulls' needs 'expr' too")
    return OrderItem(_parse_expr(data, path))


def _literal(value: Any, path: str) -> Scalar:
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        raise PlanError(path, f"a number must be finite, got {value!r}")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise PlanError(path, f"expected a constant (text, number, true/false, null), got {_show(value)}")


def _parse_expr(data: Any, path: str, *, star: bool = False) -> Expr:
    if isinstance(data, str):
        m = _COLUMN_RE.match(data)
        if not m:
            raise PlanError(
                path, f"{_show(data)} is not a column reference (write 'Column', 'Table.Column' "
                "or 'alias.Column'; text constants are written {value: ...})"
            )
        if m.group(2) == "*" and not star:
            raise PlanError(path, "'*' is allowed only as a select item or in {count: '*'}")
        return Column(m.group(2), m.group(1))
    if isinstance(data, list | tuple):
        raise PlanError(
            path, "a list is not an expression (did you mean a function's argument list, "
            "e.g. {eq: [a, b]}?)"
        )
    if not isinstance(data, Mapping):
        return Literal(_literal(data, path))
    if len(data) != 1:
        keys = ", ".join(f"'{k}'" for k in data) or "none"
        raise PlanError(
            path, f"an expression is a mapping with one key naming a function, e.g. "
            f"{{eq: [a, b]}}; got keys {keys}"
        )
    ((key, arg),) = data.items()
    if not isinstance(key, str):
        raise PlanError(path, f"keys must be text, got {_show(key)}")
    sub = f"{path}.{key}"
    if key in SPECIAL_FORMS:
        return _parse_special(key, arg, sub)
    spec = FUNCTIONS.get(key)
    if spec is None:
        names = [*FUNCTIONS, *SPECIAL_FORMS]
        close = difflib.get_close_matches(key, names, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise PlanError(path, f"unknown function '{key}' ({hint}known: {_known(names)})")
    if spec.category == "window":
        raise PlanError(
            path, f"'{key}' is a window function; write {{over: {{expr: {{{key}: []}}, "
            "partition_by: [...], order_by: [...]}}"
        )
    return _parse_call(spec, arg, sub)


def _parse_call(spec: FunctionSpec, arg: Any, path: str) -> Call:
    raw = list(arg) if isinstance(arg, list | tuple) else [arg]
    if arg is None and spec.min_args == 0:
        raw = []
    n = len(raw)
    if n < spec.min_args or (spec.max_args is not None and n > spec.max_args):
        raise PlanError(path, f"'{spec.name}' takes {spec.arity_text()}, got {n}")
    single = not isinstance(arg, list | tuple)
    args = tuple(
        _parse_expr(a, path if single else f"{path}[{i}]", star=spec.name == "count")
        for i, a in enumerate(raw)
    )
    return Call(spec.name, args)


def _parse_special(key: str, arg: Any, path: str) -> Expr:
    if key == "value":
        return Literal(_literal(arg, path))
    if key == "sql":
        return RawSQL(_text(arg, path, "SQL text"))
    if key == "query":
        return Subquery(_parse_query(arg, path))
    if key == "exists":
        return Exists(_parse_query(arg, path))
    if key == "in":
        data = _mapping(arg, path, "{expr, values: [...]} or {expr, query: {...}}")
        _check_keys(data, path, ("expr", "values", "query"))
        if _opt(data, "expr") is None:
            raise PlanError(path, "missing 'expr': the value to look for")
        expr = _parse_expr(data["expr"], f"{path}.expr")
        has_values, has_query = _opt(data, "values") is not None, _opt(data, "query") is not None
        if has_values == has_query:
            raise PlanError(path, "give exactly one of 'values' (a list of constants) or 'query'")
        if has_query:
            return InQuery(expr, _parse_query(data["query"], f"{path}.query"))
        values = _list(data["values"], f"{path}.values", "constants")
        if not values:
            raise PlanError(f"{path}.values", "needs at least one value")
        return InList(expr, tuple(_literal(v, f"{path}.values[{i}]") for i, v in enumerate(values)))
    if key == "cast":
        data = _mapping(arg, path, "{expr, to}")
        _check_keys(data, path, ("expr", "to"))
        if _opt(data, "expr") is None:
            raise PlanError(path, "missing 'expr'")
        to = data.get("to")
        if to not in CAST_TYPES:
            raise PlanError(f"{path}.to", f"unknown type {_show(to)} (known: {', '.join(CAST_TYPES)})")
        return Cast(_parse_expr(data["expr"], f"{path}.expr"), to)
    if key == "date_format":
        data = _mapping(arg, path, "{expr, format}")
        _check_keys(data, path, ("expr", "format"))
        if _opt(data, "expr") is None:
            raise PlanError(path, "missing 'expr'")
        fmt = _text(data.get("format"), f"{path}.format", "a strftime format such as '%Y-%m'")
        for code in re.findall(r"%.", fmt):
            if code not in DATE_FORMAT_CODES:
                raise PlanError(f"{path}.format", f"unsupported code '{code}' "
                                f"(known: {' '.join(DATE_FORMAT_CODES)})")
        if fmt.count("%") % 2 and fmt.endswith("%"):
            raise PlanError(f"{path}.format", "a format cannot end with a lone '%'")
        return DateFormat(_parse_expr(data["expr"], f"{path}.expr"), fmt)
    if key == "case":
        data = _mapping(arg, path, "{when: [{if, then}, ...], else}")
        _check_keys(data, path, ("when", "else"))
        if _opt(data, "when") is None:
            raise PlanError(path, "missing 'when': a list of {if: condition, then: result}")
        items = _list(data["when"], f"{path}.when", "{if, then} branches")
        if not items:
            raise PlanError(f"{path}.when", "needs at least one branch")
        whens = []
        for i, item in enumerate(items):
            ipath = f"{path}.when[{i}]"
            item = _mapping(item, ipath, "a branch {if: condition, then: result}")
            _check_keys(item, ipath, ("if", "then"))
            for part in ("if", "then"):
                if part not in item:
                    raise PlanError(ipath, f"missing '{part}'")
            whens.append(When(_parse_expr(item["if"], f"{ipath}.if"),
                              _parse_expr(item["then"], f"{ipath}.then")))
        default = None
        if _opt(data, "else") is not None:
            default = _parse_expr(data["else"], f"{path}.else")
        return Case(tuple(whens), default)
    # over
    data = _mapping(arg, path, "{expr, partition_by, order_by}")
    _check_keys(data, path, ("expr", "partition_by", "order_by"))
    raw = _opt(data, "expr")
    epath = f"{path}.expr"
    fn = next(iter(raw)) if isinstance(raw, Mapping) and len(raw) == 1 else None
    spec = FUNCTIONS.get(fn) if isinstance(fn, str) else None
    if spec is None or spec.category not in ("window", "aggregate"):
        windowed = _known(s.name for s in FUNCTIONS.values() if s.category in ("window", "aggregate"))
        raise PlanError(epath, f"expected a window or aggregate function call such as "
                        f"{{rank: []}} or {{sum: x}} (known: {windowed})")
    call = _parse_call(spec, raw[fn], f"{epath}.{fn}")
    partition: tuple[Expr, ...] = ()
    if _opt(data, "partition_by") is not None:
        partition = tuple(
            _parse_expr(e, f"{path}.partition_by[{i}]")
            for i, e in enumerate(_list(data["partition_by"], f"{path}.partition_by", "expressions"))
        )
    order: tuple[OrderItem, ...] = ()
    if _opt(data, "order_by") is not None:
        order = _parse_order_by(data["order_by"], f"{path}.order_by")
    if spec.category == "window" and not order:
        raise PlanError(path, f"'{fn}' needs 'order_by'")
    return Window(call, partition, order)

