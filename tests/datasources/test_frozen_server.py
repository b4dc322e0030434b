"""A PostgreSQL server that stops answering (every server process SIGSTOPped: a host gone
silent) holds no item longer than ``timeout_s`` + 2 s, and after ``unreachable_after`` such
waits in a row the datasource's remaining items fail at once as ``unreachable`` (issue 27 D.9).

The server is always resumed (SIGCONT) in a ``finally``. The time checks only catch a hang:
unbounded, a query waits until the server is resumed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_nl2sql.datasources import Adapter, QueryError
from tests.pg_server import PgServer, server_or_skip

CASES = 6


@pytest.fixture(scope="module")
def frozen_server() -> Iterator[PgServer]:
    import psycopg

    with server_or_skip(prefix="nl2sql-frozen-") as server:
        server.create_database("shop")
        with psycopg.connect(server.dsn("shop"), autocommit=True) as conn:
            conn.execute("CREATE TABLE t (n integer); INSERT INTO t VALUES (1)")
        yield server


def _server_pids(server: PgServer) -> list[int]:
    """The postmaster and every process it started."""
    postmaster = int((server.folder / "data" / "postmaster.pid").read_text().split()[0])
    pids = [postmaster]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == postmaster:
                    pids.append(int(entry.name))
    return pids


@contextlib.contextmanager
def frozen(server: PgServer) -> Iterator[None]:
    pids = _server_pids(server)
    try:
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def test_a_frozen_server_is_abandoned_at_the_client_deadline_then_failed_fast(frozen_server: PgServer) -> None:
    adapter = Adapter("shop", frozen_server.url("shop"), timeout_s=1, unreachable_after=3)
    try:
        assert adapter.execute("SELECT n FROM t").rows == [(1,)]  # a pooled connection
        kinds, waits = [], []
        with frozen(frozen_server):
            for _ in range(5):
                started = time.monotonic()
                with pytest.raises(QueryError) as caught:
                    adapter.execute("SELECT n FROM t")
                waits.append(time.monotonic() - started)
                kinds.append(caught.value.kind)
                last = caught.value.message
        assert kinds[:2] in (["timeout", "unreachable"], ["timeout", "timeout"]), kinds
        assert kinds[2:] == ["unreachable"] * 3, kinds
        assert "3 queries in a row got no answer within timeout_s + 2 s" in last
        assert "unreachable_after" in last
        assert max(waits) < 20, waits  # unbounded: until SIGCONT
        assert max(waits[3:]) < 1, waits  # failed fast: nothing sent
    finally:
        adapter.close()


def test_a_run_against_a_frozen_server_ends_with_clear_unreachable_items(
    pytester: pytest.Pytester, frozen_server: PgServer
) -> None:
    cases = "".join(
        f"- id: c_{i}\n  question: How many rows, {i}?\n  datasources: [shop]\n  status: approved\n"
        f"  outcome: {{admin: allowed}}\n  sql: SELECT n FROM t\n  rows:\n  - {{n: 1}}\n"
        for i in range(1, CASES + 1)
    )
    (pytester.path / "suite.yaml").write_text(f"version: 1\ncases:\n{cases}")
    (pytester.path / "nl2sql.yaml").write_text(
        f"version: 1\ndatasources:\n  shop:\n    url: {frozen_server.url('shop')}\n    timeout_s: 1\n"
        "roles:\n  admin: {datasources: \"*\"}\n"
    )
    (pytester.path / "p.jsonl").write_text(
        "".join(json.dumps({"id": f"c_{i}", "sql": "SELECT n FROM t"}) + "\n" for i in range(1, CASES + 1))
    )
    started = time.monotonic()
    with frozen(frozen_server):
        result = pytester.runpytest_subprocess(
            "--nl2sql-suite", "suite.yaml", "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions", "p.jsonl",
            "--nl2sql-out", "r.json", "-p", "no:cacheprovider", "-p", "no:randomly", timeout=300,
        )
    assert time.monotonic() - started < 120  # unbounded: until SIGCONT, i.e. never here
    result.assert_outcomes(failed=CASES)
    items = json.loads((pytester.path / "r.json").read_text())["items"]
    errors = [item["error"] for item in items]
    assert all(errors), errors
    assert "is unreachable: 3 queries in a row" in errors[-1]
    result.stdout.fnmatch_lines(["*unreachable*"])
