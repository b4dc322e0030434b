"""PlanModel: a structured, dialect-neutral query plan, written as plain data.

A suite case may carry a hand-written ``plan`` (YAML) that mode ``plans`` serves through a
fake LLM; in mode ``full`` an LLM emits the same structure through JSON-schema structured
output (:func:`plan_json_schema`). :func:`PlanModel.from_dict` checks the data strictly and
names the place of every problem (``plan.select[2].expr: unknown function 'cnt' ...``);
:meth:`PlanModel.to_dict` writes the canonical (shortest) form back, so
``PlanModel.from_dict(p.to_dict()) == p``. The format is documented in ``docs/plans.md``.

Expressions, in short:

* a string is a column reference: ``"Country"``, ``"Customer.Country"``, ``"c.Country"``,
  ``"*"`` or ``"c.*"``;
* a number, ``true``/``false`` is a literal; text (and ``null``) is ``{value: ...}``;
* any other expression is a one-key mapping naming a function:
  ``{count: "*"}``, ``{eq: [c.Country, {value: USA}]}``, ``{rank: []}``;
* a few constructs take named parts: ``in``, ``case``, ``over``, ``cast``,
  ``date_format``, ``query`` (scalar subquery), ``exists`` and ``sql`` (raw escape).
"""

from __future__ import annotations

import datetime as _dt
import difflib
import math
import re
from collections.abc import Mapping
from typing import Any

import attrs

__all__ = [
    "CAST_TYPES",
    "CTE",
    "FUNCTIONS",
    "JOIN_TYPES",
    "KINDS",
    "Case",
    "Cast",
    "Column",
    "DateFormat",
    "DerivedTable",
    "Exists",
    "Expr",
    "FunctionSpec",
    "InList",
    "InQuery",
    "Join",
    "Literal",
    "OrderItem",
    "PlanError",
    "PlanModel",
    "Query",
    "RawSQL",
    "SelectItem",
    "Source",
    "Subquery",
    "Table",
    "When",
    "Window",
    "plan_json_schema",
]

Scalar = str | int | float | bool | None

KINDS = ("answer", "not_answerable", "clarify")
JOIN_TYPES = ("inner", "left", "right", "full", "cross")
NULLS = ("first", "last")
#: Types ``cast`` accepts; each compiles to the dialect's own spelling.
CAST_TYPES = ("integer", "real", "text", "date", "timestamp")
#: strftime codes ``date_format`` accepts (all three dialects agree on them).
DATE_FORMAT_CODES = ("%Y", "%m", "%d", "%H", "%M", "%S", "%%")

_NAME = r"[^\W\d]\w*"
_NAME_RE = re.compile(rf"^{_NAME}$")
_COLUMN_RE = re.compile(rf"^(?:({_NAME})\.)?({_NAME}|\*)$")
_ASCII_NAME = "[A-Za-z_][A-Za-z0-9_]*"
#: The column-reference pattern given to LLMs (ASCII names; the parser also takes Unicode).
_COLUMN_PATTERN = rf"^(?:{_ASCII_NAME}\.)?(?:{_ASCII_NAME}|\*)$"


