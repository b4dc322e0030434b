"""Reading predictions files: JSONL and YAML, and clear errors naming path:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_nl2sql.engine.replay import Prediction, PredictionsError, read_predictions


def test_jsonl_with_all_fields(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        '{"id": "a", "sql": "SELECT 1"}\n\n'
        '{"id": "b", "role": "clerk", "sql": "SELECT 2", "cost_usd": 0.01, "latency_s": 1.5, "question": "Q?", "datasource": "shop"}\n'
    )
    got = read_predictions(path)
    assert got == [
        Prediction(id="a", sql="SELECT 1"),
        Prediction(id="b", sql="SELECT 2", role="clerk", cost_usd=0.01, latency_s=1.5, question="Q?", datasource="shop"),
    ]
    assert got[1].where == f"{path}:3"


@pytest.mark.parametrize(
    "text",
    ["- {id: a, sql: SELECT 1}\n- id: b\n  sql: SELECT 2\n", "predictions:\n  - {id: a, sql: SELECT 1}\n  - {id: b, sql: SELECT 2}\n"],
)
def test_yaml_list_or_predictions_map(tmp_path: Path, text: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(text)
    assert [(p.id, p.sql) for p in read_predictions(path)] == [("a", "SELECT 1"), ("b", "SELECT 2")]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("p.jsonl", '{"id": "a", "sql": "SELECT 1"}\n{"id": "b", "sql": \n', "p.jsonl:2: not a JSON object"),
        ("p.jsonl", '{"id": "a"}\n', "p.jsonl:1: the prediction has no 'sql'"),
        ("p.jsonl", '{"id": "a", "sql": "x", "query": "y"}\n', "p.jsonl:1: unknown key 'query'"),
        ("p.jsonl", '{"id": "a", "sql": "x", "cost_usd": -1}\n', "p.jsonl:1: cost_usd must be a number >= 0"),
        ("p.jsonl", '["a", "SELECT 1"]\n', "p.jsonl:1: a prediction is a map"),
        ("p.jsonl", '{"id": "a", "sql": "x"}\n{"id": "a", "sql": "y"}\n', "p.jsonl:2: case 'a' is predicted twice (first at"),
        ("p.yaml", "- {id: a, sql: SELECT 1}\n- {id: b\n", "not valid YAML"),
        ("p.yaml", "- {id: a, sql: SELECT 1}\n- {id: b}\n", "p.yaml:2: the prediction has no 'sql'"),
        ("p.yaml", "id: a\nsql: SELECT 1\n", "a YAML predictions file is a list"),
        ("p.txt", "SELECT 1\n", "unknown predictions format '.txt'"),
    ],
)
def test_bad_files_say_where_and_what(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PredictionsError) as info:
        read_predictions(path)
    assert message in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PredictionsError, match="no such file"):
        read_predictions(tmp_path / "nope.jsonl")


def test_same_case_for_two_roles_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"id": "a", "sql": "x"}\n{"id": "a", "role": "clerk", "sql": "y"}\n')
    assert len(read_predictions(path)) == 2
