"""SQLite without SQLAlchemy: the adapter's own pool of sqlite3 connections (reuse, discard,
close, threads, still read-only), introspection equal to what it was through SQLAlchemy's
pool, and a process that loads a SQLite project, queries and introspects it without ever
importing SQLAlchemy."""

from __future__ import annotations

import contextlib
import glob
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.datasources import Adapter, QueryError, clear_schema_cache
from pytest_nl2sql.datasources.sqlitepool import KEEP_IDLE, PooledConnection, SqlitePool

INTROSPECT = sys.modules["pytest_nl2sql.datasources.introspect"]  # the package exports a function of that name
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SHARED_SQLITE = [
    SHARED / "chinook" / "Chinook_Sqlite.sqlite",
    SHARED / "northwind" / "northwind.sqlite",
    *sorted(Path(p) for p in glob.glob(str(SHARED / "spider" / "database" / "*" / "*.sqlite"))),
]


def _closed(connection: sqlite3.Connection) -> bool:
    try:
        connection.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False


# ---------------------------------------------------------------------------------------------
# the pool


def test_a_connection_is_reused_and_rolled_back_when_given_back(sqlite_adapter: Adapter) -> None:
    with sqlite_adapter.raw_connection() as first:
        driver = first.driver_connection
        assert isinstance(first, PooledConnection) and first.dbapi_connection is driver
        first.execute("BEGIN")
        first.execute("SELECT COUNT(*) FROM items").fetchone()
        assert driver.in_transaction
    assert not driver.in_transaction
    assert sqlite_adapter.execute("SELECT COUNT(*) FROM items").rows == [(4,)]
    with sqlite_adapter.raw_connection() as second:
        assert second.driver_connection is driver
    assert sqlite_adapter._sqlite_connections().idle() == 1


def test_an_unhealthy_connection_is_discarded(sqlite_adapter: Adapter) -> None:
    with sqlite_adapter.raw_connection() as connection:
        kept = connection.driver_connection
    with pytest.raises(RuntimeError), sqlite_adapter.raw_connection() as connection:
        assert connection.driver_connection is kept
        raise RuntimeError("the caller failed while holding it")
    assert _closed(kept)
    with sqlite_adapter.raw_connection() as connection:
        assert connection.driver_connection is not kept
        replaced = connection.driver_connection
    with pytest.raises(QueryError) as caught:  # a failed query: the connection is in doubt
        sqlite_adapter.execute("SELECT no_such_column FROM items")
    assert caught.value.kind == "sql_error" and "no_such_column" in caught.value.message
    assert _closed(replaced)
    assert sqlite_adapter.execute("SELECT name FROM items WHERE id = 2").rows == [("banana",)]


def test_invalidate_closes_now_and_the_pool_never_hands_it_out_again(sqlite_path: Path) -> None:
    pool = SqlitePool(lambda: sqlite3.connect(sqlite_path, check_same_thread=False))
    connection = pool.checkout()
    driver = connection.driver_connection
    connection.invalidate()
    assert _closed(driver) and not connection.is_valid
    connection.close()
    connection.close()  # twice is harmless
    assert pool.idle() == 0
    again = pool.checkout()
    assert again.driver_connection is not driver
    again.close()
    with pytest.raises(sqlite3.ProgrammingError, match="closed database"):
        connection.cursor()
    pool.close()


def test_close_closes_every_connection(sqlite_adapter: Adapter) -> None:
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(sqlite_adapter.raw_connection()) for _ in range(3)]
        drivers = [c.driver_connection for c in held]
        assert len({id(d) for d in drivers}) == 3
        out = stack.enter_context(sqlite_adapter.raw_connection())  # still out when closed
        drivers_out = out.driver_connection
        for connection in held:
            connection.close()
        assert sqlite_adapter._sqlite_connections().idle() == 3
        sqlite_adapter.close()
        assert all(_closed(d) for d in drivers)
        assert not _closed(drivers_out)
    assert _closed(drivers_out)  # given back to a closed pool: closed, not kept
    assert sqlite_adapter.execute("SELECT COUNT(*) FROM orders").rows == [(3,)]  # reopens


