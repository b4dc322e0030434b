"""PostgreSQL dialect bugs of compile_plan found by running the Chinook suite on a real server.

Each test checks the fix without a server: the PostgreSQL SQL text has the right shape, and the
same plan gives the agreed answer on SQLite and DuckDB. tests/realdb/test_chinook_postgres.py
runs the same plans on a real PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import sqlglot
from sqlglot import exp

from pytest_nl2sql.engine import PlanModel, compile_plan

Run = Callable[[str, str], list[tuple[Any, ...]]]

# a DOUBLE with an exact half: div casts its numerator to a double, so round sees a double
HALVES = [(5, 2, 3), (-5, 2, -3), (1, 2, 1), (7, 2, 4)]


def _round_of_div(numerator: int, denominator: int) -> PlanModel:
    return PlanModel.from_dict({"select": [{"round": [{"div": [numerator, denominator]}]}]})


def test_round_without_digits_rounds_a_numeric_in_postgresql() -> None:
    # PostgreSQL's ROUND(double precision) rounds halves to even (ROUND(2.5) is 2), while its
    # ROUND(numeric) rounds them away from zero as SQLite does; so the value becomes NUMERIC.
    sql = compile_plan(_round_of_div(5, 2), "postgresql")
    rounded = sqlglot.parse_one(sql, read="postgres").find(exp.Round)
    assert rounded is not None, sql
    assert isinstance(rounded.this, exp.Cast), sql
    assert rounded.this.to.is_type(exp.DataType.Type.DECIMAL), sql
    assert rounded.args.get("decimals") is None, sql


def test_round_with_digits_still_rounds_a_numeric_in_postgresql() -> None:
    p = PlanModel.from_dict({"select": [{"round": [{"div": [1, 8]}, 2]}]})
    rounded = sqlglot.parse_one(compile_plan(p, "postgresql"), read="postgres").find(exp.Round)
    assert rounded is not None
    assert isinstance(rounded.this, exp.Cast)
    assert rounded.this.to.is_type(exp.DataType.Type.DECIMAL)
    assert rounded.args["decimals"].sql() == "2"


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
@pytest.mark.parametrize(("numerator", "denominator", "expected"), HALVES)
def test_round_takes_halves_away_from_zero(
    dialect: str, numerator: int, denominator: int, expected: int, run: Run
) -> None:
    rows = run(dialect, compile_plan(_round_of_div(numerator, denominator), dialect))
    assert rows == [(pytest.approx(expected),)]
