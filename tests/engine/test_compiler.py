"""compile_plan: every example plan gives the same rows on SQLite and DuckDB."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlglot
from ruamel.yaml import YAML

from pytest_nl2sql.engine import CompileError, PlanModel, compile_plan
from tests.engine.examples import EXAMPLES, NON_ANSWERS, Example
from tests.engine.rows import same_rows

Run = Callable[[str, str], list[tuple[Any, ...]]]


def plan(data: dict[str, Any]) -> PlanModel:
    return PlanModel.from_dict(data)


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_example_plan_returns_its_rows(example: Example, dialect: str, run: Run) -> None:
    sql = compile_plan(PlanModel.from_dict(example.data()), dialect)
    rows = run(dialect, sql)
    assert same_rows(rows, example.rows, ordered=example.ordered), (
        f"{example.id} on {dialect}\nSQL: {sql}\ngot:      {rows}\nexpected: {example.rows}"
    )


@pytest.mark.parametrize("dialect", ["postgresql", "postgres"])
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_postgresql_sql_parses_back(example: Example, dialect: str) -> None:
    sql = compile_plan(PlanModel.from_dict(example.data()), dialect)
    tree = sqlglot.parse_one(sql, read="postgres")
    assert tree.sql(dialect="postgres") == sql


def test_identifiers_are_quoted_so_camel_case_survives_postgresql() -> None:
    sql = compile_plan(plan({"from": {"table": "Customer", "alias": "c"},
                             "select": ["c.Country", {"expr": {"count": "*"}, "alias": "nCustomers"}],
                             "group_by": ["c.Country"]}), "postgresql")
    assert sql == (
        'SELECT "c"."Country", COUNT(*) AS "nCustomers" FROM "Customer" AS "c" GROUP BY "c"."Country"'
    )


def test_year_reads_text_dates_in_sqlite_and_timestamps_elsewhere() -> None:
    p = plan({"from": "Invoice", "select": [{"year": "InvoiceDate"}]})
    assert "STRFTIME('%Y', \"InvoiceDate\")" in compile_plan(p, "sqlite")
    for dialect in ("postgresql", "duckdb"):
        assert 'EXTRACT(YEAR FROM CAST("InvoiceDate" AS TIMESTAMP))' in compile_plan(p, dialect)


def test_date_format_becomes_to_char_in_postgresql() -> None:
    p = plan({"from": "Invoice",
              "select": [{"date_format": {"expr": "InvoiceDate", "format": "%Y-%m week"}}]})
    assert "TO_CHAR(CAST(\"InvoiceDate\" AS TIMESTAMP), 'YYYY-MM\" week\"')" in compile_plan(
        p, "postgresql"
    )


def test_like_is_case_insensitive_in_every_dialect() -> None:
    p = plan({"from": "Track", "select": ["Name"],
              "where": {"like": ["Name", {"value": "%rock%"}]}})
    assert " LIKE '%rock%'" in compile_plan(p, "sqlite")
    assert " ILIKE '%rock%'" in compile_plan(p, "postgresql")
    assert " ILIKE '%rock%'" in compile_plan(p, "duckdb")


@pytest.mark.parametrize("yaml_text", NON_ANSWERS)
def test_only_answer_plans_compile(yaml_text: str) -> None:
    p = PlanModel.from_dict(YAML(typ="safe").load(yaml_text))
    with pytest.raises(CompileError, match="only kind 'answer' compiles"):
        compile_plan(p, "sqlite")


def test_unknown_dialect_is_named_with_the_supported_ones() -> None:
    with pytest.raises(CompileError, match=r"unsupported dialect 'mysql' \(supported: sqlite, "):
        compile_plan(plan({"select": [1]}), "mysql")


def test_raw_sql_that_does_not_parse_is_reported() -> None:
    p = plan({"select": [{"sql": "ABS(("}]})
    with pytest.raises(CompileError, match=r"raw SQL 'ABS\(\(' does not parse as sqlite"):
        compile_plan(p, "sqlite")


def test_raw_sql_must_be_an_expression() -> None:
    p = plan({"select": [{"sql": "SELECT 1"}]})
    with pytest.raises(CompileError, match="must be an expression, not a whole query"):
        compile_plan(p, "duckdb")


def test_division_by_zero_gives_null_everywhere(run: Run) -> None:
    p = plan({"select": [{"expr": {"div": [1, 0]}, "alias": "x"},
                         {"expr": {"idiv": [7, 0]}, "alias": "y"}]})
    for dialect in ("sqlite", "duckdb"):
        assert run(dialect, compile_plan(p, dialect)) == [(None, None)]


def test_raw_sql_in_a_plan_is_bounded_like_the_guard_with_a_clear_error() -> None:
    """A huge or deeply nested raw SQL expression is a CompileError naming the limit, never a
    RecursionError or a copy of megabytes of text (issue 21)."""
    from pytest_nl2sql.engine.compiler import CompileError, compile_plan
    from pytest_nl2sql.engine.plan import PlanModel

    for raw, said in (("x" * 200_000, "characters long"), ("(" * 5000 + "1" + ")" * 5000, "")):
        plan = PlanModel.from_dict({"datasource": "d", "from": "t", "select": [{"expr": {"sql": raw}, "alias": "x"}]})
        with pytest.raises(CompileError) as caught:
            compile_plan(plan, "sqlite")
        assert said in str(caught.value) and len(str(caught.value)) < 1000
