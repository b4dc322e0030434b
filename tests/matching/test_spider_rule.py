"""The reimplementation of the official Spider rule (benchmarks/spider/official.py)."""

from __future__ import annotations

import sqlite3

from benchmarks.spider.official import (
    official_exec_match,
    official_order_matters,
    postprocess,
    remove_distinct,
    result_eq,
)


def test_result_eq_multiset_permutation_and_counts():
    assert result_eq([], [], True)
    assert result_eq([(1, "a"), (2, "b")], [("b", 2), ("a", 1)], False)
    assert not result_eq([(1, "a"), (2, "b")], [("b", 2), ("a", 1)], True)
    assert not result_eq([(1,), (1,)], [(1,)], False)
    assert not result_eq([(1,), (1,), (2,)], [(1,), (2,), (2,)], False)
    assert not result_eq([(1,)], [(1, 2)], False)
    assert result_eq([(1,)], [(1.0,)], False)
    assert not result_eq([(0.30000000000000004,)], [(0.3,)], False)


def test_official_preprocessing():
    assert postprocess("a ! = 1 and b > = 2") == "a != 1 and b >= 2"
    assert remove_distinct("SELECT DISTINCT a, count(distinct b) FROM t WHERE c = 'distinct'") == \
        "SELECT  a, count( b) FROM t WHERE c = 'distinct'"
    assert official_order_matters("SELECT a FROM t WHERE b = (SELECT b FROM u ORDER BY c LIMIT 1)")


def test_official_verdict_on_a_database(tmp_path):
    db = tmp_path / "t.sqlite"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'x'), (1, 'x'), (2, 'y');")
    con.close()
    # DISTINCT removed: the official metric passes a prediction with duplicates
    assert official_exec_match(db, "SELECT DISTINCT a FROM t", "SELECT a FROM t").matched
    assert not official_exec_match(db, "SELECT DISTINCT a FROM t", "SELECT a FROM t", keep_distinct=True).matched
    bad = official_exec_match(db, "SELECT a FROM t", "SELECT nope FROM t")
    assert not bad.matched and bad.error.startswith("prediction")
    assert official_exec_match(db, "SELECT a FROM t WHERE a ! = 2", "SELECT a FROM t WHERE a = 1").matched
