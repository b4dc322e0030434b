"""Read nl2sql-engine's ``PlanModel`` shape (the plan of its suites) as one of our plans.

The shape read is nl2sql-engine 0.7.0's (MIT): ``nl2sql/pipeline/nodes/ast_planner/schemas.py``
for the fields, and its generator (``pipeline/nodes/generator/node.py``, with
``ast_planner/functions.py`` and the SQLite adapter's date rewriting) for what they mean.
:func:`is_spec_plan` tells the shape apart (``tables`` / ``select_items``, keys our format does
not have); :func:`read_spec_plan` turns it into our nodes, so the compiler, resolver and
validator work unchanged. Every field is read or refused with a :class:`PlanError` naming its
place (``plan.select_items[2].expr.kind: ...``); nothing is dropped silently. What it does,
as nl2sql-engine's generator does:

* ``tables[0]`` is the FROM table; each join attaches whichever of ``left_alias`` /
  ``right_alias`` is not yet in the query, taking first the listed join that touches the
  tables already there; a left/right join whose new table is its left side is mirrored.
  An unknown alias, a join of two tables already joined, a join that does not connect and a
  declared table never joined are errors.
* After the plan's ``order_by``, every selected item that reads a column (except a bare
  ``*``) is added as an ascending tie-breaker, by its alias when it has one, unless already
  sorted on.
* ``limit`` 0 means no limit (``limit or row_limit``); ``offset`` needs an ``order_by``.
* ``+`` with a text operand (a non-numeric text literal or a concatenation) is ``||``;
  ``/`` is true division; ``IS`` / ``IS NOT`` take a null literal (anything else is refused);
  ``IN`` takes ``TUPLE``/``LIST`` (or one value) on the right.
* ``YEAR``/``QUARTER``/``MONTH``/``DAY``/``DATE_PART``/``EXTRACT`` give an integer date part;
  ``DATE_TRUNC`` the truncated date as ``YYYY-MM-DD`` text; ``STRFTIME(format, x)`` formats.
* ``func`` names are nl2sql-engine's allowed functions, in any case. Those our plans lack
  (``CEIL``, ``FLOOR``, ``POWER``, ...) become raw SQL when every argument is a column or a
  constant, and are refused otherwise. ``distinct`` is read on ``COUNT`` only.
* ``reasoning`` and ``is_aggregate`` do not change the SQL (nl2sql-engine's generator does
  not read them either); a literal with both ``value`` and ``is_null`` is its value.

It differs where our plans mean one thing on every dialect: identifiers are quoted
(nl2sql-engine leaves plain names unquoted, which PostgreSQL folds to lower case), ``LIKE``
is case-insensitive and nulls sort as the smallest values (nl2sql-engine keeps each
database's own rule). On SQLite the two agree. A spec plan may also carry our
``datasource`` key; without it the engine picks the datasource as for any plan without one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_nl2sql.engine.plan.nodes import (
    Call,
    Case,
    Column,
    DateFormat,
    Expr,
    InList,
    Join,
    Literal,
    OrderItem,
    Query,
    RawSQL,
    SelectItem,
    Table,
    When,
)
from pytest_nl2sql.engine.plan.parse import _known, _list, _mapping, _name, _show, _text
from pytest_nl2sql.engine.plan.vocabulary import _NAME_RE, DATE_FORMAT_CODES, PlanError

__all__ = ["SPEC_PLAN_KEYS", "is_spec_plan", "read_spec_plan"]

#: The top-level keys of nl2sql-engine's PlanModel (plus our ``datasource``).
SPEC_PLAN_KEYS = (
    "query_type", "distinct", "tables", "joins", "select_items", "where", "group_by", "having",
    "order_by", "limit", "offset", "reasoning", "datasource",
)
_KIND_FIELDS = {
    "literal": ("value", "is_null"),
    "column": ("alias", "column_name"),
    "func": ("func_name", "args", "is_aggregate", "distinct"),
    "binary": ("op", "left", "right"),
    "unary": ("op", "expr"),
    "case": ("whens", "else_expr"),
}
_EXPR_FIELDS = ("kind", *dict.fromkeys(f for fs in _KIND_FIELDS.values() for f in fs))
_COMPARE = {"=": "eq", "!=": "ne", ">": "gt", "<": "lt", ">=": "ge", "<=": "le", "LIKE": "like",
            "-": "sub", "*": "mul", "/": "div", "%": "mod", "AND": "and", "OR": "or"}
_BINARY_OPS = (*_COMPARE, "+", "||", "IN", "IS", "IS NOT")
_UNARY_OPS = ("NOT", "+", "-")
_JOIN_TYPES = ("inner", "left", "right", "full")
_MIRRORED = {"left": "right", "right": "left"}
_DATE_UNITS = ("year", "quarter", "month", "day")
_UNIT_FUNCTIONS = {"YEAR": "year", "QUARTER": "quarter", "MONTH": "month", "DAY": "day"}
_TRUNC_FORMATS = {"year": "%Y-01-01", "month": "%Y-%m-01", "day": "%Y-%m-%d"}
#: name -> (our function, min args, max args or None)
_OURS = {
    "COUNT": ("count", 1, 1), "SUM": ("sum", 1, 1), "AVG": ("avg", 1, 1), "MIN": ("min", 1, 1),
    "MAX": ("max", 1, 1), "COALESCE": ("coalesce", 2, None), "IFNULL": ("coalesce", 2, 2),
    "NULLIF": ("nullif", 2, 2), "ABS": ("abs", 1, 1), "ROUND": ("round", 1, 2), "MOD": ("mod", 2, 2),
    "LOWER": ("lower", 1, 1), "UPPER": ("upper", 1, 1), "LENGTH": ("length", 1, 1),
    "TRIM": ("trim", 1, 1), "SUBSTR": ("substr", 2, 3), "SUBSTRING": ("substr", 2, 3),
    "REPLACE": ("replace", 3, 3), "CONCAT": ("concat", 1, None),
}
#: Functions our plans lack, written as raw SQL over columns and constants: name -> (min, max).
_RAW = {"CEIL": (1, 1), "CEILING": (1, 1), "FLOOR": (1, 1), "POWER": (2, 2), "SQRT": (1, 1),
        "SIGN": (1, 1), "GREATEST": (2, None), "LEAST": (2, None), "LTRIM": (1, 1), "RTRIM": (1, 1)}
_DATE_FUNCTIONS = ("YEAR", "QUARTER", "MONTH", "DAY", "DATE_PART", "EXTRACT", "DATE_TRUNC",
                   "STRFTIME")
_ALLOWED = sorted({*_OURS, *_RAW, *_DATE_FUNCTIONS, "TUPLE", "LIST"})


def is_spec_plan(data: Any) -> bool:
    """Whether ``data`` is a plan in nl2sql-engine's PlanModel shape rather than ours."""
    return isinstance(data, Mapping) and ("select_items" in data or "tables" in data)


