"""Fixtures for the datasource tests: the same small table in SQLite, DuckDB and PostgreSQL.

PostgreSQL is a real server started once per test process (so once per xdist worker, each on
its own free port) in a temporary folder. It runs as the unprivileged ``postgres`` user when the
tests run as root, since PostgreSQL refuses to run as root. pytest-postgresql's
``postgresql_noproc`` factory then creates the test database on it and loads the tables.
Tests that need it skip, saying why, when ``pg_ctl``/``initdb`` are not on PATH.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from pytest_postgresql import factories

from pytest_nl2sql.datasources import Adapter, clear_schema_cache

UUID_A = "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
UUID_B = "6f1c3a52-0c2e-4d3b-9a55-2f3e9b1d7c40"

# id, name, price, qty, day, seen_at, data, uid, flag
ITEMS = [
    (1, "apple", "1.50", 3, "2024-01-02", "2024-01-02 03:04:05", b"\x00\xff", UUID_A, True),
    (2, "banana", "0.25", 12, "2024-02-29", "2024-02-29 23:59:59", b"\x01", UUID_B, False),
    (3, "cherry", "10.00", None, None, None, None, None, None),
    (4, "apple", "2.25", 1, "2023-12-31", "2023-12-31 00:00:00", b"", None, True),
]

_ITEMS_COLUMNS = "id, name, price, qty, day, seen_at, data, uid, flag"

_DDL = {
    "sqlite": [
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price NUMERIC(10,2), "
        "qty INTEGER, day DATE, seen_at TIMESTAMP, data BLOB, uid TEXT, flag BOOLEAN)",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL "
        "REFERENCES items(id), note TEXT)",
    ],
    "duckdb": [
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, price DECIMAL(10,2), "
        "qty INTEGER, day DATE, seen_at TIMESTAMP, data BLOB, uid UUID, flag BOOLEAN)",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL "
        "REFERENCES items(id), note VARCHAR)",
        "CREATE SEQUENCE seq",
    ],
    "postgresql": [
        "CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, price numeric(10,2), "
        "qty integer, day date, seen_at timestamp, data bytea, uid uuid, flag boolean)",
        "CREATE TABLE orders (id integer PRIMARY KEY, item_id integer NOT NULL "
        "REFERENCES items(id), note text)",
        "CREATE SEQUENCE seq",
    ],
}
ORDERS = [(1, 1, "first"), (2, 1, "again"), (3, 2, None)]


def _sqlite_items() -> list[tuple]:
    return [(*row[:8], None if row[8] is None else int(row[8])) for row in ITEMS]


def build_sqlite(path: Path) -> Path:
    """Write the test tables to a new SQLite file and return its path."""
    connection = sqlite3.connect(path)
    with connection:
        for statement in _DDL["sqlite"]:
            connection.execute(statement)
        connection.executemany(
            f"INSERT INTO items ({_ITEMS_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?)", _sqlite_items()
        )
        connection.executemany("INSERT INTO orders VALUES (?,?,?)", ORDERS)
    connection.close()
    return path


def build_duckdb(path: Path) -> Path:
    """Write the test tables to a new DuckDB file and return its path."""
    import duckdb

    connection = duckdb.connect(str(path))
    for statement in _DDL["duckdb"]:
        connection.execute(statement)
    connection.executemany(
        f"INSERT INTO items ({_ITEMS_COLUMNS}) VALUES (?, ?, CAST(? AS DECIMAL(10,2)), ?, "
        "CAST(? AS DATE), CAST(? AS TIMESTAMP), ?, CAST(? AS UUID), ?)",
        [list(row) for row in ITEMS],
    )
    connection.executemany("INSERT INTO orders VALUES (?, ?, ?)", [list(r) for r in ORDERS])
    connection.execute("CHECKPOINT")
    connection.close()
    return path


def load_postgresql(
    host: str, port: int, user: str, dbname: str, password: str | None, **_: object
) -> None:
    """pytest-postgresql loader: create the test tables in the new database."""
    import psycopg

    with psycopg.connect(host=host, port=port, user=user, dbname=dbname, password=password) as conn:
        for statement in _DDL["postgresql"]:
            conn.execute(statement)
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO items ({_ITEMS_COLUMNS}) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                [
                    (*row[:7], None if row[7] is None else uuid.UUID(row[7]), row[8])
                    for row in ITEMS
                ],
            )
            cursor.executemany("INSERT INTO orders VALUES (%s,%s,%s)", ORDERS)


def file_bytes(path: Path) -> bytes:
    """The bytes of a database file and of any journal beside it."""
    data = path.read_bytes()
    for suffix in ("-wal", "-journal", ".wal"):
        extra = Path(f"{path}{suffix}")
        if extra.exists():
            data += extra.read_bytes()
    return data


# ---------------------------------------------------------------------------------------------
# file databases


@pytest.fixture(autouse=True)
def _fresh_schema_cache() -> Iterator[None]:
    clear_schema_cache()
    yield
    clear_schema_cache()


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    return build_sqlite(tmp_path / "shop.sqlite")


@pytest.fixture
def duckdb_path(tmp_path: Path) -> Path:
    return build_duckdb(tmp_path / "shop.duckdb")


@pytest.fixture
def sqlite_adapter(sqlite_path: Path) -> Iterator[Adapter]:
    adapter = Adapter("shop", f"sqlite:///{sqlite_path}", row_limit=100, timeout_s=5)
    yield adapter
    adapter.close()


@pytest.fixture
def duckdb_adapter(duckdb_path: Path) -> Iterator[Adapter]:
    adapter = Adapter("shop", f"duckdb:///{duckdb_path}", row_limit=100, timeout_s=5)
    yield adapter
    adapter.close()


# ---------------------------------------------------------------------------------------------
# PostgreSQL


@attrs.frozen
class PgServer:
    """A running server, shaped as pytest-postgresql's ``depends_on`` expects."""

    host: str
    port: int
    user: str = "postgres"
    password: str | None = None
    options: str = ""
    maintenance_dbname: str = "postgres"
    template_dbname: str = "template1"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """Start a throwaway PostgreSQL server for this test process."""
    pg_ctl, initdb = shutil.which("pg_ctl"), shutil.which("initdb")
    if not pg_ctl or not initdb:
        pytest.skip(
            "PostgreSQL tests need pg_ctl and initdb on PATH (install the postgresql server package)"
        )
    prefix: list[str] = []
    folder = Path(tempfile.mkdtemp(prefix="nl2sql-pg-"))
    if os.geteuid() == 0:
        import pwd

        runuser = shutil.which("runuser")
        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            account = None
        if not runuser or account is None:
            shutil.rmtree(folder, ignore_errors=True)
            pytest.skip(
                "PostgreSQL refuses to run as root, and there is no 'postgres' user and runuser to run it as"
            )
        os.chown(folder, account.pw_uid, account.pw_gid)
        prefix = [runuser, "-u", "postgres", "--"]
    data = folder / "data"
    port = _free_port()

    def run(*args: str) -> None:
        result = subprocess.run(
            [*prefix, *args], cwd=folder, capture_output=True, text=True, timeout=120
        )
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed:\n{result.stdout}\n{result.stderr}")

    try:
        run(
            initdb,
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--no-locale",
        )
        server_options = (
            f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off"
        )
        run(
            pg_ctl,
            "start",
            "-D",
            str(data),
            "-w",
            "-t",
            "60",
            "-l",
            str(folder / "server.log"),
            "-o",
            server_options,
        )
    except Exception:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        yield PgServer(host="127.0.0.1", port=port)
    finally:
        with contextlib.suppress(Exception):
            run(pg_ctl, "stop", "-D", str(data), "-m", "immediate", "-w")
        shutil.rmtree(folder, ignore_errors=True)


