"""A warm run imports no sqlglot: with every verdict of the guard, the validator and the replay
engine's SQLite string fallback in the verdict store, a replay run (serial, and in each xdist
worker) needs no parse, so sqlglot is imported only when a verdict must be computed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.test_parse_once import PREDICTIONS

RECORD_SQLGLOT = """
import json, sys

def pytest_sessionfinish(session):
    # not PYTEST_XDIST_WORKER: an outer xdist run (this suite's own -n) passes it down
    who = getattr(session.config, "workerinput", {}).get("workerid", "main")
    with open(f"sqlglot-{who}.json", "w") as f:
        json.dump("sqlglot" in sys.modules, f)
    with open(f"planmodel-{who}.json", "w") as f:  # the plan model, the compiler, the resolver
        json.dump(sorted(m for m in ("pytest_nl2sql.engine.plan", "pytest_nl2sql.engine.compiler",
                                     "pytest_nl2sql.engine.resolver") if m in sys.modules), f)
    with open(f"filelock-{who}.json", "w") as f:  # no file written, no cost ledger: no lock needed
        json.dump("filelock" in sys.modules, f)
"""

#: mini_002 for the admin with a double-quoted string: the answer goes through the SQLite fallback
#: (an unrestricted role gets unknown_reference for the quoted name, then the fixed SQL is
#: validated and run); the other roles replay the plain prediction.
FALLBACK = {
    "id": "mini_002", "role": "admin", "datasource": "chinook",
    "sql": 'SELECT m.Name, COUNT(t.TrackId) AS tracks FROM Track t JOIN MediaType m ON m.MediaTypeId = t.MediaTypeId '
           'WHERE m.Name <> "No such media" GROUP BY m.Name',
}


def _run(pytester: pytest.Pytester, project: Path, workers: str,
         *engine: str) -> tuple[dict[str, bool], dict[tuple[str, str], object]]:
    """One run (replay by default, or ``engine``'s options): which processes imported sqlglot,
    and each item's verdict, status, SQL, gold digest and its case's digest."""
    for old in project.glob("sqlglot-*.json"):
        old.unlink()
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", *(engine or ("--nl2sql-predictions", "preds.jsonl")),
        "--nl2sql-out", "r.json", "-p", "no:cacheprovider", "-n", workers,
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    seen = {p.stem.split("-", 1)[1]: json.loads(p.read_text()) for p in project.glob("sqlglot-*.json")}
    report = json.loads((project / "r.json").read_text())
    cases = report["run"]["provenance"]["suites"]["mini.yaml"]["cases"]  # the case digests
    # the digests too: a warm run reads them from the suite cache, a cold one hashes them
    return seen, {(i["case_id"], i["role"]): (i["verdict"], i["status"], i.get("sql"), i["gold_digest"], cases[i["case_id"]])
                  for i in report["items"]}


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_warm_replay_run_imports_no_sqlglot(pytester: pytest.Pytester, project: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    pytester.makeconftest(RECORD_SQLGLOT)
    predictions = [*PREDICTIONS, FALLBACK]
    (project / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in predictions))
    monkeypatch.setenv("NL2SQL_CACHE_DIR", str(tmp_path / "cache"))
    cold, first = _run(pytester, project, workers)
    assert any(cold.values()), cold  # the cold run computed verdicts, so it parsed
    assert next(iter((tmp_path / "cache").glob("verdicts-*.json")), None) is not None
    warm, second = _run(pytester, project, workers)
    expected = {"main"} if workers == "0" else {"main", "gw0", "gw1"}
    assert set(warm) == expected and not any(warm.values()), warm
    assert second == first
    # a replay run needs nothing of plans: cold or warm, no process imported the plan model
    assert [json.loads(p.read_text()) for p in project.glob("planmodel-*.json")] == [[]] * len(expected)
    if workers == "0":  # serial and warm, nothing is written: no file lock (~13 ms of imports) is taken
        assert json.loads((project / "filelock-main.json").read_text()) is False
    # the fallback was used, and its answer came from the store the second time
    fixed = [sql for (cid, role), (_, _, sql, _, _) in first.items() if cid == "mini_002" and role == "admin"]
    assert fixed and "'No such media'" in str(fixed[0]), first


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_warm_plans_run_imports_no_sqlglot(pytester: pytest.Pytester, project: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, workers: str) -> None:
    """Mode plans with the reference engine: each plan's SQL is remembered like a verdict (and
    the check that its names exist, under the unrestricted policy), so the second run compiles
    and parses nothing -- and answers exactly as the first."""
    pytester.makeconftest(RECORD_SQLGLOT)
    monkeypatch.setenv("NL2SQL_CACHE_DIR", str(tmp_path / "cache"))

    cold, first = _run(pytester, project, workers, "--nl2sql-mode", "plans")
    assert any(cold.values()), cold  # the cold run compiled the plans
    assert any(sql for _, _, sql, _, _ in first.values()), first
    warm, second = _run(pytester, project, workers, "--nl2sql-mode", "plans")
    expected = {"main"} if workers == "0" else {"main", "gw0", "gw1"}
    assert set(warm) == expected and not any(warm.values()), warm
    assert second == first
