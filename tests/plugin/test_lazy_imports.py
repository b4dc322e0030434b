"""A run whose verdicts are remembered imports neither sqlglot nor SQLAlchemy (issue 28): on
SQLite the adapter opens ``sqlite3`` itself, and the guard and validator parse SQL only to
compute a verdict the store does not hold. Each costs ~0.13 s a process, paid by the pytest
process and by every xdist worker before their first item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.test_parse_once import PREDICTIONS

SEEN = """
import json, sys

def pytest_sessionfinish(session):
    who = getattr(session.config, "workerinput", {}).get("workerid", "main")  # not the env: an outer -n sets it
    with open(f"imported-{who}.json", "w") as f:
        json.dump({m: m in sys.modules for m in ("sqlglot", "sqlalchemy")}, f)
"""


def _run(pytester: pytest.Pytester, project: Path, *args: str) -> dict[str, dict[str, bool]]:
    for old in project.glob("imported-*.json"):
        old.unlink()
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-predictions", "preds.jsonl", "-p", "no:cacheprovider", "-p", "no:randomly", *args,
    )
    result.assert_outcomes(passed=7)
    return {p.stem.removeprefix("imported-"): json.loads(p.read_text()) for p in project.glob("imported-*.json")}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_warm_run_imports_no_sql_tooling(pytester: pytest.Pytester, project: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    pytester.makeconftest(SEEN)
    (project / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    monkeypatch.setenv("NL2SQL_CACHE_DIR", str(tmp_path / "cache"))
    cold = _run(pytester, project, "-n", workers)
    # the first run computes the verdicts: some process parses SQL
    assert any(seen["sqlglot"] for seen in cold.values()), cold
    warm = _run(pytester, project, "-n", workers)
    expected = {"main"} if workers == "0" else {"main", "gw0", "gw1"}
    assert set(warm) == expected, warm
    assert all(seen == {"sqlglot": False, "sqlalchemy": False} for seen in warm.values()), warm


def test_a_test_suite_run_on_sqlite_imports_no_sqlalchemy(pytester: pytest.Pytester, project: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``--nl2sql-test-suite`` on SQLite datasources: the neighbour databases are SQLite files
    read with ``sqlite3``, their URLs read without SQLAlchemy (config.urls), so no run imports
    it (PostgreSQL neighbours import it where they need it). A run whose verdicts and distilled
    neighbours are remembered and whose answers agree with the gold on every neighbour parses
    no SQL either: the trees, the mutants and the tie and presupposition checks are for a
    disagreement."""
    pytester.makeconftest(SEEN)
    (project / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    monkeypatch.setenv("NL2SQL_CACHE_DIR", str(tmp_path / "cache"))
    first = _run(pytester, project, "-n", "0", "--nl2sql-test-suite", "2")  # builds the neighbours
    assert set(first) == {"main"} and first["main"]["sqlalchemy"] is False, first
    again = _run(pytester, project, "-n", "0", "--nl2sql-test-suite", "2")
    assert again == {"main": {"sqlglot": False, "sqlalchemy": False}}, again
