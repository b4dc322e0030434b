"""Neighbours keep the real data's invariants (docs/scoring.md): NULLs only where the real
column has them, no child rows under an empty parent, identifier- and name-like columns that
are unique in the real data (over at least 10 values) stay unique, and a name drawn with its own code."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.scoring.neighbours import neighbours

COUNTRIES = [("ABW", "Aruba"), ("USA", "United States"), ("NLD", "Netherlands"), ("FRA", "France"),
             ("DEU", "Germany"), ("BEL", "Belgium"), ("ESP", "Spain"), ("ITA", "Italy"),
             ("PRT", "Portugal"), ("AUT", "Austria"), ("CHE", "Switzerland"), ("POL", "Poland")]

SCHEMA = """
CREATE TABLE country (id INTEGER PRIMARY KEY, code TEXT, name TEXT, continent TEXT, population INTEGER);
CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT, country_id INTEGER REFERENCES country(id), note TEXT);
"""


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "real.sqlite"
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    for i, (code, name) in enumerate(COUNTRIES, 1):
        con.execute("INSERT INTO country VALUES (?, ?, ?, ?, ?)", (i, code, name, "Europe" if i > 2 else "America", 1000 * (i % 3)))
    for i in range(1, 25):
        con.execute("INSERT INTO city VALUES (?, ?, ?, ?)", (i, f"city {i}", 1 + i % 12, None if i % 4 else "n"))
    con.commit()
    con.close()
    return path


@pytest.fixture
def hood(db: Path, tmp_path: Path) -> list[sqlite3.Connection]:
    return [sqlite3.connect(p) for p in neighbours(db, 12, 0, tmp_path / "n")]


def test_nulls_only_where_the_real_column_has_them(hood):
    for con in hood:
        assert con.execute("SELECT COUNT(*) FROM country WHERE code IS NULL OR name IS NULL OR continent IS NULL").fetchone() == (0,)
        assert con.execute("SELECT COUNT(*) FROM city WHERE name IS NULL OR country_id IS NULL").fetchone() == (0,)
    # the real note column has NULLs: some neighbour keeps some
    assert any(con.execute("SELECT COUNT(*) FROM city WHERE note IS NULL").fetchone()[0] for con in hood)


def test_no_child_rows_under_an_empty_parent(hood):
    for con in hood:
        if con.execute("SELECT COUNT(*) FROM country").fetchone() == (0,):
            assert con.execute("SELECT COUNT(*) FROM city").fetchone() == (0,)
        orphans = con.execute("SELECT COUNT(*) FROM city WHERE country_id NOT IN (SELECT id FROM country)").fetchone()
        assert orphans == (0,)


def test_unique_names_and_codes_stay_unique(hood):
    for con in hood:
        for col in ("code", "name"):
            dup = con.execute(f"SELECT COUNT(*) - COUNT(DISTINCT LOWER(TRIM({col}))) FROM country").fetchone()
            assert dup == (0,), col
    # a measure that repeats in the real data still ties in some neighbour (ORDER BY ... LIMIT mistakes)
    assert any(con.execute("SELECT COUNT(*) - COUNT(DISTINCT population) FROM country").fetchone()[0] for con in hood)


def test_a_name_comes_with_its_own_code(hood):
    pairs = dict(COUNTRIES)
    seen = 0
    for con in hood:
        for code, name in con.execute("SELECT code, name FROM country"):
            assert pairs[code] == name
            seen += 1
    assert seen


def test_every_parent_has_a_child_where_the_real_data_has_one(hood):
    # every real country has a city: so does every neighbour's
    assert any(con.execute("SELECT COUNT(*) FROM country").fetchone()[0] for con in hood)
    for con in hood:
        lonely = con.execute("SELECT COUNT(*) FROM country WHERE id NOT IN (SELECT country_id FROM city)").fetchone()
        assert lonely == (0,)
