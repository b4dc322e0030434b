"""Fixtures of the attack corpus: one SQLite project and, per test process, one real
PostgreSQL server with two projects on it (superuser login, read-only login).

The server is started once per process (so once per xdist worker) by ``tests/pg_server.py``;
PostgreSQL tests skip, saying why, when its binaries are missing. Every attack snapshots the
database before and after and restores it when an attack changed it, so one escape does not
spoil the attacks after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.pg_server import server_or_skip

from .duckdb_backend import duckdb_backend
from .harness import Backend, PgCluster, hush_sqlglot, pg_backends, quiet, sqlite_backend

hush_sqlglot()


@pytest.fixture(scope="session")
def sqlite_security(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with quiet():
        backend = sqlite_backend(tmp_path_factory.mktemp("security-sqlite"))
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def duckdb_security(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with quiet():
        backend = duckdb_backend(tmp_path_factory.mktemp("security-duckdb"))
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def pg_security(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[PgCluster, dict[str, Backend]]]:
    with server_or_skip(prefix="nl2sql-sec-") as server:
        with quiet():
            cluster, backends = pg_backends(server, tmp_path_factory.mktemp("security-pg"))
        try:
            yield cluster, backends
        finally:
            for backend in backends.values():
                backend.close()
            cluster.close()


@pytest.fixture
def security_backend(request: pytest.FixtureRequest) -> Callable[[str], Backend]:
    """``security_backend(name)``: the backend ``sqlite``, ``duckdb``, ``pg_super`` or ``pg_ro``."""

    def get(name: str) -> Backend:
        if name in ("sqlite", "duckdb"):
            return request.getfixturevalue(f"{name}_security")
        _, backends = request.getfixturevalue("pg_security")
        return backends[name]

    return get


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return tmp_path
