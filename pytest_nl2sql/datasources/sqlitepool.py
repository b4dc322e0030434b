"""The pool of a SQLite datasource's ``sqlite3`` connections, without SQLAlchemy.

A SQLite adapter needs no engine: its connections are made by ``Adapter._sqlite_connect``
(read-only, with the adapter's limits and authorizer) and kept here for reuse. The pool is
thread-safe; a checked-out connection is a :class:`PooledConnection`, which answers what the
adapter and introspection call on SQLAlchemy's pooled connections (``cursor()``,
``rollback()``, ``close()`` to give it back, ``invalidate()`` to throw it away,
``driver_connection``, ``dbapi_connection``; anything else is the ``sqlite3`` connection's).
A connection given back is rolled back, and closed instead of kept when that fails, when it
was invalidated, when the pool already keeps ``keep`` idle connections, or when the pool was
closed. Like SQLAlchemy's ``sqlite`` dialect, each new connection gets the ``regexp`` and
``floor`` functions, so queries read the same as they did through an engine.

Also here, for the adapter's SQLite connections: the process-wide heap limit
(``lower_heap_limit``) and Ctrl-C during a query (``ctrl_c_stops``).
"""

from __future__ import annotations

import _signal  # signal.signal's C function: the module's wrapper turns each handler into an enum, ~10 us a query
import contextlib
import math
import re
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = [
    "SQLITE_HEAP_LIMIT_BYTES",
    "PooledConnection",
    "SqlitePool",
    "add_sqlite_functions",
    "ctrl_c_stops",
    "lower_heap_limit",
]

#: The most memory SQLite may hold in this process (PRAGMA hard_heap_limit; only ever lowered).
SQLITE_HEAP_LIMIT_BYTES = 1024 * 1024 * 1024
#: Idle connections kept for reuse (as SQLAlchemy's QueuePool keeps 5); more may be checked
#: out at once, and those beyond it are closed when given back.
KEEP_IDLE = 5


_HEAP_LIMIT_SET = threading.Lock()


def lower_heap_limit(connection: sqlite3.Connection) -> None:
    """Lower SQLite's process-wide hard heap limit to SQLITE_HEAP_LIMIT_BYTES (never raise it)."""
    with _HEAP_LIMIT_SET:
        current = connection.execute("PRAGMA hard_heap_limit").fetchone()[0]
        if current == 0 or current > SQLITE_HEAP_LIMIT_BYTES:
            connection.execute(f"PRAGMA hard_heap_limit = {SQLITE_HEAP_LIMIT_BYTES}")


@contextlib.contextmanager
def ctrl_c_stops(driver: Any) -> Iterator[None]:
    """Ctrl-C during a SQLite query is the user's: sqlite3 runs Python only in its callbacks
    (the authorizer, the progress handler), and a KeyboardInterrupt raised there becomes the
    query's "interrupted"/"not authorized" error -- an item's sql_error, and the run went on.
    While the query runs (in the main thread), SIGINT interrupts the query and is raised
    again, as KeyboardInterrupt, once the query has stopped (pytest: Interrupted, exit 2)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[Any] = []

    def on_sigint(signum: int, frame: Any) -> None:
        caught.append(frame)
        driver.interrupt()

    try:
        previous = _signal.signal(_signal.SIGINT, on_sigint)
    except (ValueError, OSError):  # pragma: no cover - not the main interpreter
        yield
        return
    try:
        yield
    finally:
        _signal.signal(_signal.SIGINT, previous)
        if caught:
            if callable(previous):
                previous(_signal.SIGINT, caught[0])  # Python's default handler raises KeyboardInterrupt
            raise KeyboardInterrupt


def _regexp(pattern: str, value: str | None) -> bool | None:
    """``value REGEXP pattern``: whether ``pattern`` matches anywhere in ``value``."""
    if value is None:
        return None
    return re.search(pattern, value) is not None


def add_sqlite_functions(connection: sqlite3.Connection) -> None:
    """The functions SQLAlchemy's pysqlite dialect adds to every connection: ``regexp(pattern,
    value)`` (SQLite's ``REGEXP`` operator) and ``floor(x)``."""
    connection.create_function("regexp", 2, _regexp, deterministic=True)
    connection.create_function("floor", 1, math.floor, deterministic=True)


class PooledConnection:
    """One checked-out ``sqlite3`` connection; ``close()`` gives it back to its pool."""

    def __init__(self, pool: SqlitePool, connection: sqlite3.Connection) -> None:
        self._pool = pool
        self._connection: sqlite3.Connection | None = connection
        self._invalid = False

    @property
    def driver_connection(self) -> sqlite3.Connection:
        """The ``sqlite3`` connection itself."""
        if self._connection is None:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        return self._connection

    dbapi_connection = driver_connection

    @property
    def is_valid(self) -> bool:
        """False once invalidated or given back."""
        return self._connection is not None and not self._invalid

    def cursor(self, *args: Any, **kwargs: Any) -> sqlite3.Cursor:
        return self.driver_connection.cursor(*args, **kwargs)

    def rollback(self) -> None:
        self.driver_connection.rollback()

    def commit(self) -> None:
        self.driver_connection.commit()

    def invalidate(self) -> None:
        """Throw the connection away: it is closed now and never handed out again."""
        self._invalid = True
        if self._connection is not None:
            with contextlib.suppress(Exception):
                self._connection.close()

    def close(self) -> None:
        """Give the connection back to the pool (rolled back); a second call does nothing."""
        connection, self._connection = self._connection, None
        if connection is not None:
            self._pool._give_back(connection, healthy=not self._invalid)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.driver_connection, name)

    def __repr__(self) -> str:
        state = "invalid" if self._invalid else "given back" if self._connection is None else "checked out"
        return f"<PooledConnection {state}>"


class SqlitePool:
    """Connections made by ``connect`` (each given :func:`add_sqlite_functions`), reused."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], keep: int = KEEP_IDLE) -> None:
        self._connect = connect
        self._keep = keep
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def checkout(self) -> PooledConnection:
        """An idle connection (the one given back last), else a new one; errors of
        ``connect`` propagate."""
        with self._lock:
            connection = self._idle.pop() if self._idle else None
        if connection is None:
            connection = self._connect()
            try:
                add_sqlite_functions(connection)
            except BaseException:
                connection.close()
                raise
        return PooledConnection(self, connection)

    def idle(self) -> int:
        """How many connections wait for reuse."""
        with self._lock:
            return len(self._idle)

    def _give_back(self, connection: sqlite3.Connection, healthy: bool) -> None:
        if healthy:
            try:
                connection.rollback()
            except Exception:
                healthy = False
        if healthy:
            with self._lock:
                if not self._closed and len(self._idle) < self._keep:
                    self._idle.append(connection)
                    return
        with contextlib.suppress(Exception):
            connection.close()

    def close(self) -> None:
        """Close every idle connection; connections still checked out (or checked out
        later) are closed when given back, not kept."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for connection in idle:
            with contextlib.suppress(Exception):
                connection.close()
