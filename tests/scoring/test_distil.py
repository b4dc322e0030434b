"""Distilled neighbours: of k * pool candidates, the k that together kill the most mutants of
the suite's gold queries are kept (as the test-suite paper does), and the choice is remembered."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from pytest_nl2sql.scoring.mutants import kill_rates, mutants
from pytest_nl2sql.scoring.neighbours import Neighbourhood, distil, neighbours, run_query

GOLDS = [
    "SELECT name FROM singer WHERE age > 30",
    "SELECT country, COUNT(*) AS n FROM singer GROUP BY country ORDER BY n DESC LIMIT 1",
    "SELECT DISTINCT country FROM singer WHERE age >= 25 AND country <> 'France'",
]


def _db(tmp_path: Path) -> Path:
    path = tmp_path / "concert.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, age INTEGER NOT NULL);"
        "INSERT INTO singer VALUES (1,'Joe','France',52),(2,'Ann','USA',31),(3,'Bo','France',25),(4,'Cy','UK',44),(5,'Di','USA',29);"
    )
    con.commit()
    con.close()
    return path


def _kills(paths: list[Path]) -> int:
    killed = set()
    for g, gold in enumerate(GOLDS):
        found = mutants(gold, "sqlite", limit=8)
        for p in paths:
            report = kill_rates(gold, found, lambda sql, p=p: run_query(p, sql), ())
            killed |= {(g, i) for i in report.killed_real}
    return len(killed)


def test_distilled_neighbours_kill_at_least_as_many_mutants_as_the_first_k(tmp_path: Path) -> None:
    db, cache = _db(tmp_path), tmp_path / "cache"
    chosen = distil(db, 3, 0, cache, GOLDS, pool=4)
    assert len(chosen) == 3 and len(set(chosen)) == 3
    plain = neighbours(db, 3, 0, cache)  # the first three of the same candidates
    assert _kills(chosen) >= _kills(plain)
    assert list(cache.glob("distilled-*.json")), "the choice is remembered"
    assert distil(db, 3, 0, cache, GOLDS, pool=4) == chosen  # and read back, not recomputed


def test_a_neighbourhood_with_gold_queries_distils_and_one_without_does_not(tmp_path: Path) -> None:
    db, cache = _db(tmp_path), tmp_path / "cache"
    with_golds = Neighbourhood(k=2, resolve=lambda _: db, cache_dir=cache, golds=lambda _: GOLDS)
    assert with_golds.of("concert") == distil(db, 2, 0, cache, GOLDS, pool=3)
    without = Neighbourhood(k=2, resolve=lambda _: db, cache_dir=cache)
    assert without.of("concert") == neighbours(db, 2, 0, cache)
