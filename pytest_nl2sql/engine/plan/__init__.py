"""PlanModel: a structured, dialect-neutral query plan, written as plain data.

A suite case may carry a hand-written ``plan`` (YAML) that mode ``plans`` serves through a
fake LLM; in mode ``full`` an LLM emits the same structure through JSON-schema structured
output (:func:`plan_json_schema`). :func:`PlanModel.from_dict` checks the data strictly and
names the place of every problem (``plan.select[2].expr: unknown function 'cnt' ...``);
:meth:`PlanModel.to_dict` writes the canonical (shortest) form back, so
``PlanModel.from_dict(p.to_dict()) == p``. The format is documented in ``docs/plans.md``.

Expressions, in short:

* a string is a column reference: ``"Country"``, ``"Customer.Country"``, ``"c.Country"``,
  ``"*"`` or ``"c.*"``;
* a number, ``true``/``false`` is a literal; text (and ``null``) is ``{value: ...}``;
* any other expression is a one-key mapping naming a function:
  ``{count: "*"}``, ``{eq: [c.Country, {value: USA}]}``, ``{rank: []}``;
* a few constructs take named parts: ``in``, ``case``, ``over``, ``cast``,
  ``date_format``, ``query`` (scalar subquery), ``exists`` and ``sql`` (raw escape).
"""


from pytest_nl2sql.engine.plan.dump import dump_expr
from pytest_nl2sql.engine.plan.model import PlanModel
from pytest_nl2sql.engine.plan.nodes import (
    CTE,
    Call,
    Case,
    Cast,
    Column,
    DateFormat,
    DerivedTable,
    Exists,
    Expr,
    InList,
    InQuery,
    Join,
    Literal,
    OrderItem,
    Query,
    RawSQL,
    SelectItem,
    Source,
    Subquery,
    Table,
    When,
    Window,
)
from pytest_nl2sql.engine.plan.schema import plan_json_schema
from pytest_nl2sql.engine.plan.vocabulary import (
    CAST_TYPES,
    DATE_FORMAT_CODES,
    FUNCTIONS,
    JOIN_TYPES,
    KINDS,
    SPECIAL_FORMS,
    FunctionSpec,
    PlanError,
)

__all__ = [
    "CAST_TYPES",
    "CTE",
    "FUNCTIONS",
    "JOIN_TYPES",
    "KINDS",
    "Case",
    "Cast",
    "Column",
    "DateFormat",
    "DerivedTable",
    "Exists",
    "Expr",
    "FunctionSpec",
    "InList",
    "InQuery",
    "Join",
    "Literal",
    "OrderItem",
    "PlanError",
    "PlanModel",
    "Query",
    "RawSQL",
    "SelectItem",
    "Source",
    "Subquery",
    "Table",
    "When",
    "Window",
    "Call",
    "DATE_FORMAT_CODES",
    "SPECIAL_FORMS",
    "dump_expr",
    "plan_json_schema",
]