class PlanError(ValueError):
    """A plan that does not follow the format. ``str(err)`` is ``"<path>: <problem>"``."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


# --------------------------------------------------------------------------------------------
# Functions


@attrs.frozen
class FunctionSpec:
    """A function a plan may call as ``{name: args}``."""

    name: str
    min_args: int
    max_args: int | None  # None: no upper bound
    category: str  # operator | aggregate | scalar | date | window
    doc: str

    def arity_text(self) -> str:
        """Human wording of the argument count, for error messages."""
        if self.max_args == self.min_args:
            n = self.min_args
            return "no arguments" if n == 0 else f"{n} argument{'s' if n > 1 else ''}"
        if self.max_args is None:
            return f"{self.min_args} or more arguments"
        return f"{self.min_args} to {self.max_args} arguments"


def _specs(category: str, min_args: int, max_args: int | None, **docs: str) -> list[FunctionSpec]:
    return [FunctionSpec(n, min_args, max_args, category, d) for n, d in docs.items()]


FUNCTIONS: Mapping[str, FunctionSpec] = {
    s.name: s
    for s in [
        *_specs(
            "operator", 2, 2,
            eq="a = b", ne="a <> b", lt="a < b", le="a <= b", gt="a > b", ge="a >= b",
            like="a LIKE pattern (pattern is usually {value: '%text%'})",
            sub="a - b", div="a / b, always true (fractional) division", idiv="integer division",
            mod="remainder of a / b",
        ),
        *_specs("operator", 2, None, add="a + b + ...", mul="a * b * ...",
                concat="text concatenation a || b || ...",
                **{"and": "all conditions hold", "or": "any condition holds"}),
        *_specs("operator", 1, 1, neg="-a", is_null="a IS NULL",
                **{"not": "negation, e.g. {not: {is_null: x}}"}),
        *_specs("operator", 3, 3, between="a BETWEEN low AND high (inclusive)"),
        *_specs("aggregate", 1, 1, count="COUNT(x); {count: '*'} counts rows",
                count_distinct="COUNT(DISTINCT x)", sum="SUM(x)", avg="AVG(x)",
                min="MIN(x)", max="MAX(x)"),
        *_specs("scalar", 1, 2, round="ROUND(x[, digits])"),
        *_specs("scalar", 2, None, coalesce="first non-null argument"),
        *_specs("scalar", 2, 2, nullif="NULL when a = b, else a"),
        *_specs("scalar", 1, 1, lower="lower case", upper="upper case",
                length="number of characters", abs="absolute value",
                trim="strip surrounding spaces"),
        *_specs("scalar", 2, 3, substr="SUBSTR(text, start[, length]), 1-based"),
        *_specs("scalar", 3, 3, replace="REPLACE(text, from, to)"),
        *_specs("date", 1, 1, year="year of a date/timestamp, as an integer",
                month="month (1-12), as an integer", day="day of month, as an integer",
                hour="hour (0-23), as an integer", minute="minute, as an integer"),
        *_specs("window", 0, 0, rank="RANK() (only inside over)",
                dense_rank="DENSE_RANK() (only inside over)",
                row_number="ROW_NUMBER() (only inside over)"),
        *_specs("window", 1, 1, ntile="NTILE(n) (only inside over)"),
        *_specs("window", 1, 3, lag="LAG(x[, offset[, default]]) (only inside over)",
                lead="LEAD(x[, offset[, default]]) (only inside over)"),
    ]
}

#: Expression keys with named parts rather than a list of arguments.
SPECIAL_FORMS = ("value", "in", "case", "over", "cast", "date_format", "query", "exists", "sql")


# --------------------------------------------------------------------------------------------
# The model


@attrs.frozen
class Column:
    """A column reference; ``name == '*'`` is every column (of ``table`` when given)."""

    name: str
    table: str | None = None

    @property
    def ref(self) -> str:
        """The reference as written in a plan: ``'c.Country'``."""
        return f"{self.table}.{self.name}" if self.table else self.name


@attrs.frozen
class Literal:
    """A constant: text, number, boolean or null."""

    value: Scalar


@attrs.frozen
class Call:
    """A function or operator from :data:`FUNCTIONS` applied to arguments."""

    fn: str
    args: tuple[Expr, ...] = ()


@attrs.frozen
class InList:
    """``expr IN (v1, v2, ...)`` over constants."""

    expr: Expr
    values: tuple[Scalar, ...]


@attrs.frozen
class InQuery:
    """``expr IN (SELECT ...)``."""

    expr: Expr
    query: Query


@attrs.frozen
class Cast:
    """``CAST(expr AS to)`` with ``to`` one of :data:`CAST_TYPES`."""

    expr: Expr
    to: str


@attrs.frozen
class DateFormat:
    """A date/timestamp formatted as text with strftime codes (``'%Y-%m'``)."""

    expr: Expr
    format: str


@attrs.frozen
class When:
    """One ``WHEN condition THEN result`` branch."""

    condition: Expr
    result: Expr


@attrs.frozen
class Case:
    """``CASE WHEN ... THEN ... [ELSE default] END``."""

    whens: tuple[When, ...]
    default: Expr | None = None


@attrs.frozen
class Window:
    """``fn OVER (PARTITION BY ... ORDER BY ...)``; ``expr`` is an aggregate or window call."""

    expr: Call
    partition_by: tuple[Expr, ...] = ()
    order_by: tuple[OrderItem, ...] = ()


@attrs.frozen
class Subquery:
    """A scalar subquery: ``(SELECT ...)`` used as a value."""

    query: Query


@attrs.frozen
class Exists:
    """``EXISTS (SELECT ...)``."""

    query: Query


@attrs.frozen
class RawSQL:
    """An expression written as SQL text in the datasource's dialect (the escape hatch)."""

    sql: str


Expr = (
    Column | Literal | Call | InList | InQuery | Cast | DateFormat | Case | Window | Subquery
    | Exists | RawSQL
)


@attrs.frozen
class SelectItem:
    """One output column: an expression and an optional output name."""

    expr: Expr
    alias: str | None = None


