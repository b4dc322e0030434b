"""The reference engine: plans, their SQL, and the checks a query passes before it runs.

* :mod:`.plan` - :class:`PlanModel`, the structured query plan (hand-written or LLM-emitted);
* :mod:`.compiler` - :func:`compile_plan`, a plan to SQL for SQLite, PostgreSQL or DuckDB;
* :mod:`.validator` - :func:`validate_sql`, SQL against the schema and a role's policy;
* :mod:`.resolver` - :func:`resolve`, answerable / not answerable / needs clarification.
"""

from typing import TYPE_CHECKING, Any

# Loaded on first use (PEP 562): importing a light submodule (``engine.protocol``) must not
# pull sqlglot and the validator into a process that never plans or validates (the xdist
# controller, a report merge).
_WHERE = {
    "CompileError": "compiler", "compile_plan": "compiler",
    "PlanError": "plan", "PlanModel": "plan", "plan_json_schema": "plan",
    "QUESTION_NOT_ANSWERABLE": "resolver", "Resolution": "resolver", "resolve": "resolver",
    "REFUSAL_MESSAGE": "validator", "AccessPolicy": "validator", "Validation": "validator",
    "validate_sql": "validator",
}  # fmt: skip

if TYPE_CHECKING:
    from pytest_nl2sql.engine.compiler import CompileError, compile_plan
    from pytest_nl2sql.engine.plan import PlanError, PlanModel, plan_json_schema
    from pytest_nl2sql.engine.resolver import QUESTION_NOT_ANSWERABLE, Resolution, resolve
    from pytest_nl2sql.engine.validator import (
        REFUSAL_MESSAGE,
        AccessPolicy,
        Validation,
        validate_sql,
    )


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


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
