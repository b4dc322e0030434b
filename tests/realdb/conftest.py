"""Fixtures of the realdb job: the 1,200-table wide schema on SQLite and on a real PostgreSQL.

Everything here is session-scoped, so each test process (each xdist worker) writes the SQLite
files once and starts at most one PostgreSQL server (tests/pg_server.py), loaded once. Every
test in this folder carries the ``realdb`` marker: ``pytest -m realdb`` (or ``tox -e realdb``)
runs just this job; the default run includes it. PostgreSQL tests skip, saying why, only when
the server binaries (or, as root, a user to run them as) are missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from benchmarks.wide_schema import WideSchema, generate
from pytest_nl2sql.engine.router import DatasourceDoc, Router
from tests.pg_server import PgServer, server_or_skip
from tests.realdb.wide_bed import build_docs, load_postgresql, sqlite_urls

_HERE = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "realdb: the wide-schema test bed on real databases (SQLite and a PostgreSQL server the "
        "tests start); run alone with -m realdb",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.realdb)


@attrs.frozen
class Backend:
    """One backend's datasources: their URLs, what introspection read, the router over them."""

    name: str
    urls: dict[str, str]
    docs: tuple[DatasourceDoc, ...]
    router: Router


@pytest.fixture(scope="session")
def wide_schema() -> WideSchema:
    return generate()


@pytest.fixture(scope="session")
def sqlite_backend(wide_schema: WideSchema, tmp_path_factory: pytest.TempPathFactory) -> Backend:
    """The 20 domains as SQLite files, one per domain."""
    urls = sqlite_urls(wide_schema, tmp_path_factory.mktemp("realdb-sqlite"))
    docs = build_docs(wide_schema, urls)
    return Backend("sqlite", urls, docs, Router(docs))


@pytest.fixture(scope="session")
def realdb_pg() -> Iterator[PgServer]:
    """A real PostgreSQL server for this test process (skips, saying why, when none can run)."""
    with server_or_skip(prefix="nl2sql-realdb-") as server:
        yield server


@pytest.fixture(scope="session")
def postgresql_backend(wide_schema: WideSchema, realdb_pg: PgServer) -> Backend:
    """The 20 domains as schemas of one PostgreSQL database, one URL per schema."""
    urls = load_postgresql(realdb_pg, wide_schema)
    docs = build_docs(wide_schema, urls)
    return Backend("postgresql", urls, docs, Router(docs))


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Backend:
    """The backend a test is parametrized with (``indirect=True``): sqlite or postgresql."""
    return request.getfixturevalue(f"{request.param}_backend")
