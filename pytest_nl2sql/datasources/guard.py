"""The statement guard: only one read-only query may reach a datasource.

SQL written by a model (or a person) is parsed with sqlglot before it runs. Exactly one
``SELECT`` (``WITH ... SELECT``, ``UNION`` / ``INTERSECT`` / ``EXCEPT`` of them, DuckDB's
``FROM t``) is admitted; any other statement, a second statement, ``SELECT ... INTO``, row
locks (``FOR UPDATE``) and data-changing statements hidden in a CTE are refused with a reason
a person can act on.

Functions are checked against an allow-list of functions known to be pure
(:mod:`pytest_nl2sql.datasources.functions`): a call's name is resolved first -- as written
in the SQL, so quoting, case and a ``pg_catalog.`` qualifier are normalised the way the
database itself does -- and anything not on the list (``pg_read_file``, ``dblink_exec``,
``pg_sleep``, ``load_extension``, ``read_csv``, a function in another schema, ...) is refused,
naming the function. A table-valued function in ``FROM`` must be on the dialect's list of
table functions too (``json_each``, ``generate_series``, ``unnest``).

The guard is bounded: SQL longer than :data:`MAX_SQL_CHARS` characters, with more than
:data:`MAX_SQL_TOKENS` tokens or :data:`MAX_SQL_NODES` parse-tree nodes, or nested too deeply
to parse, is refused before any further work.

The guard answers from its verdict memos first (this process's, then the verdict store of
earlier runs, :data:`~pytest_nl2sql.datasources.memo.STORE`); its rules (:mod:`.guardrules`)
and sqlglot are imported only when a verdict must be computed, so a run whose every verdict is
remembered imports no sqlglot.

The guard is the first line only: each adapter also opens its database read-only, so a
statement the guard misjudges is still refused by the database itself.
"""

from __future__ import annotations

import threading
from itertools import islice
from typing import TYPE_CHECKING, Any

from pytest_nl2sql.datasources.guardbase import (
    MAX_SQL_CHARS,
    MAX_SQL_NODES,
    MAX_SQL_TOKENS,
    StatementRefused,
    StatementUnparseable,
    check_size,
    sqlglot_dialect,
)
from pytest_nl2sql.datasources.memo import MISSING, STORE, Memo, text_key

if TYPE_CHECKING:
    from sqlglot import exp

    from pytest_nl2sql.datasources.guardrules import resolve_function

__all__ = [
    "MAX_SQL_CHARS",
    "MAX_SQL_NODES",
    "MAX_SQL_TOKENS",
    "StatementRefused",
    "Statements",
    "StatementUnparseable",
    "check_size",
    "check_statement",
    "parse_bounded",
    "parse_shared",
    "remembered",
    "resolve_function",
    "sqlglot_dialect",
]

_REFUSALS: dict[str, type[StatementRefused]] = {c.__name__: c for c in (StatementRefused, StatementUnparseable)}

#: SQL longer than this is parsed afresh each time (a memo of huge trees would hold memory).
SHARED_PARSE_CHARS = 20_000
#: The guard's verdict per (dialect, SQL text): it depends on nothing else.
VERDICTS: Memo[None] = Memo(8192, remember=(StatementRefused,))
#: One parse per (sqlglot dialect, SQL text), shared by the guard, the validator and the adapter:
#: the trees of the few SQL texts in flight (an item's, its roles', its neighbours'). Made on
#: first use (:func:`_parses`; ``guard.PARSES`` reads it): it remembers sqlglot's errors.
_PARSES: Memo[list[exp.Expression]] | None = None
_PARSES_LOCK = threading.Lock()


def _parses() -> Memo[list[exp.Expression]]:
    global _PARSES
    with _PARSES_LOCK:
        if _PARSES is None:
            from sqlglot.errors import SqlglotError

            _PARSES = Memo(32, remember=(StatementRefused, SqlglotError))
        return _PARSES


def parse_shared(sql: str, read: str | None) -> list[exp.Expression]:
    """:func:`parse_bounded`, once per (``read``, ``sql``): the trees are shared by every caller,
    so a caller that changes a tree changes a ``copy()`` of it (datasources.memo)."""
    if len(sql) > SHARED_PARSE_CHARS:
        return parse_bounded(sql, read)
    return _parses().get((read, text_key(sql)), lambda: parse_bounded(sql, read))


