"""One huge value in a predicted query's result is a clear "exceeds max_result_bytes" verdict on
every backend, through ``pytest --nl2sql-predictions`` (issue 21): PostgreSQL refuses the row
on the server, DuckDB's child process refuses it before it reaches the calling process, SQLite
stops at its value limit. The run goes on; the next item answers. Peak memory is measured by
``benchmarks/bench_huge_value.py`` (docs/benchmarks.md), not here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.datasources import Adapter, QueryError

DOUBLED = (
    "WITH RECURSIVE c(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM c WHERE n < {n}) "
    "SELECT s FROM c WHERE n = {n}"
)
HUGE = {
    "lite": DOUBLED.format(n=25),  # 32 MiB: over the budget
    "lite_value": DOUBLED.format(n=31),  # 2 GiB: past SQLite's value limit first
    "duck": "SELECT repeat('x', 50000000) AS s",
    "pg": "SELECT repeat('x', 50000000) AS s",
}
SOURCE = {"lite": "lite", "lite_value": "lite", "duck": "duck", "pg": "pg"}


def test_a_huge_value_is_a_clear_verdict_through_the_plugin(
    pytester: pytest.Pytester, sqlite_path: Path, duckdb_path: Path, pg_url: str
) -> None:
    budget = 1024 * 1024
    urls = {"lite": f"sqlite:///{sqlite_path}", "duck": f"duckdb:///{duckdb_path}", "pg": pg_url}
    (pytester.path / "nl2sql.yaml").write_text(
        "version: 1\ndatasources:\n"
        + "".join(f"  {name}:\n    url: {url}\n    max_result_bytes: {budget}\n" for name, url in urls.items())
        + 'roles:\n  admin: {datasources: "*"}\n'
    )
    cases = {**{f"huge_{k}": SOURCE[k] for k in HUGE}, **{f"fine_{name}": name for name in urls}}
    (pytester.path / "suite.yaml").write_text(
        "version: 1\ncases:\n"
        + "".join(
            f"- id: {cid}\n  question: How many items, {cid}?\n  datasources: [{source}]\n  status: approved\n"
            "  outcome: {admin: allowed}\n  sql: SELECT COUNT(*) AS n FROM items\n  rows:\n  - {n: 4}\n"
            for cid, source in cases.items()
        )
    )
    predictions = [{"id": f"huge_{k}", "sql": sql} for k, sql in HUGE.items()]
    predictions += [{"id": f"fine_{name}", "sql": "SELECT COUNT(*) AS n FROM items"} for name in urls]
    (pytester.path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "suite.yaml", "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions", "p.jsonl",
        "--nl2sql-out", "r.json", "-p", "no:cacheprovider", "-p", "no:randomly", timeout=600,
    )
    result.assert_outcomes(passed=len(urls), failed=len(HUGE))
    items = {item["case_id"]: item for item in json.loads((pytester.path / "r.json").read_text())["items"]}
    for key in HUGE:
        error = items[f"huge_{key}"]["error"]
        assert "exceeds max_result_bytes" in error, (key, error)
        assert "Traceback" not in error and len(error) < 400, (key, error)
    assert f"({budget:,} bytes; datasource 'pg')" in items["huge_pg"]["error"]
    assert "the most one SQLite value may hold" in items["huge_lite_value"]["error"]
    result.stdout.fnmatch_lines(["*exceeds max_result_bytes*"])


def test_postgresql_keeps_the_order_and_columns_of_a_bounded_query(pg_url: str) -> None:
    """The server-side budget check wraps the query; rows, their order, duplicate column names
    and a trailing ';' with a comment come back as written."""
    adapter = Adapter("shop", pg_url, max_result_bytes=4096)
    try:
        for sql in (
            "SELECT name, id AS name FROM items ORDER BY id DESC;",
            "SELECT name, id AS name -- both\nFROM items ORDER BY id DESC -- newest first",
        ):
            result = adapter.execute(sql)
            assert result.columns == ("name", "name")
            assert result.rows == [("apple", 4), ("cherry", 3), ("banana", 2), ("apple", 1)]
        with pytest.raises(QueryError) as caught:
            adapter.execute("SELECT g, repeat('y', 100) AS s FROM generate_series(1, 100) AS g")
        assert "exceeds max_result_bytes (4,096 bytes" in caught.value.message
        assert adapter.execute("SELECT COUNT(*) AS n FROM items").rows == [(4,)]
    finally:
        adapter.close()
