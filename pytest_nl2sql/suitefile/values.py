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
import math as _math
import numbers as _numbers
import re as _re
import unicodedata as _ud
import uuid
from decimal import Decimal
from fractions import Fraction as _Fraction
from typing import Any

__all__ = ["NAN", "canonical_row", "canonical_value", "is_exact_number", "normalize_row", "normalize_value"]


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


# -- the comparison form (result_match) ----------------------------------------------------
#
# ``normalize_value`` above is the *storage* form (what the adapter returns and the writer
# writes). ``canonical_value`` is the *comparison* form result_match puts both sides in before
# it compares them, whatever the engine or the suite file handed it. It is coarser than
# ``normalize_value`` in one way only -- text that spells an ISO date/time is read as that
# date/time -- and finer in one: Decimals stay exact (they are not turned into floats), so two
# exact numbers compare exactly. docs/scoring.md states the model:
#
# ============  ==============================================================
# value         comparison form
# ============  ==============================================================
# None          None (NULL equals NULL only)
# bool          int 1 / 0 (SQLite has no boolean type; the adapter writes 1 / 0)
# int           int                                  -- exact
# Decimal       int when integral, else Decimal      -- exact
# Fraction      Fraction (other ``numbers.Rational``) -- exact
# float         float (NaN is one value, ``NAN``)    -- compared within a tolerance
# str           NFC text; ISO 8601 date/time text is read as a date/time (below)
# date          ``'YYYY-MM-DD'``
# datetime      ``'YYYY-MM-DD HH:MM:SS[.ffffff]'``: aware -> UTC; a naive one is taken as UTC;
#               the fraction only when non-zero, trailing zeros dropped
# time          ``'HH:MM:SS[.ffffff]'`` (an aware time is moved to UTC)
# timedelta     float seconds
# bytes         lowercase hex text (what the writer stores)
# UUID          canonical text
# other         ``str(value)`` (NFC), as the writer stores it
# ============  ==============================================================


#: The one NaN object of the comparison form: ``(NAN,) == (NAN,)`` and it hashes alike.
NAN = float("nan")

_ISO_DT = _re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"\s*(Z|[+-]\d{2}(?::?\d{2})?)?)?\Z"
)
_ISO_TIME = _re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?\Z")


def _frac_text(micro: int) -> str:
    return f".{micro:06d}".rstrip("0") if micro else ""


def _datetime_text(d: _dt.datetime) -> str:
    if d.tzinfo is not None and d.utcoffset() is not None:
        d = d.astimezone(_dt.UTC).replace(tzinfo=None)
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d} {d.hour:02d}:{d.minute:02d}:{d.second:02d}" + _frac_text(d.microsecond)


def _time_text(t: _dt.time) -> str:
    off = t.utcoffset() if t.tzinfo is not None else None
    if off:
        t = (_dt.datetime.combine(_dt.date(2000, 1, 1), t.replace(tzinfo=None)) - off).time()
    return f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}" + _frac_text(t.microsecond)


def _micro(frac: str | None) -> int:
    return int((frac or "").ljust(6, "0")[:6]) if frac else 0


def _temporal_text(s: str) -> str | None:
    """``s`` in the comparison form when it spells an ISO 8601 date, datetime or time."""
    m = _ISO_DT.match(s)
    if m is not None:
        y, mo, d, hh, mi, ss, frac, tz = m.groups()
        try:
            if hh is None:
                return _dt.date(int(y), int(mo), int(d)).isoformat()
            tzinfo = None
            if tz is not None:
                if tz == "Z":
                    tzinfo = _dt.UTC
                else:
                    sign = -1 if tz[0] == "-" else 1
                    digits = tz[1:].replace(":", "")
                    minutes = int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) > 2 else 0)
                    tzinfo = _dt.timezone(sign * _dt.timedelta(minutes=minutes))
            value = _dt.datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss or 0), _micro(frac), tzinfo)
        except (ValueError, OverflowError):
            return None
        return _datetime_text(value)
    m = _ISO_TIME.match(s)
    if m is not None:
        hh, mi, ss, frac = m.groups()
        try:
            return _time_text(_dt.time(int(hh), int(mi), int(ss), _micro(frac)))
        except ValueError:
            return None
    return None


def _text(s: str) -> str:
    if not s.isascii():
        s = _ud.normalize("NFC", s)
    elif 8 <= len(s) <= 40 and s[0].isdigit() and (s[2:3] == ":" or s[4:5] == "-"):
        return _temporal_text(s) or s
    return s


def canonical_value(value: Any) -> Any:
    """``value`` in result_match's comparison form (see the table above)."""
    t = type(value)
    if t is str:
        return _text(value)
    if t is int or value is None:
        return value
    if t is float:
        return NAN if value != value else value
    if t is bool:
        return int(value)
    if isinstance(value, Decimal):
        if value.is_nan():
            return NAN
        if value.is_infinite():
            return float(value)
        return int(value) if value == value.to_integral_value() else value
    if isinstance(value, str):  # a str subclass (str-mixin enums): its text, not its __str__
        return _text(str.__str__(value))
    if isinstance(value, _dt.datetime):
        return _datetime_text(value)
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, _dt.time):
        return _time_text(value)
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, _numbers.Integral):  # int subclasses, numpy integers
        return int(value)
    if isinstance(value, _Fraction):
        return int(value) if value.denominator == 1 else value
    if isinstance(value, _numbers.Real):  # float subclasses, numpy floats
        f = float(value)
        return NAN if _math.isnan(f) else f
    return _text(str(value))


def canonical_row(row: Any) -> tuple:
    """Every value of one row in the comparison form."""
    return tuple(map(canonical_value, row))


def is_exact_number(value: Any) -> bool:
    """An int, Decimal or Fraction of the comparison form (compared exactly, never with a tolerance)."""
    t = type(value)
    return t is int or t is Decimal or t is _Fraction
