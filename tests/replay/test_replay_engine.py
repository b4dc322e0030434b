"""The replay engine on a real SQLite file: same guard, validator and adapter as any query."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from pytest_nl2sql.engine.replay import (
    Prediction,
    PredictionsError,
    ReplayEngine,
    sqlite_string_fallback,
)
from pytest_nl2sql.engine.validator import REFUSAL_MESSAGE
from pytest_nl2sql.suitefile.loader import load_suite


def engine(project, *preds: Prediction) -> ReplayEngine:
    return ReplayEngine(preds, project)


def case(shop: Path, case_id: str):
    return load_suite(shop / "evals" / "shop.yaml").get(case_id)


def test_answer_case_runs_the_prediction(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_002", sql="SELECT name FROM customer WHERE city = 'Paris'", cost_usd=0.5, latency_s=2.0))
    a = e.answer_case(case(shop, "shop_002"), "admin")
    assert a.status == "ok" and sorted(a.rows) == [("Ann",), ("Bob",)]
    assert a.datasources == ("shop",) and a.columns == ("name",)
    assert (a.cost_usd, a.latency_s) == (0.5, 2.0)
    assert a.retrieved_tables == ("customer",)


def test_answer_by_question_uses_the_evals_suites(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_001", sql="SELECT COUNT(*) FROM customer"))
    a = e.answer("How many customers are there?", "admin", None)
    assert a.status == "ok" and a.rows == [(3,)]
    assert e.route("How many customers are there?", "admin").top == "shop"


def test_missing_prediction_names_the_case(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_001", sql="SELECT 1"))
    a = e.answer("Which customers live in Paris?", "admin", None)
    assert a.status == "error" and a.error == "no prediction for case shop_002"
    assert e.answer_case(case(shop, "shop_003"), "admin").error == "no prediction for case shop_003"


def test_unknown_question_says_how_to_fix(project) -> None:
    a = engine(project).answer("Who are you?", "admin", None)
    assert a.status == "error" and "give each prediction its case's 'question'" in a.error


def test_a_write_statement_is_refused_and_the_database_is_unchanged(shop: Path, project) -> None:
    db = shop / "shop.sqlite"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    e = engine(project, Prediction(id="shop_001", sql="DELETE FROM customer"), Prediction(id="shop_002", sql="SELECT 1; DROP TABLE orders"))
    for cid in ("shop_001", "shop_002"):
        a = e.answer_case(case(shop, cid), "admin")
        assert a.status == "error" and a.error.startswith("statement refused:"), a
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_role_policy_still_refuses(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_004", sql="SELECT email FROM customer"))
    a = e.answer_case(case(shop, "shop_004"), "clerk")
    assert a.status == "refused" and a.message == REFUSAL_MESSAGE and not a.rows
    assert e.answer_case(case(shop, "shop_004"), "admin").status == "ok"


def test_a_prediction_for_a_role_wins_over_the_roleless_one(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_001", sql="SELECT 1"), Prediction(id="shop_001", role="clerk", sql="SELECT 2"))
    assert e.answer_case(case(shop, "shop_001"), "clerk").rows == [(2,)]
    assert e.answer_case(case(shop, "shop_001"), "admin").rows == [(1,)]


def test_sqlite_double_quoted_strings_are_strings(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_002", sql='SELECT name FROM customer WHERE city = "Paris"'))
    answer = e.answer_case(case(shop, "shop_002"), "admin")
    assert sorted(answer.rows) == [("Ann",), ("Bob",)]
    assert answer.sql == "SELECT name FROM customer WHERE city = 'Paris'"  # the SQL that ran
    assert sqlite_string_fallback('SELECT "name" FROM customer WHERE city = "Paris"', ["name", "city"]) == \
        "SELECT \"name\" FROM customer WHERE city = 'Paris'"


def test_sql_errors_and_unknown_names_are_errors_not_crashes(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_001", sql="SELECT nope FROM customer"), Prediction(id="shop_002", sql="SELEC 1"))
    assert e.answer_case(case(shop, "shop_001"), "admin").status == "error"
    assert e.answer_case(case(shop, "shop_002"), "admin").status == "error"


def test_unknown_datasource(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_001", sql="SELECT 1", datasource="other"))
    a = e.answer_case(case(shop, "shop_001"), "admin")
    assert a.status == "error" and "unknown datasource 'other'" in a.error and "one of shop" in a.error


def test_from_file_needs_a_project(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text('{"id": "a", "sql": "SELECT 1"}\n')
    with pytest.raises(PredictionsError, match="needs the project's nl2sql.yaml"):
        ReplayEngine.from_file(tmp_path / "p.jsonl", None)


def test_an_oversized_prediction_is_an_error_never_run_and_shown_cut(tmp_path: Path) -> None:
    from pytest_nl2sql.datasources.guard import MAX_SQL_CHARS
    from pytest_nl2sql.engine.replay import read_predictions

    huge = "SELECT 1 AS n -- " + "x" * (MAX_SQL_CHARS * 3)
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "c1", "sql": huge}) + "\n")
    (p,) = read_predictions(path)
    assert p.oversize == len(huge)
    assert len(p.sql) < 3000 and p.sql.endswith(f"[truncated: {len(huge):,} characters]")


def test_a_predictions_file_over_the_size_limit_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_nl2sql.engine import replay

    monkeypatch.setattr(replay, "MAX_PREDICTIONS_FILE_BYTES", 100)
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "c1", "sql": "SELECT 1" + " " * 200}) + "\n")
    with pytest.raises(replay.PredictionsError, match="at most 100 are read"):
        replay.read_predictions(path)


def test_an_oversized_prediction_answers_with_a_clear_error(shop: Path, project) -> None:
    e = engine(project, Prediction(id="shop_001", sql="SELECT 1 ... [truncated: 300,000 characters]", oversize=300_000))
    a = e.answer_case(case(shop, "shop_001"), "admin")
    assert a.status == "error" and "300,000 characters long" in a.error and not a.rows
