"""The one rule for values that come out of a database or go into a suite file.

Every result value is normalized once, here, so the same query gives equal rows on
SQLite, PostgreSQL and DuckDB, and so rows written to YAML read back equal:

============  ==========================================================
database      normalized
============  ==========================================================
None          None
bool          int (1 / 0): SQLite has no boolean type
int, float    unchanged
Decimal       int when integral (``Decimal('13')`` -> 13), else the Decimal
              itself (exact; the writer stores it as ``!decimal 12.34``)
date          ISO text ``'2009-01-01'``
datetime      ISO text with a space, ``'2009-01-01 00:00:00'`` (SQLite's
              own text form); microseconds only when non-zero; an aware
              datetime is converted to UTC first and written without offset
time          ISO text ``'13:45:00'``
list, tuple,  JSON text (``[1, 2]``, ``{"a": 1}``): PostgreSQL arrays, json / jsonb
dict
timedelta     float seconds
bytes         lowercase hex text
UUID          canonical text
anything else ``str(value)``
============  ==========================================================
"""

from __future__ import annotations

import datetime as _dt
import json as _json
import math as _math
import numbers as _numbers
import re as _re
import unicodedata as _ud
import uuid
from decimal import Decimal
from fractions import Fraction as _Fraction
from typing import Any

__all__ = ["NAN", "CellMap", "canonical_row", "json_value", "canonical_value", "is_exact_number", "normalize_row", "normalize_value"]


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
        if not value.is_finite():
            return float(value)
        if value == value.to_integral_value():
            return int(value)
        return value
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
    if isinstance(value, (list, tuple, dict)):  # a PostgreSQL array or JSON value: JSON text
        return _json_text(value)
    if isinstance(value, int):  # int subclasses (e.g. numpy-free enums)
        return int(value)
    if isinstance(value, float):
        return float(value)
    return str(value)


def _json_text(value: Any) -> str:
    def plain(v: Any) -> Any:
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        v = normalize_value(v)
        return float(v) if type(v) is Decimal else v

    return _json.dumps(plain(value), ensure_ascii=False, allow_nan=True)


def json_value(value: Any) -> Any:
    """``value`` in storage form, as JSON can hold it (an exact Decimal as a float: for
    display in a record only, never compared)."""
    value = normalize_value(value)
    if type(value) is Decimal:
        return float(value)
    return value


#: The types ``normalize_value`` returns as they are (by exact type).
_NORMAL_TYPES = frozenset({int, float, str, type(None)})


def normalize_row(row: Any) -> tuple:
    """Normalize every value of one result row (a tuple already normal is returned as it is)."""
    if type(row) is tuple:
        for v in row:
            if type(v) not in _NORMAL_TYPES:
                break
        else:
            return row
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
# str           NFC text; ISO 8601 date/time text is read as a date/time (below); a UUID
#               spelled in upper case is read in lower case; text that is a JSON array or
#               object (``[1, 2]``, ``{"a": 1}``) is read as that array / object
# date          ``'YYYY-MM-DD'``
# datetime      ``'YYYY-MM-DD HH:MM:SS[.ffffff]'``: aware -> UTC; a naive one is taken as UTC;
#               the fraction only when non-zero, trailing zeros dropped
# time          ``'HH:MM:SS[.ffffff]'`` (an aware time is moved to UTC)
# timedelta     float seconds
# bytes         lowercase hex text (what the writer stores)
# UUID          canonical text (lower case)
# list, tuple   an array: a tuple of its elements' comparison forms (compared by value)
# dict          a JSON object: ``CellMap`` of its items' comparison forms (key order ignored)
# other         ``str(value)`` (NFC), as the writer stores it
# ============  ==============================================================


#: The one NaN object of the comparison form: ``(NAN,) == (NAN,)`` and it hashes alike.
NAN = float("nan")

_ISO_DT = _re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?"
    r"(?:\s?(Z|[+-]\d{2}(?::?\d{2})?))?)?\Z"
)
_ISO_TIME = _re.compile(r"(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\Z")
_UUID = _re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\Z")


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
    """Microseconds of a fraction's digits; digits past the sixth round to the nearest
    microsecond, half to even (PostgreSQL's rounding of such input)."""
    if not frac:
        return 0
    if len(frac) <= 6:
        return int(frac.ljust(6, "0"))
    return int((Decimal("0." + frac) * 1_000_000).to_integral_value())  # ROUND_HALF_EVEN


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
            micro = _micro(frac)
            value = _dt.datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss or 0), 0, tzinfo)
            value += _dt.timedelta(microseconds=micro)  # 1,000,000 after rounding carries
        except (ValueError, OverflowError):
            return None
        return _datetime_text(value)
    m = _ISO_TIME.match(s)
    if m is not None:
        hh, mi, ss, frac = m.groups()
        try:
            micro = _micro(frac)
            if micro >= 1_000_000:
                return None
            return _time_text(_dt.time(int(hh), int(mi), int(ss or 0), micro))
        except ValueError:
            return None
    return None


class CellMap(frozenset):
    """A JSON object (a dict in a cell) in the comparison form: its (key, value) items."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in sorted(self, key=repr)) + "}"


def _element(value: Any) -> Any:
    """An array element or JSON member: its comparison form, a non-integral Decimal as a float
    (JSON text holds floats, so the two spellings of one array compare equal)."""
    v = canonical_value(value)
    return float(v) if type(v) is Decimal else v


def _array(value: Any) -> tuple:
    return tuple(map(_element, value))


def _object(value: Any) -> CellMap:
    return CellMap((str(k), _element(v)) for k, v in value.items())


def _json_cell(s: str) -> Any:
    try:
        v = _json.loads(s)
    except ValueError:
        return None
    if isinstance(v, list):
        return _array(v)
    if isinstance(v, dict):
        return _object(v)
    return None


def _text(s: str) -> Any:
    if not s.isascii():
        s = _ud.normalize("NFC", s)
        if s[:1] in "[{" and s[-1:] in "]}":
            j = _json_cell(s)
            return s if j is None else j
        return s
    c = s[:1]
    if c.isdigit():
        if 5 <= len(s) <= 40 and (s[2:3] == ":" or s[4:5] == "-"):
            return _temporal_text(s) or s
        if len(s) == 36 and s[8:9] == "-" and _UUID.match(s):
            return s.lower()
    elif c in "[{" and s[-1:] in "]}":
        j = _json_cell(s)
        return s if j is None else j
    elif len(s) == 36 and s[8:9] == "-" and _UUID.match(s):
        return s.lower()
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
    if isinstance(value, (list, tuple)):
        return _array(value)
    if isinstance(value, dict):
        return _object(value)
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
