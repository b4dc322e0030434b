"""Mutants of a gold SQL (``scoring/mutants.py``) and their kill rates, and
``pytest-nl2sql eval audit --mutants`` on a copy of the demo project (``weak-gold``)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.mutants import KINDS, MAX_MUTANTS, Mutant, kill_rates, mutants

KEYS = {
    "singer": [("singer_id", "INTEGER", True), ("country_id", "INTEGER", False)],
    "concert": [("concert_id", "INTEGER", True), ("singer_id", "INTEGER", False), ("stadium_id", "INTEGER", False)],
}


def _sqls(sql: str, **kw) -> list[str]:
    return [m.sql for m in mutants(sql, **kw)]


def test_comparisons_are_swapped() -> None:
    got = _sqls("SELECT name FROM singer WHERE age > 20")
    assert "SELECT name FROM singer WHERE age >= 20" in got
    assert "SELECT name FROM singer WHERE age < 20" in got
    assert "SELECT name FROM singer WHERE age <> 20" not in got  # > becomes >= or <, not !=
    assert "SELECT name FROM singer WHERE country <> 'x'" in _sqls("SELECT name FROM singer WHERE country = 'x'")


def test_distinct_is_dropped_and_added_where_it_can_matter() -> None:
    assert "SELECT name FROM singer" in _sqls("SELECT DISTINCT name FROM singer")
    assert "SELECT DISTINCT name FROM singer WHERE age > 1" in _sqls("SELECT name FROM singer WHERE age > 1")
    # one row of aggregates, or rows distinct by their GROUP BY: DISTINCT changes nothing
    assert not [m for m in mutants("SELECT MAX(age), 1 FROM singer") if m.kind == "distinct"]
    assert not [m for m in mutants("SELECT country, COUNT(*) FROM singer GROUP BY country") if m.kind == "distinct"]


def test_one_where_conjunct_is_dropped_at_a_time() -> None:
    got = [m for m in mutants("SELECT name FROM singer WHERE age > 20 AND country = 'x' AND id < 9") if m.kind == "where"]
    assert [m.sql for m in got] == [
        "SELECT name FROM singer WHERE country = 'x' AND id < 9",
        "SELECT name FROM singer WHERE age > 20 AND id < 9",
        "SELECT name FROM singer WHERE age > 20 AND country = 'x'",
    ]
    only = [m.sql for m in mutants("SELECT name FROM singer WHERE age > 20") if m.kind == "where"]
    assert only == ["SELECT name FROM singer"]
    having = [m.sql for m in mutants("SELECT c FROM t GROUP BY c HAVING COUNT(*) > 1") if m.kind == "where"]
    assert having == ["SELECT c FROM t GROUP BY c"]


def test_limit_moves_by_one() -> None:
    got = [m.sql for m in mutants("SELECT name FROM singer ORDER BY age LIMIT 3") if m.kind == "limit"]
    assert got == ["SELECT name FROM singer ORDER BY age LIMIT 4", "SELECT name FROM singer ORDER BY age LIMIT 2"]
    assert [m.sql for m in mutants("SELECT a FROM t ORDER BY a LIMIT 0") if m.kind == "limit"] == ["SELECT a FROM t ORDER BY a LIMIT 1"]


def test_aggregates_are_swapped() -> None:
    got = _sqls("SELECT SUM(a), MIN(b), COUNT(c) FROM t")
    assert "SELECT AVG(a), MIN(b), COUNT(c) FROM t" in got
    assert "SELECT SUM(a), MAX(b), COUNT(c) FROM t" in got
    assert "SELECT SUM(a), MIN(b), COUNT(DISTINCT c) FROM t" in got
    assert "SELECT COUNT(c) FROM t" in _sqls("SELECT COUNT(DISTINCT c) FROM t")
    assert not mutants("SELECT COUNT(*) FROM t")
    # COUNT of a table's one-column primary key, no join: COUNT(DISTINCT pk) is the same query
    assert not mutants("SELECT COUNT(singer_id) FROM singer", keys=KEYS)


def test_join_columns_are_swapped_for_another_key_of_the_same_type() -> None:
    sql = "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.singer_id"
    got = [m.sql for m in mutants(sql, keys=KEYS) if m.kind == "join-column"]
    assert got == [
        "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.country_id = T2.singer_id",
        "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.concert_id",
        "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.singer_id = T2.stadium_id",
    ]
    assert not [m for m in mutants(sql) if m.kind == "join-column"]  # no schema: no such mutants


def test_the_order_is_deterministic_round_robin_and_bounded() -> None:
    sql = (
        "SELECT DISTINCT name, SUM(a), MAX(b) FROM singer WHERE a > 1 AND b < 2 AND c = 3 AND d >= 4 "
        "GROUP BY name HAVING COUNT(x) <= 5 ORDER BY name LIMIT 7"
    )
    first, again = mutants(sql), mutants(sql)
    assert first == again
    assert [m.kind for m in first[:5]] == ["comparison", "distinct", "where", "limit", "aggregate"]
    assert len({m.sql for m in first}) == len(first)
    assert all(isinstance(m, Mutant) and m.change and m.kind in KINDS for m in first)
    assert len(mutants(sql, limit=4)) == 4
    wide = "SELECT a FROM t WHERE " + " AND ".join(f"c{i} > {i}" for i in range(60))
    assert len(mutants(wide)) == MAX_MUTANTS


def test_unreadable_sql_has_no_mutants() -> None:
    assert mutants("SELEC nonsense (((") == []


@pytest.fixture
def dbs(tmp_path: Path) -> tuple[Path, Path]:
    real, near = tmp_path / "real.sqlite", tmp_path / "near.sqlite"
    for path, rows in ((real, [(1, "a", 10), (2, "b", 20)]), (near, [(1, "a", 10), (2, "a", 20), (3, "a", 20)])):
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER)")
        con.executemany("INSERT INTO t VALUES (?, ?, ?)", rows)
        con.commit()
        con.close()
    return real, near


def _runner(path: Path):
    def run(sql: str) -> tuple:
        con = sqlite3.connect(path)
        try:
            cur = con.execute(sql)
            return tuple(d[0] for d in cur.description), cur.fetchall()
        finally:
            con.close()

    return run


def test_kill_rates_on_the_database_and_on_a_neighbour(dbs: tuple[Path, Path]) -> None:
    real, near = dbs
    gold = "SELECT name FROM t WHERE n > 15"
    ms = [
        Mutant("comparison", "", "SELECT name FROM t WHERE n >= 15"),  # same rows everywhere
        Mutant("where", "", "SELECT name FROM t"),  # killed on the real database
        Mutant("distinct", "", "SELECT DISTINCT name FROM t WHERE n > 15"),  # killed on the neighbour only
        Mutant("comparison", "", "SELECT nam FROM t WHERE n > 15"),  # does not run: not killed, left out
    ]
    r = kill_rates(gold, ms, _runner(real), [_runner(near)], MatchRule())
    assert r.killed_real == {1} and r.killed_any == {1, 2} and r.broken == {3}
    assert r.counted == 3 and r.rate_real == pytest.approx(1 / 3) and r.rate_any == pytest.approx(2 / 3)
    assert r.survivors()[0].sql == "SELECT name FROM t WHERE n >= 15"  # shortest first
    assert [m.sql for m in r.survivors(with_neighbours=True)] == ["SELECT name FROM t WHERE n >= 15"]
    assert r.neighbours == 1


def test_a_mutant_that_fails_only_on_a_neighbour_is_not_killed_there(dbs: tuple[Path, Path]) -> None:
    real, near = dbs

    def failing(sql: str) -> tuple:
        if "DISTINCT" in sql:
            raise sqlite3.OperationalError("boom")
        return _runner(near)(sql)

    ms = [Mutant("distinct", "", "SELECT DISTINCT name FROM t WHERE n > 15")]
    r = kill_rates("SELECT name FROM t WHERE n > 15", ms, _runner(real), [failing], MatchRule())
    assert r.killed_any == set() and r.broken == set() and r.rate_any == 0


def test_the_match_rule_decides_what_differs(dbs: tuple[Path, Path]) -> None:
    real, _ = dbs
    ms = [Mutant("distinct", "", "SELECT DISTINCT n FROM t")]
    gold = "SELECT n FROM t"
    assert kill_rates(gold, ms, _runner(real), rule=MatchRule()).killed_real == set()  # 10, 20 either way
    ms2 = [Mutant("where", "", "SELECT n FROM t ORDER BY n DESC")]
    assert kill_rates("SELECT n FROM t ORDER BY n", ms2, _runner(real), rule=MatchRule(order_matters=True)).killed_real == {0}
    assert kill_rates("SELECT n FROM t ORDER BY n", ms2, _runner(real), rule=MatchRule()).killed_real == set()


SUITE = """version: 1
cases:
- id: weak_media
  question: Which media types are there?
  datasources: [chinook]
  status: approved
  outcome: {admin: allowed}
  order_matters: false
  sql: SELECT Name FROM MediaType ORDER BY Name
