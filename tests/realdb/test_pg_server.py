"""tests/pg_server.py: a real server that serves, runs unprivileged, and leaves nothing behind."""

from __future__ import annotations

import os

import psycopg
import pytest

from pytest_nl2sql.datasources import Adapter
from tests.pg_server import PgServer, running_server, skip_reason


def test_skip_reason_names_the_missing_binaries_and_how_to_get_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    reason = skip_reason()
    assert reason is not None
    assert "initdb, pg_ctl, postgres" in reason
    assert "install" in reason
    with pytest.raises(RuntimeError, match="cannot start PostgreSQL: .*initdb"):
        with running_server():
            pass


def test_a_server_serves_schema_urls_and_is_gone_after() -> None:
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    with running_server(prefix="nl2sql-pg-selftest-") as server:
        assert isinstance(server, PgServer)
        assert server.folder.is_dir()
        url = server.create_database("shop db")  # a name that needs quoting
        with psycopg.connect(server.dsn("shop db"), autocommit=True) as connection:
            connection.execute("CREATE SCHEMA sales")
            connection.execute("CREATE TABLE sales.orders (id integer)")
            user = connection.execute("SELECT current_user").fetchone()[0]
        assert user == server.user
        adapter = Adapter("sales", server.url("shop db", schema="sales"))
        try:
            with adapter.raw_connection() as connection:  # session functions are refused above
                cursor = connection.cursor()
                cursor.execute("SELECT current_schema()")
                assert cursor.fetchall() == [("sales",)]
            assert adapter.execute("SELECT count(*) FROM orders").rows == [(0,)]
        finally:
            adapter.close()
        assert url == server.url("shop db", superuser=True)
        folder, dsn = server.folder, server.dsn()
        if os.geteuid() == 0:  # the server must not run as root
            assert folder.stat().st_uid != 0
    assert not folder.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn, connect_timeout=2).close()