@attrs.frozen
class OrderItem:
    """One sort key. ``nulls=None`` means nulls sort as the smallest values (SQLite's rule)."""

    expr: Expr
    desc: bool = False
    nulls: str | None = None


@attrs.frozen
class Table:
    """A table of the datasource, optionally aliased."""

    name: str
    alias: str | None = None


@attrs.frozen
class DerivedTable:
    """A subquery in FROM / JOIN; it needs an alias."""

    query: Query
    alias: str


Source = Table | DerivedTable


@attrs.frozen
class Join:
    """A join of ``source`` to what came before; ``on`` is required unless ``type='cross'``."""

    source: Source
    on: Expr | None = None
    type: str = "inner"


@attrs.frozen
class CTE:
    """``WITH name AS (query)``."""

    name: str
    query: Query


@attrs.frozen
class Query:
    """A SELECT statement."""

    select: tuple[SelectItem, ...]
    from_: Source | None = None
    joins: tuple[Join, ...] = ()
    with_: tuple[CTE, ...] = ()
    distinct: bool = False
    where: Expr | None = None
    group_by: tuple[Expr, ...] = ()
    having: Expr | None = None
    order_by: tuple[OrderItem, ...] = ()
    limit: int | None = None
    offset: int | None = None


@attrs.frozen
class PlanModel:
    """A plan: an answer (with its query), or why the question cannot be answered as asked."""

    kind: str = "answer"
    datasource: str | None = None
    query: Query | None = None
    reason: str | None = None
    clarification: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in KINDS:
            raise PlanError("plan.kind", f"unknown kind {self.kind!r} (known: {', '.join(KINDS)})")
        if (self.kind == "answer") != (self.query is not None):
            raise PlanError("plan", "a plan has a query exactly when its kind is answer")

    @classmethod
    def from_dict(cls, data: Any, *, path: str = "plan") -> PlanModel:
        """Build a plan from plain data (parsed YAML/JSON); raise :class:`PlanError` if invalid."""
        return _parse_plan(data, path)

    def to_dict(self) -> dict[str, Any]:
        """The plan as plain data in canonical form, with defaults left out."""
        out: dict[str, Any] = {}
        if self.kind != "answer":
            out["kind"] = self.kind
        if self.datasource is not None:
            out["datasource"] = self.datasource
        if self.reason is not None:
            out["reason"] = self.reason
        if self.clarification is not None:
            out["clarification"] = self.clarification
        if self.query is not None:
            out.update(_dump_query(self.query))
        return out


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


def _parse_plan(data: Any, path: str) -> PlanModel:
    data = _mapping(data, path, "a plan")
    _check_keys(data, path, _PLAN_KEYS)
    kind = _opt(data, "kind")
    kind = "answer" if kind is None else kind
    if kind not in KINDS:
        raise PlanError(f"{path}.kind", f"unknown kind {_show(kind)} (known: {', '.join(KINDS)})")
    datasource = _opt(data, "datasource")
    if datasource is not None:
        datasource = _text(datasource, f"{path}.datasource", "a datasource name")
    reason = _opt(data, "reason")
    clarification = _opt(data, "clarification")
    query_keys = [k for k in _QUERY_KEYS if _opt(data, k) is not None]
    if kind == "answer":
        for key in ("reason", "clarification"):
            if _opt(data, key) is not None:
                raise PlanError(
                    f"{path}.{key}", f"only a plan of kind not_answerable/clarify has '{key}'"
                )
        return PlanModel(kind, datasource, _parse_query(data, path, _PLAN_KEYS))
    if query_keys:
        raise PlanError(
            f"{path}.{query_keys[0]}", f"a plan of kind {kind} has no query; remove '{query_keys[0]}'"
        )
    if kind == "not_answerable":
        if clarification is not None:
            raise PlanError(f"{path}.clarification", "use 'reason' in a not_answerable plan")
        if reason is not None:
            reason = _text(reason, f"{path}.reason", "a reason")
        return PlanModel(kind, datasource, None, reason=reason)
    if reason is not None:
        raise PlanError(f"{path}.reason", "use 'clarification' in a clarify plan")
    if clarification is None:
        raise PlanError(path, "a clarify plan needs 'clarification': the question to ask back")
    clarification = _text(clarification, f"{path}.clarification", "a clarification question")
    return PlanModel(kind, datasource, None, clarification=clarification)


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


# --------------------------------------------------------------------------------------------
# JSON Schema


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


def _obj(properties: dict[str, Any], required: list[str], description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }
    if description:
        out["description"] = description
    return out


