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
    case (``_memo``)."""
    if type(case) is not EvalCase:
        return _case_digest(case)
    memo = _memo(case)
    digest = memo.get(None)
    if digest is None:
        digest = memo[None] = _case_digest(case)
    return digest


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
    """``role_digest(case, role)``, computed once per case and role: the roles of a case and
    the repeats of an item share the case object. Only a suite's ``EvalCase`` is remembered
    (frozen; an edited suite is read into new cases); anything else is hashed each time."""
    if type(case) is not EvalCase:
        return role_digest(case, role)
    memo = _memo(case)
    digest = memo.get(role)
    if digest is None:
        digest = memo[role] = role_digest(case, role)
    return digest


#: The digests of the suite cases alive: id(case) -> (a weak reference to the case, {role:
#: its ``role_digest``, None: the ``case_digest``}); an entry goes when its case goes. A
#: suite read from its cache entry arrives with its digests (``remember``): a warm run
#: hashes no case.
_DIGESTS: dict[int, tuple[weakref.ref[Any], dict[str | None, str]]] = {}


def _memo(case: EvalCase) -> dict[str | None, str]:
    key = id(case)
    found = _DIGESTS.get(key)
    if found is None or found[0]() is not case:
        found = (weakref.ref(case, lambda _ref, key=key: _DIGESTS.pop(key, None)), {})
        _DIGESTS[key] = found
    return found[1]


def digests_of(case: EvalCase) -> tuple[str, dict[str, str]]:
    """The case's ``case_digest`` and the ``gold_digest_of`` each role it names (what a suite
    cache entry keeps of it)."""
    return case_digest(case), {role: gold_digest_of(case, role) for role in case.outcome}


def remember(case: EvalCase, digest: str, by_role: Mapping[str, str]) -> None:
    """Take ``digest`` and ``by_role`` as the case's digests (``digests_of``, computed when
    its suite cache entry was written from the same content)."""
    memo = _memo(case)
    memo.update(by_role)
    memo[None] = digest
