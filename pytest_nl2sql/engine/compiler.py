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

from typing import TYPE_CHECKING

from pytest_nl2sql.engine.dialects import DIALECTS, CompileError, sqlglot_dialect

if TYPE_CHECKING:
    from pytest_nl2sql.engine.plan import PlanModel

__all__ = ["DIALECTS", "CompileError", "compile_plan", "sqlglot_dialect"]


def compile_plan(plan: PlanModel, dialect: str) -> str:
    """The SQL text of an ``answer`` plan in ``dialect`` (sqlite, postgresql/postgres, duckdb).

    The work is done by ``engine/plancompiler.py``, imported (with sqlglot) on the first call:
    a process that compiles no plan, such as a replay run, imports no sqlglot.
    """
    from pytest_nl2sql.engine import plancompiler

    return plancompiler.compile_plan(plan, dialect)
