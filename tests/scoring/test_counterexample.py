"""A test-suite flag carries its counterexample (the neighbour's rows shrunk to the fewest on
which gold and answer still differ); a neighbour where the gold's own LIMIT cuts inside a tie
does not judge; a difference that comes from the gold's fragility is a gold finding."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.scoring.counterexample import gold_fragility, shrink
from pytest_nl2sql.scoring.matching import MatchRule, match_rows
from pytest_nl2sql.scoring.neighbours import Neighbourhood, disagreement
from pytest_nl2sql.scoring.scorers import shown_counterexample

SCHEMA = """
CREATE TABLE team (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE player (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER, team_id INTEGER NOT NULL REFERENCES team(id));
"""


def _db(path: Path, teams: list, players: list) -> Path:
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO team VALUES (?, ?)", teams)
    con.executemany("INSERT INTO player VALUES (?, ?, ?, ?)", players)
    con.commit()
    con.close()
    return path


def _differ(gold, answer) -> bool:
    return isinstance(answer, Exception) or not match_rows(gold[0], gold[1], answer[0], answer[1]).matched


def test_shrinking_keeps_the_rows_that_tell_gold_and_answer_apart(tmp_path: Path) -> None:
    players = [(i, f"p{i}", 20 + i % 7, 1 + i % 3) for i in range(1, 41)]
    db = _db(tmp_path / "n.sqlite", [(1, "Ajax"), (2, "PSV"), (3, "AZ")], players)
    # the answer's extra filter only shows on players older than 25
    cx = shrink(db, "SELECT name FROM player", "SELECT name FROM player WHERE age <= 25", _differ)
    assert cx is not None and cx["shrunk_from"] == 43
    assert cx["row_count"] == 2  # one old player and the team it needs (its foreign key)
    tables = {t["table"]: t["rows"] for t in cx["rows"]}
    (player,) = tables["player"]
    assert player[2] > 25 and tables["team"] == [[player[3], {1: "Ajax", 2: "PSV", 3: "AZ"}[player[3]]]]
    assert cx["gold_rows"] == [[player[1]]] and cx["answer_rows"] == []


def test_a_flag_shows_its_counterexample_and_seed(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", [(1, "Ajax"), (2, "PSV")], [(1, "Anna", 21, 1), (2, "Bo", 30, 1), (3, "Cas", 25, 2)])
    hood = Neighbourhood(k=5, resolve=lambda name: real, cache_dir=tmp_path / "n")
    found = disagreement(hood, "d", "SELECT name FROM player WHERE age > 22", "SELECT name FROM player WHERE id IN (2, 3)", MatchRule())
    assert found is not None and found["seed"] == 0
    cx = found["counterexample"]
    assert cx is not None and 1 <= cx["row_count"] <= 3 < cx["shrunk_from"]
    text = shown_counterexample(found)
    assert f"counterexample: neighbour {found['neighbour'] + 1} (seed 0" in text
    assert "gold gives" in text and "answer gives" in text and "player (id, name, age, team_id)" in text


def test_a_neighbour_with_a_tie_at_the_golds_limit_does_not_judge(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", [(1, "Ajax")], [(1, "Anna", 21, 1), (2, "Bo", 30, 1)])
    tied = _db(tmp_path / "tied.sqlite", [(1, "Ajax")], [(1, "Anna", 30, 1), (2, "Bo", 30, 1), (3, "Cas", 20, 1)])
    hood = Neighbourhood(k=1, resolve=lambda name: real, cache_dir=tmp_path / "n")
    hood._built["d"] = [tied]
    gold = "SELECT name FROM player ORDER BY age DESC LIMIT 1"
    answer = "SELECT name FROM player WHERE age = (SELECT MAX(age) FROM player)"
    assert disagreement(hood, "d", gold, answer, MatchRule()) is None
    # a tie of identical rows too: how many of them a right answer returns is open
    twins = _db(tmp_path / "twins.sqlite", [(1, "Ajax")], [(1, "Bo", 30, 1), (2, "Bo", 30, 1), (3, "Cas", 20, 1)])
    hood._built["d"] = [twins]
    assert disagreement(hood, "d", gold, answer, MatchRule()) is None
    # without the tie the same neighbour judges
    clear = _db(tmp_path / "clear.sqlite", [(1, "Ajax")], [(1, "Anna", 31, 1), (2, "Bo", 30, 1)])
    hood._built["d"] = [clear]
    assert disagreement(hood, "d", gold, "SELECT name FROM player ORDER BY age LIMIT 1", MatchRule()) is not None


@pytest.mark.parametrize(
    ("gold", "answer", "fragile"),
    [
        ("SELECT name FROM student EXCEPT SELECT s.name FROM student s JOIN pet p ON p.sid = s.id",
         "SELECT name FROM student WHERE id NOT IN (SELECT sid FROM pet)", "EXCEPT"),
        ("SELECT name, COUNT(*) FROM person GROUP BY name", "SELECT name, COUNT(*) FROM person GROUP BY id", "groups by"),
        ("SELECT id FROM student EXCEPT SELECT sid FROM pet", "SELECT id FROM student WHERE id NOT IN (SELECT sid FROM pet)", None),
        ("SELECT name, COUNT(*) FROM person GROUP BY id", "SELECT name, COUNT(*) FROM person GROUP BY name", None),
        ("SELECT COUNT(*), name FROM shop GROUP BY name", "SELECT name, COUNT(*) FROM shop GROUP BY shop_id, name", "groups by"),
    ],
)
def test_gold_fragility(gold: str, answer: str, fragile: str | None) -> None:
    why = gold_fragility(gold, answer, None)
    assert (why is None) if fragile is None else (fragile in why)


def test_a_null_sensitive_gold_is_fragile_only_on_rows_with_nulls() -> None:
    cx = {"rows": [{"table": "o", "columns": ["id", "name", "city"], "rows": [[1, None, "x"]]}]}
    assert "COUNT(column)" in gold_fragility("SELECT COUNT(name) FROM o", "SELECT COUNT(*) FROM o", cx)
    cx["rows"][0]["rows"] = [[1, "x", None]]  # a NULL elsewhere: the gold's count is not at fault
    assert gold_fragility("SELECT COUNT(name) FROM o", "SELECT COUNT(*) FROM o", cx) is None
