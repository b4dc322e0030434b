"""Every write attempt is refused with its own reason, nothing is written, and the next query runs.

Each statement runs through ``Adapter.execute`` on a real database. Before and after, the
SQLite/DuckDB file's bytes (or, on PostgreSQL, a checksum of every table and the sequence)
are compared.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_nl2sql.datasources import Adapter, QueryError

from .conftest import file_bytes, pg_state

ALL = ("sqlite", "duckdb", "postgresql")

# (statement, databases it is tried on, words the refusal must contain)
CORPUS: list[tuple[str, tuple[str, ...], str]] = [
    ("DELETE FROM items", ALL, "DELETE is not allowed"),
    ("DROP TABLE items", ALL, "DROP is not allowed"),
    ("UPDATE items SET qty = 0", ALL, "UPDATE is not allowed"),
    ("INSERT INTO items (id, name) VALUES (99, 'x')", ALL, "INSERT is not allowed"),
    ("ATTACH DATABASE '/tmp/nl2sql_evil.db' AS evil", ALL, "ATTACH is not allowed"),
    ("DETACH DATABASE evil", ("sqlite", "duckdb"), "DETACH is not allowed"),
    ("PRAGMA query_only = OFF", ALL, "PRAGMA is not allowed"),
    ("SELECT 1; DROP TABLE items", ALL, "2 statements given (SELECT, DROP)"),
    ("SELECT * FROM items; DELETE FROM items", ALL, "2 statements given (SELECT, DELETE)"),
    ("COPY items TO '/tmp/nl2sql_copy_out.csv'", ALL, "COPY is not allowed"),
    (
        "COPY (SELECT 1) TO PROGRAM 'touch /tmp/nl2sql_pwned'",
        ("postgresql",),
        "COPY is not allowed",
    ),
    ("CREATE TABLE evil (a int)", ALL, "CREATE is not allowed"),
    ("CREATE TEMP TABLE evil AS SELECT 1", ALL, "CREATE is not allowed"),
    ("SELECT * INTO evil FROM items", ALL, "SELECT ... INTO"),
    ("SELECT * FROM items FOR UPDATE", ALL, "row locks"),
    (
        "WITH gone AS (DELETE FROM items RETURNING *) SELECT * FROM gone",
        ALL,
        "DELETE inside the query",
    ),
    ("ALTER TABLE items ADD COLUMN x int", ALL, "ALTER is not allowed"),
    ("TRUNCATE items", ALL, "TRUNCATE is not allowed"),
    ("SET default_transaction_read_only = off", ALL, "SET is not allowed"),
    ("BEGIN", ALL, "TRANSACTION is not allowed"),
    ("VACUUM", ALL, "VACUUM is not allowed"),
    ("REPLACE INTO items (id, name) VALUES (1, 'x')", ALL, "REPLACE is not allowed"),
    ("GRANT SELECT ON items TO public", ALL, "GRANT is not allowed"),
    ("EXPLAIN ANALYZE DELETE FROM items", ALL, "EXPLAIN is not allowed"),
    (
        "SELECT pg_terminate_backend(pg_backend_pid())",
        ("postgresql",),
        "function pg_terminate_backend()",
    ),
    (
        "SELECT set_config('default_transaction_read_only', 'off', false)",
        ("postgresql",),
        "function set_config()",
    ),
    ("SELECT nextval('seq')", ("postgresql", "duckdb"), "function nextval()"),
    ("SELECT setval('seq', 100)", ("postgresql", "duckdb"), "function setval()"),
    ("SELECT pg_read_file('/etc/passwd')", ("postgresql",), "function pg_read_file()"),
    ("SELECT lo_export(1, '/tmp/nl2sql_lo')", ("postgresql",), "function lo_export()"),
    ("SELECT load_extension('/tmp/evil')", ("sqlite", "duckdb"), "function load_extension()"),
    ("SELECT writefile('/tmp/nl2sql_x', 'y')", ("sqlite",), "function writefile()"),
    ("SELECT * FROM read_csv('/etc/passwd')", ("duckdb",), "function read_csv()"),
    ("SELECT * FROM '/etc/passwd'", ("duckdb",), "reading the file"),
    ("SELECT * FROM query('DELETE FROM items')", ("duckdb",), "function query()"),
    ("INSTALL httpfs", ALL, "INSTALL is not allowed"),
    ("LOAD httpfs", ALL, "LOAD is not allowed"),
]

CASES = [
    pytest.param(db, sql, words, id=f"{db}-{sql[:40]}") for sql, dbs, words in CORPUS for db in dbs
]


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 15


@pytest.fixture
def database(
    request: pytest.FixtureRequest,
) -> Callable[[str], tuple[Adapter, Callable[[], object]]]:
    """Return (adapter, state snapshot function) for a kind of database."""

    def open_(kind: str) -> tuple[Adapter, Callable[[], object]]:
        if kind == "postgresql":
            url = request.getfixturevalue("pg_url")
            adapter = Adapter("shop", url)
            request.addfinalizer(adapter.close)
            return adapter, lambda: pg_state(url)
        path: Path = request.getfixturevalue(f"{kind}_path")
        adapter = Adapter("shop", f"{kind}:///{path}")
        request.addfinalizer(adapter.close)
        return adapter, lambda: file_bytes(path)

    return open_


@pytest.mark.parametrize(("kind", "sql", "words"), CASES)
def test_write_attempt_is_refused_and_writes_nothing(
    database: Callable[[str], tuple[Adapter, Callable[[], object]]], kind: str, sql: str, words: str
) -> None:
    adapter, state = database(kind)
    before = state()
    with pytest.raises(QueryError) as caught:
        adapter.execute(sql)
    assert caught.value.kind == "refused"
    assert words in caught.value.message
    assert adapter.execute("SELECT COUNT(*) AS n FROM items").rows == [(4,)]
    adapter.close()
    assert state() == before
    assert not Path("/tmp/nl2sql_pwned").exists()
