"""The demo's Chinook data loads into DuckDB too (Employee references itself)."""

from __future__ import annotations

import sqlite3
from decimal import Decimal
from pathlib import Path

import pytest

from pytest_nl2sql.demo import demo_metadata, load_into

duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (pip install 'pytest-nl2sql[duckdb]')")


def test_chinook_loads_into_duckdb_with_the_same_rows(tmp_path: Path, demo_databases: dict[str, Path]) -> None:
    target = tmp_path / "chinook.duckdb"
    load_into(f"duckdb:///{target}", "chinook")
    con = duckdb.connect(str(target), read_only=True)
    lite = sqlite3.connect(demo_databases["chinook"])
    try:
        for table in demo_metadata("chinook").tables:
            want = lite.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
            assert con.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0] == want, table
        assert con.execute('SELECT SUM("Total") FROM "Invoice"').fetchone()[0] == Decimal("2328.60")
        managers = con.execute('SELECT COUNT(*) FROM "Employee" WHERE "ReportsTo" IS NOT NULL').fetchone()[0]
        assert managers == lite.execute('SELECT COUNT(*) FROM "Employee" WHERE "ReportsTo" IS NOT NULL').fetchone()[0]
    finally:
        con.close()
        lite.close()
