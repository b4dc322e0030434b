"""The statement guard: only one read-only query may reach a datasource.

SQL written by a model (or a person) is parsed with sqlglot before it runs. Exactly one
``SELECT`` (``WITH ... SELECT``, ``UNION`` / ``INTERSECT`` / ``EXCEPT`` of them, DuckDB's
``FROM t``) is admitted; any other statement, a second statement, ``SELECT ... INTO``, row
locks (``FOR UPDATE``), data-changing statements hidden in a CTE, and functions that touch
anything outside the query (files, sessions, sequences, other servers, extensions) are
refused with a reason a person can act on.

The guard is the first line only: each adapter also opens its database read-only, so a
statement the guard misjudges is still refused by the database itself.
"""

from __future__ import annotations

import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

__all__ = ["StatementRefused", "StatementUnparseable", "check_statement", "sqlglot_dialect"]

_ADMITTED = "only a single read-only SELECT (or WITH ... SELECT) may run"

# Functions that read or change state outside the query, per dialect family. Names are
# lowercase; a name ending in "*" is a prefix.
_COMMON_DENIED = frozenset({"query", "query_table"})
_POSTGRES_DENIED = frozenset(
    {
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_*",
        "pg_stat_file",
        "pg_file_*",
        "pg_advisory_*",
        "pg_try_advisory_*",
        "pg_create_*",
        "pg_drop_*",
        "pg_replication_*",
        "pg_logical_*",
        "pg_switch_wal",
        "pg_promote",
        "pg_backup_*",
        "pg_start_backup",
        "pg_stop_backup",
        "pg_import_system_collations",
        "pg_notify",
        "lo_*",
        "set_config",
        "dblink*",
        "nextval",
        "setval",
        "txid_current",
        "pg_current_xact_id",
        "query_to_xml*",
        "table_to_xml*",
        "cursor_to_xml*",
        "database_to_xml*",
        "schema_to_xml*",
    }
)
_SQLITE_DENIED = frozenset(
    {"load_extension", "writefile", "readfile", "edit", "fts3_tokenizer", "zipfile", "fsdir"}
)
_DUCKDB_DENIED = frozenset(
    {
        "read_*",
        "parquet_*",
        "sniff_csv",
        "glob",
        "sqlite_scan",
        "sqlite_attach",
        "postgres_*",
        "mysql_*",
        "iceberg_*",
        "delta_scan",
        "http_*",
        "install_extension",
        "load_extension",
        "setval",
        "nextval",
        "currval",
    }
)
_DENIED_BY_DIALECT = {
    "postgresql": _POSTGRES_DENIED,
    "sqlite": _SQLITE_DENIED,
    "duckdb": _DUCKDB_DENIED,
}
_ALL_DENIED = _POSTGRES_DENIED | _SQLITE_DENIED | _DUCKDB_DENIED

# Nodes that never belong inside a read-only query, wherever they appear.
_WRITE_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert",
        "Update",
        "Delete",
        "Merge",
        "Drop",
        "Create",
        "Alter",
        "Copy",
        "Command",
        "Pragma",
        "Attach",
        "Detach",
        "Install",
        "Set",
        "Transaction",
        "Commit",
        "Rollback",
        "Use",
        "Into",
        "Lock",
        "TruncateTable",
        "Grant",
        "Revoke",
        "Analyze",
    )
    if hasattr(exp, name)
)


# Words that start a statement in some SQL dialect; a parse that reads one of them as a
# column name ("INSTALL httpfs" outside DuckDB) is reported as that statement.
_STATEMENT_KEYWORDS = frozenset(
    """ALTER ANALYZE ATTACH BEGIN CALL CHECKPOINT CLUSTER COMMENT COMMIT COPY CREATE DEALLOCATE
    DECLARE DELETE DETACH DISCARD DO DROP EXECUTE EXPLAIN EXPORT FETCH GRANT IMPORT INSERT
    INSTALL LISTEN LOAD LOCK MERGE MOVE NOTIFY PRAGMA PREPARE REASSIGN REFRESH REINDEX RELEASE
    REPLACE RESET REVOKE ROLLBACK SAVEPOINT SECURITY SET SHOW START TRUNCATE UNLISTEN UPDATE
    UPSERT USE VACUUM""".split()
)
_FIRST_WORD_RE = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*([A-Za-z_]+)", re.DOTALL)


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


