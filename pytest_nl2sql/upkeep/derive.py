"""A case's plan derived from its reviewed SQL (sqlglot), for ``pytest-nl2sql suite plan``.

``derive_plan(sql, dialect)`` reads one ``SELECT`` and writes it in the plan language of
docs/plans.md: tables, aliases, joins, CTEs, subqueries, conditions, aggregates, windows,
``CASE``, casts and SQLite's ``strftime``. An expression the plan language has no form for is
kept as the plan's escape hatch (``{sql: ...}``, counted in ``raw``), so long as it reads only
what the query reads; a query shape the plan language cannot hold at all (``UNION``, a
``FROM`` without a table, a join ``USING``, ``SELECT *`` with a join, ...) raises
``NotExpressible`` saying why. The caller verifies every plan by running it (upkeep/plans.py).
"""

from __future__ import annotations

from typing import Any

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from pytest_nl2sql.datasources.guard import sqlglot_dialect

__all__ = ["Derived", "NotExpressible", "derive_plan"]


class NotExpressible(ValueError):
    """The SQL has a shape the plan language cannot hold; the message says which."""


@attrs.frozen
class Derived:
    plan: dict[str, Any]
    raw: tuple[str, ...] = ()  # expressions kept as {sql: ...}


_COMPARE = {exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge"}
_FLAT = {exp.And: "and", exp.Or: "or", exp.Add: "add", exp.Mul: "mul", exp.DPipe: "concat"}
_BINARY = {exp.Sub: "sub", exp.Div: "div", exp.Mod: "mod", exp.IntDiv: "idiv"}
_ONE = {
    exp.Lower: "lower",
    exp.Upper: "upper",
    exp.Length: "length",
    exp.Abs: "abs",
    exp.Sum: "sum",
    exp.Avg: "avg",
    exp.Min: "min",
    exp.Max: "max",
}
_WINDOW = {exp.RowNumber: "row_number"}
_ANON = {
    "rank": "rank",
    "dense_rank": "dense_rank",
    "row_number": "row_number",
    "ntile": "ntile",
    "lag": "lag",
    "lead": "lead",
    "trim": "trim",
    "replace": "replace",
    "nullif": "nullif",
    "coalesce": "coalesce",
    "ifnull": "coalesce",
    "substr": "substr",
    "round": "round",
}
_CASTS = {
    "INT": "integer",
    "INTEGER": "integer",
    "BIGINT": "integer",
    "SMALLINT": "integer",
    "REAL": "real",
    "DOUBLE": "real",
    "FLOAT": "real",
    "DECIMAL": "real",
    "TEXT": "text",
    "VARCHAR": "text",
    "CHAR": "text",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
    "DATETIME": "timestamp",
}
_PARTS = {"%Y": "year", "%m": "month", "%d": "day", "%H": "hour", "%M": "minute"}


class _Deriver:
    def __init__(self, dialect: str) -> None:
        self.d = dialect
        self.raw: list[str] = []

    # -- queries -------------------------------------------------------------------------
    def query(self, node: exp.Expression) -> dict[str, Any]:
        if isinstance(node, exp.Subquery):
            node = node.this
        if not isinstance(node, exp.Select):
            raise NotExpressible(f"a {node.key.upper()} (the plan language holds one SELECT, with CTEs and subqueries)")
        out: dict[str, Any] = {}
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            if with_.args.get("recursive"):
                raise NotExpressible("a recursive CTE")
            out["with"] = [{"name": cte.alias, "query": self.query(cte.this)} for cte in with_.expressions]
        source = node.args.get("from_") or node.args.get("from")
        if source is not None:
            out["from"] = self.source(source.this)
        joins = node.args.get("joins") or []
        if joins:
            out["joins"] = [self.join(j) for j in joins]
        if node.args.get("distinct") is not None:
            if node.args["distinct"].args.get("on") is not None:
                raise NotExpressible("DISTINCT ON")
            out["distinct"] = True
        select = [self.select_item(e) for e in node.expressions]
        if joins and any(s == "*" for s in select):
            raise NotExpressible("SELECT * with a join (name the columns)")
        out["select"] = select
        if node.args.get("where") is not None:
            out["where"] = self.expr(node.args["where"].this)
        group = node.args.get("group")
        if group is not None:
            if group.args.get("rollup") or group.args.get("cube") or group.args.get("grouping_sets"):
                raise NotExpressible("ROLLUP / CUBE / GROUPING SETS")
            out["group_by"] = [self.expr(e) for e in group.expressions]
        if node.args.get("having") is not None:
            out["having"] = self.expr(node.args["having"].this)
        order = node.args.get("order")
        if order is not None:
            out["order_by"] = [self.sort_key(o) for o in order.expressions]
        limit = node.args.get("limit")
        if limit is not None:
            out["limit"] = self.whole(limit.expression if limit.expression is not None else limit.this, "LIMIT")
        offset = node.args.get("offset")
        if offset is not None:
            out["offset"] = self.whole(offset.expression if offset.expression is not None else offset.this, "OFFSET")
        return out

    def whole(self, node: Any, what: str) -> int:
        if isinstance(node, exp.Literal) and node.is_int:
            return int(node.this)
        raise NotExpressible(f"a {what} that is not a whole number")

    def source(self, node: exp.Expression) -> Any:
        if isinstance(node, exp.Table):
            if not isinstance(node.this, exp.Identifier):
                raise NotExpressible("a table function in FROM")
            if node.args.get("db") is not None:
                raise NotExpressible("a schema-qualified table")
            alias = node.alias
            return {"table": node.name, "alias": alias} if alias else node.name
        if isinstance(node, exp.Subquery):
            if not node.alias:
                raise NotExpressible("a subquery in FROM without an alias")
            return {"query": self.query(node.this), "alias": node.alias}
        raise NotExpressible(f"{node.key.upper()} in FROM")

    def join(self, node: exp.Join) -> dict[str, Any]:
        if node.args.get("using"):
            raise NotExpressible("a join USING (...) (write ON)")
        if node.args.get("method"):
            raise NotExpressible(f"a {node.args['method']} join")
        side = (node.side or "").lower()
        kind = (node.kind or "").lower()
        kind = {"": "inner", "inner": "inner", "cross": "cross", "outer": "inner"}.get(kind, kind)
        join_type = side or kind
        if join_type not in ("inner", "left", "right", "full", "cross"):
            raise NotExpressible(f"a {join_type.upper()} join")
        source = self.source(node.this)
        out = dict(source) if isinstance(source, dict) else {"table": source}
        on = node.args.get("on")
        if on is not None:
            out["on"] = self.expr(on)
        elif join_type != "cross":
            join_type = "cross"  # FROM a, b (a comma join) is a cross join filtered in WHERE
        if join_type != "inner":
            out["type"] = join_type
        return out

    def select_item(self, node: exp.Expression) -> Any:
        if isinstance(node, exp.Alias):
            return {"expr": self.expr(node.this), "alias": node.alias}
        return self.expr(node)  # unnamed: the plan names it as the database does

    def sort_key(self, node: exp.Ordered) -> Any:
        key = self.expr(node.this)
        out: dict[str, Any] = {"expr": key}
        if node.args.get("desc"):
            out["desc"] = True
        written = node.sql(dialect=self.d).upper()  # NULLS ... only when it is not the default
        head = node.this.sql(dialect=self.d).upper()
        tail = written[len(head) :] if written.startswith(head) else written
        if "NULLS FIRST" in tail:
            out["nulls"] = "first"
        elif "NULLS LAST" in tail:
            out["nulls"] = "last"
        return out if len(out) > 1 or not isinstance(key, str) else key

    # -- expressions ---------------------------------------------------------------------
    def expr(self, node: exp.Expression) -> Any:
        method = self.forms.get(type(node))
        if method is not None:
            return method(self, node)
        for types, name in ((_COMPARE, None), (_FLAT, None), (_BINARY, None), (_ONE, None)):
            if type(node) in types:
                name = types[type(node)]
                if types is _FLAT:
                    return {name: [self.expr(x) for x in self.flatten(node, type(node))]}
                if types is _ONE:
                    return {name: self.expr(node.this)}
                return {name: [self.expr(node.this), self.expr(node.expression)]}
        return self.escape(node)

    def flatten(self, node: exp.Expression, kind: type) -> list[exp.Expression]:
        if isinstance(node, kind):
            return [*self.flatten(node.this, kind), *self.flatten(node.expression, kind)]
        return [node]

    def escape(self, node: exp.Expression) -> dict[str, str]:
        if node.find(exp.Select) is not None:
            raise NotExpressible(f"{node.key.upper()} around a subquery")
        text = node.sql(dialect=self.d)
        self.raw.append(text)
        return {"sql": text}

    def column(self, node: exp.Column) -> str:
        if isinstance(node.this, exp.Star):
            return f"{node.table}.*" if node.table else "*"
        if node.args.get("db") is not None:
            raise NotExpressible("a schema-qualified column")
        return f"{node.table}.{node.name}" if node.table else node.name

    def literal(self, node: exp.Literal) -> Any:
        if node.is_string:
            return {"value": node.this}
        text = node.this
        return int(text) if node.is_int else float(text)

    def neg(self, node: exp.Neg) -> Any:
        inner = self.expr(node.this)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner
        return {"neg": inner}

    def paren(self, node: exp.Paren) -> Any:
        return self.expr(node.this)

    def is_(self, node: exp.Is) -> Any:
        if isinstance(node.expression, exp.Null):
            return {"is_null": self.expr(node.this)}
        return self.escape(node)

    def not_(self, node: exp.Not) -> Any:
        inner = node.this
        if isinstance(inner, exp.Is) and isinstance(inner.expression, exp.Null):
            return {"not": {"is_null": self.expr(inner.this)}}
        return {"not": self.expr(inner)}

    def between(self, node: exp.Between) -> Any:
        return {"between": [self.expr(node.this), self.expr(node.args["low"]), self.expr(node.args["high"])]}

    def like(self, node: exp.Like) -> Any:
        if node.args.get("escape") is not None:
            return self.escape(node)
        return {"like": [self.expr(node.this), self.expr(node.expression)]}

    def in_(self, node: exp.In) -> Any:
        query = node.args.get("query")
        if query is not None:
            return {"in": {"expr": self.expr(node.this), "query": self.query(query)}}
        values = []
        for v in node.expressions:
            if isinstance(v, exp.Literal):
                values.append(v.this if v.is_string else (int(v.this) if v.is_int else float(v.this)))
            else:
                return self.escape(node)
        return {"in": {"expr": self.expr(node.this), "values": values}}

    def count(self, node: exp.Count) -> Any:
        arg = node.this
        if isinstance(arg, exp.Distinct):
            if len(arg.expressions) != 1:
                return self.escape(node)
            return {"count_distinct": self.expr(arg.expressions[0])}
        if arg is None or isinstance(arg, exp.Star):
            return {"count": "*"}
        return {"count": self.expr(arg)}

    def subquery(self, node: exp.Subquery) -> Any:
        return {"query": self.query(node.this)}

    def exists(self, node: exp.Exists) -> Any:
        return {"exists": self.query(node.this)}

    def case(self, node: exp.Case) -> Any:
        if node.this is not None:
            return self.escape(node)  # CASE x WHEN ...: only the searched form has a plan form
        out: dict[str, Any] = {"when": [{"if": self.expr(w.this), "then": self.expr(w.args["true"])} for w in node.args["ifs"]]}
        if node.args.get("default") is not None:
            out["else"] = self.expr(node.args["default"])
        return {"case": out}

    def cast(self, node: exp.Cast) -> Any:
        to = node.to.this.name if hasattr(node.to.this, "name") else str(node.to.this)
        target = _CASTS.get(to.upper())
        inner = node.this
        if target == "integer" and self.d == "sqlite":
            part = self.strftime_part(inner)
            if part is not None:
                return part
        if target is None:
            return self.escape(node)
        return {"cast": {"expr": self.expr(inner), "to": target}}

    def strftime_part(self, node: exp.Expression) -> Any:
        """``CAST(strftime('%Y', x) AS INTEGER)`` is ``{year: x}``."""
        fmt, value = self.strftime_args(node)
        if fmt in _PARTS and value is not None:
            return {_PARTS[fmt]: self.expr(value)}
        return None

    def strftime_args(self, node: exp.Expression) -> tuple[str | None, exp.Expression | None]:
        if isinstance(node, exp.TimeToStr):
            fmt = node.args.get("format")
            value = node.this
            for wrapper in ("TsOrDsToTimestamp", "StrToTime", "TsOrDsToDate"):
                if isinstance(value, getattr(exp, wrapper, ())) and len([a for a in value.args.values() if a is not None]) == 1:
                    value = value.this  # sqlglot's reading of a text date; the plan reads text dates too
            if isinstance(fmt, exp.Literal):
                return fmt.this, value
        if isinstance(node, exp.Anonymous) and str(node.this).lower() == "strftime" and len(node.expressions) == 2:
            fmt, value = node.expressions
            if isinstance(fmt, exp.Literal) and fmt.is_string:
                return fmt.this, value
        return None, None

    def time_to_str(self, node: exp.Expression) -> Any:
        fmt, value = self.strftime_args(node)
        if fmt is not None and value is not None and all(
            code in ("%Y", "%m", "%d", "%H", "%M", "%S", "%%") for code in _codes(fmt)
        ):
            return {"date_format": {"expr": self.expr(value), "format": fmt}}
        return self.escape(node)

    def anonymous(self, node: exp.Anonymous) -> Any:
        name = str(node.this).lower()
        if name == "strftime":
            return self.time_to_str(node)
        plan_name = _ANON.get(name)
        if plan_name is None:
            return self.escape(node)
        return {plan_name: [self.expr(a) for a in node.expressions]}

    def func_args(self, node: exp.Expression, name: str, keys: tuple[str, ...]) -> Any:
        args = [node.args.get(k) for k in keys]
        while args and args[-1] is None:
            args.pop()
        if any(a is None for a in args):
            return self.escape(node)
        return {name: [self.expr(a) for a in args]}

    def window(self, node: exp.Window) -> Any:
        if node.args.get("spec") is not None:
            return self.escape(node)  # a frame clause has no plan form
        out: dict[str, Any] = {"expr": self.expr(node.this)}
        if node.args.get("partition_by"):
            out["partition_by"] = [self.expr(p) for p in node.args["partition_by"]]
        if node.args.get("order") is not None:
            out["order_by"] = [self.sort_key(o) for o in node.args["order"].expressions]
        return {"over": out}

    forms: dict[type, Any] = {}


def _codes(fmt: str) -> list[str]:
    return [fmt[i : i + 2] for i in range(len(fmt)) if fmt[i] == "%"]


_Deriver.forms = {
    exp.Column: _Deriver.column,
    exp.Star: lambda self, n: "*",
    exp.Literal: _Deriver.literal,
    exp.Null: lambda self, n: {"value": None},
    exp.Boolean: lambda self, n: bool(n.this),
    exp.Neg: _Deriver.neg,
    exp.Paren: _Deriver.paren,
    exp.Is: _Deriver.is_,
    exp.Not: _Deriver.not_,
    exp.Between: _Deriver.between,
    exp.Like: _Deriver.like,
    exp.ILike: _Deriver.like,
    exp.In: _Deriver.in_,
    exp.Count: _Deriver.count,
    exp.Subquery: _Deriver.subquery,
    exp.Exists: _Deriver.exists,
    exp.Case: _Deriver.case,
    exp.Cast: _Deriver.cast,
    exp.TimeToStr: _Deriver.time_to_str,
    exp.Anonymous: _Deriver.anonymous,
    exp.Window: _Deriver.window,
    exp.Round: lambda self, n: self.func_args(n, "round", ("this", "decimals")),
    exp.Coalesce: lambda self, n: {"coalesce": [self.expr(n.this), *(self.expr(e) for e in n.expressions)]},
    exp.Nullif: lambda self, n: self.func_args(n, "nullif", ("this", "expression")),
    exp.Substring: lambda self, n: self.func_args(n, "substr", ("this", "start", "length")),
    exp.Trim: lambda self, n: {"trim": self.expr(n.this)} if not n.args.get("expression") and not n.args.get("position") else self.escape(n),
    exp.RowNumber: lambda self, n: {"row_number": []},
}
for _name in ("Rank", "DenseRank"):
    if hasattr(exp, _name):
        _Deriver.forms[getattr(exp, _name)] = (lambda key: lambda self, n: {key: []})(
            "rank" if _name == "Rank" else "dense_rank"
        )
if hasattr(exp, "Ntile"):
    _Deriver.forms[exp.Ntile] = lambda self, n: self.func_args(n, "ntile", ("this",))
for _name, _key in (("Lag", "lag"), ("Lead", "lead")):
    if hasattr(exp, _name):
        _Deriver.forms[getattr(exp, _name)] = (lambda key: lambda self, n: self.func_args(n, key, ("this", "offset", "default")))(_key)
if hasattr(exp, "Replace"):
    _Deriver.forms[exp.Replace] = lambda self, n: self.func_args(n, "replace", ("this", "expression", "replacement"))
if hasattr(exp, "IfNull"):
    _Deriver.forms[exp.IfNull] = lambda self, n: {"coalesce": [self.expr(n.this), self.expr(n.expression)]}


def derive_plan(sql: str, dialect: str, datasource: str | None = None) -> Derived:
    """The plan of ``sql`` (see the module docstring); raises ``NotExpressible``."""
    read = sqlglot_dialect(dialect)
    try:
        statements = [s for s in sqlglot.parse(sql, read=read) if s is not None]
    except SqlglotError as err:
        raise NotExpressible(f"the SQL does not parse: {str(err).splitlines()[0]}") from None
    if len(statements) != 1:
        raise NotExpressible("more than one statement")
    deriver = _Deriver(read or "sqlite")
    plan = deriver.query(statements[0])
    if datasource:
        plan = {"datasource": datasource, **plan}
    return Derived(plan=plan, raw=tuple(deriver.raw))
