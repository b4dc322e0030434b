"""The plan compiler's work with sqlglot (see ``engine/compiler.py``, which imports this module
only when a plan is compiled)."""

from __future__ import annotations

import re
from collections.abc import Callable

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, UnsupportedError

from pytest_nl2sql.engine.dialects import CompileError, sqlglot_dialect
from pytest_nl2sql.engine.plan import (
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
    Literal,
    OrderItem,
    PlanModel,
    Query,
    RawSQL,
    Source,
    Subquery,
    Table,
    Window,
)

__all__ = ["compile_plan"]


def compile_plan(plan: PlanModel, dialect: str) -> str:
    """The SQL text of an ``answer`` plan in ``dialect`` (sqlite, postgresql/postgres, duckdb)."""
    d = sqlglot_dialect(dialect)
    if plan.kind != "answer" or plan.query is None:
        raise CompileError(f"a plan of kind {plan.kind!r} has no SQL; only kind 'answer' compiles")
    tree = _Compiler(d).query(plan.query)
    try:
        # never drop what the plan said: syntax the dialect lacks (a raw ``FOR UPDATE`` on
        # SQLite, say) is an error, not silently left out of the SQL that runs. ``copy=False``:
        # the tree was built for this call (a raw escape's parse too, never a shared one) and is
        # dropped after it, so the generator's transforms may edit it (its copy was a third of
        # compiling a plan)
        return tree.sql(dialect=d, identify=True, unsupported_level=ErrorLevel.RAISE, copy=False)
    except UnsupportedError as err:
        first = str(err).split("\n")[0]
        raise CompileError(f"the plan uses what {d} cannot express: {first}") from None


def _ident(name: str) -> exp.Identifier:
    return exp.to_identifier(name, quoted=True)


_ATOMS = (
    exp.Column, exp.Literal, exp.Func, exp.Null, exp.Boolean, exp.Paren, exp.Star,
    exp.Subquery, exp.Case, exp.Window, exp.Cast,
)


_COMPOUND = (exp.Binary, exp.Connector, exp.Unary, exp.Predicate, exp.Between, exp.In, exp.Is)


def _wrap(e: exp.Expression) -> exp.Expression:
    """Parenthesize a compound operand: a hand-built tree carries no precedence of its own."""
    if isinstance(e, exp.Paren) or (isinstance(e, _ATOMS) and not isinstance(e, _COMPOUND)):
        return e
    return exp.Paren(this=e)


def _fold(cls: type[exp.Binary], args: list[exp.Expression]) -> exp.Expression:
    out = _wrap(args[0])
    for a in args[1:]:
        out = cls(this=out, expression=_wrap(a))
    return out


_COMPARISONS: dict[str, type[exp.Binary]] = {
    "eq": exp.EQ, "ne": exp.NEQ, "lt": exp.LT, "le": exp.LTE, "gt": exp.GT, "ge": exp.GTE,
    "sub": exp.Sub, "mod": exp.Mod,
}
_AGGREGATES: dict[str, type[exp.Func]] = {
    "sum": exp.Sum, "avg": exp.Avg, "min": exp.Min, "max": exp.Max,
}
_UNARY: dict[str, type[exp.Func]] = {
    "lower": exp.Lower, "upper": exp.Upper, "length": exp.Length, "abs": exp.Abs, "trim": exp.Trim,
}
_DATE_PARTS = {"year": "%Y", "month": "%m", "day": "%d", "hour": "%H", "minute": "%M"}
_ANONYMOUS = {"replace": "REPLACE", "rank": "RANK", "dense_rank": "DENSE_RANK",
              "row_number": "ROW_NUMBER", "ntile": "NTILE", "lag": "LAG", "lead": "LEAD"}
_PG_FORMAT = {"%Y": "YYYY", "%m": "MM", "%d": "DD", "%H": "HH24", "%M": "MI", "%S": "SS", "%%": "%"}


def _pg_format(fmt: str) -> str:
    """A strftime format as a PostgreSQL TO_CHAR pattern; literal words are double-quoted."""
    out = []
    for part in re.split(r"(%.)", fmt):
        if part in _PG_FORMAT:
            out.append(_PG_FORMAT[part])
        elif part:
            out.append(f'"{part}"' if re.search(r"[A-Za-z0-9]", part) else part)
    return "".join(out)


