"""Compile a :class:`~pytest_nl2sql.engine.plan.PlanModel` to SQL for one dialect.

The SQL is built as a sqlglot syntax tree and printed with every identifier quoted, so
case-preserved names (``"Customer"."Country"``) work in PostgreSQL as they do in SQLite and
DuckDB. Where the dialects disagree, the plan means the same thing everywhere, and the compiler
spells it per dialect:

* ``div`` is true division (``7 / 2`` is 3.5) and a division by zero gives NULL;
* ``like`` is case-insensitive (SQLite's rule; ``ILIKE`` in PostgreSQL and DuckDB);
* nulls sort as the smallest values unless a sort key says ``nulls: first|last``;
* ``year``/``month``/... and ``date_format`` read dates stored as text
  (``'2009-01-01 00:00:00'``) as well as real dates and timestamps;
* ``round`` rounds halves away from zero (``NUMERIC`` rounding in PostgreSQL);
* ``cast`` to ``date``/``timestamp`` gives ``DATE(x)``/``DATETIME(x)`` text in SQLite.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

from pytest_nl2sql.datasources.memo import STORE, Memo, canonical
from pytest_nl2sql.engine.dialects import DIALECTS, CompileError, sqlglot_dialect

if TYPE_CHECKING:
    from pytest_nl2sql.engine.plan import PlanModel

__all__ = ["DIALECTS", "CompileError", "compile_plan", "sqlglot_dialect"]

#: Each plan's SQL per dialect (or its compile error), in this process: the roles of a case
#: share one plan.
COMPILED: Memo[str] = Memo(4096, remember=(CompileError,))


def compile_plan(plan: PlanModel, dialect: str) -> str:
    """The SQL text of an ``answer`` plan in ``dialect`` (sqlite, postgresql/postgres, duckdb).

    The work is done by ``engine/plancompiler.py``, imported (with sqlglot) on the first call
    that compiles: a process that compiles no plan, such as a replay run, imports no sqlglot.
    A plan's SQL is remembered like a verdict (``datasources.memo``: in this process, and
    across runs in the verdict store, keyed on the plan's fields and the compiler's code), so
    a warm run of mode plans compiles nothing and imports no sqlglot either.
    """
    try:
        return COMPILED.get((dialect, plan), lambda: _remembered(plan, dialect))
    except TypeError:  # a plan holding an unhashable value: compiled, not remembered
        return _compile(plan, dialect)


def _remembered(plan: PlanModel, dialect: str) -> str:
    key = _store_key(plan, dialect)
    found = STORE.lookup(key)
    if type(found) is str:
        return found
    sql = _compile(plan, dialect)
    STORE.record(key, sql)
    return sql


def _store_key(plan: PlanModel, dialect: str) -> str | None:
    if STORE.folder is None:
        return None
    try:  # the plan as one digest: its canonical form is computed here, not cached by the store
        shape = json.dumps(canonical(plan), ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    return STORE.key("compile", dialect.lower(), hashlib.sha256(shape.encode("utf-8", "surrogatepass")).hexdigest())


def _compile(plan: PlanModel, dialect: str) -> str:
    from pytest_nl2sql.engine import plancompiler

    return plancompiler.compile_plan(plan, dialect)