pg_database = factories.postgresql_noproc(
    dbname="nl2sql_shop", depends_on="pg_server", load=[load_postgresql]
)


@pytest.fixture(scope="session")
def pg_url(pg_database: Any) -> str:
    """URL of a PostgreSQL database holding the test tables (never written by the tests),
    logging in as a read-only login (a superuser login is refused without opt-in)."""
    from tests.pg_server import create_reader

    reader = create_reader(
        f"host={pg_database.host} port={pg_database.port} user={pg_database.user} "
        f"dbname={pg_database.template_dbname}"
    )
    return (
        f"postgresql+psycopg://{reader}@{pg_database.host}:{pg_database.port}/"
        f"{pg_database.template_dbname}"
    )


@pytest.fixture
def pg_adapter(pg_url: str) -> Iterator[Adapter]:
    adapter = Adapter("shop", pg_url, row_limit=100, timeout_s=5)
    yield adapter
    adapter.close()


def pg_state(url: str) -> str:
    """A checksum of every table's name and contents in the database at ``url``."""
    import psycopg

    plain = url.replace("postgresql+psycopg://", "postgresql://")
    digest = hashlib.sha256()
    with psycopg.connect(plain, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
        ).fetchall()
        for (table,) in tables:
            digest.update(table.encode())
            rows = conn.execute(f'SELECT t::text FROM "{table}" AS t ORDER BY 1').fetchall()
            digest.update(repr(rows).encode())
        digest.update(
            repr(conn.execute("SELECT last_value, is_called FROM seq").fetchone()).encode()
        )
    return digest.hexdigest()


@pytest.fixture(params=["sqlite", "duckdb", "postgresql"])
def any_adapter(request: pytest.FixtureRequest) -> Adapter:
    """The test tables behind an adapter, once per database kind."""
    return request.getfixturevalue(f"{request.param.replace('postgresql', 'pg')}_adapter")
