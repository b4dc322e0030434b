"""Mutants made the fast way (each mutant shares the gold's tree but for the path to the changed
node, and reuses the gold's SQL text) are the mutants of before, in the same order.

``mutants_before.json`` holds ``mutants()`` as it was before the fast way (deep copy of the whole
query per mutant) on real golds: the demo's Chinook suite and two Spider dev golds (Spider,
CC BY-SA 4.0, read from ../shared/data/spider; those tests skip without it). Over every gold of
the demo and of Spider dev, the fast way equals the reference way (``fast=False``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.scoring.mutants import MAX_MUTANTS, _mutants, mutants
from pytest_nl2sql.suitefile.loader import load_suite

BEFORE = json.loads((Path(__file__).parent / "mutants_before.json").read_text())
SPIDER = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "spider"


def _keys(db: Path) -> dict[str, list[tuple[str, str, bool]]]:
    """Each table's primary and foreign key columns (``keys_from_schema``'s shape), read with PRAGMAs."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out = {}
        for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            cols = con.execute(f'PRAGMA table_info("{name}")').fetchall()
            fks = {r[3].lower() for r in con.execute(f'PRAGMA foreign_key_list("{name}")')}
            out[name.lower()] = [(c[1], c[2], bool(c[5])) for c in cols if c[5] or c[1].lower() in fks]
        return out
    finally:
        con.close()


def _listed(sql: str, keys: dict | None, *, fast: bool = True) -> list[list[str]]:
    return [[m.kind, m.change, m.sql] for m in _mutants(sql, "sqlite", keys, MAX_MUTANTS, fast=fast)]


def _demo_cases(demo_dir: Path) -> dict[str, tuple[str, Path]]:
    files = {"chinook": "chinook.sqlite", "support": "support.sqlite", "webanalytics": "webanalytics.sqlite"}
    out = {}
    for suite in sorted((demo_dir / "evals").glob("*.yaml")):
        for case in load_suite(suite).cases:
            if case.sql and len(case.datasources) == 1 and case.datasources[0] in files:
                out[f"demo/{suite.name}/{case.id}"] = (case.sql, demo_dir / "data" / files[case.datasources[0]])
    return out


def _spider_golds() -> list[tuple[str, Path]]:
    if not (SPIDER / "dev_gold.sql").is_file():
        pytest.skip(f"Spider dev is not at {SPIDER} (../shared/data/spider)")
    out = []
    for line in (SPIDER / "dev_gold.sql").read_text().splitlines():
        sql, _, db = line.rpartition("\t")
        if sql:
            out.append((sql, SPIDER / "database" / db / f"{db}.sqlite"))
    return out


def test_the_demo_golds_give_the_mutants_of_before(demo_dir: Path) -> None:
    cases = _demo_cases(demo_dir)
    named = [k for k in BEFORE if k.startswith("demo/")]
    assert named
    for name in named:
        sql, db = cases[name]
        assert _listed(sql, _keys(db)) == BEFORE[name], name


def test_spider_golds_give_the_mutants_of_before() -> None:
    golds = _spider_golds()
    for name in (k for k in BEFORE if k.startswith("spider/")):
        sql, db = golds[int(name.split("/")[1])]
        assert _listed(sql, _keys(db)) == BEFORE[name], name


def test_a_where_of_300_conjuncts_gives_the_mutants_of_before() -> None:
    where = " AND ".join(f"c{i} = {i}" for i in range(300))
    got = [[m.kind, m.change, m.sql] for m in mutants(f"SELECT a FROM t WHERE {where}")]
    assert len(got) == 26
    assert hashlib.sha256(json.dumps(got).encode()).hexdigest() == BEFORE["synthetic/300 (sha256 of the JSON list)"]


def test_the_fast_way_equals_the_reference_on_every_demo_gold(demo_dir: Path) -> None:
    cases = _demo_cases(demo_dir)
    keys = {db: _keys(db) for _sql, db in cases.values()}
    for name, (sql, db) in cases.items():
        assert _listed(sql, keys[db]) == _listed(sql, keys[db], fast=False), name


def test_the_fast_way_equals_the_reference_on_spider_dev() -> None:
    golds = _spider_golds()
    keys: dict[Path, dict | None] = {}
    for sql, db in golds[::4]:  # every fourth gold: 259 queries of the 19 databases (all 1,034 agreed when measured)
        if db not in keys:
            keys[db] = _keys(db) if db.is_file() else None
        assert _listed(sql, keys[db]) == _listed(sql, keys[db], fast=False), sql


def test_the_gold_tree_is_left_as_it_was_read() -> None:
    # edits change new nodes only: the kept text of a shared node stays true for every later mutant
    sql = "SELECT a.x, COUNT(b.y) FROM a JOIN b ON a.id = b.a_id WHERE a.x > 1 AND b.y <= 2 GROUP BY a.x LIMIT 5"
    keys = {"a": [("id", "INTEGER", True)], "b": [("a_id", "INTEGER", False), ("id", "INTEGER", True)]}
    assert _listed(sql, keys) == _listed(sql, keys, fast=False)
    assert len({m[2] for m in _listed(sql, keys)}) == len(_listed(sql, keys)) >= 10
