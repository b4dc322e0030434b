"""What a datasource holds: tables, columns, keys, row counts and a few sample values.

``introspect(adapter)`` reads it once per process and caches it by URL (and, for a database
file, its modification time and size, so an edited file is read again). SQLite is read with
its own PRAGMA table functions, which keeps a 1,200-table schema to well under a second and
needs no SQLAlchemy; DuckDB with its catalog functions; other databases go through
SQLAlchemy's inspector, imported there. Everything is read through the adapter's read-only
connections.
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

import attrs

from pytest_nl2sql.datasources.adapter import Adapter, QueryError
from pytest_nl2sql.datasources.deadline import GRACE_S
from pytest_nl2sql.suitefile.values import normalize_value

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy.engine.reflection import ObjectKind

__all__ = [
    "ColumnInfo",
    "ForeignKey",
    "SchemaInfo",
    "TableInfo",
    "clear_schema_cache",
    "introspect",
]

SAMPLE_VALUES = 5
SAMPLE_MAX_CHARS = 80


@attrs.frozen
class ColumnInfo:
    """One column. ``samples`` holds up to 5 distinct values of a text column."""

    name: str
    type: str
    primary_key: bool = False
    nullable: bool = True
    samples: tuple[Any, ...] = ()


@attrs.frozen
class ForeignKey:
    """``columns`` of this table reference ``ref_columns`` of ``ref_table``."""

    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]


@attrs.frozen
class TableInfo:
    """One table (or view, ``kind='view'``). ``row_count`` is None if it could not be counted."""

    name: str
    columns: tuple[ColumnInfo, ...]
    foreign_keys: tuple[ForeignKey, ...] = ()
    row_count: int | None = None
    kind: str = "table"

    @property
    def primary_key(self) -> tuple[str, ...]:
        """Names of the primary-key columns, in table order."""
        return tuple(c.name for c in self.columns if c.primary_key)

    def column(self, name: str) -> ColumnInfo:
        """The column called ``name`` (case-insensitive); a KeyError lists the columns."""
        for column in self.columns:
            if column.name.lower() == name.lower():
                return column
        known = ", ".join(c.name for c in self.columns)
        raise KeyError(f"table {self.name!r} has no column {name!r} (columns: {known})")


@attrs.frozen
class SchemaInfo:
    """The schema of one datasource, tables in the database's order."""

    datasource: str
    dialect: str
    tables: dict[str, TableInfo]

    def columns_by_table(self) -> dict[str, list[str]]:
        """``{table: [column, ...]}`` for every table."""
        return {name: [c.name for c in table.columns] for name, table in self.tables.items()}

    def table(self, name: str) -> TableInfo:
        """The table called ``name`` (case-insensitive); a KeyError lists close names."""
        if name in self.tables:
            return self.tables[name]
        for key, table in self.tables.items():
            if key.lower() == name.lower():
                return table
        raise KeyError(f"datasource {self.datasource!r} has no table {name!r}")


#: Reading a schema (reflection, counts, samples) may wait this many ``timeout_s`` (+ 2 s).
INTROSPECT_QUERIES = 3
_cache: dict[tuple[Any, ...], SchemaInfo] = {}
_cache_lock = threading.Lock()


def clear_schema_cache() -> None:
    """Forget every cached schema (they are re-read on next use)."""
    with _cache_lock:
        _cache.clear()


def introspect(adapter: Adapter, *, refresh: bool = False, shape_only: bool = False) -> SchemaInfo:
    """Return the schema of ``adapter``'s database, cached per process.

    ``shape_only``: tables, views, columns, their types and keys, without what costs a query
    per table or column (row counts, sample values: ``row_count`` None, ``samples`` ()); the
    full schema when this process has it already. What a run's provenance fingerprints (its
    tables, columns and types are the full read's), on a controller that never reads the
    full schema otherwise; a ``COUNT(*)`` of every table of a large database is not free.

    Raises ``QueryError('unreachable')`` when the database cannot be opened.
    """
    key = adapter.cache_key()
    if not refresh:
        with _cache_lock:
            cached = _cache.get(key) or (_cache.get((key, "shape")) if shape_only else None)
        if cached is not None:
            return cached
    details = not shape_only
    if adapter.dialect == "sqlite":
        tables = _sqlite_tables(adapter, details)
    elif adapter.dialect == "duckdb":
        tables = _duckdb_tables(adapter, details)
    else:  # on PostgreSQL, bounded by a client deadline and counted as the adapter's queries are
        tables = adapter.within_deadline(
            lambda: _inspector_tables(adapter, details), INTROSPECT_QUERIES * adapter.timeout_s + GRACE_S
        )
    info = SchemaInfo(datasource=adapter.name, dialect=adapter.dialect, tables=tables)
    with _cache_lock:
        _cache[key if details else (key, "shape")] = info
    return info