def read_spec_plan(data: Any, path: str = "plan") -> tuple[str | None, Query]:
    """``(datasource, query)`` of a PlanModel-shaped plan; raise :class:`PlanError` if invalid."""
    data = _mapping(data, path, "a plan")
    for key in data:
        if key not in SPEC_PLAN_KEYS:
            raise PlanError(path, f"unknown key '{key}' (known: {_known(SPEC_PLAN_KEYS)})")
    return _SpecReader(data, path).read()


_DEFAULTS: dict[str, Any] = {"args": [], "whens": [], "is_null": False, "is_aggregate": False, "distinct": False}


def _ext(key: str, value: Any) -> bool:
    """Whether a field holds something other than its default (structured output fills all)."""
    if value is None:
        return False
    default = _DEFAULTS.get(key)
    return default is None or type(value) is not type(default) or value != default


class _SpecReader:
    def __init__(self, data: Mapping[str, Any], path: str) -> None:
        self.data = data
        self.path = path
        self.aliases: dict[str, str] = {}  # table alias -> table name
        self.select_aliases: set[str] = set()

    def read(self) -> tuple[str | None, Query]:
        d, p = self.data, self.path
        datasource = d.get("datasource")
        if datasource is not None:
            datasource = _text(datasource, f"{p}.datasource", "a datasource name")
        if d.get("query_type") not in (None, "READ"):
            raise PlanError(f"{p}.query_type", f"expected READ, got {_show(d['query_type'])}")
        if d.get("reasoning") is not None and not isinstance(d["reasoning"], str):
            raise PlanError(f"{p}.reasoning", f"expected text, got {_show(d['reasoning'])}")
        distinct = self.flag(d.get("distinct"), f"{p}.distinct")
        tables = self.tables()
        raw_items = _list(d.get("select_items") or [], f"{p}.select_items", "select items")
        if not raw_items:
            raise PlanError(f"{p}.select_items", "needs at least one item")
        for i, item in enumerate(raw_items):
            item = _mapping(item, f"{p}.select_items[{i}]", "a select item {expr, alias}")
            if item.get("alias") is not None:
                self.select_aliases.add(_text(item["alias"], f"{p}.select_items[{i}].alias", "an output name"))
        select = tuple(self.select_item(item, f"{p}.select_items[{i}]") for i, item in enumerate(raw_items))
        joins = self.joins(tables)
        where = self.opt_expr("where")
        group_by = tuple(
            self.wrapped(g, f"{p}.group_by[{i}]", "a group-by item {expr}", ())
            for i, g in enumerate(_list(d.get("group_by") or [], f"{p}.group_by", "group-by items"))
        )
        having = self.opt_expr("having")
        order_by = self.order_by()
        limit = self.count("limit")
        offset = self.count("offset")
        if offset and not order_by:
            raise PlanError(f"{p}.offset", "an offset needs an order_by: rows 11 to 20 only mean "
                            "something in an order")
        order_by = _tie_breakers(order_by, select, raw_items)
        query = Query(
            select=select, from_=tables[0], joins=joins, distinct=distinct, where=where,
            group_by=group_by, having=having, order_by=order_by, limit=limit or None,
            offset=offset or None,
        )
        return datasource, query

    # -- the parts of a plan -------------------------------------------------------------

    def flag(self, value: Any, path: str) -> bool:
        if value is None:
            return False
        if not isinstance(value, bool):
            raise PlanError(path, f"expected true or false, got {_show(value)}")
        return value

    def count(self, key: str) -> int | None:
        value = self.data.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise PlanError(f"{self.path}.{key}", f"expected a non-negative integer, got {_show(value)}")
        return value

    def tables(self) -> list[Table]:
        p = f"{self.path}.tables"
        raw = _list(self.data.get("tables") or [], p, "tables {name, alias}")
        if not raw:
            raise PlanError(p, "needs at least one table (the first is the FROM table)")
        out = []
        for i, t in enumerate(raw):
            tp = f"{p}[{i}]"
            t = _mapping(t, tp, "a table {name, alias}")
            for key in t:
                if key not in ("name", "schema_name", "database", "alias"):
                    raise PlanError(tp, f"unknown key '{key}' (known: alias, database, name, schema_name)")
            for key in ("schema_name", "database"):
                if t.get(key) is not None:
                    raise PlanError(f"{tp}.{key}", "a table of another schema or database cannot be "
                                    "read: the plan reads the datasource's own tables")
            name = _name(t.get("name"), f"{tp}.name", "a table name")
            alias = _name(t.get("alias"), f"{tp}.alias", "a table alias")
            if alias in self.aliases:
                raise PlanError(f"{tp}.alias", f"alias '{alias}' is declared twice")
            self.aliases[alias] = name
            out.append(Table(name, alias))
        return out

    def joins(self, tables: list[Table]) -> tuple[Join, ...]:
        p = f"{self.path}.joins"
        pending: list[tuple[int, str, str, str, Expr]] = []
        for i, j in enumerate(_list(self.data.get("joins") or [], p, "joins")):
            jp = f"{p}[{i}]"
            j = _mapping(j, jp, "a join {left_alias, right_alias, join_type, condition}")
            for key in j:
                if key not in ("left_alias", "right_alias", "join_type", "condition"):
                    raise PlanError(jp, f"unknown key '{key}' "
                                    "(known: condition, join_type, left_alias, right_alias)")
            sides = []
            for key in ("left_alias", "right_alias"):
                alias = j.get(key)
                if alias not in self.aliases:
                    raise PlanError(f"{jp}.{key}", f"unknown table alias {_show(alias)} "
                                    f"(declared: {', '.join(self.aliases)})")
                sides.append(alias)
            join_type = j.get("join_type") or "inner"
            if join_type not in _JOIN_TYPES:
                raise PlanError(f"{jp}.join_type", f"unknown join type {_show(join_type)} "
                                f"(known: {', '.join(_JOIN_TYPES)})")
            if j.get("condition") is None:
                raise PlanError(jp, "missing 'condition'")
            pending.append((i, sides[0], sides[1], join_type, self.expr(j["condition"], f"{jp}.condition")))
        first = tables[0].alias
        assert first is not None
        in_scope = {first}
        out = []
        while pending:
            nxt = next((j for j in pending if j[1] in in_scope or j[2] in in_scope), None)
            if nxt is None:
                stranded = ", ".join(f"{j[1]}-{j[2]}" for j in pending)
                raise PlanError(f"{p}[{pending[0][0]}]", f"join(s) {stranded} do not connect to the "
                                f"FROM table '{first}' or to any table joined to it")
            i, left, right, join_type, condition = nxt
            if left in in_scope and right in in_scope:
                raise PlanError(f"{p}[{i}]", f"join {left}-{right} joins two tables already in the "
                                "query; each table is joined exactly once")
            if right in in_scope:
                new, join_type = left, _MIRRORED.get(join_type, join_type)
            else:
                new = right
            out.append(Join(Table(self.aliases[new], new), condition, join_type))
            in_scope.add(new)
            pending.remove(nxt)
        for i, t in enumerate(tables):
            if t.alias not in in_scope:
                raise PlanError(f"{self.path}.tables[{i}]", f"table alias '{t.alias}' is declared but "
                                "never joined to the FROM table")
        return tuple(out)

    def select_item(self, item: Mapping[str, Any], path: str) -> SelectItem:
        expr = self.wrapped(item, path, "a select item {expr, alias}", ("alias",))
        return SelectItem(expr, item.get("alias"))

    def order_by(self) -> tuple[OrderItem, ...]:
        p = f"{self.path}.order_by"
        out = []
        for i, o in enumerate(_list(self.data.get("order_by") or [], p, "order-by items")):
            op = f"{p}[{i}]"
            expr = self.wrapped(o, op, "an order-by item {expr, direction}", ("direction",))
            direction = o.get("direction") or "asc"
            if direction not in ("asc", "desc"):
                raise PlanError(f"{op}.direction", f"expected asc or desc, got {_show(direction)}")
            out.append(OrderItem(expr, desc=direction == "desc"))
        return tuple(out)

    def wrapped(self, data: Any, path: str, what: str, extra: tuple[str, ...]) -> Expr:
        data = _mapping(data, path, what)
        for key in data:
            if key not in ("expr", *extra):
                raise PlanError(path, f"unknown key '{key}' (known: {_known(('expr', *extra))})")
        if data.get("expr") is None:
            raise PlanError(path, "missing 'expr'")
        return self.expr(data["expr"], f"{path}.expr")

    def opt_expr(self, key: str) -> Expr | None:
        value = self.data.get(key)
        return None if value is None else self.expr(value, f"{self.path}.{key}")

    # -- expressions ---------------------------------------------------------------------

    def expr(self, data: Any, path: str) -> Expr:
        data = _mapping(data, path, "an expression {kind: ...}")
        for key in data:
            if key not in _EXPR_FIELDS:
                raise PlanError(path, f"unknown key '{key}' (known: {_known(_EXPR_FIELDS)})")
        kind = data.get("kind")
        if kind not in _KIND_FIELDS:
            raise PlanError(f"{path}.kind", f"unknown kind {_show(kind)} (known: {', '.join(_KIND_FIELDS)})")
        for key, value in data.items():
            if key != "kind" and key not in _KIND_FIELDS[kind] and _ext(key, value):
                raise PlanError(f"{path}.{key}", f"'{key}' is not read in an expression of kind {kind}")
        return getattr(self, f"_{kind}")(data, path)

    def _literal(self, d: Mapping[str, Any], path: str) -> Expr:
        value = d.get("value")
        is_null = self.flag(d.get("is_null"), f"{path}.is_null")
        if value is None and not is_null:
            raise PlanError(path, "a literal needs 'value' or is_null: true")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise PlanError(f"{path}.value", f"expected text, a number or true/false, got {_show(value)}")
        return Literal(value)

    def _column(self, d: Mapping[str, Any], path: str) -> Expr:
        name = d.get("column_name")
        alias = d.get("alias")
        if alias is not None and alias not in self.aliases:
            raise PlanError(f"{path}.alias", f"unknown table alias {_show(alias)} "
                            f"(declared: {', '.join(self.aliases)})")
        if isinstance(name, str) and name.strip() == "*":
            return Column("*", alias)
        if alias is None and name in self.select_aliases:
            return Column(name)
        return Column(_name(name, f"{path}.column_name", "a column name"), alias)

    def _case(self, d: Mapping[str, Any], path: str) -> Expr:
        whens = []
        raw = _list(d.get("whens") or [], f"{path}.whens", "WHEN branches {condition, result}")
        if not raw:
            raise PlanError(f"{path}.whens", "needs at least one WHEN branch")
        for i, w in enumerate(raw):
            wp = f"{path}.whens[{i}]"
            w = _mapping(w, wp, "a WHEN branch {condition, result}")
            for key in w:
                if key not in ("condition", "result"):
                    raise PlanError(wp, f"unknown key '{key}' (known: condition, result)")
            for key in ("condition", "result"):
                if w.get(key) is None:
                    raise PlanError(wp, f"missing '{key}'")
            whens.append(When(self.expr(w["condition"], f"{wp}.condition"), self.expr(w["result"], f"{wp}.result")))
        default = None
        if d.get("else_expr") is not None:
            default = self.expr(d["else_expr"], f"{path}.else_expr")
        return Case(tuple(whens), default)

    def _unary(self, d: Mapping[str, Any], path: str) -> Expr:
        op = d.get("op")
        if op not in _UNARY_OPS:
            raise PlanError(f"{path}.op", f"expected one of NOT, +, - for a unary expression, got {_show(op)}")
        if d.get("expr") is None:
            raise PlanError(path, "missing 'expr'")
        inner = self.expr(d["expr"], f"{path}.expr")
        if op == "+":
            return inner
        return Call("not" if op == "NOT" else "neg", (inner,))

    def _binary(self, d: Mapping[str, Any], path: str) -> Expr:
        op = d.get("op")
        op = op.upper() if isinstance(op, str) else op
        if op not in _BINARY_OPS:
            raise PlanError(f"{path}.op", f"unknown operator {_show(d.get('op'))} for a binary "
                            f"expression (known: {' '.join(_BINARY_OPS)})")
        for key in ("left", "right"):
            if d.get(key) is None:
                raise PlanError(path, f"missing '{key}'")
        left = self.expr(d["left"], f"{path}.left")
        if op in ("IS", "IS NOT"):
            r = d["right"]
            if not (isinstance(r, Mapping) and r.get("kind") == "literal" and r.get("value") is None):
                raise PlanError(f"{path}.right", f"only {op} NULL can be expressed: the right side "
                                "must be a null literal {kind: literal, is_null: true}")
            self.expr(r, f"{path}.right")
            test = Call("is_null", (left,))
            return test if op == "IS" else Call("not", (test,))
        if op == "IN":
            return self._in(left, d["right"], f"{path}.right")
        right = self.expr(d["right"], f"{path}.right")
        if op == "||" or (op == "+" and (_is_text(d["left"]) or _is_text(d["right"]))):
            return Call("concat", (left, right))
        if op == "+":
            return Call("add", (left, right))
        return Call(_COMPARE[op], (left, right))

    def _in(self, left: Expr, raw: Any, path: str) -> Expr:
        r = _mapping(raw, path, "an expression {kind: ...}")
        name = r.get("func_name")
        if r.get("kind") == "func" and isinstance(name, str) and name.upper() in ("TUPLE", "LIST"):
            for key in r:
                if key not in _EXPR_FIELDS:
                    raise PlanError(path, f"unknown key '{key}' (known: {_known(_EXPR_FIELDS)})")
            if self.flag(r.get("distinct"), f"{path}.distinct"):
                raise PlanError(f"{path}.distinct", f"{name}(DISTINCT ...) is not a value list")
            values = [self.expr(a, f"{path}.args[{i}]")
                      for i, a in enumerate(_list(r.get("args") or [], f"{path}.args", "values"))]
            if not values:
                raise PlanError(f"{path}.args", "IN needs at least one value")
        else:
            values = [self.expr(r, path)]
        if all(isinstance(v, Literal) for v in values):
            return InList(left, tuple(v.value for v in values if isinstance(v, Literal)))
        # x IN (a, b) is x = a OR x = b, also when a value is null
        tests: list[Expr] = [Call("eq", (left, v)) for v in values]
        return tests[0] if len(tests) == 1 else Call("or", tuple(tests))

    def _func(self, d: Mapping[str, Any], path: str) -> Expr:
        raw_name = d.get("func_name")
        name = raw_name.strip().upper() if isinstance(raw_name, str) else None
        if name not in _ALLOWED or not _NAME_RE.match(raw_name.strip()):
            raise PlanError(f"{path}.func_name", f"unknown function {_show(raw_name)} "
                            f"(nl2sql-engine's functions: {', '.join(_ALLOWED)})")
        distinct = self.flag(d.get("distinct"), f"{path}.distinct")
        self.flag(d.get("is_aggregate"), f"{path}.is_aggregate")
        raw_args = _list(d.get("args") or [], f"{path}.args", "arguments")
        if distinct and name != "COUNT":
            raise PlanError(f"{path}.distinct", f"only COUNT(DISTINCT x) can be expressed, not {name}(DISTINCT ...)")
        if name in ("TUPLE", "LIST"):
            raise PlanError(f"{path}.func_name", f"{name} is only the value list on the right of IN")
        if name in _DATE_FUNCTIONS:
            return self._date(name, raw_args, path)
        args = tuple(self.expr(a, f"{path}.args[{i}]") for i, a in enumerate(raw_args))
        if name in _OURS:
            fn, low, high = _OURS[name]
        else:
            low, high = _RAW[name]
        n = len(args)
        if n < low or (high is not None and n > high):
            want = str(low) if low == high else f"{low} or more" if high is None else f"{low} to {high}"
            raise PlanError(f"{path}.args", f"{name} takes {want} argument{'s' if want != '1' else ''}, got {n}")
        if name not in _OURS:
            return RawSQL(f"{name}({', '.join(_raw_arg(a, f'{path}.args[{i}]', name) for i, a in enumerate(args))})")
        if fn == "count" and distinct:
            if isinstance(args[0], Column) and args[0].name == "*":
                raise PlanError(f"{path}.args[0]", "COUNT(DISTINCT *) is not SQL")
            return Call("count_distinct", args)
        if fn == "concat" and n == 1:
            return args[0]  # CONCAT(x) is x
        return Call(fn, args)

    def _date(self, name: str, raw_args: list[Any], path: str) -> Expr:
        if name == "STRFTIME":
            if len(raw_args) != 2:
                raise PlanError(f"{path}.args", f"STRFTIME takes 2 arguments (format, date), got {len(raw_args)}")
            fmt = raw_args[0]
            if not (isinstance(fmt, Mapping) and fmt.get("kind") == "literal" and isinstance(fmt.get("value"), str)):
                raise PlanError(f"{path}.args[0]", "STRFTIME's format must be a text literal such as '%Y-%m'")
            text = self.expr(fmt, f"{path}.args[0]")
            assert isinstance(text, Literal) and isinstance(text.value, str)
            _check_format(text.value, f"{path}.args[0].value")
            return DateFormat(self.expr(raw_args[1], f"{path}.args[1]"), text.value)
        if name in _UNIT_FUNCTIONS:
            if len(raw_args) != 1:
                raise PlanError(f"{path}.args", f"{name} takes 1 argument, got {len(raw_args)}")
            kind, unit, operand = "part", _UNIT_FUNCTIONS[name], 0
        else:
            kind = "trunc" if name == "DATE_TRUNC" else "part"
            units = [i for i, a in enumerate(raw_args) if isinstance(a, Mapping)
                     and a.get("kind") == "literal" and isinstance(a.get("value"), str)]
            if len(raw_args) != 2 or len(units) != 1:
                raise PlanError(f"{path}.args", f"{name} takes 2 arguments, a unit (a text literal: "
                                f"{', '.join(_DATE_UNITS)}) and a date")
            unit = raw_args[units[0]]["value"].strip().lower()
            self.expr(raw_args[units[0]], f"{path}.args[{units[0]}]")
            if unit not in _DATE_UNITS:
                raise PlanError(f"{path}.args[{units[0]}].value", f"unknown date unit {_show(unit)} "
                                f"(known: {', '.join(_DATE_UNITS)})")
            operand = 1 - units[0]
        x = self.expr(raw_args[operand], f"{path}.args[{operand}]")
        if kind == "part":
            if unit == "quarter":
                return Call("idiv", (Call("add", (Call("month", (x,)), Literal(2))), Literal(3)))
            return Call(unit, (x,))
        if unit in _TRUNC_FORMATS:
            return DateFormat(x, _TRUNC_FORMATS[unit])
        # the first day of the quarter: 'YYYY-01-01', '-04-01', '-07-01' or '-10-01'
        month = Call("month", (x,))
        first = Case(tuple(When(Call("le", (month, Literal(m))), Literal(f"-{m - 2:02d}-01")) for m in (3, 6, 9)),
                     Literal("-10-01"))
        return Call("concat", (DateFormat(x, "%Y"), first))


