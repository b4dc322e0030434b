"""Fixtures for the engine tests: the Chinook-like test database, built once per process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.engine.chinook_mini import build_duckdb, build_sqlite, run_sql


@pytest.fixture(scope="session")
def sqlite_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path to the SQLite test database (dates stored as text)."""
    return build_sqlite(tmp_path_factory.mktemp("engine") / "chinook_mini.sqlite")


@pytest.fixture(scope="session")
def duckdb_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path to the DuckDB test database (TIMESTAMP and DECIMAL columns)."""
    return build_duckdb(tmp_path_factory.mktemp("engine") / "chinook_mini.duckdb")


@pytest.fixture
def run(sqlite_db: Path, duckdb_db: Path) -> Callable[[str, str], list[tuple[Any, ...]]]:
    """``run(dialect, sql)``: rows (normal form) from the test database of that dialect."""

    def _run(dialect: str, sql: str) -> list[tuple[Any, ...]]:
        return run_sql(dialect, sqlite_db if dialect == "sqlite" else duckdb_db, sql)

    return _run
