"""The one rule for values that come out of a database or go into a suite file.

Every result value is normalized once, here, so the same query gives equal rows on
SQLite, PostgreSQL and DuckDB, and so rows written to YAML read back equal:

============  ==========================================================
database      normalized
============  ==========================================================
None          None
bool          int (1 / 0): SQLite has no boolean type
int, float    unchanged
Decimal       int when integral (``Decimal('13')`` -> 13), else float
date          ISO text ``'2009-01-01'``
datetime      ISO text with a space, ``'2009-01-01 00:00:00'`` (SQLite's
              own text form); microseconds only when non-zero; an aware
              datetime is converted to UTC first and written without offset
time          ISO text ``'13:45:00'``
timedelta     float seconds
bytes         lowercase hex text
UUID          canonical text
anything else ``str(value)``
============  ==========================================================
"""

from __future__ import annotations

import datetime as _dt
import uuid
from decimal import Decimal
from typing import Any

__all__ = ["normalize_value", "normalize_row"]


def normalize_value(value: Any) -> Any:
    """Return ``value`` in the project's normal form (see the module docstring)."""
    if value is None:
        return None
    t = type(value)
    if t is int or t is float or t is str:
        return value
    if t is bool:
        return int(value)
    if isinstance(value, Decimal):
        if value.is_finite() and value == value.to_integral_value():
            return int(value)
        return float(value)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.UTC).replace(tzinfo=None)
        return value.isoformat(sep=" ", timespec="microseconds" if value.microsecond else "seconds")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, _dt.time):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, int):  # int subclasses (e.g. numpy-free enums)
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def normalize_row(row: Any) -> tuple:
    """Normalize every value of one result row."""
    return tuple(normalize_value(v) for v in row)
