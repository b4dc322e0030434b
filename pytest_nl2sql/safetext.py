"""Text from outside the plugin, made safe to show: on a terminal line, in the GitHub step
summary (Markdown), in a CI log, or as a JSON value.

Whatever a database, an engine, an LLM, a suite file or a report file says passes through here
before the plugin prints it (docs/security.md#output-hygiene):

* ``line_safe``: control characters (ESC, BEL, carriage return, bidi overrides, ...) are shown
  escaped (``\\x1b``), and no line starts with ``::`` (after spaces) -- a GitHub Actions
  workflow command -- unless the plugin wrote it: such a line gets a backslash before it.
* ``one_line``: the same, on one line (newlines shown as spaces).
* ``md_cell``: one line, Markdown and HTML characters escaped, for a table cell.
* ``shown`` / ``plain``: a value's ``repr`` / JSON form, with integers past Python's digit
  limit (``sys.set_int_max_str_digits``) said by their size instead of raising ValueError.

The lowest stage: it imports nothing of the package, so every stage may use it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_INT_DIGITS", "line_safe", "md_cell", "one_line", "plain", "shown"]

#: Integers with more digits are shown by their size (Python's own default limit is 4,300).
MAX_INT_DIGITS = 4000
_LOG10_2 = 0.30102999566398120

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")
_COMMAND = re.compile(r"^([ \t]*)(::)", re.M)


def _escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def line_safe(text: Any) -> str:
    """``text`` with control characters escaped and no line starting with a workflow command."""
    s = "" if text is None else str(text)
    s = s.replace("\r\n", "\n")
    s = _CONTROL.sub(_escape, s)
    return _COMMAND.sub(lambda m: m.group(1) + "\\" + m.group(2), s)


def one_line(text: Any) -> str:
    """``line_safe`` on one line: runs of white space (newlines too) become one space."""
    return line_safe(" ".join(("" if text is None else str(text)).split()))


_MD = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def md_cell(text: Any) -> str:
    """One line for a Markdown table cell: Markdown and HTML characters escaped."""
    return _MD.sub(r"\\\1", one_line(text))


def _big(v: Any) -> str | None:
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() * _LOG10_2 > MAX_INT_DIGITS:
        digits = int(v.bit_length() * _LOG10_2) + 1
        return f"<{'-' if v < 0 else ''}integer of about {digits} digits>"
    return None


def shown(v: Any) -> str:
    """``repr(v)``, safe on one line; a huge integer is said by its size."""
    big = _big(v)
    if big is not None:
        return big
    try:
        text = repr(v)
    except ValueError:  # a value whose repr holds a huge integer
        text = f"<{type(v).__name__}>"
    return one_line(text)


def plain(v: Any) -> Any:
    """A JSON-ready value: None, bool, int, float and str as they are (a huge integer as a
    string saying its size), anything else as its ``str``."""
    big = _big(v)
    if big is not None:
        return big
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    try:
        return str(v)
    except ValueError:
        return f"<{type(v).__name__}>"

