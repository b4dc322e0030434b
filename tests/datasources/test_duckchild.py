"""DuckDB queries run in a memory-capped child process (issue 21): a child that dies or stops
answering is a clear error for that query only, and the next query gets a new child."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_nl2sql.datasources import Adapter, QueryError

SLOW = (
    "SELECT g, (SELECT count(*) FROM range(3000000) r WHERE r.range % (g + 1) = 0) AS n "
    "FROM range(100000) AS t(g)"
)
COUNT = "SELECT COUNT(*) AS n FROM items"


@pytest.fixture
def duck(duckdb_path: Path) -> Iterator[Adapter]:
    adapter = Adapter("shop", f"duckdb:///{duckdb_path}", timeout_s=5)  # far past the kill or stop below
    yield adapter
    adapter.close()


def _child_pid(adapter: Adapter) -> int:
    assert adapter.execute(COUNT).rows == [(4,)]  # starts the child; it waits in the pool
    [child] = adapter._duck_pool._idle  # type: ignore[union-attr]
    return child.process.pid


def test_a_child_that_dies_is_a_clear_error_and_is_replaced(duck: Adapter) -> None:
    pid = _child_pid(duck)
    threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
    with pytest.raises(QueryError) as caught:
        duck.execute(SLOW)
    assert caught.value.kind == "sql_error"
    assert "a DuckDB query may use (ended by SIGKILL)" in caught.value.message
    assert "max_result_bytes" in caught.value.message
    assert duck.execute(COUNT).rows == [(4,)]
    assert _child_pid(duck) != pid


def test_a_child_that_stops_answering_is_killed_at_the_deadline(duck: Adapter) -> None:
    pid = _child_pid(duck)
    threading.Timer(0.3, os.kill, (pid, signal.SIGSTOP)).start()
    try:
        with pytest.raises(QueryError) as caught:
            duck.execute(SLOW)  # the child cannot interrupt itself: the caller kills it
        assert caught.value.kind == "timeout"
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert duck.execute(COUNT).rows == [(4,)]
