"""Reading a JSON report in bounded memory.

``report merge``, ``report compare`` and ``report gate`` read reports of any size: the top
level is parsed by hand, every value but ``items`` is decoded whole (they are small), and the
``items`` array is decoded one record at a time (``json.JSONDecoder.raw_decode`` over a
buffer refilled from the file). The memory held is one record and the buffer, whatever the
report's size and however it was written (the plugin writes one item a line; ``json.dump``
with any indent reads the same).

``open_report`` reads the file once to check it (``reporting.validate``, record by record) and
returns the report as data whose ``items`` is a ``LazyRecords``: each pass over it reads the
file again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pytest_nl2sql.reporting.spool import LazyRecords

__all__ = ["ITEM", "ITEMS", "ReportSyntax", "iter_report", "open_report"]

ITEM: Any = object()  # iter_report's key of an element of ``items``
ITEMS: Any = object()  # iter_report's value of ``items`` (its elements follow)
_WS = re.compile(r"[ \t\n\r]*")
_CHUNK = 1 << 20


class ReportSyntax(ValueError):
    """The file is not JSON (or not a JSON object at its top level)."""


class _Reader:
    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.dec = json.JSONDecoder()

    def fill(self) -> bool:
        if self.eof:
            return False
        chunk = self.fh.read(_CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.fill():
                return ""

    def expect(self, chars: str) -> str:
        c = self.peek()
        if c == "" or c not in chars:
            raise ReportSyntax(f"expected {' or '.join(repr(x) for x in chars)}, got {c!r}" if c else "the file ends early")
        self.pos += 1
        return c

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = self.dec.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.fill():
                    continue
                raise ReportSyntax(str(exc)) from None
            if end == len(self.buf) and not self.eof and self.fill():
                continue  # a number may go on in the next chunk
            self.pos = end
            return value


def iter_report(path: str | Path) -> Iterator[tuple[str, Any]]:
    """The report's top-level members in file order, as ``(key, value)``; the elements of the
    ``items`` array come as ``(ITEM, record)`` pairs after ``("items", ITEMS)``. Raises
    ``ReportSyntax`` on anything but a JSON object."""
    with open(path, encoding="utf-8") as fh:
        r = _Reader(fh)
        r.expect("{")
        if r.peek() == "}":
            return
        while True:
            key = r.value()
            if not isinstance(key, str):
                raise ReportSyntax("expected a member name")
            r.expect(":")
            if key == "items" and r.peek() == "[":
                r.expect("[")
                yield "items", ITEMS
                if r.peek() == "]":
                    r.expect("]")
                else:
                    while True:
                        yield ITEM, r.value()
                        if r.expect(",]") == "]":
                            break
            else:
                yield key, r.value()
            if r.expect(",}") == "}":
                break
        if r.peek() != "":
            raise ReportSyntax("extra data after the report")


def _items(path: str | Path) -> Iterator[dict[str, Any]]:
    for key, value in iter_report(path):
        if key is ITEM:
            yield value


def open_report(path: str | Path, check: Callable[[dict[str, Any], int], None] | None = None) -> dict[str, Any]:
    """The report at ``path`` as data, its ``items`` read from the file on each pass (module
    doc); ``check(record, index)`` is called on each record of the first reading."""
    head: dict[str, Any] = {}
    count = 0
    items_seen = False
    for key, value in iter_report(path):
        if key is ITEM:
            if check is not None:
                check(value, count)
            count += 1
        elif value is ITEMS:
            items_seen = True
        else:
            head[key] = value
    if items_seen:
        head["items"] = LazyRecords(count, lambda: _items(path))
    return head
