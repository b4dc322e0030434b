"""The plan's syntax tree: frozen attrs classes for expressions, sources, joins and queries.
Imports only :mod:`.vocabulary`."""

from __future__ import annotations

import attrs

from pytest_nl2sql.engine.plan.vocabulary import Scalar

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