def _sample(value: Any) -> Any:
    value = normalize_value(value)
    if isinstance(value, str) and len(value) > SAMPLE_MAX_CHARS:
        return value[: SAMPLE_MAX_CHARS - 1] + "…"
    return value


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# ---------------------------------------------------------------------------------------------
# SQLite: PRAGMA table functions, one query for all columns and one for all foreign keys


def _sqlite_is_text(declared: str) -> bool:
    upper = declared.upper()
    return "INT" not in upper and any(word in upper for word in ("CHAR", "CLOB", "TEXT"))


def _sqlite_tables(adapter: Adapter, details: bool = True) -> dict[str, TableInfo]:
    with adapter.raw_connection() as connection:
        cursor = connection.cursor()
        cursor.execute(
            "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        )
        kinds = {name: kind for name, kind in cursor.fetchall()}
        columns: dict[str, list[tuple[str, str, bool, bool]]] = {name: [] for name in kinds}
        for table, name, declared, pk, notnull in _sqlite_all_columns(cursor, list(kinds)):
            columns[table].append((name, declared or "", bool(pk), not notnull and not pk))
        foreign: dict[str, dict[int, list[tuple[str, str, str]]]] = {}
        cursor.execute(
            'SELECT m.name, f.id, f."table", f."from", f."to" FROM sqlite_schema AS m '
            "JOIN pragma_foreign_key_list(m.name) AS f WHERE m.type = 'table' "
            "ORDER BY m.rowid, f.id, f.seq"
        )
        for table, fk_id, ref_table, source, target in cursor.fetchall():
            foreign.setdefault(table, {}).setdefault(fk_id, []).append((ref_table, source, target))
        tables: dict[str, TableInfo] = {}
        for table, kind in kinds.items():
            counted = _sqlite_scalar(cursor, f"SELECT COUNT(*) FROM {_quote(table)}") if details else None
            infos = []
            for name, declared, pk, nullable in columns[table]:
                samples: tuple[Any, ...] = ()
                if _sqlite_is_text(declared) and counted:
                    samples = _distinct(
                        cursor,
                        f"SELECT DISTINCT {_quote(name)} FROM {_quote(table)} "
                        f"WHERE {_quote(name)} IS NOT NULL LIMIT {SAMPLE_VALUES}",
                    )
                infos.append(ColumnInfo(name, declared, pk, nullable, samples))
            fks = tuple(
                ForeignKey(
                    columns=tuple(source for _, source, _ in parts),
                    ref_table=parts[0][0],
                    ref_columns=tuple(
                        target if target is not None else source for _, source, target in parts
                    ),
                )
                for parts in foreign.get(table, {}).values()
            )
            tables[table] = TableInfo(
                table, tuple(infos), fks, counted, "view" if kind == "view" else "table"
            )
        cursor.close()
    return tables


def _sqlite_all_columns(cursor: Any, tables: list[str]) -> list[tuple]:
    """Every column of every table in one query; table by table if a broken view spoils it.

    ``table_xinfo`` rather than ``table_info``: generated columns are columns a query can
    read (and a role's policy must be able to name); only the hidden columns of virtual
    tables (``hidden = 1``) are left out.
    """
    try:
        cursor.execute(
            'SELECT m.name, p.name, p.type, p.pk, p."notnull" FROM sqlite_schema AS m '
            "JOIN pragma_table_xinfo(m.name) AS p WHERE m.type IN ('table', 'view') "
            "AND m.name NOT LIKE 'sqlite_%' AND p.hidden != 1 ORDER BY m.rowid, p.cid"
        )
        return cursor.fetchall()
    except Exception:
        rows = []
        for table in tables:
            try:
                cursor.execute(
                    'SELECT ?, name, type, pk, "notnull" FROM pragma_table_xinfo(?) '
                    "WHERE hidden != 1 ORDER BY cid",
                    (table, table),
                )
                rows.extend(cursor.fetchall())
            except Exception:
                continue  # a view over a missing table: listed, without columns
        return rows


def _sqlite_scalar(cursor: Any, sql: str) -> int | None:
    try:
        cursor.execute(sql)
        return int(cursor.fetchone()[0])
    except Exception:
        return None


def _distinct(cursor: Any, sql: str) -> tuple[Any, ...]:
    try:
        cursor.execute(sql)
        return tuple(_sample(row[0]) for row in cursor.fetchall())
    except Exception:
        return ()


# ---------------------------------------------------------------------------------------------
# DuckDB: its own catalog functions (duckdb-engine's reflection expects pg_catalog tables
# that DuckDB lacks)

_DUCKDB_HERE = "database_name = current_database() AND schema_name = current_schema()"


def _duckdb_tables(adapter: Adapter, details: bool = True) -> dict[str, TableInfo]:
    with adapter.raw_connection() as connection:
        cursor = connection.cursor()
        cursor.execute(
            f"SELECT table_name, 'table' FROM duckdb_tables() WHERE {_DUCKDB_HERE} AND NOT internal "
            f"UNION ALL SELECT view_name, 'view' FROM duckdb_views() WHERE {_DUCKDB_HERE} "
            "AND NOT internal"
        )
        kinds = dict(cursor.fetchall())
        cursor.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM duckdb_columns() "
            f"WHERE {_DUCKDB_HERE} ORDER BY table_oid, column_index"
        )
        columns: dict[str, list[tuple[str, str, bool]]] = {name: [] for name in kinds}
        for table, name, data_type, nullable in cursor.fetchall():
            if table in columns:
                columns[table].append((name, data_type, bool(nullable)))
        cursor.execute(
            "SELECT table_name, constraint_type, constraint_column_names, referenced_table, "
            f"referenced_column_names FROM duckdb_constraints() WHERE {_DUCKDB_HERE} "
            "AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') ORDER BY constraint_index"
        )
        primary: dict[str, set[str]] = {}
        foreign: dict[str, list[ForeignKey]] = {}
        for table, kind, names, ref_table, ref_names in cursor.fetchall():
            if kind == "PRIMARY KEY":
                primary.setdefault(table, set()).update(names)
            elif ref_table:
                foreign.setdefault(table, []).append(
                    ForeignKey(tuple(names), ref_table, tuple(ref_names or names))
                )
        cursor.close()
    tables: dict[str, TableInfo] = {}
    text_columns: dict[str, set[str]] = {}
    for table, kind in kinds.items():
        keys = primary.get(table, set())
        tables[table] = TableInfo(
            table,
            tuple(
                ColumnInfo(name, data_type, name in keys, nullable and name not in keys)
                for name, data_type, nullable in columns[table]
            ),
            tuple(foreign.get(table, ())),
            None,
            kind,
        )
        text_columns[table] = {
            name for name, data_type, _ in columns[table] if data_type.startswith("VARCHAR")
        }
    if details:
        _add_counts_and_samples(adapter, tables, text_columns)
    return tables


