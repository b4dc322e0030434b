"""The result_match scorer: both sides normalised, any sequence of rows accepted, anything
else a clear failed score (never an exception); the loader accepts the tolerance keys."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from pytest_nl2sql.engine.protocol import Answer
from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.scorers import ScoreContext, _result_match
from pytest_nl2sql.suitefile.loader import parse_suite
from pytest_nl2sql.suitefile.model import EvalCase, Outcome


def case(rows, **kw):
    return EvalCase(
        id="c1", question="q?", datasources=("d",), outcome={"admin": Outcome.ALLOWED}, sql="SELECT 1", rows=rows, **kw
    )


def score(c, rows, columns=("a", "b"), suite_match=None):
    ans = Answer(status="ok", columns=columns, rows=rows)
    return _result_match(ScoreContext(case=c, role="admin", expected=Outcome.ALLOWED, mode="full", answer=ans, suite_match=suite_match))


GOLD = [{"d": "2009-01-01", "total": 12.34}, {"d": "2009-01-02", "total": 3}]


def test_driver_values_pass_without_the_engine_normalising_them():
    s = score(case(GOLD), [(dt.date(2009, 1, 2), Decimal("3")), (dt.date(2009, 1, 1), Decimal("12.34"))])
    assert s.passed, s.detail


def test_rows_as_lists_pass():
    assert score(case(GOLD), [["2009-01-02", 3], ["2009-01-01", 12.34]]).passed


@pytest.mark.parametrize(
    ("rows", "words"),
    [(5, "not a list of rows"), ([1, 2], "bare value"), ("abc", "not a list of rows"), ([(1, 2), (1,)], "row 2 has 1 values")],
)
def test_rows_of_another_shape_are_a_failed_score(rows, words):
    s = score(case(GOLD), rows)
    assert s.passed is False and "the answer's rows cannot be compared" in s.detail and words in s.detail


def test_invalid_match_settings_are_a_failed_score():
    s = score(case(GOLD, match={"abs_tol": -1}), [("2009-01-01", 12.34)])
    assert s.passed is False and "match settings are not valid" in s.detail


def test_a_value_the_model_does_not_know_is_compared_as_text():
    class Odd:
        def __str__(self) -> str:
            return "odd"

    s = score(case([{"a": "odd", "b": 1}]), [(Odd(), 1)])
    assert s.passed


def test_the_json_record_holds_storage_form_values():
    s = score(case(GOLD), [(dt.date(2009, 1, 3), Decimal("12.5")), ("2009-01-02", 3)])
    assert s.passed is False and s.detail == "rows differ"
    assert s.data["unexpected"] == [["2009-01-03", 12.5]]


def test_suite_then_case_tolerance():
    c = case([{"t": 1000.0}], match={"abs_tol": 0.005})
    assert score(c, [(1000.004,)], columns=("t",), suite_match={"abs_tol": 5.0}).passed
    assert not score(c, [(1004.0,)], columns=("t",), suite_match={"abs_tol": 5.0}).passed
    assert score(case([{"t": 1000.0}]), [(1004.0,)], columns=("t",), suite_match={"abs_tol": 5.0}).passed


SUITE = """version: 1
match: {{abs_tol: 0.001, rel_tol: 0}}
cases:
- id: c1
  question: Total?
  datasources: [d]
  status: approved
  outcome: {{admin: allowed}}
  sql: SELECT 1
  rows: [{{Total: 1.0}}]
  match: {match}
"""


def test_the_loader_accepts_the_tolerance_keys():
    suite = parse_suite(SUITE.format(match="{float_tolerance: 0.01, column_tolerance: {Total: {abs_tol: 0.005, rel_tol: 0}}}"))
    assert suite.match == {"abs_tol": 0.001, "rel_tol": 0.0}
    c = suite.cases[0]
    assert c.match == {"float_tolerance": 0.01, "column_tolerance": {"Total": {"abs_tol": 0.005, "rel_tol": 0.0}}}
    rule = MatchRule.build(suite.match, c.match)
    assert rule.tolerance("total").abs == 0.005 and rule.tolerance("other").abs == 0.01


@pytest.mark.parametrize(
    ("match", "message"),
    [
        ("{abs_tol: -1}", "match.abs_tol must be a number >= 0, got -1"),
        ("{rel_tol: big}", "match.rel_tol must be a number >= 0"),
        ("{column_tolerance: 3}", "match.column_tolerance must map gold columns to a tolerance"),
        ("{column_tolerance: {Total: {abs: 1}}}", "unknown match.column_tolerance.Total setting 'abs'"),
        ("{column_tolerance: {Total: {abs_tol: x}}}", "match.column_tolerance.Total.abs_tol must be a number >= 0"),
        ("{abs_tool: 1}", "did you mean 'abs_tol'?"),
    ],
)
def test_the_loader_rejects_bad_tolerances(match, message):
    with pytest.raises(SuiteError, match=message.replace("(", r"\(").replace("?", r"\?")):
        parse_suite(SUITE.format(match=match))
