"""SQLite's double-quoted strings in a predicted query (``WHERE city = "Paris"``), made
single-quoted for the replay engine (``engine/replay.py``): :func:`sqlite_string_fallback`.

Its answer depends only on the SQL text and the schema's column names, so it is remembered in
the process (:data:`FALLBACKS`) and across runs in the verdict store
(:data:`~pytest_nl2sql.datasources.memo.STORE`, kind ``"sqlite-fallback"``, keyed by the SQL and
a digest of the names); sqlglot is imported only when an answer must be computed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from pytest_nl2sql.datasources.memo import MISSING, STORE, Memo, text_key
from pytest_nl2sql.engine.validatorbase import ROWID_NAMES, FrozenSchema

__all__ = ["FALLBACKS", "sqlite_string_fallback"]


def sqlite_string_fallback(sql: str, columns: Iterable[str] | FrozenSchema) -> str | None:
    """``sql`` with SQLite's double-quoted strings made single-quoted; None when nothing changes.

    SQLite reads ``"JetBlue Airways"`` as a string when no column has that name (most of
    Spider's gold SQL relies on it); sqlglot reads it as a column. A double-quoted, unqualified
    name is made a string literal here only when SQLite could not resolve it to anything that
    holds data: never a column of the schema (``columns``: every column of every table, or the
    datasource's ``FrozenSchema``), a
    pseudo-column (``rowid``, ``oid``, ``_rowid_``), a select-list alias, a table or CTE alias
    or a CTE's column name. The change is made in the text itself (only those quoted tokens are
    rewritten), so the rest of the query is exactly as predicted.

    The engine validates *and runs* the returned SQL, never the original: what runs is what
    was checked, so a name the fallback turned into a string cannot read data behind the
    validator's back.
    """
    names, digest = _names(columns)
    return FALLBACKS.get((text_key(sql), digest), lambda: _remembered(sql, names, digest))


#: This process's answers, by (the SQL's digest, the digest of the column names).
FALLBACKS: Memo[str | None] = Memo(8192)
#: The lowercase column names of each ``FrozenSchema`` (by its key) and their digest.
_NAMES: dict[Any, tuple[list[str], str]] = {}


def _names(columns: Iterable[str] | FrozenSchema) -> tuple[list[str], str]:
    """The sorted, lowercase, distinct column names (the answer depends on no more of the
    schema than this) and a sha256 of them: once per ``FrozenSchema``, as the engines keep
    their schemas (a wide schema's names were sorted and written out on every call)."""
    if type(columns) is FrozenSchema:
        found = _NAMES.get(columns.key)
        if found is None:
            if len(_NAMES) >= 256:
                _NAMES.clear()
            found = _NAMES[columns.key] = _names([c for cols in columns.values() for c in cols])
        return found
    names = sorted({c.lower() for c in columns})  # type: ignore[union-attr]
    raw = json.dumps(names, ensure_ascii=False, separators=(",", ":"))
    return names, hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def _remembered(sql: str, names: list[str], digest: str) -> str | None:
    """The answer an earlier run gave (the verdict store), or computed now and stored."""
    key = STORE.key("sqlite-fallback", sql, digest)
    found = STORE.lookup(key)
    if found is not MISSING and (found is None or type(found) is str):
        return found  # type: ignore[no-any-return]
    fixed = _fallback(sql, names)
    STORE.record(key, fixed)
    return fixed


def _fallback(sql: str, columns: list[str]) -> str | None:
    """:func:`sqlite_string_fallback`, computed (``columns``: lowercase)."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="sqlite")
    except (sqlglot.errors.SqlglotError, RecursionError):
        return None
    if tree is None:
        return None
    known = set(columns) | set(ROWID_NAMES)
    known |= {a.alias.lower() for a in tree.find_all(exp.Alias) if a.alias}
    for alias in tree.find_all(exp.TableAlias):
        if alias.name:
            known.add(alias.name.lower())
        known |= {c.name.lower() for c in alias.columns}
    known |= {t.name.lower() for t in tree.find_all(exp.Table) if t.name}
    spans: list[tuple[int, int, str]] = []
    for col in tree.find_all(exp.Column):
        ident = col.this
        if col.table or not isinstance(ident, exp.Identifier) or not ident.quoted:
            continue
        if ident.name.lower() in known:
            continue
        start, end = ident.meta.get("start"), ident.meta.get("end")
        if not isinstance(start, int) or not isinstance(end, int) or sql[start:start + 1] != '"' \
                or sql[end:end + 1] != '"':
            return None  # cannot tell where the token is: no fallback rather than a guess
        spans.append((start, end, ident.name))
    if not spans:
        return None
    out = sql
    for start, end, name in sorted(spans, reverse=True):
        out = out[:start] + "'" + name.replace("'", "''") + "'" + out[end + 1:]
    return out