def _call_schema(spec: FunctionSpec) -> dict[str, Any]:
    args: dict[str, Any] = {"type": "array", "items": _ref("expr"), "minItems": spec.min_args}
    if spec.max_args is not None:
        args["maxItems"] = spec.max_args
    if spec.min_args <= 1 and (spec.max_args is None or spec.max_args >= 1):
        args = {"anyOf": [_ref("expr"), args]}  # one argument may be written bare
    return _obj({spec.name: args}, [spec.name], f"{spec.name}: {spec.doc}")


def plan_json_schema() -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) for plans, to give an LLM for structured output."""
    scalar = {"type": ["string", "number", "boolean", "null"]}
    order_item = {
        "anyOf": [
            _ref("expr"),
            _obj({"expr": _ref("expr"), "desc": {"type": "boolean"},
                  "nulls": {"enum": list(NULLS)}}, ["expr"], "a sort key"),
        ]
    }
    exprs: list[dict[str, Any]] = [
        {"type": "string", "pattern": _COLUMN_PATTERN,
         "description": "a column: Column, Table.Column or alias.Column (* only in select/count)"},
        {"type": "number"},
        {"type": "boolean"},
        _obj({"value": scalar}, ["value"], "a constant; text constants must use this form"),
        *[_call_schema(s) for s in FUNCTIONS.values() if s.category != "window"],
        _obj({"in": {"anyOf": [
            _obj({"expr": _ref("expr"), "values": {"type": "array", "items": scalar, "minItems": 1}},
                 ["expr", "values"]),
            _obj({"expr": _ref("expr"), "query": _ref("query")}, ["expr", "query"]),
        ]}}, ["in"], "expr IN (values) or expr IN (subquery)"),
        _obj({"case": _obj({
            "when": {"type": "array", "minItems": 1, "items": _obj(
                {"if": _ref("expr"), "then": _ref("expr")}, ["if", "then"])},
            "else": _ref("expr"),
        }, ["when"])}, ["case"], "CASE WHEN if THEN then ... ELSE else END"),
        _obj({"over": _obj({
            "expr": {"anyOf": [
                *[_call_schema(s) for s in FUNCTIONS.values() if s.category in ("window", "aggregate")]
            ]},
            "partition_by": {"type": "array", "items": _ref("expr")},
            "order_by": {"type": "array", "items": _ref("order_item")},
        }, ["expr"])}, ["over"], "a window function: rank/dense_rank/row_number/... or an aggregate"),
        _obj({"cast": _obj({"expr": _ref("expr"), "to": {"enum": list(CAST_TYPES)}},
                           ["expr", "to"])}, ["cast"], "CAST(expr AS type)"),
        _obj({"date_format": _obj({"expr": _ref("expr"), "format": {"type": "string"}},
                                  ["expr", "format"])}, ["date_format"],
             "a date/timestamp as text, strftime codes %Y %m %d %H %M %S"),
        _obj({"query": _ref("query")}, ["query"], "a scalar subquery (one row, one column)"),
        _obj({"exists": _ref("query")}, ["exists"], "EXISTS (subquery)"),
        _obj({"sql": {"type": "string"}}, ["sql"],
             "raw SQL for one expression, only when nothing else fits"),
    ]
    name = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}
    source_props = {"table": name, "query": _ref("query"), "alias": name}
    query_props: dict[str, Any] = {
        "with": {"type": "array", "items": _obj({"name": name, "query": _ref("query")},
                                                 ["name", "query"])},
        "from": {"anyOf": [name, _obj(source_props, [])]},
        "joins": {"type": "array", "items": _obj(
            {**source_props, "on": _ref("expr"), "type": {"enum": list(JOIN_TYPES)}}, [])},
        "select": {"type": "array", "minItems": 1, "items": {"anyOf": [
            _ref("expr"), _obj({"expr": _ref("expr"), "alias": name}, ["expr"])]}},
        "distinct": {"type": "boolean"},
        "where": _ref("expr"),
        "group_by": {"type": "array", "items": _ref("expr")},
        "having": _ref("expr"),
        "order_by": {"type": "array", "items": _ref("order_item")},
        "limit": {"type": "integer", "minimum": 0},
        "offset": {"type": "integer", "minimum": 0},
    }
    plan = _obj(
        {
            "kind": {"enum": list(KINDS)},
            "datasource": {"type": "string"},
            "reason": {"type": "string", "description": "why a not_answerable question is"},
            "clarification": {"type": "string", "description": "the question to ask back"},
            **query_props,
        },
        [],
        "A query plan. kind answer (the default) needs select; not_answerable gives a "
        "reason; clarify gives a clarification question.",
    )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "PlanModel",
        **plan,
        "$defs": {
            "expr": {"anyOf": exprs},
            "order_item": order_item,
            "query": _obj(query_props, ["select"], "a SELECT statement"),
        },
    }
