"""The adapter on real SQLite, DuckDB and PostgreSQL databases."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_nl2sql.datasources import Adapter, QueryError, QueryResult

from .conftest import UUID_A, UUID_B

EXPECTED_ITEMS = [
    (1, "apple", 1.5, 3, "2024-01-02", "2024-01-02 03:04:05", "00ff", UUID_A, 1),
    (2, "banana", 0.25, 12, "2024-02-29", "2024-02-29 23:59:59", "01", UUID_B, 0),
    (3, "cherry", 10, None, None, None, None, None, None),
    (4, "apple", 2.25, 1, "2023-12-31", "2023-12-31 00:00:00", "", None, 1),
]

SAME_EVERYWHERE = {
    "all columns": "SELECT id, name, price, qty, day, seen_at, data, uid, flag FROM items ORDER BY id",
    "aggregates": (
        "SELECT name, SUM(price) AS total, COUNT(*) AS n, MAX(day) AS last_day "
        "FROM items GROUP BY name ORDER BY name"
    ),
    "join": (
        "SELECT i.name, COUNT(o.id) AS orders FROM items AS i LEFT JOIN orders AS o "
        "ON o.item_id = i.id GROUP BY i.name ORDER BY orders DESC, i.name"
    ),
    "boolean filter": "SELECT id FROM items WHERE flag ORDER BY id",
    "cte and union": (
        "WITH cheap AS (SELECT id FROM items WHERE price < 2) "
        "SELECT id FROM cheap UNION SELECT item_id FROM orders ORDER BY 1"
    ),
}

RECURSE_FOREVER = (
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r"
)


def test_rows_come_back_normalized(any_adapter: Adapter) -> None:
    result = any_adapter.execute(SAME_EVERYWHERE["all columns"])
    assert isinstance(result, QueryResult)
    assert result.columns == ("id", "name", "price", "qty", "day", "seen_at", "data", "uid", "flag")
    assert result.rows == EXPECTED_ITEMS
    assert result.truncated is False
    assert result.elapsed_s >= 0


@pytest.mark.parametrize("other", ["duckdb", "pg"])
@pytest.mark.parametrize("query", sorted(SAME_EVERYWHERE))
def test_same_query_gives_equal_rows_as_on_sqlite(
    request: pytest.FixtureRequest, query: str, other: str, sqlite_adapter: Adapter
) -> None:
    sql = SAME_EVERYWHERE[query]
    sqlite_rows = sqlite_adapter.execute(sql).rows
    assert sqlite_rows  # the comparison is about something
    assert request.getfixturevalue(f"{other}_adapter").execute(sql).rows == sqlite_rows


def test_row_limit_truncates_and_says_so(any_adapter: Adapter) -> None:
    cut = any_adapter.execute("SELECT id FROM items ORDER BY id", row_limit=2)
    assert cut.rows == [(1,), (2,)] and cut.truncated is True
    exact = any_adapter.execute("SELECT id FROM items ORDER BY id", row_limit=4)
    assert len(exact.rows) == 4 and exact.truncated is False


def test_adapter_row_limit_is_the_default(sqlite_path: Path) -> None:
    adapter = Adapter("shop", f"sqlite:///{sqlite_path}", row_limit=3)
    result = adapter.execute("SELECT id FROM items")
    assert len(result.rows) == 3 and result.truncated
    adapter.close()


@pytest.mark.parametrize("kind", ["sqlite", "duckdb", "postgresql"])
def test_a_runaway_query_is_cancelled_as_timeout(request: pytest.FixtureRequest, kind: str) -> None:
    url = {
        "sqlite": lambda: f"sqlite:///{request.getfixturevalue('sqlite_path')}",
        "duckdb": lambda: f"duckdb:///{request.getfixturevalue('duckdb_path')}",
        "postgresql": lambda: request.getfixturevalue("pg_url"),
    }[kind]()
    quick = Adapter("shop", url, timeout_s=0.5)
    request.addfinalizer(quick.close)
    with pytest.raises(QueryError) as caught:
        quick.execute(RECURSE_FOREVER)
    assert caught.value.kind == "timeout"
    assert "was cancelled" in caught.value.message
    assert quick.execute("SELECT COUNT(*) AS n FROM items").rows == [(4,)]


def test_missing_table_is_an_sql_error_with_the_database_message(any_adapter: Adapter) -> None:
    with pytest.raises(QueryError) as caught:
        any_adapter.execute("SELECT * FROM no_such_table")
    assert caught.value.kind == "sql_error"
    assert "no_such_table" in caught.value.message
    assert any_adapter.execute("SELECT COUNT(*) FROM items").rows == [(4,)]


def test_failures_never_break_the_next_query(any_adapter: Adapter) -> None:
    for bad in [
        "SELECT * FROM nope",
        "SELECT 1/0 + nosuchcolumn FROM items",
        "DELETE FROM items",
        "SELEC",
    ]:
        with pytest.raises(QueryError):
            any_adapter.execute(bad)
        assert any_adapter.execute("SELECT MAX(id) FROM items").rows == [(4,)]


def test_unparseable_sql_is_an_sql_error(any_adapter: Adapter) -> None:
    with pytest.raises(QueryError) as caught:
        any_adapter.execute("SELECT * FROM")
    assert caught.value.kind == "sql_error"
    assert "could not be parsed" in caught.value.message


def test_missing_sqlite_file_is_unreachable_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "gone.sqlite"
    adapter = Adapter("gone", f"sqlite:///{missing}")
    with pytest.raises(QueryError) as caught:
        adapter.execute("SELECT 1")
    assert caught.value.kind == "unreachable"
    assert str(missing) in caught.value.message and "does not exist" in caught.value.message
    assert not missing.exists()


def test_missing_duckdb_file_is_unreachable_and_never_created(tmp_path: Path) -> None:
    missing = tmp_path / "gone.duckdb"
    with pytest.raises(QueryError) as caught:
        Adapter("gone", f"duckdb:///{missing}").execute("SELECT 1")
    assert caught.value.kind == "unreachable"
    assert not missing.exists()


def test_unreachable_server_hides_the_password() -> None:
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    adapter = Adapter(
        "support", f"postgresql+psycopg://reader:Pa55-secret@127.0.0.1:{port}/db", timeout_s=2
    )
    with pytest.raises(QueryError) as caught:
        adapter.execute("SELECT 1")
    assert caught.value.kind == "unreachable"
    assert "Pa55-secret" not in str(caught.value) and "Pa55-secret" not in repr(adapter)
    assert "reader:***@127.0.0.1" in caught.value.message


def test_sql_error_messages_never_show_the_password(pg_url: str) -> None:
    secret_url = pg_url.replace("@", ":Pa55-secret@", 1)
    adapter = Adapter("shop", secret_url)
    with pytest.raises(QueryError) as caught:
        adapter.execute("SELECT 'Pa55-secret' + 1")
    assert caught.value.kind == "sql_error"
    assert "Pa55-secret" not in caught.value.message
    adapter.close()


def test_bad_url_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="is not a database URL"):
        Adapter("x", "not a url")


def test_dialect_names() -> None:
    assert Adapter("a", "sqlite:////x.sqlite").dialect == "sqlite"
    assert Adapter("b", "postgresql://h/db").dialect == "postgresql"
    assert Adapter("c", "duckdb:////x.duckdb").dialect == "duckdb"
    assert Adapter("d", "mysql+pymysql://h/db").dialect == "mysql"


# ---------------------------------------------------------------------------------------------
# read-only below the guard: the database itself refuses writes


def test_sqlite_refuses_writes_below_the_guard(sqlite_adapter: Adapter, sqlite_path: Path) -> None:
    before = sqlite_path.read_bytes()
    with sqlite_adapter.raw_connection() as connection:
        with pytest.raises(Exception, match="not authorized"):  # the authorizer, first
            connection.execute("DELETE FROM items")
        with pytest.raises(Exception, match="not authorized"):
            connection.execute(f"ATTACH DATABASE '{sqlite_path}.evil' AS evil")
        connection.driver_connection.set_authorizer(None)  # each layer holds on its own
        with pytest.raises(Exception, match="readonly|read-only|query_only"):
            connection.execute("DELETE FROM items")
        connection.execute("PRAGMA query_only = OFF")  # even then, the file is opened read-only
        with pytest.raises(Exception, match="readonly"):
            connection.execute("INSERT INTO items (id, name) VALUES (9, 'x')")
    sqlite_adapter.close()
    assert sqlite_path.read_bytes() == before
    assert not Path(f"{sqlite_path}.evil").exists()


def test_duckdb_refuses_writes_below_the_guard(duckdb_adapter: Adapter, duckdb_path: Path) -> None:
    before = duckdb_path.read_bytes()
    with duckdb_adapter.raw_connection() as connection:
        cursor = connection.cursor()
        with pytest.raises(Exception, match="read-only"):
            cursor.execute("DELETE FROM items")
        with pytest.raises(Exception, match="file system operations are disabled"):
            cursor.execute("COPY items TO '/tmp/nl2sql_should_not_exist.csv'")
    duckdb_adapter.close()
    assert duckdb_path.read_bytes() == before


def test_postgresql_refuses_writes_below_the_guard(pg_adapter: Adapter, pg_url: str) -> None:
    from .conftest import pg_state

    before = pg_state(pg_url)
    with pg_adapter.raw_connection() as connection:
        cursor = connection.cursor()
        with pytest.raises(Exception, match="read-only transaction"):
            cursor.execute("DELETE FROM items")
    assert pg_state(pg_url) == before