def test_the_pool_keeps_a_few_idle_connections() -> None:
    made: list[sqlite3.Connection] = []

    def connect() -> sqlite3.Connection:
        made.append(sqlite3.connect(":memory:", check_same_thread=False))
        return made[-1]

    pool = SqlitePool(connect)
    held = [pool.checkout() for _ in range(KEEP_IDLE + 3)]
    for connection in held:
        connection.close()
    assert pool.idle() == KEEP_IDLE
    assert sum(_closed(c) for c in made) == 3
    pool.close()
    assert all(_closed(c) for c in made)


def test_concurrent_checkouts_from_threads(sqlite_adapter: Adapter) -> None:
    errors: list[BaseException] = []
    seen: set[int] = set()
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def work(n: int) -> None:
        try:
            with sqlite_adapter.raw_connection() as connection:
                barrier.wait(timeout=10)  # all eight hold a connection at once
                with lock:
                    seen.add(id(connection.driver_connection))
            for i in range(25):
                result = sqlite_adapter.execute(f"SELECT id FROM items WHERE id = {i % 4 + 1}")
                assert result.rows == [(i % 4 + 1,)]
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(seen) == 8
    assert sqlite_adapter._sqlite_connections().idle() == KEEP_IDLE


def test_a_pooled_connection_still_refuses_writes(sqlite_adapter: Adapter, sqlite_path: Path) -> None:
    before = sqlite_path.read_bytes()
    for _ in range(2):  # a new connection, then the same one reused
        with sqlite_adapter.raw_connection() as connection:
            with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
                connection.cursor().execute("UPDATE items SET name = 'x'")
            with pytest.raises(sqlite3.DatabaseError, match="not authorized"):
                connection.execute("CREATE TABLE evil (x)")
    with sqlite_adapter.raw_connection() as connection:
        connection.driver_connection.set_authorizer(None)
        with pytest.raises(sqlite3.OperationalError, match="readonly|query_only"):
            connection.execute("DELETE FROM items")
    with pytest.raises(QueryError) as caught:
        sqlite_adapter.execute("DELETE FROM items")
    assert caught.value.kind == "refused"
    sqlite_adapter.close()
    assert sqlite_path.read_bytes() == before


def test_regexp_and_floor_work_as_through_sqlalchemy(sqlite_adapter: Adapter) -> None:
    with sqlite_adapter.raw_connection() as connection:
        rows = connection.execute(
            "SELECT name, floor(price) FROM items WHERE name REGEXP '^(a|c)' ORDER BY id"
        ).fetchall()
    assert rows == [("apple", 1), ("cherry", 10), ("apple", 2)]
    with sqlite_adapter.engine.raw_connection() as old:  # the engine it replaced
        assert old.cursor().execute(
            "SELECT name, floor(price) FROM items WHERE name REGEXP '^(a|c)' ORDER BY id"
        ).fetchall() == rows


def test_a_missing_file_is_unreachable_as_before(tmp_path: Path) -> None:
    adapter = Adapter("gone", f"sqlite:///{tmp_path / 'gone.sqlite'}")
    with pytest.raises(QueryError) as caught:
        adapter.execute("SELECT 1")
    assert caught.value.kind == "unreachable"
    assert caught.value.message == (
        f"datasource 'gone' cannot be opened: the SQLite file {tmp_path / 'gone.sqlite'} does not "
        "exist (check its url in nl2sql.yaml)"
    )


# ---------------------------------------------------------------------------------------------
# introspection: the same as through SQLAlchemy's pool (the code before), and in agreement
# with SQLAlchemy's inspector on everything but type spelling and the order of tables and keys


