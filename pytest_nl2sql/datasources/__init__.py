"""Datasources: the read-only statement guard, one SQLAlchemy adapter, schema introspection,
and the registry that hands out adapters by name (see docs/datasources.md)."""

from typing import TYPE_CHECKING, Any

# Loaded on first use (PEP 562): importing a light submodule (``datasources.memo``) must not
# pull SQLAlchemy and sqlglot into a process that never runs a query (the xdist controller).
_WHERE = {
    "QUERY_ERROR_KINDS": "adapter", "Adapter": "adapter", "QueryError": "adapter", "QueryResult": "adapter",
    "StatementRefused": "guard", "StatementUnparseable": "guard", "check_statement": "guard",
    "ColumnInfo": "introspect", "ForeignKey": "introspect", "SchemaInfo": "introspect",
    "TableInfo": "introspect", "clear_schema_cache": "introspect", "introspect": "introspect",
    "DatasourceRegistry": "registry", "UnknownDatasource": "registry",
}  # fmt: skip

if TYPE_CHECKING:
    from pytest_nl2sql.datasources.adapter import (
        QUERY_ERROR_KINDS,
        Adapter,
        QueryError,
        QueryResult,
    )
    from pytest_nl2sql.datasources.guard import (
        StatementRefused,
        StatementUnparseable,
        check_statement,
    )
    from pytest_nl2sql.datasources.introspect import (
        ColumnInfo,
        ForeignKey,
        SchemaInfo,
        TableInfo,
        clear_schema_cache,
        introspect,
    )
    from pytest_nl2sql.datasources.registry import DatasourceRegistry, UnknownDatasource


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


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