def _check_format(fmt: str, path: str) -> None:
    i = 0
    while i < len(fmt):
        if fmt[i] == "%":
            code = fmt[i:i + 2]
            if code not in DATE_FORMAT_CODES:
                raise PlanError(path, f"unsupported STRFTIME code {_show(code)} (known: {' '.join(DATE_FORMAT_CODES)})")
            i += 2
        else:
            i += 1


def _is_text(data: Any) -> bool:
    """nl2sql-engine's test for a text operand of ``+``: a non-numeric text literal or a
    concatenation (``||``, or a ``+`` that is one), also under a unary ``+``."""
    if not isinstance(data, Mapping):
        return False
    kind = data.get("kind")
    if kind == "literal":
        value = data.get("value")
        if not isinstance(value, str):
            return False
        try:
            float(value)
        except ValueError:
            return True
        return False
    op = data.get("op")
    op = op.upper() if isinstance(op, str) else op
    if kind == "binary":
        return op == "||" or (op == "+" and (_is_text(data.get("left")) or _is_text(data.get("right"))))
    if kind == "unary":
        return op == "+" and _is_text(data.get("expr"))
    return False


def _raw_arg(e: Expr, path: str, name: str) -> str:
    """A column or constant as SQL text every dialect reads the same."""
    if isinstance(e, Column) and e.name != "*":
        quoted = [f'"{part}"' for part in (e.table, e.name) if part is not None]
        return ".".join(quoted)
    if isinstance(e, Literal):
        v = e.value
        if v is None:
            return "NULL"
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, str):
            return "'" + v.replace("'", "''") + "'"
        return repr(v)
    raise PlanError(path, f"{name} is not among this engine's plan functions, so its arguments "
                    "must be columns or constants")


def _reads_column(data: Any) -> bool:
    """Whether a spec expression reads a column anywhere (nl2sql-engine: ``e.find(exp.Column)``)."""
    if isinstance(data, Mapping):
        return data.get("kind") == "column" or any(_reads_column(v) for v in data.values())
    if isinstance(data, list | tuple):
        return any(_reads_column(v) for v in data)
    return False


def _tie_breakers(
    order_by: tuple[OrderItem, ...], select: tuple[SelectItem, ...], raw: list[Any]
) -> tuple[OrderItem, ...]:
    """nl2sql-engine's tie-breakers: each selected item reading a column, ascending."""
    ordered_on = [o.expr for o in order_by]
    out = list(order_by)
    for item, data in zip(select, raw, strict=True):
        e = item.expr
        if not _reads_column(data["expr"]) or (isinstance(e, Column) and e.name == "*"):
            continue
        key = Column(item.alias) if item.alias else e
        if e in ordered_on or key in ordered_on:
            continue
        ordered_on.append(key)
        out.append(OrderItem(key))
    return tuple(out)
