"""Suite YAML as text: how one value, one row and one new case or suite file is written.

Values are written by one rule: int, float, text, true/false, null; other values are first
normalized by ``values.normalize_value`` (Decimal, dates, bytes, UUID); a non-integral Decimal
is written ``!decimal 12.34`` and read back as that Decimal (exact). ``dump_suite(cases,
header)`` writes a new suite file (drafts, migrations) in the layout the shipped suites use,
which the writer's in-place updates then keep.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from pytest_nl2sql.suitefile.model import EvalCase, Kind, Origin
from pytest_nl2sql.suitefile.values import normalize_value
from pytest_nl2sql.suitefile.yamlnodes import DECIMAL_TAG, T_STR, resolve_plain

__all__ = [
    "alt_block", "data_block", "dump_case", "dump_suite", "format_block_text", "format_row", "format_scalar", "format_text",
    "reviewed_item", "rows_block",
]

Rows = Sequence[Mapping[str, Any]]


# -- scalars ---------------------------------------------------------------------------

_PLAIN = re.compile(r"\w[\w .\-/()+'&$%@=;!~^<>|]*\Z")
# Plain words that other YAML readers (YAML 1.1: yes/no/on/off, dates) would not read as text.
_YAML11 = re.compile(
    r"(?:y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF|[0-9][0-9_:.eE+\-]*|\.[0-9].*|[<=]+)\Z"
)
# everything but printable characters, and the line separators libyaml folds (U+2028/9)
_ESCAPE = re.compile("[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff]")


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    return {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}.get(c) or f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"


def _quote(text: str) -> str:
    body = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + _ESCAPE.sub(_escape_char, body) + '"'


_TEXT_CACHE: dict[str, str] = {}


def format_text(text: str) -> str:
    """Text as a flow-context YAML scalar: plain when it reads back as the same text."""
    cached = _TEXT_CACHE.get(text)
    if cached is not None:
        return cached
    if (
        _PLAIN.match(text)
        and not text.endswith(" ")
        and "  " not in text
        and resolve_plain(text) is T_STR
        and not _YAML11.match(text)
    ):
        out = text
    else:
        out = _quote(text)
    if len(_TEXT_CACHE) < 100_000:
        _TEXT_CACHE[text] = out
    return out


_PLAIN_BLOCK = re.compile(r"\w[\w .\-/()+'&$%@=;!~^<>|?,]*\Z")


def format_block_text(text: str) -> str:
    """Text as a block-context value (``key: value`` on its own line), where '?' and ','
    may stay plain (``question: How many tracks?``)."""
    if (
        _PLAIN_BLOCK.match(text)
        and not text.endswith(" ")
        and "  " not in text
        and resolve_plain(text) is T_STR
        and not _YAML11.match(text)
    ):
        return text
    return format_text(text)


def format_scalar(value: Any) -> str:
    """One value as a YAML flow scalar, by the module's rule."""
    if value is None:
        return "null"
    t = type(value)
    if t is str:
        return format_text(value)
    if t is bool:
        return "true" if value else "false"
    if t is int:
        return str(value)
    if t is float:
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exp = text.split("e")
            text = f"{mantissa}.0e{exp}"
        return text
    value = normalize_value(value)
    if type(value) is Decimal:  # exact: read back as the same Decimal
        return f"{DECIMAL_TAG} {value}"
    return format_scalar(value)


def format_row(row: Mapping[str, Any]) -> str:
    return "{" + ", ".join(f"{format_text(str(k))}: {format_scalar(v)}" for k, v in row.items()) + "}"


def rows_block(rows: Rows, col: int, nl: str) -> list[str]:
    pad = " " * col
    return [f"{pad}- {format_row(r)}" for r in rows]

def alt_block(alts: Sequence[Rows], col: int, nl: str) -> list[str]:
    pad = " " * col
    lines: list[str] = []
    for rows in alts:
        if not rows:
            lines.append(f"{pad}- []")
            continue
        for i, r in enumerate(rows):
            lines.append(f"{pad}{'- - ' if i == 0 else '  - '}{format_row(r)}")
    return lines


# -- new files -------------------------------------------------------------------------


def _flow_list(items: Iterable[Any]) -> str:
    return "[" + ", ".join(format_scalar(i) for i in items) + "]"


def _block_text(key: str, text: str, pad: str) -> str:
    body = text[:-1] if text.endswith("\n") else text
    simple = (
        body
        and not body[0].isspace()
        and not _ESCAPE.search(body.replace("\n", ""))
        and all(line == line.rstrip() for line in body.split("\n"))
        and not body.endswith("\n")
    )
    if not simple:
        return f"{pad}{key}: {_quote(text)}"
    chomp = "" if text.endswith("\n") else "-"
    inner = pad + "  "
    lines = [(inner + line) if line else "" for line in body.split("\n")]
    return f"{pad}{key}: |{chomp}\n" + "\n".join(lines)


def data_block(value: Any, pad: str) -> list[str]:
    """Free-form data (a plan) as block YAML; lists of scalars and small maps stay inline."""
    lines: list[str] = []
    if isinstance(value, Mapping):
        for k, v in value.items():
            key = format_text(str(k))
            if isinstance(v, Mapping) and v and not _is_flat(v):
                lines.append(f"{pad}{key}:")
                lines.extend(data_block(v, pad + "  "))
            elif isinstance(v, list) and v and not all(_is_flat(i) for i in v):
                lines.append(f"{pad}{key}:")
                lines.extend(data_block(v, pad))
            else:
                lines.append(f"{pad}{key}: {_inline(v)}")
        return lines
    for item in value:
        sub = data_block(item, pad + "  ") if isinstance(item, (Mapping, list)) and not _is_flat(item) else None
        if sub:
            lines.append(f"{pad}- {sub[0].lstrip()}")
            lines.extend(sub[1:])
        else:
            lines.append(f"{pad}- {_inline(item)}")
    return lines