# ---------------------------------------------------------------------------------------------
# Other dialects: SQLAlchemy's inspector (multi-table reflection), then counts and samples


def _inspector_tables(adapter: Adapter, details: bool = True) -> dict[str, TableInfo]:
    import sqlalchemy as sa

    try:
        with adapter.engine.connect() as connection:
            tables, text_columns = _reflect(connection)
            connection.rollback()
    except (sa.exc.OperationalError, sa.exc.InterfaceError) as error:
        first = str(error.orig).splitlines()[0] if error.orig is not None else str(error)
        raise QueryError(
            "unreachable",
            f"datasource {adapter.name!r} ({adapter.url}) cannot be read: {adapter.scrub(first)}",
        ) from None
    if details:
        _add_counts_and_samples(adapter, tables, text_columns)
    return tables


def _reflect(connection: sa.Connection) -> tuple[dict[str, TableInfo], dict[str, set[str]]]:
    import sqlalchemy as sa
    from sqlalchemy.engine.reflection import ObjectKind

    inspector = sa.inspect(connection)
    names = inspector.get_table_names()
    views = [name for name in inspector.get_view_names() if name not in names]
    kind = ObjectKind.TABLE | ObjectKind.VIEW
    columns = _multi(inspector.get_multi_columns, kind)
    pks = _multi(inspector.get_multi_pk_constraint, kind) or {}
    fks = _multi(inspector.get_multi_foreign_keys, ObjectKind.TABLE) or {}
    tables: dict[str, TableInfo] = {}
    text_columns: dict[str, set[str]] = {}
    for name in [*names, *views]:
        if columns is not None:
            cols = columns.get((None, name), [])
            pk = pks.get((None, name)) or {}
            fk_list = fks.get((None, name), [])
        else:
            cols = inspector.get_columns(name)
            pk = _safe(lambda n=name: inspector.get_pk_constraint(n)) or {}
            fk_list = _safe(lambda n=name: inspector.get_foreign_keys(n)) or []
        pk_columns = set(pk.get("constrained_columns") or ())
        infos = tuple(
            ColumnInfo(
                name=col["name"],
                type=_type_name(col["type"]),
                primary_key=col["name"] in pk_columns,
                nullable=bool(col.get("nullable", True)) and col["name"] not in pk_columns,
            )
            for col in cols
        )
        foreign = tuple(
            ForeignKey(
                columns=tuple(fk["constrained_columns"]),
                ref_table=fk["referred_table"],
                ref_columns=tuple(fk["referred_columns"]),
            )
            for fk in fk_list
            if fk.get("referred_table")
        )
        tables[name] = TableInfo(name, infos, foreign, None, "view" if name in views else "table")
        text_columns[name] = {col["name"] for col in cols if isinstance(col["type"], sa.String)}
    return tables, text_columns


