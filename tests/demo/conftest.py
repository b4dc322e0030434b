"""Fixtures for the demo database tests: the built SQLite files and a real PostgreSQL server.

The server comes from ``tests/pg_server.py`` (a throwaway server in its own temporary folder,
run as the ``postgres`` user when the tests run as root); without the PostgreSQL binaries the
PostgreSQL tests skip, saying why. Its folder is kept outside pytest's own temporary folders,
which pytest may make private again mid-run.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_nl2sql.demo import build_demo_databases
from tests.pg_server import PgServer, server_or_skip

_names = itertools.count(1)


@pytest.fixture(scope="session")
def demo_pg() -> Iterator[PgServer]:
    with server_or_skip(prefix="nl2sql-demo-pg-") as server:
        yield server


@pytest.fixture
def postgresql_url(demo_pg: PgServer) -> str:
    """A SQLAlchemy URL of a fresh, empty database on a real PostgreSQL server."""
    return demo_pg.create_database(f"demo_{next(_names)}")


@pytest.fixture(scope="session")
def demo_databases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three demo databases, built once per test session (per xdist worker)."""
    return build_demo_databases(tmp_path_factory.mktemp("demo-data"))
