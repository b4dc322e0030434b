"""Parse once (issue 28): a predicted SQL is parsed once, though the guard, the validator and
the adapter each check it and every role of its case runs it; the verdicts stay the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

COUNT_PARSES = """
import collections, json
import pytest_nl2sql.datasources.guard as guard

parses = collections.Counter()
_parse_bounded = guard.parse_bounded

def counting(sql, read):
    parses[sql] += 1
    return _parse_bounded(sql, read)

guard.parse_bounded = counting

def pytest_sessionfinish(session):
    with open("parses.json", "w") as f:
        json.dump(parses, f)
"""

PREDICTIONS = [
    {"id": "mini_001", "datasource": "chinook",
     "sql": "SELECT Country, COUNT(CustomerId) AS customer_count FROM Customer GROUP BY Country"},
    {"id": "mini_002", "datasource": "chinook",
     "sql": "SELECT m.Name, COUNT(t.TrackId) AS tracks FROM Track t JOIN MediaType m ON m.MediaTypeId = t.MediaTypeId GROUP BY m.Name"},
    {"id": "mini_003", "datasource": "chinook", "sql": None, "status": "not_answerable", "code": "QUESTION_NOT_ANSWERABLE"},
]


@pytest.mark.parametrize("workers", ["0", "2"])
def test_each_predicted_sql_is_parsed_once_for_all_its_checks_and_roles(pytester: pytest.Pytester, project: Path, workers: str) -> None:
    pytester.makeconftest(COUNT_PARSES)
    (project / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-predictions", "preds.jsonl", "--nl2sql-out", "r.json",
        "-p", "no:cacheprovider", "-n", workers,
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    items = json.loads((project / "r.json").read_text())["items"]
    by_sql = {p["sql"]: [i for i in items if i["case_id"] == p["id"]] for p in PREDICTIONS if p["sql"]}
    assert all(len(runs) >= 2 for runs in by_sql.values())  # several roles ran each SQL
    outcomes = {(i["case_id"], i["role"]): i["verdict"] for i in items}
    assert set(outcomes.values()) == {"passed"}, outcomes  # a refusal where expected passes too
    if workers == "0":  # under xdist the workers count in their own processes
        parses = json.loads((project / "parses.json").read_text())
        assert {sql: parses.get(sql) for sql in by_sql} == {sql: 1 for sql in by_sql}
