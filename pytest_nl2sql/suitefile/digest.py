"""A SHA-256 over the gold content of a suite: what a reviewer signed off on.

It covers every case's id, question, SQL, rows, alternatives, outcomes, tables, columns and
plan -- not status, tags or layout -- so the same gold data gives the same digest whether it
was read from 0.6 files by the legacy loader or from the migrated v1 suite.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from pytest_nl2sql.safetext import plain
from pytest_nl2sql.suitefile.model import EvalCase

__all__ = ["case_digest", "digests_of", "gold_digest", "gold_digest_of", "remember", "role_digest"]


def _canonical(case: EvalCase) -> dict[str, Any]:
    return {
        "id": case.id,
        "question": case.question,
        "sql": case.sql,
        "rows": [dict(r) for r in case.rows] if case.rows is not None else None,
        "alt_sql": list(case.alt_sql),
        "alt_rows": [[dict(r) for r in rows] for rows in case.alt_rows],
        "outcome": {role: o.value for role, o in case.outcome.items()},
        "tables": list(case.tables),
        "columns": list(case.columns),
        "plan": case.plan,
    }


def _exact(value: Any) -> str:
    """An exact Decimal of a suite file (``!decimal 12.34``) as its own text."""
    if isinstance(value, Decimal):
        return f"!decimal {value}"
    raise TypeError(f"{type(value).__name__} is not a suite value")


def gold_digest(cases: Iterable[EvalCase]) -> str:
    """Hex SHA-256 of the cases' gold content, in file order."""
    h = hashlib.sha256()
    for case in cases:
        h.update(json.dumps(_canonical(case), sort_keys=True, ensure_ascii=False, default=_exact).encode())
        h.update(b"\n")
    return h.hexdigest()


def case_digest(case: EvalCase) -> str:
    """Hex SHA-256 of what one case asks and expects: ``gold_digest``'s content without the
    plan (in mode plans the plan stands in for the engine's answer: a changed plan is a change
    of the engine, which a comparison of runs must show, not set apart). Computed once per
    case (``_DIGESTS``)."""
    packed = _packed(case) if type(case) is EvalCase else None
    return packed[:_CASE_HEX] if packed is not None else _case_digest(case)


def _case_digest(case: EvalCase) -> str:
    content = {k: v for k, v in _canonical(case).items() if k != "plan"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False, default=_exact).encode()).hexdigest()


def role_digest(case: Any, role: str) -> str:
    """What an item (``case`` asked as ``role``) is judged against -- its expected outcome, gold
    SQL and rows -- hashed: ``report compare`` lists an item whose digest changed as "case
    changed", not as a flip (the record's ``gold_digest``)."""
    def rows(rs: Any) -> Any:
        return None if rs is None else [[_plain(v) for v in (r.values() if isinstance(r, Mapping) else r)] for r in rs]

    expected = case.outcome.get(role) if isinstance(getattr(case, "outcome", None), Mapping) else None
    content = {
        "expected": getattr(expected, "value", expected),
        "sql": case.sql,
        "rows": rows(case.rows),
        "alt_sql": list(getattr(case, "alt_sql", ()) or ()),
        "alt_rows": [rows(r) for r in getattr(case, "alt_rows", ()) or ()],
    }
    return hashlib.sha256(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()[:16]


#: Values ``plain`` returns as they are, by exact type (an int only while it is small).
_AS_THEY_ARE = frozenset({str, float, bool, type(None)})


def _plain(v: Any) -> Any:
    """``plain(v)``, without a call for the values of most rows (text, numbers, None)."""
    t = type(v)
    if t in _AS_THEY_ARE or (t is int and v.bit_length() <= 64):
        return v
    return plain(v)


def gold_digest_of(case: Any, role: str) -> str:
    """``role_digest(case, role)``, computed once per case: the roles of a case and the repeats
    of an item share the case object. Only a suite's ``EvalCase`` is remembered (frozen; an
    edited suite is read into new cases); anything else is hashed each time."""
    if type(case) is EvalCase:
        for i, named in enumerate(case.outcome):
            if named == role:
                packed = _packed(case)
                if packed is None:
                    break
                return _role_at(packed, i)
    return role_digest(case, role)  # a role the case does not name, a value no suite holds: not remembered


#: The length of a case digest and of a role's gold digest, in hex digits.
_CASE_HEX, _ROLE_HEX = 64, 16


def _role_at(packed: str, i: int) -> str:
    """The gold digest of the case's ``i``-th role in its packed digests (``_Digests``)."""
    at = _CASE_HEX + i * _ROLE_HEX
    return packed[at : at + _ROLE_HEX]


class _Digests(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a suite case that holds its digests, packed in one string (the case
    digest, then each role's gold digest in the order of ``case.outcome``): a few hundred bytes
    a case, where a run may hold 40,000 of them."""

    __slots__ = ("key", "packed")

    def __new__(cls, case: EvalCase, packed: str) -> _Digests:  # as weakref.KeyedRef: ref's own __new__ takes (object, callback)
        self = super().__new__(cls, case, _gone)
        self.key = id(case)
        self.packed = packed
        return self

    def __init__(self, case: EvalCase, packed: str) -> None:
        super().__init__(case, _gone)


def _gone(ref: _Digests) -> None:
    if _DIGESTS.get(ref.key) is ref:
        del _DIGESTS[ref.key]


#: The digests of the suite cases alive, by id(case); an entry goes when its case goes. A suite
#: read from its cache entry arrives with its digests (``remember``): a warm run hashes no case.
_DIGESTS: dict[int, _Digests] = {}


def _packed(case: EvalCase) -> str | None:
    """The case's digests, packed (``_Digests``); None for a case holding a value no suite file
    holds (one made in code: ``case_digest`` refuses it, as it always did)."""
    found = _DIGESTS.get(id(case))
    if found is None or found() is not case:
        try:
            digest = _case_digest(case)
        except (TypeError, ValueError):
            return None
        found = _DIGESTS[id(case)] = _Digests(case, digest + "".join(role_digest(case, r) for r in case.outcome))
    return found.packed


def digests_of(case: EvalCase) -> tuple[str, dict[str, str]]:
    """The case's ``case_digest`` and the ``gold_digest_of`` each role it names (what a suite
    cache entry keeps of it); TypeError for a case holding a value no suite file holds."""
    packed = _packed(case)
    if packed is None:
        raise TypeError("a case value no suite file holds")
    return packed[:_CASE_HEX], {r: _role_at(packed, i) for i, r in enumerate(case.outcome)}


_HEX = frozenset("0123456789abcdef")


def remember(case: EvalCase, digest: str, by_role: Mapping[str, str]) -> None:
    """Take ``digest`` and ``by_role`` as the case's digests (``digests_of``, computed when its
    suite cache entry was written from the same content). Raises ValueError when they are not
    digests of the case's shape (one for each role it names)."""
    parts = [digest, *(by_role.get(r) for r in case.outcome)]
    if len(by_role) != len(case.outcome) or any(type(p) is not str for p in parts):
        raise ValueError("not the case's digests")
    packed = "".join(parts)  # type: ignore[arg-type]
    if len(digest) != _CASE_HEX or len(packed) != _CASE_HEX + _ROLE_HEX * len(case.outcome) or not _HEX.issuperset(packed):
        raise ValueError("not the case's digests")
    _DIGESTS[id(case)] = _Digests(case, packed)