class _Compiler:
    """Turns plan nodes into sqlglot nodes for one dialect."""

    def __init__(self, dialect: str) -> None:
        self.d = dialect

    # -- queries ---------------------------------------------------------------------------

    def query(self, q: Query) -> exp.Select:
        sel = exp.Select()
        for cte in q.with_:
            sel = sel.with_(_ident(cte.name), as_=self.query(cte.query), copy=False)
        items = []
        for item in q.select:
            e = self.expr(item.expr)
            items.append(exp.Alias(this=e, alias=_ident(item.alias)) if item.alias else e)
        sel = sel.select(*items, copy=False)
        if q.distinct:
            sel = sel.distinct(copy=False)
        if q.from_ is not None:
            sel = sel.from_(self.source(q.from_), copy=False)
        for j in q.joins:
            kwargs: dict[str, object] = {"this": self.source(j.source)}
            if j.type in ("left", "right", "full"):
                kwargs["side"] = j.type.upper()
            elif j.type == "cross":
                kwargs["kind"] = "CROSS"
            if j.on is not None:
                kwargs["on"] = self.expr(j.on)
            sel.append("joins", exp.Join(**kwargs))
        if q.where is not None:
            sel = sel.where(self.expr(q.where), copy=False)
        if q.group_by:
            sel = sel.group_by(*[self.expr(e) for e in q.group_by], copy=False)
        if q.having is not None:
            sel = sel.having(self.expr(q.having), copy=False)
        if q.order_by:
            sel = sel.order_by(*[self.ordered(o) for o in q.order_by], copy=False)
        if q.limit is not None:
            sel = sel.limit(q.limit, copy=False)
        elif q.offset is not None and self.d == "sqlite":
            sel = sel.limit(-1, copy=False)  # SQLite needs a LIMIT before OFFSET
        if q.offset is not None:
            sel = sel.offset(q.offset, copy=False)
        return sel

    def source(self, s: Source) -> exp.Expression:
        if isinstance(s, Table):
            alias = exp.TableAlias(this=_ident(s.alias)) if s.alias else None
            return exp.Table(this=_ident(s.name), alias=alias)
        assert isinstance(s, DerivedTable)
        return exp.Subquery(this=self.query(s.query), alias=exp.TableAlias(this=_ident(s.alias)))

    def ordered(self, o: OrderItem) -> exp.Ordered:
        nulls_first = (not o.desc) if o.nulls is None else o.nulls == "first"
        return exp.Ordered(this=self.expr(o.expr), desc=o.desc or None, nulls_first=nulls_first)

    # -- expressions -----------------------------------------------------------------------

    def expr(self, e: Expr) -> exp.Expression:
        method: Callable[[Expr], exp.Expression] = getattr(self, f"_{type(e).__name__.lower()}")
        return method(e)

    def _column(self, c: Column) -> exp.Expression:
        if c.table is None and c.name == "*":
            return exp.Star()
        this: exp.Expression = exp.Star() if c.name == "*" else _ident(c.name)
        return exp.Column(this=this, table=_ident(c.table) if c.table else None)

    def _literal(self, lit: Literal) -> exp.Expression:
        v = lit.value
        if v is None:
            return exp.Null()
        if isinstance(v, bool):
            return exp.Boolean(this=v)
        if isinstance(v, str):
            return exp.Literal.string(v)
        if v < 0:
            return exp.Neg(this=exp.Literal.number(-v))
        return exp.Literal.number(v)

    def _rawsql(self, r: RawSQL) -> exp.Expression:
        from pytest_nl2sql.datasources.guard import StatementRefused, parse_bounded

        shown = repr(r.sql) if len(r.sql) <= 200 else f"{r.sql[:200]!r}... ({len(r.sql):,} characters)"
        try:  # bounded like the guard: size, tokens, parse-tree nodes, nesting
            statements = parse_bounded(r.sql, self.d)
        except StatementRefused as refusal:
            raise CompileError(f"raw SQL {shown}: {refusal.reason}") from None
        except (ParseError, sqlglot.errors.TokenError) as err:
            raise CompileError(f"raw SQL {shown} does not parse as {self.d}: {str(err)[:300]}") from None
        if len(statements) != 1:
            raise CompileError(f"raw SQL {shown} must be one expression")
        parsed = statements[0]
        if isinstance(parsed, exp.Query) and not isinstance(parsed, exp.Subquery):
            # a scalar subquery in parentheses is an expression; a bare SELECT is not
            raise CompileError(f"raw SQL {shown} must be an expression, not a whole query")
        return _wrap(parsed)

    def _subquery(self, s: Subquery) -> exp.Expression:
        return exp.Subquery(this=self.query(s.query))

    def _exists(self, s: Exists) -> exp.Expression:
        return exp.Exists(this=self.query(s.query))

    def _inlist(self, e: InList) -> exp.Expression:
        values = [self._literal(Literal(v)) for v in e.values]
        return exp.In(this=_wrap(self.expr(e.expr)), expressions=values)

    def _inquery(self, e: InQuery) -> exp.Expression:
        return exp.In(this=_wrap(self.expr(e.expr)), query=exp.Subquery(this=self.query(e.query)))

    def _cast(self, c: Cast) -> exp.Expression:
        x = self.expr(c.expr)
        if self.d == "sqlite" and c.to in ("date", "timestamp"):
            return exp.Anonymous(this="DATE" if c.to == "date" else "DATETIME", expressions=[x])
        to = {"integer": "INT", "real": "DOUBLE", "text": "TEXT", "date": "DATE",
              "timestamp": "TIMESTAMP"}[c.to]
        return exp.Cast(this=x, to=exp.DataType.build(to))

    def _timestamp(self, x: exp.Expression) -> exp.Expression:
        """``x`` as a timestamp in PG/DuckDB, where Chinook-style dates may be stored as text."""
        return exp.Cast(this=x, to=exp.DataType.build("TIMESTAMP"))

    def _dateformat(self, f: DateFormat) -> exp.Expression:
        x = self.expr(f.expr)
        if self.d == "sqlite":
            return exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(f.format), x])
        if self.d == "duckdb":
            return exp.Anonymous(
                this="STRFTIME", expressions=[self._timestamp(x), exp.Literal.string(f.format)]
            )
        return exp.Anonymous(
            this="TO_CHAR", expressions=[self._timestamp(x), exp.Literal.string(_pg_format(f.format))]
        )

    def _case(self, c: Case) -> exp.Expression:
        ifs = [exp.If(this=self.expr(w.condition), true=self.expr(w.result)) for w in c.whens]
        default = self.expr(c.default) if c.default is not None else None
        return exp.Case(ifs=ifs, default=default)

    def _window(self, w: Window) -> exp.Expression:
        kwargs: dict[str, object] = {"this": self._call(w.expr)}
        if w.partition_by:
            kwargs["partition_by"] = [self.expr(p) for p in w.partition_by]
        if w.order_by:
            kwargs["order"] = exp.Order(expressions=[self.ordered(o) for o in w.order_by])
        return exp.Window(**kwargs)

    def _divisor(self, b: exp.Expression) -> exp.Expression:
        # SQLite gives NULL for a division by zero; PostgreSQL and DuckDB raise instead.
        return b if self.d == "sqlite" else exp.Nullif(this=b, expression=exp.Literal.number(0))

    def _call(self, c: Call) -> exp.Expression:
        fn = c.fn
        args = [self.expr(a) for a in c.args]
        if fn in _COMPARISONS:
            return _fold(_COMPARISONS[fn], args)
        if fn == "and":
            return _fold(exp.And, args)
        if fn == "or":
            return _fold(exp.Or, args)
        if fn == "not":
            return exp.Not(this=_wrap(args[0]))
        if fn == "add":
            return _fold(exp.Add, args)
        if fn == "mul":
            return _fold(exp.Mul, args)
        if fn == "concat":
            return _fold(exp.DPipe, args)
        if fn == "neg":
            return exp.Neg(this=_wrap(args[0]))
        if fn == "div":
            real = "REAL" if self.d == "sqlite" else "DOUBLE"
            num = exp.Cast(this=args[0], to=exp.DataType.build(real))
            return exp.Div(this=num, expression=_wrap(self._divisor(args[1])))
        if fn == "idiv":
            return exp.IntDiv(this=_wrap(args[0]), expression=_wrap(self._divisor(args[1])))
        if fn == "like":
            cls = exp.Like if self.d == "sqlite" else exp.ILike
            return cls(this=_wrap(args[0]), expression=_wrap(args[1]))
        if fn == "between":
            return exp.Between(this=_wrap(args[0]), low=_wrap(args[1]), high=_wrap(args[2]))
        if fn == "is_null":
            return exp.Is(this=_wrap(args[0]), expression=exp.Null())
        if fn == "count":
            return exp.Count(this=args[0])
        if fn == "count_distinct":
            return exp.Count(this=exp.Distinct(expressions=[args[0]]))
        if fn in _AGGREGATES:
            return _AGGREGATES[fn](this=args[0])
        if fn in _UNARY:
            return _UNARY[fn](this=args[0])
        if fn == "round":
            x = args[0]
            if self.d == "postgres":
                # PostgreSQL rounds to digits only for NUMERIC, and rounds a DOUBLE's halves to
                # even (ROUND(2.5) is 2); NUMERIC rounds them away from zero, as SQLite does.
                x = exp.Cast(this=x, to=exp.DataType.build("DECIMAL"))
            if len(args) == 1:
                return exp.Round(this=x)
            return exp.Round(this=x, decimals=args[1])
        if fn == "coalesce":
            return exp.Coalesce(this=args[0], expressions=args[1:])
        if fn == "nullif":
            return exp.Nullif(this=args[0], expression=args[1])
        if fn == "substr":
            return exp.Substring(this=args[0], start=args[1], length=args[2] if len(args) > 2 else None)
        if fn in _DATE_PARTS:
            if self.d == "sqlite":
                text = exp.Anonymous(
                    this="STRFTIME", expressions=[exp.Literal.string(_DATE_PARTS[fn]), args[0]]
                )
                return exp.Cast(this=text, to=exp.DataType.build("INT"))
            return exp.Extract(this=exp.var(fn.upper()), expression=self._timestamp(args[0]))
        if fn in _ANONYMOUS:
            return exp.Anonymous(this=_ANONYMOUS[fn], expressions=args)
        raise CompileError(f"function {fn!r} has no SQL form")  # pragma: no cover - FUNCTIONS drift
