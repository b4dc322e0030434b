"""The plans in docs/plans.md parse, fit the schema, compile, and run on the real Chinook."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from pytest_nl2sql.engine import PlanModel, compile_plan, plan_json_schema, resolve
from tests.engine.chinook_mini import run_sql
from tests.engine.rows import same_rows
from tests.engine.schema_check import errors as schema_errors

DOC = Path(__file__).resolve().parents[2] / "docs" / "plans.md"
BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def doc_plans() -> list[Any]:
    plans = []
    for i, block in enumerate(BLOCKS):
        data = YAML(typ="safe").load(block)
        plans.append(pytest.param(data.get("plan", data), id=f"block{i + 1}"))
    return plans


def test_the_documentation_has_examples() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("data", doc_plans())
def test_documented_plan_parses_fits_the_schema_and_compiles(data: dict[str, Any]) -> None:
    plan = PlanModel.from_dict(data)
    assert schema_errors(data, plan_json_schema()) == []
    if plan.kind == "answer":
        for dialect in ("sqlite", "postgresql", "duckdb"):
            assert compile_plan(plan, dialect)


@pytest.mark.parametrize("data", doc_plans())
def test_documented_plan_gives_the_same_rows_on_sqlite_and_duckdb(
    data: dict[str, Any], chinook_sqlite: Path, chinook_duckdb: Path
) -> None:
    plan = PlanModel.from_dict(data)
    if plan.kind != "answer":
        pytest.skip("not an answer plan")
    sqlite_sql = compile_plan(plan, "sqlite")
    sqlite_rows = run_sql("sqlite", chinook_sqlite, sqlite_sql)
    assert sqlite_rows, f"the example returns no rows on Chinook:\n{sqlite_sql}"
    if any(isinstance(e, dict) and "sql" in e for e in _walk(data)):
        return  # the raw-SQL escape is written for SQLite only
    duckdb_sql = compile_plan(plan, "duckdb")
    duckdb_rows = run_sql("duckdb", chinook_duckdb, duckdb_sql)
    assert same_rows(duckdb_rows, sqlite_rows), (
        f"SQLite: {sqlite_sql}\n{sqlite_rows[:5]}\nDuckDB: {duckdb_sql}\n{duckdb_rows[:5]}")


def test_documented_plans_resolve_against_the_real_schema(chinook_sqlite: Path) -> None:
    import sqlite3

    con = sqlite3.connect(f"file:{chinook_sqlite}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        schema = {t: [c[1] for c in con.execute(f"PRAGMA table_info({t})")] for t in tables}
    finally:
        con.close()
    for param in doc_plans():
        plan = PlanModel.from_dict(param.values[0])
        expected = {"answer": "answer", "not_answerable": "not_answerable",
                    "clarify": "needs_clarification"}[plan.kind]
        assert resolve(plan, schema).status == expected


def _walk(node: Any) -> list[Any]:
    out = [node]
    if isinstance(node, dict):
        for v in node.values():
            out.extend(_walk(v))
    elif isinstance(node, list):
        for v in node:
            out.extend(_walk(v))
    return out
