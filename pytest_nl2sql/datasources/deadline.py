"""The client's own deadline for a server that stops answering.

``statement_timeout`` and a cancel request need a server that answers. A PostgreSQL server
that is frozen (SIGSTOP), or a host gone silent, answers neither: the query waits until the
socket gives up, which the kernel does not do while the host still acknowledges packets.
So :class:`ClientDeadline` runs each call in a worker thread and the caller waits for it at
most ``timeout_s`` + :data:`GRACE_S`. After ``unreachable_after`` such waits in a row, further
calls fail at once, as ``unreachable``, without touching the server.
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["DEFAULT_UNREACHABLE_AFTER", "GRACE_S", "ClientDeadline"]

#: How long past ``timeout_s`` a caller waits for an answer before it abandons the call.
GRACE_S = 2.0
#: After this many calls in a row without an answer by the client deadline, a datasource's
#: further calls fail at once as ``unreachable``.
DEFAULT_UNREACHABLE_AFTER = 3


class ClientDeadline:
    """Waits of one datasource: a counter of unanswered ones, and the wait itself.

    ``error(kind, message)`` makes the exception raised (the adapter's ``QueryError``).
    """

    def __init__(self, name: str, url: str, timeout_s: float, unreachable_after: int, error: Any) -> None:
        self.name = name
        self.url = url
        self.timeout_s = timeout_s
        self.unreachable_after = unreachable_after
        self.error = error
        self.stalls = 0  # calls in a row the server left unanswered past the deadline

    def run(self, call: Any, wait_s: float | None = None) -> Any:
        """``call()`` in a worker thread; wait at most ``wait_s`` (default ``timeout_s`` +
        GRACE_S) for it.

        The abandoned thread ends when the socket does (keepalives, ``tcp_user_timeout``) or
        when the server answers again (its connection then goes back to the pool as after any
        query; Ctrl-C while waiting leaves it to ``statement_timeout``). A wait that runs out
        counts, and so does an ``unreachable`` answer that took the whole ``timeout_s`` (a
        connection attempt that timed out); a refused connection (a stopped server) does not,
        and any answer from the server starts the count again.
        """
        if self.stalls >= self.unreachable_after:
            raise self.error("unreachable", self._stalled_text())
        wait_s = self.timeout_s + GRACE_S if wait_s is None else wait_s
        outcome: list[Any] = []

        def work() -> None:
            try:
                outcome.append(call())
            except BaseException as error:  # handed to the caller
                outcome.append(error)

        started = time.monotonic()
        worker = threading.Thread(target=work, name=f"nl2sql-query-{self.name}", daemon=True)
        worker.start()
        worker.join(wait_s)
        if worker.is_alive():
            self.stalls += 1
            if self.stalls >= self.unreachable_after:
                raise self.error("unreachable", self._stalled_text())
            raise self.error(
                "timeout",
                f"datasource {self.name!r} ({self.url}) gave no answer within {wait_s:g} s "
                f"(timeout_s {self.timeout_s:g} s + {wait_s - self.timeout_s:g} s); the query was abandoned",
            )
        result = outcome[0]
        if getattr(result, "kind", None) == "unreachable":
            if time.monotonic() - started >= self.timeout_s:
                self.stalls += 1
            raise result
        self.stalls = 0
        if isinstance(result, BaseException):
            raise result
        return result

    def _stalled_text(self) -> str:
        return (
            f"datasource {self.name!r} ({self.url}) is unreachable: {self.stalls} queries in a "
            f"row got no answer within timeout_s + {GRACE_S:g} s, so its remaining queries are "
            "not sent (check the server; unreachable_after in nl2sql.yaml sets how many)"
        )
