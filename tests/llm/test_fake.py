"""FakeLLM: the hand-written plans of mode plans."""

from __future__ import annotations

import attrs
import pytest

from pytest_nl2sql.llm import LLM, FakeLLM, LLMError

PLAN = {"kind": "sql", "sql": "SELECT COUNT(*) FROM Track", "tables": ["Track"]}


def test_serves_the_plan_of_the_case_for_free(plan_request):
    llm = FakeLLM({"chinook_001": PLAN})
    result = llm.generate_plan(plan_request)
    assert result.plan == PLAN
    assert (result.input_tokens, result.output_tokens, result.cost_usd) == (0, 0, 0.0)
    assert isinstance(llm, LLM)


def test_falls_back_to_the_exact_question(plan_request):
    llm = FakeLLM({plan_request.question: PLAN})
    assert llm.generate_plan(attrs.evolve(plan_request, case_id=None)).plan == PLAN
    assert llm.generate_plan(attrs.evolve(plan_request, case_id="other")).plan == PLAN


def test_each_call_gets_its_own_copy(plan_request):
    source = {"chinook_001": PLAN}
    llm = FakeLLM(source)
    first = llm.generate_plan(plan_request).plan
    first["tables"].append("Genre")
    source["chinook_001"] = {"kind": "clarify"}
    assert llm.generate_plan(plan_request).plan == {
        "kind": "sql", "sql": "SELECT COUNT(*) FROM Track", "tables": ["Track"]
    }


def test_a_missing_plan_names_the_case(plan_request):
    with pytest.raises(LLMError, match="no plan for case 'chinook_001'"):
        FakeLLM({"chinook_002": PLAN}).generate_plan(plan_request)


def test_a_missing_plan_without_case_id_names_the_question(plan_request):
    with pytest.raises(LLMError, match="no plan for question 'How many tracks"):
        FakeLLM({}).generate_plan(attrs.evolve(plan_request, case_id=None))


def test_a_plan_that_is_not_an_object_is_refused():
    with pytest.raises(TypeError, match="plan for case 'c1' must be a mapping"):
        FakeLLM({"c1": ["SELECT 1"]})
