"""Fixtures for the engine tests: the small test database and the real Chinook, per process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.engine.chinook_mini import build_duckdb, build_sqlite, run_sql
from tests.engine.chinook_real import CHINOOK_SQLITE, copy_to_duckdb


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


@pytest.fixture(scope="session")
def chinook_sqlite() -> Path:
    """The real Chinook SQLite file; the test is skipped when the shared data is absent."""
    if not CHINOOK_SQLITE.is_file():
        pytest.skip(f"real Chinook data not found at {CHINOOK_SQLITE}")
    return CHINOOK_SQLITE


@pytest.fixture(scope="session")
def chinook_duckdb(chinook_sqlite: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB copy of the real Chinook tables the documentation uses."""
    return copy_to_duckdb(chinook_sqlite, tmp_path_factory.mktemp("chinook") / "chinook.duckdb")
