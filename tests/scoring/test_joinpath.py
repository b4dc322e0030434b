"""Gold and answer that differ only in which of two foreign keys to one parent they follow, where
the question names neither, make a gold finding ("an ambiguous join path"), never a flag of the
engine -- and only then (docs/scoring.md, "Who judges")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.neighbours import Neighbourhood, disagreement

SCHEMA = """
CREATE TABLE addresses (address_id INTEGER PRIMARY KEY, line_1 TEXT);
CREATE TABLE students (student_id INTEGER PRIMARY KEY, name TEXT,
  current_address_id INTEGER REFERENCES addresses(address_id),
  permanent_address_id INTEGER REFERENCES addresses(address_id));
"""
ADDRESSES = [(1, "1 Elm St"), (2, "2 Oak St"), (3, "3 Ash St")]


def _db(path: Path, students: list) -> Path:
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    con.executemany("INSERT INTO addresses VALUES (?, ?)", ADDRESSES)
    con.executemany("INSERT INTO students VALUES (?, ?, ?, ?)", students)
    con.commit()
    con.close()
    return path


def _hood(tmp_path: Path, real: Path, neighbour: Path) -> Neighbourhood:
    hood = Neighbourhood(k=1, resolve=lambda name: real, cache_dir=tmp_path / "n")
    hood._built["d"] = [neighbour]
    return hood


GOLD = ("SELECT a.address_id, a.line_1 FROM addresses AS a JOIN students AS s ON a.address_id = s.current_address_id "
        "GROUP BY a.address_id ORDER BY count(*) DESC LIMIT 1")
ANSWER = ("SELECT addresses.address_id, addresses.line_1 FROM addresses JOIN students "
          "ON students.permanent_address_id = addresses.address_id GROUP BY addresses.address_id ORDER BY COUNT(*) DESC LIMIT 1")
QUESTION = "What is the id and first line of the address with the most students?"


def test_following_the_other_of_two_keys_the_question_leaves_open_is_a_gold_finding(tmp_path: Path) -> None:
    # the real data: everyone lives where they are registered, so both readings agree
    real = _db(tmp_path / "real.sqlite", [(1, "A", 1, 1), (2, "B", 1, 1), (3, "C", 2, 2)])
    apart = _db(tmp_path / "apart.sqlite", [(1, "A", 1, 3), (2, "B", 1, 3), (3, "C", 2, 3), (4, "D", 2, 2)])
    hood = _hood(tmp_path, real, apart)
    found = disagreement(hood, "d", GOLD, ANSWER, MatchRule(), question=QUESTION)
    assert found is not None and "ambiguous join path" in found["gold_finding"]
    assert "students.current_address_id" in found["gold_finding"] and found["counterexample"]["row_count"] >= 1


def test_a_question_that_names_the_key_keeps_the_flag(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", [(1, "A", 1, 1), (2, "B", 1, 1), (3, "C", 2, 2)])
    apart = _db(tmp_path / "apart.sqlite", [(1, "A", 1, 3), (2, "B", 1, 3), (3, "C", 2, 3), (4, "D", 2, 2)])
    hood = _hood(tmp_path, real, apart)
    named = "What is the id and first line of the current address of the most students?"
    found = disagreement(hood, "d", GOLD, ANSWER, MatchRule(), question=named)
    assert found is not None and "gold_finding" not in found


def test_an_answer_wrong_besides_the_key_or_an_empty_gold_keeps_the_flag(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", [(1, "A", 1, 1), (2, "B", 1, 1), (3, "C", 2, 2)])
    apart = _db(tmp_path / "apart.sqlite", [(1, "A", 1, 3), (2, "B", 1, 3), (3, "C", 2, 3), (4, "D", 2, 2)])
    hood = _hood(tmp_path, real, apart)
    # the key swapped back still does not give the gold's rows: the answer leaves students out besides
    leaves_out = ANSWER.replace("GROUP BY", "WHERE students.name NOT IN ('B', 'C') GROUP BY")
    three = _db(tmp_path / "three.sqlite", [(1, "A", 1, 3), (2, "B", 1, 3), (3, "C", 1, 3), (4, "D", 2, 2), (5, "E", 2, 2)])
    found = disagreement(_hood(tmp_path, real, three), "d", GOLD, leaves_out, MatchRule(), question=QUESTION)
    assert found is not None and "gold_finding" not in found
    # a gold that says nothing on the real data (no rows there): agreeing with it proves nothing
    empty_gold = "SELECT s.name FROM students AS s WHERE s.current_address_id = 3"
    empty_answer = "SELECT name FROM students WHERE permanent_address_id = 3"
    found = disagreement(hood, "d", empty_gold, empty_answer, MatchRule(), question="Who lives at 3 Ash St?")
    assert found is not None and "gold_finding" not in found


def test_an_answer_following_one_key_where_the_gold_follows_both_keeps_the_flag(tmp_path: Path) -> None:
    real = _db(tmp_path / "real.sqlite", [(1, "A", 1, 1), (2, "B", 1, 1), (3, "C", 2, 2)])
    apart = _db(tmp_path / "apart.sqlite", [(1, "A", 1, 2), (2, "B", 1, 2), (3, "C", 1, 3), (4, "D", 1, 3), (5, "E", 2, 2)])
    both = ("SELECT a.line_1 FROM addresses AS a JOIN students AS s ON a.address_id = s.current_address_id "
            "OR a.address_id = s.permanent_address_id GROUP BY a.address_id ORDER BY count(*) DESC LIMIT 1")
    one = ("SELECT a.line_1 FROM addresses AS a JOIN students AS s ON a.address_id = s.permanent_address_id "
           "GROUP BY a.address_id ORDER BY count(*) DESC LIMIT 1")
    found = disagreement(_hood(tmp_path, real, apart), "d", both, one, MatchRule(), question="Which address has the most students?")
    assert found is not None and "gold_finding" not in found


CARS = """
CREATE TABLE makers (id INTEGER PRIMARY KEY, maker TEXT);
CREATE TABLE models (model_id INTEGER PRIMARY KEY, maker INTEGER REFERENCES makers(id), model TEXT);
CREATE TABLE cars (id INTEGER PRIMARY KEY, model TEXT, edispl REAL);
"""


def _cars(path: Path, makers: list, models: list, cars: list) -> Path:
    con = sqlite3.connect(path)
    con.executescript(CARS)
    con.executemany("INSERT INTO makers VALUES (?, ?)", makers)
    con.executemany("INSERT INTO models VALUES (?, ?, ?)", models)
    con.executemany("INSERT INTO cars VALUES (?, ?, ?)", cars)
    con.commit()
    con.close()
    return path


BY_MODEL = "SELECT avg(edispl) FROM cars WHERE model = 'volvo'"
BY_MAKER = ("SELECT AVG(cars.edispl) FROM cars JOIN models ON cars.model = models.model "
            "JOIN makers ON models.maker = makers.id WHERE makers.maker = 'volvo'")


def test_a_value_the_real_data_holds_in_two_columns_the_question_does_not_name_is_a_gold_finding(tmp_path: Path) -> None:
    real = _cars(tmp_path / "real.sqlite", [(1, "volvo"), (2, "ford")], [(1, 1, "volvo"), (2, 2, "pinto")],
                 [(1, "volvo", 120.0), (2, "volvo", 130.0), (3, "pinto", 200.0)])
    # the neighbour's model 'volvo' is made by ford: the two readings part
    apart = _cars(tmp_path / "apart.sqlite", [(1, "volvo"), (2, "ford")], [(1, 2, "volvo"), (2, 1, "pinto")],
                  [(1, "volvo", 120.0), (2, "pinto", 200.0)])
    hood = Neighbourhood(k=1, resolve=lambda name: real, cache_dir=tmp_path / "n")
    hood._built["d"] = [apart]
    found = disagreement(hood, "d", BY_MODEL, BY_MAKER, MatchRule(), question="What is the average edispl for all volvos?")
    assert found is not None and "holds 'volvo'" in found.get("gold_finding", "")
    # the question names the column: the answer read the other one -- a flag
    found = disagreement(hood, "d", BY_MODEL, BY_MAKER, MatchRule(), question="What is the average edispl of the model volvo?")
    assert found is not None and "gold_finding" not in found


def test_two_conditions_the_question_gives_apart_put_on_one_row_by_the_gold_is_a_gold_finding(tmp_path: Path) -> None:
    def cars(path: Path, rows: list) -> Path:
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE cars_data (id INTEGER PRIMARY KEY, weight INTEGER, year INTEGER)")
        con.executemany("INSERT INTO cars_data VALUES (?, ?, ?)", rows)
        con.commit()
        con.close()
        return path

    real = cars(tmp_path / "real.sqlite", [(1, 3500, 1970), (2, 3600, 1971), (3, 5000, 1972)])
    # 1980: one car under 3000, one over 4000 -- in the years of the answer's reading, not the gold's
    apart = cars(tmp_path / "apart.sqlite", [(1, 3500, 1970), (2, 2000, 1980), (3, 4500, 1980)])
    hood = Neighbourhood(k=1, resolve=lambda name: real, cache_dir=tmp_path / "n")
    hood._built["d"] = [apart]
    gold = "SELECT DISTINCT year FROM cars_data WHERE weight BETWEEN 3000 AND 4000"
    answer = ("SELECT DISTINCT year FROM cars_data WHERE weight < 4000 INTERSECT "
              "SELECT DISTINCT year FROM cars_data WHERE weight > 3000")
    also = "What are the years in which there were cars that weighed less than 4000 and also cars that weighed more than 3000?"
    found = disagreement(hood, "d", gold, answer, MatchRule(), question=also)
    assert found is not None and "('also')" in found["gold_finding"]
    # a question that asks for one car meeting both: a flag
    one = "In which years were cars made that weighed between 3000 and 4000?"
    found = disagreement(hood, "d", gold, answer, MatchRule(), question=one)
    assert found is not None and "gold_finding" not in found
    # the two conditions on one row still differ from the gold (a car of exactly 3000 the gold's
    # BETWEEN keeps and the answer's "> 3000" does not): a flag
    edge = cars(tmp_path / "edge.sqlite", [(1, 3500, 1970), (2, 2000, 1980), (3, 4500, 1980), (4, 3000, 1990)])
    hood._built["d"] = [edge]
    found = disagreement(hood, "d", gold, answer, MatchRule(), question=also)
    assert found is not None and "gold_finding" not in found


def test_counting_the_distinct_values_the_question_asks_for_where_the_gold_counts_rows_is_a_gold_finding(tmp_path: Path) -> None:
    def langs(path: Path, rows: list) -> Path:
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE spoken (continent TEXT, country TEXT, language TEXT)")
        con.executemany("INSERT INTO spoken VALUES (?, ?, ?)", rows)
        con.commit()
        con.close()
        return path

    real = langs(tmp_path / "real.sqlite", [("asia", "a", "x"), ("asia", "b", "y"), ("europe", "c", "z")])
    # europe: three rows of one language; asia: two languages
    apart = langs(tmp_path / "apart.sqlite", [("asia", "a", "x"), ("asia", "b", "y"), ("europe", "c", "z"),
                                              ("europe", "d", "z"), ("europe", "e", "z")])
    hood = Neighbourhood(k=1, resolve=lambda name: real, cache_dir=tmp_path / "n")
    hood._built["d"] = [apart]
    gold = "SELECT continent FROM spoken GROUP BY continent ORDER BY count(*) DESC LIMIT 1"
    answer = "SELECT continent FROM spoken GROUP BY continent ORDER BY COUNT(DISTINCT language) DESC LIMIT 1"
    found = disagreement(hood, "d", gold, answer, MatchRule(), question="Which continent has the most diverse languages?")
    assert found is not None and "counts distinct values" in found["gold_finding"]
    # the question does not ask for distinct values: a flag
    found = disagreement(hood, "d", gold, answer, MatchRule(), question="Which continent has the most entries?")
    assert found is not None and "gold_finding" not in found
    # the gold counts distinct values and the answer rows ("different" without DISTINCT): a flag
    found = disagreement(hood, "d", answer, gold, MatchRule(), question="Which continent has the most different languages?")
    assert found is not None and "gold_finding" not in found
    # with DISTINCT made COUNT(*) it still differs from the gold (it leaves rows out besides): a flag
    leaves_out = answer.replace("GROUP BY", "WHERE country NOT IN ('d', 'e') GROUP BY")
    found = disagreement(hood, "d", gold, leaves_out, MatchRule(), question="Which continent has the most diverse languages?")
    assert found is not None and "gold_finding" not in found
