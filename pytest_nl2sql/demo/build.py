"""Write the demo databases: SQLite files, or the same schema and rows in any SQLAlchemy database.

Each demo database has one definition, a SQLAlchemy `MetaData` plus its rows, and both writers
take it from there: `build_sqlite` compiles the schema's DDL for SQLite and inserts with the
standard library (fast, and the same bytes on every run); `load_into` lets SQLAlchemy create the
tables for the target dialect (quoted identifiers, so Chinook's CamelCase survives PostgreSQL)
and inserts in batches.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

from sqlalchemy import (
    Boolean,
    Date,
    DateTime,
    Float,
    MetaData,
    Numeric,
    Table,
    create_engine,
    inspect,
)
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateIndex, CreateTable

from pytest_nl2sql.demo import chinook, support, webanalytics

_MODULES: dict[str, ModuleType] = {
    "chinook": chinook,
    "support": support,
    "webanalytics": webanalytics,
}
DEMO_NAMES: tuple[str, ...] = tuple(_MODULES)
"""The demo databases, in the order they are built."""

BATCH_SIZE = 5_000
"""Rows per INSERT batch in load_into."""


class UnknownDemoDatabase(ValueError):
    """A name that is not one of the demo databases."""


class TargetNotEmpty(ValueError):
    """load_into was pointed at a database that already holds some of the demo's tables."""


def _module(name: str) -> ModuleType:
    try:
        return _MODULES[name]
    except KeyError:
        raise UnknownDemoDatabase(
            f"unknown demo database {name!r}: expected one of {', '.join(DEMO_NAMES)}"
        ) from None


def demo_metadata(name: str) -> MetaData:
    """The schema of demo database `name` (chinook, support or webanalytics)."""
    return _module(name).METADATA


def demo_rows(name: str) -> Mapping[str, Sequence[tuple]]:
    """Every table's rows of demo database `name`, as tuples in the schema's column order."""
    return _module(name).rows()


def build_sqlite(name: str, path: Path) -> Path:
    """Write demo database `name` to the SQLite file `path` and return the path.

    The file is built beside `path` under a temporary name and moved into place when complete,
    so `path` is either the old file or the whole new one, never half of one. Building twice
    gives byte-identical files.
    """
    metadata = demo_metadata(name)
    data = demo_rows(name)
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(
            f"cannot build the {name} demo database at {path}: folder {path.parent} does not exist"
        )
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(descriptor)
    try:
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would surprise whoever shares the demo folder
        _write_sqlite(metadata, data, Path(temporary))
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    return path


def build_demo_databases(data_dir: Path) -> dict[str, Path]:
    """Write chinook.sqlite, support.sqlite and webanalytics.sqlite into data_dir (created if needed)."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    return {name: build_sqlite(name, data_dir / f"{name}.sqlite") for name in DEMO_NAMES}


def _write_sqlite(metadata: MetaData, data: Mapping[str, Sequence[tuple]], path: Path) -> None:
    dialect = sqlite_dialect.dialect()
    quote = dialect.identifier_preparer.quote
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute("PRAGMA foreign_keys = ON")
        connection.execute("BEGIN")
        for table in metadata.sorted_tables:
            connection.execute(str(CreateTable(table).compile(dialect=dialect)).strip())
            for index in sorted(table.indexes, key=lambda index: index.name):
                connection.execute(str(CreateIndex(index).compile(dialect=dialect)).strip())
        for table in metadata.sorted_tables:
            columns = ", ".join(quote(column.name) for column in table.columns)
            marks = ", ".join("?" for _ in table.columns)
            connection.executemany(
                f"INSERT INTO {quote(table.name)} ({columns}) VALUES ({marks})", data[table.name]
            )
        connection.execute("COMMIT")
    finally:
        connection.close()


def load_into(url: str, name: str) -> None:
    """Create demo database `name`'s tables and rows in the database at SQLAlchemy `url`.

    The target must not already hold any of the demo's tables. Types map per dialect (e.g.
    TIMESTAMP and NUMERIC in PostgreSQL) and values are converted to match: timestamp text to
    datetime, money to Decimal, flags to bool. Everything happens in one transaction.
    """
    metadata = demo_metadata(name)
    data = demo_rows(name)
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            existing = sorted(set(inspect(connection).get_table_names()) & set(metadata.tables))
            if existing:
                raise TargetNotEmpty(
                    f"cannot load the {name} demo database into {engine.url!r}: it already has "
                    f"the tables {', '.join(existing)}; use an empty database or drop them first"
                )
            metadata.create_all(connection)
            for table in metadata.sorted_tables:
                # a table that references itself (Employee.ReportsTo) goes in row by row, parents
                # first: some databases (DuckDB) check a multi-row insert's keys against the table
                # as it was before the statement
                self_ref = any(fk.column.table is table for fk in table.foreign_keys)
                for batch in _batches(table, data[table.name]):
                    if self_ref:
                        for row in batch:
                            connection.execute(table.insert(), [row])
                    else:
                        connection.execute(table.insert(), batch)
    finally:
        engine.dispose()


def _batches(table: Table, table_rows: Sequence[tuple]) -> Iterator[list[dict[str, Any]]]:
    keys = [column.key for column in table.columns]
    converters = [_converter(column.type) for column in table.columns]
    batch: list[dict[str, Any]] = []
    for row in table_rows:
        batch.append({
            key: (value if value is None or convert is None else convert(value))
            for key, convert, value in zip(keys, converters, row, strict=True)
        })
        if len(batch) >= BATCH_SIZE:
            yield batch
            batch = []
    if batch:
        yield batch


def _converter(column_type: Any) -> Callable[[Any], Any] | None:
    """How a stored demo value becomes the Python value SQLAlchemy expects for this type."""
    if isinstance(column_type, DateTime):
        return datetime.fromisoformat
    if isinstance(column_type, Date):
        return date.fromisoformat
    if isinstance(column_type, Boolean):
        return bool
    if isinstance(column_type, Numeric) and not isinstance(column_type, Float):
        return lambda value: Decimal(str(value))
    return None
