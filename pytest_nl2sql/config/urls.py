"""Database URLs without SQLAlchemy for SQLite: the URL reader every caller goes through.

``read_url(text)`` reads ``sqlite://``, ``sqlite:///relative.db``, ``sqlite:////abs/path.db``,
``sqlite:///:memory:`` and ``sqlite+pysqlite://...`` (with or without a ``?query``) itself, as a
:class:`SqliteURL`; importing SQLAlchemy costs a process about 0.14 s, and a run on SQLite
datasources needs nothing else from it. Any other URL (another database, a SQLite URL with a
user, password, host or port, another SQLite driver, control characters) is handed to
SQLAlchemy's ``make_url``, imported at that point, and comes back as its ``URL``.

A :class:`SqliteURL` reads exactly as ``make_url`` reads the same text: the same
``get_backend_name()``, ``drivername``, ``database`` (percent escapes decoded), ``query``
(blank values dropped, a repeated key a tuple) and ``render_as_string()``
(tests/config/test_urls.py checks this against SQLAlchemy over generated URLs).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote

import attrs

__all__ = ["NotAURL", "SQLITE_DRIVERS", "SqliteURL", "file_url", "read_url"]

#: The drivernames read here; pysqlite is the standard library's sqlite3, always present.
SQLITE_DRIVERS = ("sqlite", "sqlite+pysqlite")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class NotAURL(ValueError):
    """The text is not a database URL (SQLAlchemy's ``make_url`` could not read it)."""


@attrs.frozen
class SqliteURL:
    """A SQLite URL: ``drivername`` is ``sqlite`` or ``sqlite+pysqlite``; ``database`` is the
    file path (None for ``sqlite://``); ``query`` maps each key to a value, or to a tuple of
    values when the key is repeated. No user, password, host or port."""

    drivername: str
    database: str | None = None
    query: Mapping[str, str | tuple[str, ...]] = attrs.field(factory=dict, converter=dict)

    username = None
    password = None
    host = None
    port = None

    def get_backend_name(self) -> str:
        """``sqlite``."""
        return self.drivername.partition("+")[0]

    def get_driver_name(self) -> str:
        """``pysqlite`` (the dialect's default driver when the URL names none)."""
        return self.drivername.partition("+")[2] or "pysqlite"

    def set(self, *, database: str | None) -> SqliteURL:
        """This URL with another database path."""
        return attrs.evolve(self, database=database)

    def update_query_dict(self, values: Mapping[str, str]) -> SqliteURL:
        """This URL with the query keys of ``values`` set to those values."""
        return attrs.evolve(self, query={**self.query, **values})

    def render_as_string(self, hide_password: bool = True) -> str:
        """The URL as text (a SQLite URL has no password to hide); the query keys sorted."""
        text = f"{self.drivername}://"
        if self.database is not None:
            text += "/" + quote(self.database, safe=" +/")
        if self.query:
            pairs = []
            for key in sorted(self.query):
                value = self.query[key]
                for one in (value,) if isinstance(value, str) else value:
                    pairs.append(f"{quote_plus(key)}={quote_plus(one)}")
            text += "?" + "&".join(pairs)
        return text

    def __str__(self) -> str:
        return self.render_as_string()


def read_url(text: Any) -> Any:
    """``text`` read as a database URL: a :class:`SqliteURL`, or SQLAlchemy's ``URL`` for
    anything else. Raises :class:`NotAURL` (a ``ValueError``) when it is not a URL."""
    simple = read_sqlite_url(text)
    if simple is not None:
        return simple
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        return make_url(text)
    except ArgumentError as error:
        raise NotAURL(str(error)) from None


def read_sqlite_url(text: Any) -> SqliteURL | None:
    """``text`` as a :class:`SqliteURL` when it is a plain SQLite URL, else None (then it is
    for SQLAlchemy to read: another database, a user or host, control characters, ...)."""
    if not isinstance(text, str) or _CONTROL.search(text):
        return None
    scheme, separator, rest = text.partition("://")
    if not separator or scheme not in SQLITE_DRIVERS:
        return None
    if rest and (rest[0] not in "/?" or (rest[0] == "?" and "@" in rest)):
        return None  # a user, password, host or port (an "@" before any "/"): SQLAlchemy's
    path, question, query_text = rest.partition("?")
    database = unquote(path[1:]) if path else None
    query: dict[str, str | tuple[str, ...]] = {}
    if question:
        for key, value in parse_qsl(query_text):
            if key in query:
                previous = query[key]
                query[key] = (*((previous,) if isinstance(previous, str) else previous), value)
            else:
                query[key] = value
    return SqliteURL(scheme, database, query)


def file_url(drivername: str, database: str) -> str:
    """The URL text of a database file (``sqlite``, ``duckdb``): ``drivername:///`` and the
    path, written as SQLAlchemy's ``URL.create(drivername, database=...)`` writes it."""
    return f"{drivername}:///" + quote(database, safe=" +/")