- id: long_tracks
  question: How many tracks run longer than five minutes?
  datasources: [chinook]
  status: approved
  outcome: {admin: allowed}
  sql: SELECT COUNT(*) AS n FROM Track WHERE Milliseconds > 300000
"""

CLI = [sys.executable, "-m", "pytest_nl2sql.cli"]


def test_eval_audit_mutants_reports_kill_rates_and_weak_gold(tmp_path: Path, demo_dir: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(demo_dir, root)
    (root / "evals" / "small.yaml").write_text(SUITE, encoding="utf-8")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*CLI, "eval", *args], cwd=root, capture_output=True, text=True, timeout=300)

    assert run("regenerate", "evals/small.yaml").returncode == 0
    plain = run("audit", "evals/small.yaml")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    assert "weak-gold" not in plain.stdout and "mutants" not in plain.stdout

    proc = run("audit", "--mutants", "evals/small.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # a warning does not fail the audit
    out = proc.stdout
    assert "case 'weak_media': mutants killed 0/1 (0%) on the database" in out
    # >= 300000 survives: no track (and no neighbour's) lasts exactly 300000 ms
    assert "case 'long_tracks': mutants killed 2/3 (67%) on the database, 2/3 (67%) with 5 neighbour databases" in out
    weak = [ln for ln in out.splitlines() if "[weak-gold]" in ln]
    assert len(weak) == 1 and "case 'weak_media'" in weak[0]
    assert "DISTINCT added: SELECT DISTINCT Name FROM MediaType ORDER BY Name" in weak[0]
    assert "audit: 0 error(s), 1 warning(s)" in out
    assert (root / ".nl2sql-cache" / "neighbours").is_dir()
    assert run("audit", "--mutants", "--warnings", "evals/small.yaml").returncode == 1


def test_keep_best_picks_the_databases_that_together_kill_the_most() -> None:
    from pytest_nl2sql.scoring.neighbours import keep_best

    kills = {Path("a"): {1, 2}, Path("b"): {1, 2, 3}, Path("c"): {4}, Path("d"): {3}}
    assert keep_best(list(kills), kills.__getitem__, 2) == [Path("b"), Path("c")]
    assert keep_best(list(kills), kills.__getitem__, 4) == [Path("b"), Path("c"), Path("a"), Path("d")]


def test_the_pytest_audit_runs_mutants_when_asked(tmp_path: Path, demo_dir: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(demo_dir, root)
    (root / "evals" / "small.yaml").write_text(SUITE, encoding="utf-8")
    assert subprocess.run([*CLI, "eval", "regenerate", "evals/small.yaml"], cwd=root, capture_output=True, timeout=300).returncode == 0
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "--nl2sql-suite", "evals/small.yaml",
            "--nl2sql-mode", "retrieval", "--nl2sql-audit"]
    plain = subprocess.run(base, cwd=root, capture_output=True, text=True, timeout=300)
    assert "mutants killed" not in plain.stdout
    proc = subprocess.run([*base, "--nl2sql-audit-mutants"], cwd=root, capture_output=True, text=True, timeout=300)
    assert "case 'weak_media': mutants killed 0/1 (0%) on the database" in proc.stdout, proc.stdout[-2000:]
    assert "[weak-gold]" in proc.stdout
