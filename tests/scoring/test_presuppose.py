"""A neighbour that breaks what the question takes for granted on the real data does not judge
(docs/scoring.md, "Who judges"); a tie at the gold's LIMIT is settled by leaving rows out; a
gold that leaves out a value the question names is a gold finding."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.neighbours import Neighbourhood, disagreement

SCHEMA = """
CREATE TABLE person (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT, age INTEGER, weight REAL);
CREATE TABLE friend (person_id INTEGER REFERENCES person(id), other_id INTEGER REFERENCES person(id));
"""


def _db(path: Path, people: list, friends: list = ()) -> Path:
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO person VALUES (?, ?, ?, ?, ?)", people)
    con.executemany("INSERT INTO friend VALUES (?, ?)", friends)
    con.commit()
    con.close()
    return path


def _hood(tmp_path: Path, real: Path, neighbour: Path) -> Neighbourhood:
    hood = Neighbourhood(k=1, resolve=lambda name: real, cache_dir=tmp_path / "n")
    hood._built["d"] = [neighbour]
    return hood


REAL = [(1, "Kyle", "dog", 3, 10.0), (2, "Anna", "cat", 5, 4.0), (3, "Bo", "dog", 7, 12.0)]


def test_a_name_the_real_data_holds_once_held_twice_does_not_judge(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", REAL, [(1, 2), (1, 3)])
    twice = _db(tmp_path / "twice.sqlite", [*REAL, (4, "Kyle", "cat", 2, 3.0)], [(1, 2), (4, 3)])
    gold = 'SELECT COUNT(*) FROM friend AS f JOIN person AS p ON f.person_id = p.id WHERE p.name = "Kyle"'
    answer = "SELECT COUNT(*) FROM friend WHERE person_id = (SELECT id FROM person WHERE name = 'Kyle')"
    found = disagreement(_hood(tmp_path, real, twice), "d", gold, answer, MatchRule())
    assert found is None
    # one Kyle, and the answer's scalar subquery is wrong elsewhere: it still judges
    wrong = "SELECT COUNT(*) FROM friend WHERE other_id = (SELECT id FROM person WHERE name = 'Kyle')"
    once = _db(tmp_path / "once.sqlite", REAL, [(1, 2), (1, 3), (2, 1)])
    assert disagreement(_hood(tmp_path, real, once), "d", gold, wrong, MatchRule()) is not None


def test_the_answers_limit_keeping_one_of_the_golds_rows_does_not_judge(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", REAL)
    two = _db(tmp_path / "two.sqlite", [*REAL, (4, "Cas", "cat", 3, 3.0)])
    gold = "SELECT name FROM person WHERE age = 3"
    assert disagreement(_hood(tmp_path, real, two), "d", gold, "SELECT name FROM person WHERE age = 3 LIMIT 1", MatchRule()) is None
    # a row that is not one of the gold's still judges
    assert disagreement(_hood(tmp_path, real, two), "d", gold, "SELECT name FROM person WHERE age = 5 LIMIT 1", MatchRule())


def test_a_tie_at_a_bare_column_min_and_an_empty_table_do_not_judge(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", REAL)
    tied = _db(tmp_path / "tied.sqlite", [*REAL, (4, "Cas", "cat", 3, 3.0)])
    gold = "SELECT MIN(age), name FROM person"
    answer = "SELECT age, name FROM person WHERE age = (SELECT MIN(age) FROM person)"
    assert disagreement(_hood(tmp_path, real, tied), "d", gold, answer, MatchRule()) is None
    empty = _db(tmp_path / "empty.sqlite", [])
    assert disagreement(_hood(tmp_path, real, empty), "d", gold, answer, MatchRule()) is None


def test_a_tie_at_the_golds_limit_is_settled_by_leaving_rows_out(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", REAL)
    # three pets of age 1: the gold's LIMIT 1 cuts a tie, so the whole neighbour does not judge;
    # without two of them, the youngest is a cat and the lightest dog is another pet
    tied = _db(tmp_path / "tied.sqlite", [(1, "A", "cat", 1, 2.0), (2, "B", "dog", 1, 9.0), (3, "C", "cat", 1, 5.0),
                                          (4, "D", "dog", 6, 8.0)])
    gold = "SELECT weight FROM person ORDER BY age LIMIT 1"
    answer = "SELECT MIN(weight) FROM person WHERE kind = 'dog'"
    found = disagreement(_hood(tmp_path, real, tied), "d", gold, answer, MatchRule())
    assert found is not None and "settle" in found["reason"]
    cx = found["counterexample"]
    assert cx["row_count"] < cx["shrunk_from"] and cx["gold_rows"] != cx["answer_rows"]


def test_a_gold_leaving_out_a_value_the_question_names_is_a_gold_finding(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", REAL)
    youngest_cat = _db(tmp_path / "cat.sqlite", [(1, "A", "cat", 1, 7.0), (2, "B", "dog", 4, 9.0), (3, "C", "dog", 6, 5.0)])
    gold = "SELECT weight FROM person ORDER BY age LIMIT 1"
    hood = _hood(tmp_path, real, youngest_cat)
    right = "SELECT weight FROM person WHERE kind = 'dog' ORDER BY age LIMIT 1"
    found = disagreement(hood, "d", gold, right, MatchRule(), question="How much does the youngest dog weigh?")
    assert found is not None and "the gold never uses 'dog'" in found["gold_finding"]
    # the filter is not the whole difference: the answer's MIN(weight) is wrong too -- a flag
    wrong = "SELECT MIN(weight) FROM person WHERE kind = 'dog'"
    found = disagreement(hood, "d", gold, wrong, MatchRule(), question="How much does the youngest dog weigh?")
    assert found is not None and "gold_finding" not in found
    # a value the question does not name: a flag
    found = disagreement(hood, "d", gold, right, MatchRule(), question="How much does the youngest pet weigh?")
    assert found is not None and "gold_finding" not in found


def test_a_column_unique_in_the_real_data_that_repeats_does_not_judge_a_pick_by_subquery(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", REAL)
    # two people named Bo: "the weight of the kind of the heaviest" has no single kind there
    repeated = _db(tmp_path / "repeated.sqlite", [*REAL, (4, "Bo", "dog", 2, 30.0)])
    gold = "SELECT MAX(weight) FROM person"
    answer = "SELECT weight FROM person WHERE name = (SELECT name FROM person ORDER BY weight DESC LIMIT 1)"
    assert disagreement(_hood(tmp_path, real, repeated), "d", gold, answer, MatchRule()) is None
    # a column that repeats in the real data too (kind) still judges
    by_kind = "SELECT weight FROM person WHERE kind = (SELECT kind FROM person ORDER BY weight DESC LIMIT 1)"
    assert disagreement(_hood(tmp_path, real, repeated), "d", gold, by_kind, MatchRule()) is not None