def check_statement(sql: str, dialect: str) -> None:
    """Return when ``sql`` is exactly one read-only query; raise ``StatementRefused`` otherwise.

    ``dialect`` is the adapter's dialect name ('sqlite', 'postgresql', 'duckdb', or another
    SQLAlchemy dialect name, parsed as generic SQL). Unparseable SQL raises
    ``StatementUnparseable`` (a ``StatementRefused``) with the parser's message. The verdict
    is computed once per (dialect, SQL text) and remembered (datasources.memo).
    """
    check_size(sql)  # before the memo: no key is ever a text over the limit
    VERDICTS.get((dialect.lower(), text_key(sql)), lambda: _remembered(sql, dialect))


def remembered(sql: str, dialect: str) -> bool:
    """Whether an earlier run's verdict on ``sql`` is in the verdict store (a look-up, nothing
    computed; False without a store)."""
    return STORE.lookup(STORE.key("guard", dialect.lower(), sql)) is not MISSING


def _remembered(sql: str, dialect: str) -> None:
    """:func:`_check_statement`, or its verdict from an earlier run (datasources.memo.STORE)."""
    key = STORE.key("guard", dialect.lower(), sql)
    found = STORE.lookup(key)
    if found is None:
        return
    if type(found) is list and len(found) == 2 and found[0] in _REFUSALS and type(found[1]) is str:
        raise _REFUSALS[found[0]](found[1])
    try:
        _check_statement(sql, dialect)
    except StatementRefused as refusal:
        kind = type(refusal).__name__
        if _REFUSALS.get(kind) is type(refusal):
            STORE.record(key, [kind, refusal.reason])
        raise
    STORE.record(key, None)


def _check_statement(sql: str, dialect: str) -> None:
    """The verdict computed by the guard's rules (:mod:`.guardrules`: sqlglot is imported here)."""
    from pytest_nl2sql.datasources import guardrules

    guardrules.check_now(sql, dialect, parse_shared)


def parse_bounded(sql: str, read: str | None) -> list[exp.Expression]:
    """``sqlglot.parse(sql, read=read)`` within the guard's limits.

    Raises ``StatementRefused`` for SQL over :data:`MAX_SQL_CHARS` characters or
    :data:`MAX_SQL_TOKENS` tokens, or whose trees have over :data:`MAX_SQL_NODES` nodes, and
    ``StatementUnparseable`` for SQL nested too deeply to parse. sqlglot's own errors
    (``ParseError``, ``TokenError``) pass through.
    """
    check_size(sql)
    import sqlglot

    parser_dialect = sqlglot.Dialect.get_or_raise(read)
    try:
        tokens = parser_dialect.tokenize(sql)
        if len(tokens) > MAX_SQL_TOKENS:
            raise StatementRefused(
                f"the SQL has {len(tokens):,} tokens; at most {MAX_SQL_TOKENS:,} are checked "
                "(write a shorter query, e.g. a join instead of a long IN list)"
            )
        parsed = parser_dialect.parser().parse(tokens, sql)
    except RecursionError:
        raise StatementUnparseable("the SQL is nested too deeply to check") from None
    statements = Statements(statement for statement in parsed if statement is not None)
    left = MAX_SQL_NODES
    for statement in statements:
        nodes = list(islice(statement.walk(), left + 1))
        left -= len(nodes)
        if left < 0:
            raise StatementRefused(
                f"the SQL's parse tree has more than {MAX_SQL_NODES:,} nodes; "
                "write a shorter query"
            )
        statements.nodes.append(nodes)
    return statements


class Statements(list):  # type: ignore[type-arg]
    """The statements :func:`parse_bounded` parsed, and ``nodes``: each statement's nodes in
    ``walk()`` order, listed by the walk that bounds their number. The guard's rules and the
    validator's census read that list instead of walking the tree again; it stays true as long
    as the tree is not changed, which a shared parse never is (:func:`parse_shared`)."""

    __slots__ = ("nodes",)

    def __init__(self, statements: Any = ()) -> None:
        super().__init__(statements)
        self.nodes: list[list[exp.Expression]] = []


def __getattr__(name: str) -> Any:
    """The names that moved to :mod:`.guardrules` (PEP 562): importing them imports sqlglot."""
    if name == "PARSES":
        return _parses()
    if name == "resolve_function":
        from pytest_nl2sql.datasources.guardrules import resolve_function

        return resolve_function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
