"""DuckDB queries run in a child process whose memory is capped, so one huge value cannot grow
the calling process.

DuckDB builds a value inside the library before any row reaches Python: ``SELECT repeat('x',
1500000000)`` takes about 3 GB in the process that runs it, whatever ``memory_limit`` says.
So the adapter sends each admitted DuckDB query to a child (``python -m
pytest_nl2sql.datasources.duckchild``) that opens the file read-only with external access off,
lowers its own address-space limit (``RLIMIT_AS``, :data:`CHILD_MEMORY_BYTES`), runs the query
under the same deadline (DuckDB interrupt) and byte budget as the other backends, and answers
with at most ``row_limit + 1`` rows within the budget. The caller waits at most ``timeout_s`` +
:data:`GRACE_S`; a child that does not answer by then is killed. A child that dies (out of
memory) is replaced by the next query. Idle children are kept in a small pool per adapter.

Frames on the pipes are an 8-byte length and a pickle; the child is this module, run by the
same interpreter, and the parent reads at most :data:`frame_cap` bytes of one answer.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from typing import Any, BinaryIO

from pytest_nl2sql.datasources.budget import OverBudget, value_bytes
from pytest_nl2sql.datasources.deadline import GRACE_S

__all__ = ["CHILD_MEMORY_BYTES", "ChildLost", "ChildPool", "DuckChild"]

#: The address space one DuckDB child may use (RLIMIT_AS).
CHILD_MEMORY_BYTES = 3 * 1024**3
_HEADER = struct.Struct(">Q")
_FETCH_BATCH = 500


def frame_cap(max_result_bytes: int) -> int:
    """The most bytes the parent reads as one answer (the budget, pickled, with room)."""
    return 4 * max_result_bytes + 1024 * 1024


def _write(stream: BinaryIO, message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exactly(fd: int, size: int, stop_at: float | None) -> bytes | None:
    """``size`` bytes from ``fd``; None when ``stop_at`` passes first; EOFError at the end."""
    chunks: list[bytes] = []
    while size:
        if stop_at is not None:
            wait = stop_at - time.monotonic()
            if wait <= 0 or not select.select([fd], [], [], wait)[0]:
                return None
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


class ChildLost(Exception):
    """The child did not answer: ``why`` is 'timeout', 'too_large' or 'died'."""

    def __init__(self, why: str, detail: str = "") -> None:
        super().__init__(why)
        self.why = why
        self.detail = detail


class DuckChild:
    """One child process holding one read-only DuckDB connection."""

    def __init__(self, database: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pytest_nl2sql.datasources.duckchild", database, str(CHILD_MEMORY_BYTES)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )

    def ask(self, sql: str, limit: int, timeout_s: float, max_result_bytes: int) -> tuple:
        """The child's answer: ('ok', columns, rows, truncated, elapsed_s) or ('error', kind,
        message). Raises ``ChildLost`` when it does not answer in ``timeout_s`` + GRACE_S
        (the child is then killed), dies, or answers more than the frame cap."""
        stop_at = time.monotonic() + timeout_s + GRACE_S
        try:
            assert self.process.stdin is not None
            _write(self.process.stdin, (sql, limit, timeout_s, max_result_bytes))
        except (BrokenPipeError, OSError):
            self.kill()
            raise ChildLost("died", self._exit_text()) from None
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        body: bytes | None = None
        try:
            header = _read_exactly(fd, _HEADER.size, stop_at)
            if header is not None:
                (size,) = _HEADER.unpack(header)
                if size > frame_cap(max_result_bytes):
                    self.kill()
                    raise ChildLost("too_large")
                body = _read_exactly(fd, size, stop_at)
        except EOFError:  # the child ended (killed for its memory, or by anyone)
            self.kill()
            raise ChildLost("died", self._exit_text()) from None
        if header is None or body is None:
            self.kill()
            raise ChildLost("timeout")
        return pickle.loads(body)  # noqa: S301 - written by this module in the child

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(Exception):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.close()

    def close(self) -> None:
        """Ask the child to end (end of its input), then make sure it has."""
        with contextlib.suppress(Exception):
            if self.process.stdin is not None:
                self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        self.kill()

    def _exit_text(self) -> str:
        code = self.process.poll()
        if code is None:
            return ""
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"ended by {signal.Signals(-code).name}"
        return f"exit code {code}"


class ChildPool:
    """Idle DuckDB children of one database, reused query after query."""

    def __init__(self, database: str, size: int = 2) -> None:
        self.database = database
        self.size = size
        self._idle: list[DuckChild] = []
        self._lock = threading.Lock()

    def ask(self, sql: str, limit: int, timeout_s: float, max_result_bytes: int) -> tuple:
        with self._lock:
            child = None
            while self._idle and child is None:
                candidate = self._idle.pop()
                if candidate.alive():
                    child = candidate
                else:
                    candidate.kill()
        if child is None:
            child = DuckChild(self.database)
        try:
            answer = child.ask(sql, limit, timeout_s, max_result_bytes)
        except ChildLost as lost:  # the child is killed already
            return ("error", "memory" if lost.why == "died" else lost.why, lost.detail)
        except BaseException:  # Ctrl-C while waiting: the query is abandoned with its child
            child.kill()
            raise
        with self._lock:
            if len(self._idle) < self.size and child.alive():
                self._idle.append(child)
                child = None
        if child is not None:
            child.close()
        return answer

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for child in idle:
            child.close()


# -- the child -----------------------------------------------------------------------------------


def _serve(database: str, memory_bytes: int) -> None:  # pragma: no cover - runs in the child
    import resource

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    with contextlib.suppress(ValueError, OSError):
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > memory_bytes:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, hard))
        else:
            resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    import duckdb

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing else may write to the answer pipe
    connection = None
    open_error = None
    try:
        if database == ":memory:":
            connection = duckdb.connect(":memory:", config={"enable_external_access": False})
        else:
            connection = duckdb.connect(
                database, read_only=True, config={"enable_external_access": False}
            )
    except Exception as error:  # reported with the first query
        open_error = f"the DuckDB file {database} cannot be opened: {str(error).splitlines()[0]}"
    while True:
        try:
            header = _read_exactly(stdin.fileno(), _HEADER.size, None)
            (size,) = _HEADER.unpack(header)
            body = _read_exactly(stdin.fileno(), size, None)
        except EOFError:  # the parent closed the pipe (or ended)
            return
        sql, limit, timeout_s, max_result_bytes = pickle.loads(body)  # noqa: S301 - the parent's
        if connection is None:
            _write(stdout, ("error", "unreachable", open_error))
            continue
        try:
            answer = _run(connection, sql, limit, timeout_s, max_result_bytes)
        except MemoryError:
            answer = ("error", "memory", "")
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("error", "memory", ""))
        except Exception as error:  # a value of a type that cannot travel
            data = pickle.dumps(("error", "sql_error", f"a value of the result cannot be read back: {error}"))
        stdout.write(_HEADER.pack(len(data)) + data)
        stdout.flush()


def _run(connection: Any, sql: str, limit: int, timeout_s: float, max_result_bytes: int) -> tuple:  # pragma: no cover - child
    import duckdb

    started = time.perf_counter()
    stop_at = time.monotonic() + timeout_s
    hit = [False]
    lock = threading.Lock()
    active = [True]

    def interrupt() -> None:
        with lock:
            if active[0]:
                hit[0] = True
                with contextlib.suppress(Exception):
                    connection.interrupt()

    timer = threading.Timer(timeout_s, interrupt)
    timer.daemon = True
    cursor = connection.cursor()
    timer.start()
    try:
        cursor.execute(sql)
        columns = tuple(str(d[0]) for d in (cursor.description or ()))
        rows: list[tuple] = []
        size = 0
        while columns and len(rows) <= limit:
            batch = cursor.fetchmany(min(_FETCH_BATCH, limit + 1 - len(rows)))
            if not batch:
                break
            for row in batch:
                size += value_bytes(row)
                if size > max_result_bytes:
                    raise OverBudget()
            rows.extend(batch)
            if time.monotonic() > stop_at:
                hit[0] = True
                raise duckdb.InterruptException("deadline")
        return ("ok", columns, rows, len(rows) > limit, time.perf_counter() - started)
    except OverBudget:
        return ("error", "too_large", "")
    except duckdb.OutOfMemoryException as error:
        return ("error", "memory", str(error).splitlines()[0] if str(error) else "")
    except Exception as error:
        if hit[0] or isinstance(error, duckdb.InterruptException):
            return ("error", "timeout", "")
        return ("error", "sql_error", str(error).strip() or type(error).__name__)
    finally:
        with lock:
            active[0] = False
        timer.cancel()
        with contextlib.suppress(Exception):
            cursor.close()


if __name__ == "__main__":  # pragma: no cover - the child's entry point
    _serve(sys.argv[1], int(sys.argv[2]))
