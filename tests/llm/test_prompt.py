"""The prompt: deterministic, and it tells the model what a plan is."""

from __future__ import annotations

import attrs
import pytest

from pytest_nl2sql.llm import PlanRequest, build_messages


def test_messages_are_a_system_and_a_user_message(plan_request):
    system, user = build_messages(plan_request)
    assert (system["role"], user["role"]) == ("system", "user")
    assert plan_request.schema_text in user["content"]
    assert plan_request.question in user["content"]
    assert "Role: analyst" in user["content"]
    assert "Datasources: chinook" in user["content"]


def test_instructions_cover_plans_refusals_and_clarifications(plan_request):
    system = build_messages(plan_request)[0]["content"]
    assert "JSON object" in system
    assert '"not_answerable"' in system
    assert '"clarify"' in system
    assert '"required": ["kind"]' in system  # the plan's JSON Schema itself


def test_the_same_request_gives_the_same_messages(plan_request):
    reordered = dict(reversed(list(plan_request.json_schema.items())))
    assert build_messages(plan_request) == build_messages(plan_request)
    assert build_messages(plan_request) == build_messages(
        attrs.evolve(plan_request, json_schema=reordered)
    )


def test_plan_request_checks_its_fields():
    with pytest.raises(TypeError, match="'json_schema'"):
        PlanRequest(question="q", role="r", schema_text="s", json_schema="{}")
    request = PlanRequest("q", "r", "s", {}, datasources=["a", "b"])
    assert request.datasources == ("a", "b")