def check_statement(sql: str, dialect: str) -> None:
    """Return when ``sql`` is exactly one read-only query; raise ``StatementRefused`` otherwise.

    ``dialect`` is the adapter's dialect name ('sqlite', 'postgresql', 'duckdb', or another
    SQLAlchemy dialect name, parsed as generic SQL). Unparseable SQL raises
    ``StatementUnparseable`` (a ``StatementRefused``) with the parser's message.
    """
    read = sqlglot_dialect(dialect)
    statements = _parse(sql, read)
    if not statements:
        raise StatementRefused(f"the SQL is empty ({_ADMITTED})")
    if len(statements) > 1:
        kinds = ", ".join(_statement_kind(s) for s in statements)
        raise StatementRefused(
            f"{len(statements)} statements given ({kinds}): {_ADMITTED}, with no ';' between statements"
        )
    root = statements[0]
    if isinstance(root, (exp.Condition, exp.Alias)):  # "SELEC", "1 + 1", "INSTALL httpfs"
        keyword = _first_keyword(sql)
        if keyword in _STATEMENT_KEYWORDS:
            raise StatementRefused(f"{keyword} is not allowed: {_ADMITTED}")
        raise StatementUnparseable(
            f"the SQL is not a statement: {root.sql()[:60]!r} (write one plain SELECT)"
        )
    if not _is_query(root):
        raise StatementRefused(f"{_statement_kind(root)} is not allowed: {_ADMITTED}")
    _check_inside(root, dialect.lower())


def _parse(sql: str, read: str | None) -> list[exp.Expression]:
    sqlglot_logger = logging.getLogger("sqlglot")
    previous = sqlglot_logger.level
    sqlglot_logger.setLevel(logging.ERROR)  # "falling back to Command" is reported by us
    try:
        parsed = sqlglot.parse(sql, read=read)
    except (ParseError, TokenError) as error:
        keyword = _first_keyword(sql)
        if keyword in _STATEMENT_KEYWORDS:
            raise StatementRefused(f"{keyword} is not allowed: {_ADMITTED}") from None
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise StatementUnparseable(
            f"the SQL could not be parsed as {read or 'generic SQL'}: {first} (write one plain SELECT)"
        ) from None
    except RecursionError:
        raise StatementUnparseable("the SQL is nested too deeply to check") from None
    finally:
        sqlglot_logger.setLevel(previous)
    return [statement for statement in parsed if statement is not None]


def _first_keyword(sql: str) -> str | None:
    match = _FIRST_WORD_RE.match(sql)
    return match.group(1).upper() if match else None


def _is_query(node: exp.Expression) -> bool:
    if isinstance(node, exp.Subquery):
        return _is_query(node.this)
    return isinstance(node, (exp.Select, exp.Union, exp.Intersect, exp.Except))


def _statement_kind(node: exp.Expression) -> str:
    if isinstance(node, exp.Command):
        return str(node.this).upper()
    if isinstance(node, exp.Values):
        return "VALUES"
    if _is_query(node):
        return "SELECT"
    key = node.key.upper()
    return {"CREATE": "CREATE", "TRUNCATETABLE": "TRUNCATE"}.get(key, key)


def _check_inside(root: exp.Expression, dialect: str) -> None:
    denied = _DENIED_BY_DIALECT.get(dialect, _ALL_DENIED) | _COMMON_DENIED
    for node in root.walk():
        if isinstance(node, _WRITE_NODES):
            if isinstance(node, exp.Into):
                raise StatementRefused(
                    f"SELECT ... INTO creates a table and is not allowed: {_ADMITTED}"
                )
            raise StatementRefused(
                f"{_statement_kind(node)} inside the query is not allowed: {_ADMITTED}"
            )
        if isinstance(node, exp.Select):
            if node.args.get("into") is not None:
                raise StatementRefused(
                    f"SELECT ... INTO creates a table and is not allowed: {_ADMITTED}"
                )
            if node.args.get("locks"):
                raise StatementRefused(
                    f"row locks (FOR UPDATE / FOR SHARE) are not allowed: {_ADMITTED}"
                )
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name and _is_denied(name, denied):
                raise StatementRefused(
                    f"function {name}() is not allowed: it reads or changes state outside the "
                    f"query ({_ADMITTED}, using the datasource's own tables)"
                )
        if dialect == "duckdb" and isinstance(node, exp.Table) and _looks_like_file(node):
            raise StatementRefused(
                f"reading the file {node.name!r} is not allowed: query the datasource's tables"
            )


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    return node.sql_name().lower()


def _is_denied(name: str, denied: frozenset[str]) -> bool:
    if name in denied:
        return True
    return any(item.endswith("*") and name.startswith(item[:-1]) for item in denied)


def _looks_like_file(table: exp.Table) -> bool:
    if table.args.get("db") or table.args.get("catalog"):
        return False
    name = table.name
    return any(ch in name for ch in "/\\*") or "://" in name or "." in name
