"""A plan's SQL is compiled once per process (the roles of a case share one plan), a plan that
cannot compile says so every time it is asked, and neither leaks between dialects."""

from __future__ import annotations

import pytest

from pytest_nl2sql.engine import compiler, plancompiler
from pytest_nl2sql.engine.compiler import CompileError, compile_plan
from pytest_nl2sql.engine.plan import PlanModel

PLAN = PlanModel.from_dict({"datasource": "shop", "from": "Customer", "select": ["Name"],
                            "order_by": [{"expr": "Name", "desc": True}]})
#: raw SQL that does not parse: a compile error
BROKEN = PlanModel.from_dict({"datasource": "shop", "from": "Customer", "select": [{"expr": {"sql": "upper("}, "alias": "n"}]})


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    compiler.COMPILED.clear()
    calls: list[str] = []
    real = plancompiler.compile_plan
    monkeypatch.setattr(plancompiler, "compile_plan", lambda plan, d: calls.append(d) or real(plan, d))
    yield calls
    compiler.COMPILED.clear()


def test_a_plan_is_compiled_once_per_dialect(compiled: list[str]) -> None:
    first = [compile_plan(PLAN, d) for d in ("sqlite", "postgresql", "sqlite", "postgresql")]
    again = compile_plan(PlanModel.from_dict({"datasource": "shop", "from": "Customer", "select": ["Name"],
                                              "order_by": [{"expr": "Name", "desc": True}]}), "sqlite")
    assert compiled == ["sqlite", "postgresql"]  # an equal plan built afresh is the same plan
    assert first[0] == first[2] == again and first[1] == first[3]
    assert first[0] != first[1]  # PostgreSQL spells the NULLS order out


def test_a_plan_that_does_not_compile_fails_each_time_with_the_same_error(compiled: list[str]) -> None:
    errors = []
    for _ in range(2):
        with pytest.raises(CompileError) as info:
            compile_plan(BROKEN, "sqlite")
        errors.append(str(info.value))
    assert errors[0] == errors[1] and "does not parse" in errors[0]
    assert compiled == ["sqlite"]