class _ThroughSqlalchemy:
    """An adapter whose raw connections come from its SQLAlchemy engine's QueuePool."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter

    @contextlib.contextmanager
    def raw_connection(self) -> Iterator[Any]:
        connection = self.adapter.engine.raw_connection()
        try:
            yield connection
        finally:
            connection.rollback()
            connection.close()


def _shape(tables: dict[str, Any]) -> dict[str, Any]:
    return {
        name: (
            info.kind,
            info.row_count,
            [(c.name, c.primary_key, c.nullable, c.samples) for c in info.columns],
            sorted({(f.columns, f.ref_table, f.ref_columns) for f in info.foreign_keys}),
        )
        for name, info in tables.items()
    }


def _check_introspection(path: Path) -> None:
    adapter = Adapter("db", f"sqlite:///{path}")
    try:
        clear_schema_cache()
        schema = INTROSPECT.introspect(adapter)
        before = INTROSPECT._sqlite_tables(_ThroughSqlalchemy(adapter))
        assert list(schema.tables) == list(before)
        assert schema.tables == before  # types as strings, nullability, keys, views, FK order
        inspected = INTROSPECT._inspector_tables(adapter)
        # the inspector spells types its own way (INTEGER for a declared INT) and orders tables
        # by name; everything else agrees
        assert _shape(schema.tables) == _shape(inspected)
    finally:
        adapter.close()
        clear_schema_cache()


def test_introspection_of_the_demo_databases(tmp_path: Path) -> None:
    from pytest_nl2sql.upkeep.init import init_demo

    init_demo(tmp_path)
    databases = sorted((tmp_path / "data").glob("*.sqlite"))
    assert len(databases) >= 3
    for path in databases:
        _check_introspection(path)


@pytest.mark.parametrize("path", SHARED_SQLITE, ids=lambda p: p.name)
def test_introspection_of_the_shared_databases(path: Path) -> None:
    if not path.is_file():
        pytest.skip(f"{path} is not present (../shared/data)")
    _check_introspection(path)


def test_introspection_of_views_generated_columns_and_composite_keys(tmp_path: Path) -> None:
    path = tmp_path / "odd.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            """
            CREATE TABLE parent (a INTEGER, b TEXT, label VARCHAR(20) NOT NULL, PRIMARY KEY (a, b));
            CREATE TABLE child (id INTEGER PRIMARY KEY, pa INTEGER, pb TEXT, total NUMERIC(10,2),
                doubled INTEGER GENERATED ALWAYS AS (id * 2) VIRTUAL, untyped,
                FOREIGN KEY (pa, pb) REFERENCES parent (a, b), FOREIGN KEY (id) REFERENCES parent);
            CREATE VIEW labels AS SELECT label, COUNT(*) AS n FROM parent GROUP BY label;
            CREATE TABLE "Order Details" ("Order Id" INTEGER, "quote""d" TEXT);
            INSERT INTO parent VALUES (1, 'x', 'one'), (2, 'y', 'two');
            INSERT INTO child (id, pa, pb, total) VALUES (1, 1, 'x', 2.5);
            """
        )
    connection.close()
    adapter = Adapter("odd", f"sqlite:///{path}")
    try:
        schema = INTROSPECT.introspect(adapter, refresh=True)
        assert schema.tables == INTROSPECT._sqlite_tables(_ThroughSqlalchemy(adapter))
        assert schema.tables["parent"].primary_key == ("a", "b")
        assert schema.tables["labels"].kind == "view"
        assert [c.name for c in schema.tables["child"].columns][-2:] == ["doubled", "untyped"]
        # SQLite's own order (the last declared key first); no referenced columns: the same names
        assert [(f.columns, f.ref_columns) for f in schema.tables["child"].foreign_keys] == [
            (("id",), ("id",)),
            (("pa", "pb"), ("a", "b")),
        ]
    finally:
        adapter.close()
        clear_schema_cache()


# ---------------------------------------------------------------------------------------------
# a whole SQLite run's datasource work, in a fresh process: no SQLAlchemy


def test_a_sqlite_project_never_imports_sqlalchemy(tmp_path: Path) -> None:
    from pytest_nl2sql.upkeep.init import init_demo

    init_demo(tmp_path)
    script = textwrap.dedent(
        f"""
        import sys
        from pytest_nl2sql.config import load_config, redact_url
        from pytest_nl2sql.datasources import DatasourceRegistry, introspect

        config = load_config({str(tmp_path / "nl2sql.yaml")!r})
        assert config.datasources and all(d.url.startswith("sqlite:") for d in config.datasources.values())
        with DatasourceRegistry.from_config(config) as registry:
            for name in registry.names():
                adapter = registry.get(name)
                assert adapter.dialect == "sqlite" and adapter.file_path.is_file(), adapter
                schema = introspect(adapter)
                table = next(t for t in schema.tables.values() if t.kind == "table")
                result = adapter.execute('SELECT COUNT(*) FROM "' + table.name + '"')
                assert result.rows == [(table.row_count,)], (result, table.row_count)
                with adapter.raw_connection() as connection:
                    connection.cursor().execute("SELECT 1").fetchall()
                adapter.cache_key(), adapter.url, repr(adapter), redact_url(adapter.url)
        loaded = sorted(m for m in sys.modules if m == "sqlalchemy" or m.startswith("sqlalchemy."))
        assert loaded == [], loaded
        print("ok", len(config.datasources))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok 3"), done.stdout
