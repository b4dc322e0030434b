"""Memos of the work done per SQL text: one parse per (dialect, SQL), and the verdicts of the
statement guard and of the validator, so that the same SQL is parsed and judged once per run.

An item's predicted SQL passes the guard in the engine, the validator (which asks the guard
again) and the adapter (which asks it a third time before it runs anything); the same SQL is
checked again for every role and on every neighbour database. Each of those answers depends
only on the SQL text, the dialect and -- for the validator -- the schema and the role's policy,
so each is computed once and looked up after that.

A memo is a small bounded LRU map, safe across threads. It keeps what a computation returned
or the exception it raised (the exception's type and arguments: every look-up raises a fresh
one, with no traceback carried over). What is kept must not be changed by its users: parse
trees are shared, so a user that edits a tree edits a ``copy()`` of it.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

__all__ = ["Memo", "text_key"]

T = TypeVar("T")

_MISSING = object()


class _Raised:
    """An exception a computation raised: raised again, afresh, at each look-up."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def again(self) -> BaseException:
        fresh = type(self.error).__new__(type(self.error))
        fresh.__dict__.update(self.error.__dict__)
        fresh.args = self.error.args
        return fresh


def text_key(text: str) -> bytes:
    """A 128-bit digest of ``text``: memo keys stay small whatever the SQL's length."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Memo(Generic[T]):
    """At most ``size`` results of ``compute`` by key, the least recently used dropped first.

    ``remember`` lists the exception types worth keeping (a verdict such as a refusal); any
    other exception propagates and nothing is kept, so a ``RecursionError`` or a
    ``KeyboardInterrupt`` is never replayed.
    """

    def __init__(self, size: int, remember: tuple[type[BaseException], ...] = ()) -> None:
        self.size = size
        self.remember = remember
        self.hits = 0
        self.misses = 0
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, compute: Callable[[], T]) -> T:
        with self._lock:
            found = self._data.get(key, _MISSING)
            if found is not _MISSING:
                self._data.move_to_end(key)
                self.hits += 1
        if found is _MISSING:
            self.misses += 1
            try:
                found = compute()
            except self.remember as error:
                found = _Raised(error)
            with self._lock:
                self._data[key] = found
                while len(self._data) > self.size:
                    self._data.popitem(last=False)
        if isinstance(found, _Raised):
            raise found.again()
        return found  # type: ignore[no-any-return]

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.hits = self.misses = 0
