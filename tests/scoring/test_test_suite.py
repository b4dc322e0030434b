"""Neighbour databases and --nl2sql-test-suite: seeded, reproducible, cached, constraints
kept; an answer that matches only on the real database's data fails, and the record says
which neighbour disagreed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.neighbours import (
    Neighbourhood,
    disagreement,
    neighbours,
    run_query,
    sqlite_file,
)

SCHEMA = """
CREATE TABLE team (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE player (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  age INTEGER CHECK (age > 0),
  team_id INTEGER NOT NULL REFERENCES team(id)
);
CREATE INDEX player_team ON player(team_id);
INSERT INTO team VALUES (1, 'Ajax'), (2, 'PSV');
INSERT INTO player VALUES (1, 'Anna', 21, 1), (2, 'Bo', 30, 1), (3, 'Cas', 25, 2);
"""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "real.sqlite"
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.close()
    return path


def _dump(path: Path) -> list:
    con = sqlite3.connect(path)
    try:
        return list(con.iterdump())
    finally:
        con.close()


def test_neighbours_are_seeded_reproducible_and_cached(db: Path, tmp_path: Path) -> None:
    first = neighbours(db, 4, 7, tmp_path / "a")
    again = neighbours(db, 4, 7, tmp_path / "b")
    assert [_dump(p) for p in first] == [_dump(p) for p in again]
    other = neighbours(db, 4, 8, tmp_path / "c")
    assert [_dump(p) for p in first] != [_dump(p) for p in other]
    stamp = [p.stat().st_mtime_ns for p in first]
    assert neighbours(db, 4, 7, tmp_path / "a") == first
    assert [p.stat().st_mtime_ns for p in first] == stamp  # from the cache, not rebuilt


def test_neighbours_keep_the_schema_and_its_constraints(db: Path, tmp_path: Path) -> None:
    for path in neighbours(db, 6, 0, tmp_path / "n"):
        con = sqlite3.connect(path)
        schema = sorted(r[0] for r in con.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
        assert schema == sorted(r[0] for r in sqlite3.connect(db).execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
        con.execute("PRAGMA foreign_keys = ON")
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert con.execute("SELECT COUNT(*) FROM player WHERE name IS NULL OR age <= 0").fetchone() == (0,)
        con.close()


def test_neighbours_are_read_only(db: Path, tmp_path: Path) -> None:
    path = neighbours(db, 1, 0, tmp_path / "n")[0]
    for sql in ("DELETE FROM player", "ATTACH DATABASE 'x.db' AS x", "PRAGMA writable_schema = ON"):
        with pytest.raises(sqlite3.DatabaseError):
            run_query(path, sql)


def test_a_query_right_only_on_the_real_data_disagrees_on_a_neighbour(db: Path, tmp_path: Path) -> None:
    hood = Neighbourhood(k=5, resolve=lambda name: db, cache_dir=tmp_path / "n")
    gold = "SELECT name FROM player WHERE age > 22"
    assert run_query(db, gold)[1] == run_query(db, "SELECT name FROM player WHERE id IN (2, 3)")[1]
    found = disagreement(hood, "d", gold, "SELECT name FROM player WHERE id IN (2, 3)", MatchRule())
    assert found is not None and 0 <= found["neighbour"] < 5 and found["database"].endswith(".sqlite")
    assert "gold_rows" in found and "answer_rows" in found
    assert disagreement(hood, "d", gold, "SELECT p.name FROM player AS p WHERE NOT p.age <= 22", MatchRule()) is None
    failing = disagreement(hood, "d", gold, "SELECT nope FROM player", MatchRule())
    assert failing is not None and "fails there" in failing["reason"]


def test_sqlite_file_of_a_url(db: Path) -> None:
    assert sqlite_file(f"sqlite:///{db}") == db
    assert sqlite_file("postgresql://u@h/db") is None
    assert sqlite_file("sqlite:///:memory:") is None


PREDICTIONS = [
    # right on the real data (its customer ids stop at 59), wrong in general. (COUNT(DISTINCT
    # Email) is not caught any more: emails are unique in the real data and neighbours keep them so)
    {"id": "mini_001", "sql": "SELECT Country, COUNT(*) AS n FROM Customer WHERE CustomerId < 100 GROUP BY Country"},
    {"id": "mini_002", "sql": "SELECT m.Name, COUNT(*) FROM Track t JOIN MediaType m ON m.MediaTypeId = t.MediaTypeId GROUP BY m.Name"},
]


def test_the_plugin_fails_an_answer_a_neighbour_tells_apart(pytester: pytest.Pytester, project: Path) -> None:
    (pytester.path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    args = ["--nl2sql-suite", "evals/mini.yaml", "--nl2sql-predictions", "p.jsonl", "-k", "admin and (mini_001 or mini_002)", "-p", "no:randomly"]
    plain = pytester.runpytest(*args, "--nl2sql-out", "plain.json")
    plain.assert_outcomes(passed=2)
    result = pytester.runpytest(*args, "--nl2sql-test-suite", "5", "--nl2sql-out", "r.json")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAILED result_match: the rows match on the real database, but not on neighbour database * of 5*"])
    result.stdout.fnmatch_lines(["*test-suite accuracy*1 of 2 passes on the real database failed on a neighbour database*"])
    report = json.loads((pytester.path / "r.json").read_text())
    items = {i["case_id"]: i for i in report["items"]}
    assert items["mini_001"]["test_suite"]["disagreed"]["answer_rows"] is not None
    # the flag carries its counterexample: the few rows on which gold and answer still differ
    cx = items["mini_001"]["test_suite"]["disagreed"]["counterexample"]
    assert cx["rows"] and cx["row_count"] < cx["shrunk_from"]
    result.stdout.fnmatch_lines(["*counterexample: neighbour * (seed 0, *"])
    assert items["mini_002"]["test_suite"] == {"checked": True, "neighbours": 5}
    assert report["summary"]["test_suite"]["failed_on_a_neighbour"] == [items["mini_001"]["nodeid"]]
    assert list((pytester.path / ".nl2sql-cache" / "neighbours").glob("*.sqlite"))
