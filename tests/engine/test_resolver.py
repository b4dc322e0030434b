"""resolve: answer, QUESTION_NOT_ANSWERABLE, or a clarification question."""

from __future__ import annotations

import pytest

from pytest_nl2sql.engine import QUESTION_NOT_ANSWERABLE, CompileError, PlanModel, resolve
from pytest_nl2sql.engine.resolver import Resolution
from tests.engine.chinook_mini import SCHEMA
from tests.engine.examples import EXAMPLES, Example


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.id)
def test_example_plans_are_answers(example: Example) -> None:
    assert resolve(PlanModel.from_dict(example.data()), SCHEMA) == Resolution("answer")


def test_a_plan_that_says_not_answerable_carries_its_reason() -> None:
    plan = PlanModel.from_dict({"kind": "not_answerable", "reason": "No play counts are recorded."})
    assert resolve(plan, SCHEMA) == Resolution(
        "not_answerable", QUESTION_NOT_ANSWERABLE, "No play counts are recorded.")


def test_a_not_answerable_plan_without_reason_gets_a_generic_message() -> None:
    r = resolve(PlanModel.from_dict({"kind": "not_answerable"}), SCHEMA)
    assert (r.status, r.code) == ("not_answerable", QUESTION_NOT_ANSWERABLE)
    assert r.message


@pytest.mark.parametrize(("data", "missing"), [
    ({"from": "Playlist", "select": ["Name"]}, "Playlist"),
    ({"from": "Track", "select": ["Name", {"sum": "PlayCount"}], "group_by": ["Name"]}, "PlayCount"),
    ({"from": {"table": "Track", "alias": "t"}, "select": ["t.Name"],
      "where": {"in": {"expr": "t.TrackId",
                       "query": {"from": "Download", "select": ["TrackId"]}}}}, "Download"),
    ({"from": {"table": "Customer", "alias": "c"}, "select": ["c.LoyaltyTier"]},
     "Customer.LoyaltyTier"),
])
def test_a_plan_naming_missing_tables_or_columns_is_not_answerable(
    data: dict[str, object], missing: str
) -> None:
    r = resolve(PlanModel.from_dict(data), SCHEMA)
    assert (r.status, r.code) == ("not_answerable", QUESTION_NOT_ANSWERABLE)
    assert missing in r.message


def test_a_clarify_plan_carries_the_question_back() -> None:
    plan = PlanModel.from_dict({"kind": "clarify",
                                "clarification": "Which year do you mean: 2009 or 2013?"})
    assert resolve(plan, SCHEMA) == Resolution(
        "needs_clarification", None, "Which year do you mean: 2009 or 2013?")


def test_the_schema_is_read_case_insensitively() -> None:
    plan = PlanModel.from_dict({"from": "customer", "select": ["country"]})
    assert resolve(plan, SCHEMA).status == "answer"


def test_a_broken_raw_sql_escape_is_an_error_not_an_answer() -> None:
    plan = PlanModel.from_dict({"from": "Track", "select": [{"sql": "ROUND(("}]})
    with pytest.raises(CompileError):
        resolve(plan, SCHEMA)
