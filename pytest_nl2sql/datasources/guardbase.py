"""What the statement guard's front and its rules share, without sqlglot: the refusals, the
limits, the dialect names.

:mod:`.guard` answers from its verdict memos first and imports its rules (:mod:`.guardrules`,
which import sqlglot) only when a verdict must be computed; both import these from here.
"""

from __future__ import annotations

__all__ = [
    "MAX_SQL_CHARS",
    "MAX_SQL_NODES",
    "MAX_SQL_TOKENS",
    "StatementRefused",
    "StatementUnparseable",
    "check_size",
    "sqlglot_dialect",
]

#: The longest SQL the guard (and the validator) will look at, in characters.
MAX_SQL_CHARS = 100_000
#: The most tokens a statement may have (checked before it is parsed).
MAX_SQL_TOKENS = 20_000
#: The most nodes a statement's parse tree may have.
MAX_SQL_NODES = 20_000


class StatementRefused(Exception):
    """The SQL is not a single read-only query; ``reason`` says what was found."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StatementUnparseable(StatementRefused):
    """The SQL could not be parsed, so it cannot be shown to be read-only."""


def sqlglot_dialect(dialect: str) -> str | None:
    """Map an adapter dialect name ('postgresql', 'sqlite', ...) to sqlglot's name."""
    name = dialect.lower()
    if name in ("postgresql", "postgres"):
        return "postgres"
    if name in ("sqlite", "duckdb", "mysql", "snowflake", "bigquery", "oracle", "tsql"):
        return name
    if name == "mssql":
        return "tsql"
    return None


def check_size(sql: str) -> None:
    """Raise ``StatementRefused`` when ``sql`` is longer than :data:`MAX_SQL_CHARS`."""
    if len(sql) > MAX_SQL_CHARS:
        raise StatementRefused(
            f"the SQL is {len(sql):,} characters long; at most {MAX_SQL_CHARS:,} are checked "
            "(write a shorter query)"
        )
