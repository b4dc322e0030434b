"""Decide whether a plan answers its question, cannot, or needs the question narrowed.

A plan is not answerable when it says so, or when it names a table or column the datasource
does not have (checked by compiling it and resolving the SQL against the schema, so aliases,
subqueries and CTEs are understood the same way the validator understands them). A ``clarify``
plan carries the question to ask back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import attrs

from pytest_nl2sql.engine.compiler import compile_plan
from pytest_nl2sql.engine.plan import PlanModel
from pytest_nl2sql.engine.validator import UNRESTRICTED, validate_sql

__all__ = ["QUESTION_NOT_ANSWERABLE", "Resolution", "resolve"]

#: The code of every not-answerable resolution.
QUESTION_NOT_ANSWERABLE = "QUESTION_NOT_ANSWERABLE"

ResolutionStatus = Literal["answer", "not_answerable", "needs_clarification"]


@attrs.frozen
class Resolution:
    """The resolver's verdict. ``code`` is :data:`QUESTION_NOT_ANSWERABLE` when not answerable."""

    status: ResolutionStatus
    code: str | None = None
    message: str = ""
    #: the plan's SQL in the dialect resolved for (compiled once, not again); not part of the
    #: verdict, so two resolutions are equal by status, code and message
    sql: str | None = attrs.field(default=None, eq=False)


def resolve(
    plan: PlanModel, schema: Mapping[str, Sequence[str]], *, dialect: str = "sqlite"
) -> Resolution:
    """Resolve ``plan`` against ``schema`` (table -> column names, as the datasource has them).

    ``dialect`` only chooses which SQL the check compiles; a plan means the same in each.
    Raises :class:`~pytest_nl2sql.engine.compiler.CompileError` for a plan whose raw SQL
    escape does not parse.
    """
    if plan.kind == "not_answerable":
        return Resolution(
            "not_answerable", QUESTION_NOT_ANSWERABLE,
            plan.reason or "The question cannot be answered from the available data.",
        )
    if plan.kind == "clarify":
        return Resolution("needs_clarification", None, plan.clarification or "")
    sql = compile_plan(plan, dialect)
    # what exists, not who may see it: resolved as a role that may read everything would be
    check = validate_sql(
        sql, dialect=dialect, datasource=plan.datasource or "", schema=schema, policy=UNRESTRICTED
    )
    if check.status == "unknown_reference":
        return Resolution(
            "not_answerable", QUESTION_NOT_ANSWERABLE,
            "The question needs data that does not exist here: " + ", ".join(check.unknown),
            sql,
        )
    return Resolution("answer", sql=sql)