def _multi(method: Any, kind: ObjectKind) -> dict | None:
    import sqlalchemy as sa

    try:
        return method(kind=kind)
    except (NotImplementedError, sa.exc.SQLAlchemyError, AttributeError, TypeError):
        return None


def _safe(call: Any) -> Any:
    import sqlalchemy as sa

    try:
        return call()
    except (NotImplementedError, sa.exc.SQLAlchemyError):
        return None


def _type_name(type_: Any) -> str:
    try:
        return str(type_)
    except Exception:
        return type(type_).__name__


def _add_counts_and_samples(
    adapter: Adapter, tables: dict[str, TableInfo], text_columns: dict[str, set[str]]
) -> None:
    quote = adapter.engine.dialect.identifier_preparer.quote
    with adapter.raw_connection() as connection:
        for name, info in list(tables.items()):
            count = _scalar(connection, f"SELECT COUNT(*) FROM {quote(name)}")
            columns = []
            for column in info.columns:
                samples: tuple[Any, ...] = ()
                if column.name in text_columns.get(name, ()) and count:
                    samples = _values(
                        connection,
                        f"SELECT DISTINCT {quote(column.name)} FROM {quote(name)} "
                        f"WHERE {quote(column.name)} IS NOT NULL LIMIT {SAMPLE_VALUES}",
                    )
                columns.append(attrs.evolve(column, samples=samples))
            tables[name] = attrs.evolve(info, columns=tuple(columns), row_count=count)


def _scalar(connection: Any, sql: str) -> int | None:
    values = _values(connection, sql, normalize=False)
    return int(values[0]) if values and values[0] is not None else None


def _values(connection: Any, sql: str, *, normalize: bool = True) -> tuple[Any, ...]:
    """The first column of ``sql``'s rows; () when it fails (a count or sample is optional)."""
    cursor = connection.cursor()
    try:
        cursor.execute(sql)
        values = [row[0] for row in cursor.fetchall()]
    except Exception:
        # A failed statement aborts a PostgreSQL transaction: start a fresh one.
        with contextlib.suppress(Exception):
            connection.rollback()
        return ()
    finally:
        with contextlib.suppress(Exception):
            cursor.close()
    return tuple(_sample(v) for v in values) if normalize else tuple(values)
