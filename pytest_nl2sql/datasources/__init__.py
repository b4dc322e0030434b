"""Datasources: the read-only statement guard, one adapter (its own pool of ``sqlite3``
connections for SQLite, SQLAlchemy for every other database), schema introspection, and the
registry that hands out adapters by name (see docs/datasources.md)."""

from pytest_nl2sql.datasources.adapter import QUERY_ERROR_KINDS, Adapter, QueryError, QueryResult
from pytest_nl2sql.datasources.guard import StatementRefused, StatementUnparseable, check_statement
from pytest_nl2sql.datasources.introspect import (
    ColumnInfo,
    ForeignKey,
    SchemaInfo,
    TableInfo,
    clear_schema_cache,
    introspect,
)
from pytest_nl2sql.datasources.registry import DatasourceRegistry, UnknownDatasource

__all__ = [
    "QUERY_ERROR_KINDS",
    "Adapter",
    "ColumnInfo",
    "DatasourceRegistry",
    "ForeignKey",
    "QueryError",
    "QueryResult",
    "SchemaInfo",
    "StatementRefused",
    "StatementUnparseable",
    "TableInfo",
    "UnknownDatasource",
    "check_statement",
    "clear_schema_cache",
    "introspect",
]
