"""The adapter passes what nl2sql-engine's result says beyond rows -- its answer source, its
answer text, one step per pipeline node -- shaped as nl2sql-engine 0.7.0's ``QueryResult`` is
(``source.type``, ``final_answer.summary/content``, ``timings``, ``usage.nodes``, ``errors``).
Runs without nl2sql-engine: the result is a stand-in of the same shape."""

from __future__ import annotations

from types import SimpleNamespace

from pytest_nl2sql.engine.nl2sql_engine import _what_it_said
from pytest_nl2sql.engine.protocol import Step


def test_source_text_and_steps_from_a_query_result() -> None:
    result = SimpleNamespace(
        source=SimpleNamespace(type="verified", id="revenue_by_year"),
        final_answer={"summary": "Revenue peaked in 2010.", "content": "2010: 481.45", "format_type": "text"},
        timings={"ast_planner": 0.81, "generator": 0.02, "executor": 0.01},
        usage=SimpleNamespace(nodes={"ast_planner": SimpleNamespace(input_tokens=1200, output_tokens=90, cost=0.0003, latency_s=0.7)}),
        errors=[{"node": "executor", "error_code": "EXECUTION_ERROR", "message": "boom"}],
    )
    said = _what_it_said(result)
    assert said["source"] == "verified"
    assert said["text"] == "Revenue peaked in 2010.\n2010: 481.45"
    assert said["steps"] == (
        Step(name="ast_planner", latency_s=0.81, input_tokens=1200, output_tokens=90, cost_usd=0.0003),
        Step(name="generator", latency_s=0.02),
        Step(name="executor", latency_s=0.01, error_code="EXECUTION_ERROR"),
    )


def test_a_result_that_says_nothing_more_adds_nothing() -> None:
    assert _what_it_said(SimpleNamespace(source=None, final_answer=None, timings={}, usage=None, errors=[])) == {}
