"""SQLite's own last word: an authorizer that lets a query read, and nothing else.

The statement guard and the validator look at SQL text; this module makes SQLite itself
refuse what they might miss. Every connection the adapter opens gets :func:`base_authorizer`
(no ``ATTACH``, no writes outside SQLite's own schema bookkeeping -- the adapter's
introspection runs under it). While a query of the project runs, the adapter installs
:func:`query_authorizer`, an allow-list:

* ``SELECT`` and ``WITH RECURSIVE`` may run; every other action (writes, DDL, ``PRAGMA``,
  ``ATTACH``, transactions, ``ANALYZE``, ...) is denied;
* a function may be called only when it is on the dialect's allow-list
  (:func:`pytest_nl2sql.datasources.functions.allowed_functions`), as SQLite names it;
* when the query runs for a role, each column read is checked against the role's policy --
  SQLite reports a ``rowid`` / ``oid`` / ``_rowid_`` read of a table with an ``INTEGER
  PRIMARY KEY`` as a read of that key, and a table-level read (``count(*)``) with an empty
  column name -- and a generated column counts as reading every column of its table (its
  expression may use any of them). SQLite's catalog (``sqlite_master``, ``sqlite_schema``,
  ``sqlite_temp_master``, ``sqlite_sequence``, ``sqlite_stat*``) is not readable by a role.

A denied action makes the statement fail to prepare ("not authorized"), before it reads
anything.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping
from typing import Protocol

from pytest_nl2sql.datasources.functions import allowed_functions

__all__ = ["ColumnPolicy", "base_authorizer", "query_authorizer"]

Authorizer = Callable[[int, "str | None", "str | None", "str | None", "str | None"], int]

_OK, _DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY
_SELECT = sqlite3.SQLITE_SELECT
_READ = sqlite3.SQLITE_READ
_FUNCTION = sqlite3.SQLITE_FUNCTION
_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
_ATTACH = sqlite3.SQLITE_ATTACH
_DETACH = sqlite3.SQLITE_DETACH
_WRITES = frozenset(
    {
        sqlite3.SQLITE_INSERT,
        sqlite3.SQLITE_UPDATE,
        sqlite3.SQLITE_DELETE,
        sqlite3.SQLITE_CREATE_TABLE,
        sqlite3.SQLITE_CREATE_INDEX,
        sqlite3.SQLITE_CREATE_TRIGGER,
        sqlite3.SQLITE_CREATE_VIEW,
        sqlite3.SQLITE_CREATE_TEMP_TABLE,
        sqlite3.SQLITE_CREATE_TEMP_INDEX,
        sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
        sqlite3.SQLITE_CREATE_TEMP_VIEW,
        sqlite3.SQLITE_CREATE_VTABLE,
        sqlite3.SQLITE_DROP_TABLE,
        sqlite3.SQLITE_DROP_INDEX,
        sqlite3.SQLITE_DROP_TRIGGER,
        sqlite3.SQLITE_DROP_VIEW,
        sqlite3.SQLITE_DROP_TEMP_TABLE,
        sqlite3.SQLITE_DROP_TEMP_INDEX,
        sqlite3.SQLITE_DROP_TEMP_TRIGGER,
        sqlite3.SQLITE_DROP_TEMP_VIEW,
        sqlite3.SQLITE_DROP_VTABLE,
        sqlite3.SQLITE_ALTER_TABLE,
        sqlite3.SQLITE_REINDEX,
        sqlite3.SQLITE_ANALYZE,
    }
)
_CATALOG = frozenset({"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema", "sqlite_sequence"})
_SQLITE_FUNCTIONS = allowed_functions("sqlite")


class ColumnPolicy(Protocol):
    """What the authorizer asks of a role (``RolePolicy`` has it)."""

    def allows_table(self, datasource: str, table: str) -> bool: ...
    def allows_column(self, datasource: str, table: str, column: str) -> bool: ...


def _is_catalog(table: str) -> bool:
    name = table.lower()
    return name in _CATALOG or name.startswith("sqlite_stat")


def base_authorizer(
    action: int, arg1: str | None, arg2: str | None, db: str | None, inner: str | None
) -> int:
    """What any statement on an adapter's connection may do: no ATTACH, no writes.

    SQLite's own schema bookkeeping (an ``UPDATE`` of ``sqlite_master`` it reports while
    it loads a pragma table) is let through; the file is opened read-only besides.
    """
    if action in (_ATTACH, _DETACH):
        return _DENY
    if action in _WRITES and not (arg1 and _is_catalog(arg1)):
        return _DENY
    if action == _FUNCTION and (arg2 or "").lower() == "load_extension":
        return _DENY
    return _OK


def query_authorizer(
    datasource: str,
    role: ColumnPolicy | None,
    generated: Mapping[str, frozenset[str]],
    columns: Mapping[str, tuple[str, ...]],
) -> Authorizer:
    """The allow-list a project's query runs under (see the module docstring).

    ``generated`` maps a lowercase table name to its generated columns (lowercase) and
    ``columns`` to every column it has; both come from the adapter's look at the schema.
    """
    decided: dict[tuple[str, str], int] = {}

    def column_verdict(table: str, column: str) -> int:
        key = (table.lower(), column.lower())
        verdict = decided.get(key)
        if verdict is not None:
            return verdict
        verdict = _DENY
        if role is not None and _is_catalog(table):
            verdict = _DENY
        elif role is None:
            verdict = _OK
        elif column == "" or column.lower() == "rowid":
            # a table-level read (count(*)), or the rowid of a table without an INTEGER
            # PRIMARY KEY (not a column anyone can deny)
            verdict = _OK if role.allows_table(datasource, table) else _DENY
        elif not role.allows_column(datasource, table, column):
            verdict = _DENY
        elif key[1] in generated.get(key[0], frozenset()):
            every = columns.get(key[0], ())
            readable = all(role.allows_column(datasource, table, other) for other in every)
            verdict = _OK if readable else _DENY
        else:
            verdict = _OK
        decided[key] = verdict
        return verdict

    def authorize(
        action: int, arg1: str | None, arg2: str | None, db: str | None, inner: str | None
    ) -> int:
        if action == _SELECT or action == _RECURSIVE:
            return _OK
        if action == _READ:
            return column_verdict(arg1 or "", arg2 or "")
        if action == _FUNCTION:
            return _OK if (arg2 or "").lower() in _SQLITE_FUNCTIONS else _DENY
        return _DENY

    return authorize