def _is_flat(value: Any) -> bool:
    if isinstance(value, Mapping):
        return len(value) <= 4 and all(not isinstance(v, (Mapping, list)) for v in value.values())
    if isinstance(value, list):
        return all(not isinstance(v, (Mapping, list)) for v in value)
    return True


def _inline(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{format_text(str(k))}: {_inline(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return format_scalar(value)


def dump_case(case: EvalCase) -> str:
    """One case as text, in the shipped suites' layout (``- id: ...`` at column 0)."""
    pad = "  "
    out = [f"- id: {format_text(case.id)}", f"{pad}question: {format_block_text(case.question)}"]
    out.append(f"{pad}datasources: {_flow_list(case.datasources)}")
    out.append(f"{pad}status: {case.status.value}")
    if case.kind is not Kind.ANSWER:
        out.append(f"{pad}kind: {case.kind.value}")
    out.append(f"{pad}origin: {(case.origin or Origin.HAND).value}")
    if case.difficulty is not None:
        out.append(f"{pad}difficulty: {case.difficulty.value}")
    if case.tags:
        out.append(f"{pad}tags: {_flow_list(case.tags)}")
    if case.paraphrase_group is not None:
        out.append(f"{pad}paraphrase_group: {format_block_text(case.paraphrase_group)}")
    outcome = ", ".join(f"{format_text(role)}: {o.value}" for role, o in case.outcome.items())
    out.append(f"{pad}outcome: {{{outcome}}}")
    if case.tables:
        out.append(f"{pad}tables: {_flow_list(case.tables)}")
    if case.columns:
        out.append(f"{pad}columns: {_flow_list(case.columns)}")
    if case.kind is Kind.ANSWER:
        out.append(f"{pad}order_matters: {'true' if case.order_matters else 'false'}")
    if case.match:
        out.append(f"{pad}match: {_inline(dict(case.match))}")
    if case.sql is not None:
        out.append(_block_text("sql", case.sql, pad))
    elif case.kind is Kind.ANSWER:
        out.append(f"{pad}sql: null")
    if case.rows is not None:
        if case.rows:
            out.append(f"{pad}rows:")
            out.extend(rows_block(case.rows, len(pad), "\n"))
        else:
            out.append(f"{pad}rows: []")
    if case.alt_sql:
        out.append(f"{pad}alt_sql:")
        for sql in case.alt_sql:
            block = _block_text("x", sql, pad)
            out.append(f"{pad}- " + block[len(pad) + 3 :].replace("\n" + pad + "  ", "\n" + pad + "    "))
    if case.alt_rows:
        out.append(f"{pad}alt_rows:")
        out.extend(alt_block(case.alt_rows, len(pad), "\n"))
    if case.plan:
        out.append(f"{pad}plan:")
        out.extend(data_block(dict(case.plan), pad + "  "))
    if case.reviewed:
        out.append(f"{pad}reviewed:")
        out.extend(reviewed_item({"sql": r.sql, "verdict": r.verdict, "note": r.note}, pad + "  ", "\n") for r in case.reviewed)
    out.extend(_clarification_lines(case, pad))
    return "\n".join(out) + "\n"


def reviewed_item(entry: Mapping[str, Any], pad: str, nl: str) -> str:
    """One ``reviewed`` list item (``sql``, ``verdict``, ``note``) as block YAML lines at ``pad``:
    the same bytes whether a new suite is dumped or ``eval audit --mark-reviewed`` adds it."""
    lines = [f"{pad}  {format_text(k)}: {format_text(str(v))}" for k, v in entry.items() if v is not None]
    return nl.join([f"{pad}- {lines[0].lstrip()}", *lines[1:]])


def _clarification_lines(case: EvalCase, pad: str) -> list[str]:
    """A clarify case's ``clarifications``, ``default`` and ``turns`` (issue 24)."""
    out: list[str] = []
    if case.clarifications:
        out.append(f"{pad}clarifications:")
        inner = pad + "  "
        for c in case.clarifications:
            when = c.when[0] if len(c.when) == 1 else list(c.when)
            lines = [f"{inner}about: {format_text(c.about)}", f"{inner}when: {_inline(when)}", f"{inner}reply: {format_block_text(c.reply)}"]
            if c.sql is not None:
                lines.append(_block_text("sql", c.sql, inner))
            if c.rows is not None:
                lines.append(f"{inner}rows:" if c.rows else f"{inner}rows: []")
                lines.extend(rows_block(c.rows, len(inner), "\n") if c.rows else [])
            if c.plan:
                lines.append(f"{inner}plan:")
                lines.extend(data_block(dict(c.plan), inner + "  "))
            out.append(f"{pad}- " + lines[0][len(inner):])
            out.extend(lines[1:])
    if case.default is not None:
        out.append(f"{pad}default: {format_text(case.default)}")
    if case.turns != 1:
        out.append(f"{pad}turns: {case.turns}")
    return out


def dump_suite(cases: Iterable[EvalCase], header: str = "", match: Mapping[str, Any] | None = None) -> str:
    """A whole new suite file as text."""
    lines: list[str] = []
    if header:
        for line in header.strip("\r\n").splitlines():
            line = _ESCAPE.sub("", line)
            lines.append(line if line.startswith("#") else f"# {line}".rstrip())
    lines.append("version: 1")
    if match:
        lines.append(f"match: {_inline(dict(match))}")
    body = [dump_case(c) for c in cases]
    if not body:
        lines.append("cases: []")
        return "\n".join(lines) + "\n"
    lines.append("cases:")
    return "\n".join(lines) + "\n" + "\n".join(body)
