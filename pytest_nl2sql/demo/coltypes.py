"""Column types shared by the demo schemas, so SQLite and other dialects get the same facts.

Timestamps are stored in SQLite as text 'YYYY-MM-DD HH:MM:SS' (the form of the canonical Chinook
file); other dialects get their native timestamp type. Text columns keep Chinook's NVARCHAR
spelling in SQLite and become VARCHAR elsewhere.
"""

from __future__ import annotations

from sqlalchemy import Date, DateTime, String
from sqlalchemy.dialects import sqlite
from sqlalchemy.types import NVARCHAR, TypeEngine

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
"""How the demo data spells a timestamp (and how SQLite stores it)."""

DATE_FORMAT = "%Y-%m-%d"
"""How the demo data spells a date."""


def timestamp() -> TypeEngine:
    """A timestamp column: text without microseconds in SQLite, TIMESTAMP elsewhere."""
    return DateTime().with_variant(sqlite.DATETIME(truncate_microseconds=True), "sqlite")


def calendar_date() -> TypeEngine:
    """A calendar date column: 'YYYY-MM-DD' text in SQLite, DATE elsewhere."""
    return Date()


def nvarchar(length: int) -> TypeEngine:
    """A Chinook text column: NVARCHAR(n) in SQLite as in the canonical file, VARCHAR(n) elsewhere."""
    return String(length).with_variant(NVARCHAR(length), "sqlite")
