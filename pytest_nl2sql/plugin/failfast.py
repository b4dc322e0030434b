"""Fail fast: stop asking a model that cannot be reached or rejects the key.

Every LLM call of mode full reports here how it went. After ``FAIL_FAST_AFTER`` failures in a
row of kind ``connection`` (the server cannot be reached, after the client's own retries) or
``auth`` (HTTP 401/403), the process stops asking: every later item becomes an error with one
reason (``not asked: ...``), at once, instead of retrying the dead server item after item. A
call that succeeds resets the count; other failures (a bad plan, a rate limit) neither count
nor reset it. Each process counts its own (every xdist worker stops after its own M
failures). Thread-safe: concurrent calls report here too.
"""

from __future__ import annotations

import threading

from pytest_nl2sql.reporting.figures import NOT_ASKED

__all__ = ["FAIL_FAST_AFTER", "FAIL_FAST_KINDS", "NOT_ASKED", "FailFast"]

#: Consecutive connection or authentication failures after which the run stops asking.
FAIL_FAST_AFTER = 3
#: The ``LLMError.kind`` values that count.
FAIL_FAST_KINDS = ("connection", "auth")


class FailFast:
    def __init__(self, after: int = FAIL_FAST_AFTER) -> None:
        self.after = after
        self.count = 0
        self.reason: str | None = None
        self.not_asked = 0
        self._lock = threading.Lock()

    def succeeded(self) -> None:
        with self._lock:
            self.count = 0

    def failed(self, error: BaseException) -> None:
        kind = getattr(error, "kind", None)
        if kind not in FAIL_FAST_KINDS:
            return
        with self._lock:
            self.count += 1
            if self.count >= self.after and self.reason is None:
                what = "could not reach the LLM server" if kind == "connection" else "were refused by the LLM server (authentication)"
                self.reason = (
                    f"{NOT_ASKED}{self.count} LLM calls in a row {what}, so the run stopped asking; "
                    f"the last error: {error}"
                )

    def stopped(self) -> str | None:
        """The reason the run stopped asking, or None while it still asks; counts the items."""
        with self._lock:
            if self.reason is not None:
                self.not_asked += 1
            return self.reason
