"""A SHA-256 over the gold content of a suite: what a reviewer signed off on.

It covers every case's id, question, SQL, rows, alternatives, outcomes, tables, columns and
plan -- not status, tags or layout -- so the same gold data gives the same digest whether it
was read from 0.6 files by the legacy loader or from the migrated v1 suite.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from pytest_nl2sql.suitefile.model import EvalCase

__all__ = ["case_digest", "gold_digest"]


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
    of the engine, which a comparison of runs must show, not set apart)."""
    content = {k: v for k, v in _canonical(case).items() if k != "plan"}
    return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False, default=_exact).encode()).hexdigest()
