"""Fixtures for the demo database tests: the built SQLite files and a real PostgreSQL server.

The server comes from pytest-postgresql's factories, started in a temporary folder. PostgreSQL
refuses to run as root, so when the tests run as root (as CI does) pg_ctl is called through a
small wrapper that hands the data folder to the unprivileged `postgres` user and runs pg_ctl as
that user. Without pg_ctl on PATH the PostgreSQL tests skip, saying why.
"""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_postgresql import factories

from pytest_nl2sql.demo import build_demo_databases

PG_CTL = shutil.which("pg_ctl")
PG_USER = "postgres"
AS_ROOT = os.geteuid() == 0
# The factory needs the executable's path now; the file itself is written by pg_ctl_wrapper.
WRAPPER = Path(tempfile.gettempdir()) / f"nl2sql-demo-pg_ctl-{os.getpid()}"

WRAPPER_SCRIPT = """#!/bin/sh
# pg_ctl will not run as root: give the data folder's parent to {user} (and let it through the
# folders above), then run the real pg_ctl as {user}.
prev=""
for arg in "$@"; do
  if [ "$prev" = "-D" ] || [ "$prev" = "--pgdata" ]; then
    parent=$(dirname "$arg")
    chown {user} "$parent"
    dir="$parent"
    while [ "$dir" != "/" ]; do chmod o+x "$dir"; dir=$(dirname "$dir"); done
  fi
  prev="$arg"
done
exec setpriv --reuid={user} --regid={user} --init-groups {pg_ctl} "$@"
"""

demo_postgresql_proc = factories.postgresql_proc(
    executable=str(WRAPPER) if AS_ROOT else PG_CTL, port=None
)
demo_postgresql = factories.postgresql("demo_postgresql_proc")


@pytest.fixture(scope="session")
def pg_ctl_wrapper() -> Iterator[None]:
    """Skip without pg_ctl; as root, write the wrapper that runs pg_ctl as the postgres user."""
    if PG_CTL is None:
        pytest.skip("pg_ctl is not on PATH: install the PostgreSQL server to run this test")
    if not AS_ROOT:
        yield
        return
    try:
        pwd.getpwnam(PG_USER)
    except KeyError:
        pytest.skip(f"running as root and there is no {PG_USER!r} user to run PostgreSQL as")
    if shutil.which("setpriv") is None:
        pytest.skip("running as root and setpriv (util-linux) is missing to run pg_ctl as postgres")
    WRAPPER.write_text(WRAPPER_SCRIPT.format(user=PG_USER, pg_ctl=PG_CTL))
    WRAPPER.chmod(0o755)
    yield
    WRAPPER.unlink(missing_ok=True)


@pytest.fixture
def postgresql_url(pg_ctl_wrapper: None, request: pytest.FixtureRequest) -> str:
    """A SQLAlchemy URL of a fresh, empty database on a real PostgreSQL server."""
    connection = request.getfixturevalue("demo_postgresql")
    info = connection.info
    return f"postgresql+psycopg://{info.user}@{info.host}:{info.port}/{info.dbname}"


@pytest.fixture(scope="session")
def demo_databases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three demo databases, built once per test session (per xdist worker)."""
    return build_demo_databases(tmp_path_factory.mktemp("demo-data"))
