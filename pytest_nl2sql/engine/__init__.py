"""The reference engine: plans, their SQL, and the checks a query passes before it runs.

* :mod:`.plan` - :class:`PlanModel`, the structured query plan (hand-written or LLM-emitted);
* :mod:`.compiler` - :func:`compile_plan`, a plan to SQL for SQLite, PostgreSQL or DuckDB;
* :mod:`.validator` - :func:`validate_sql`, SQL against the schema and a role's policy;
* :mod:`.resolver` - :func:`resolve`, answerable / not answerable / needs clarification.
"""

from pytest_nl2sql.engine.compiler import CompileError, compile_plan
from pytest_nl2sql.engine.plan import PlanError, PlanModel, plan_json_schema
from pytest_nl2sql.engine.resolver import QUESTION_NOT_ANSWERABLE, Resolution, resolve
from pytest_nl2sql.engine.validator import REFUSAL_MESSAGE, AccessPolicy, Validation, validate_sql

__all__ = [
    "QUESTION_NOT_ANSWERABLE",
    "REFUSAL_MESSAGE",
    "AccessPolicy",
    "CompileError",
    "PlanError",
    "PlanModel",
    "Resolution",
    "Validation",
    "compile_plan",
    "plan_json_schema",
    "resolve",
    "validate_sql",
]
