"""A result is bounded in bytes and the deadline covers the whole answer, fetching included
(issue 21): a query that returns too much is an error saying so, on every backend, and the
adapter answers the next query."""

from __future__ import annotations

import time

import pytest

from pytest_nl2sql.config import load_config
from pytest_nl2sql.datasources import Adapter, DatasourceRegistry, QueryError

# 2,000 rows of 1,000 characters each: about 2 MB
BIG = {
    "sqlite": "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 2000) "
    "SELECT n, printf('%.1000c', 'x') AS s FROM c",
    "duckdb": "SELECT g AS n, repeat('x', 1000) AS s FROM generate_series(1, 2000) AS t(g)",
    "postgresql": "SELECT g AS n, repeat('x', 1000) AS s FROM generate_series(1, 2000) AS g",
}
# rows that each take a while to compute: far longer than the timeout in all
SLOW = {
    "sqlite": "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100000000) "
    "SELECT n FROM c WHERE n % 1000000 = 0",
    "duckdb": "SELECT g, (SELECT count(*) FROM range(3000000) r WHERE r.range % (g + 1) = 0) AS n "
    "FROM range(100000) AS t(g)",
    "postgresql": "SELECT g, (SELECT count(*) FROM generate_series(1, 300000) AS s WHERE s % (g + 1) = 0) AS n "
    "FROM generate_series(1, 100000) AS g",
}


def _url(request: pytest.FixtureRequest, kind: str) -> str:
    return {
        "sqlite": lambda: f"sqlite:///{request.getfixturevalue('sqlite_path')}",
        "duckdb": lambda: f"duckdb:///{request.getfixturevalue('duckdb_path')}",
        "postgresql": lambda: request.getfixturevalue("pg_url"),
    }[kind]()


@pytest.mark.parametrize("kind", ["sqlite", "duckdb", "postgresql"])
def test_a_result_over_the_byte_budget_is_an_error(request: pytest.FixtureRequest, kind: str) -> None:
    adapter = Adapter("shop", _url(request, kind), row_limit=100_000, max_result_bytes=200_000)
    request.addfinalizer(adapter.close)
    with pytest.raises(QueryError) as caught:
        adapter.execute(BIG[kind])
    assert caught.value.kind == "sql_error"
    assert "max_result_bytes" in caught.value.message and "200,000" in caught.value.message
    # the same query under a larger budget answers whole; the adapter still works
    roomy = Adapter("shop", _url(request, kind), row_limit=100_000, max_result_bytes=64 * 1024 * 1024)
    request.addfinalizer(roomy.close)
    assert len(roomy.execute(BIG[kind]).rows) == 2000
    assert adapter.execute("SELECT COUNT(*) AS n FROM items").rows == [(4,)]


@pytest.mark.parametrize("kind", ["sqlite", "duckdb", "postgresql"])
def test_the_timeout_covers_fetching_the_rows(request: pytest.FixtureRequest, kind: str) -> None:
    adapter = Adapter("shop", _url(request, kind), row_limit=100_000, timeout_s=1.0)
    request.addfinalizer(adapter.close)
    started = time.monotonic()
    with pytest.raises(QueryError) as caught:
        adapter.execute(SLOW[kind])
    assert caught.value.kind == "timeout"
    assert time.monotonic() - started < 60  # only catches a hang: unbounded it runs for hours
    assert adapter.execute("SELECT COUNT(*) AS n FROM items").rows == [(4,)]


@pytest.mark.parametrize(
    ("key", "value", "default", "bad"),
    [("max_result_bytes", 4096, 64 * 1024 * 1024, 100), ("unreachable_after", 5, 3, 0)],
)
def test_bounds_are_datasource_keys(tmp_path, sqlite_path, key: str, value: int, default: int, bad: int) -> None:
    head = f"version: 1\ndatasources:\n  shop:\n    url: sqlite:///{sqlite_path}\n    description: d\n"
    (tmp_path / "nl2sql.yaml").write_text(f"{head}    {key}: {value}\n")
    config = load_config(tmp_path / "nl2sql.yaml")
    assert getattr(config.datasources["shop"], key) == value
    with DatasourceRegistry.from_config(config) as registry:
        assert getattr(registry.get("shop"), key) == value
    (tmp_path / "nl2sql.yaml").write_text(head)
    assert getattr(load_config(tmp_path / "nl2sql.yaml").datasources["shop"], key) == default
    (tmp_path / "nl2sql.yaml").write_text(f"{head}    {key}: {bad}\n")
    with pytest.raises(Exception, match=key):
        load_config(tmp_path / "nl2sql.yaml")
