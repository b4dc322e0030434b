"""Plugin overhead and xdist speed-up, as ratios measured in the same run.

    python benchmarks/bench_plugin.py [--cases 10000] [--db-cases 240] [--startup-pairs 9] [--startup-only]

0. Start-up cost when unused: ``pytest -q test_a.py`` in a project without suites, with the
   package installed against ``-p no:nl2sql``; median of interleaved pairs.  target <= 50 ms

1. Overhead per item in mode retrieval on an N-case x 3-role suite (3N items), against
   pytest's own per-item cost for a trivial parametrized test with the same number of items.
   The engine is a stub whose ``route`` returns at once, so the time measured is the plugin's
   (collection, items, scorers, records, report), not the router's.     target <= 1.5x
2. ``-n 2`` against ``-n 0`` on a suite whose time is spent in the database (mode plans,
   each case a query of about 0.1 s on a SQLite file).                  target >= 1.7x

Each run is a fresh ``python -m pytest`` subprocess; wall times include interpreter start-up.
Prints each number with its target and PASS/FAIL; always exits 0.
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STUB_CONFTEST = '''
from pytest_nl2sql.engine.protocol import Answer, RouteResult

class Stub:
    def route(self, question, role):
        return RouteResult(ranked=[("db", 1.0)], shortlist=["db"], tables=["db.T"], columns=["db.T.x"])

    def answer(self, question, role, llm):
        return Answer(status="ok")

def pytest_nl2sql_make_engine(config, project):
    return Stub()
'''

TRIVIAL_TEST = '''
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_item(i):
    assert i >= 0
'''


def routing_suite(n: int) -> str:
    out = ["version: 1", "cases:"]
    for i in range(n):
        out += [
            f"- id: c{i:05d}",
            f"  question: How many things are there in group {i}?",
            "  datasources: [db]",
            "  status: approved",
            "  origin: hand",
            "  tags: [bench]",
            "  outcome: {admin: allowed, analyst: allowed, viewer: refused}",
            "  tables: [T]",
            "  columns: [T.x]",
            f"  sql: SELECT x FROM T WHERE x = {i}",
            "  rows: []",
        ]
    return "\n".join(out) + "\n"


def slow_db(path: Path) -> None:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE T (x INTEGER PRIMARY KEY, y INTEGER)")
    con.executemany("INSERT INTO T VALUES (?, ?)", [(i, i % 97) for i in range(3000)])
    con.commit()
    con.close()


# a join no index can serve: about 2 million pair checks, a fraction of a second on SQLite
SLOW_SQL = "SELECT COUNT(*) AS n FROM T a JOIN T b ON (a.y * 7 + b.y) % 97 = {k}"


def db_suite(n: int) -> str:
    out = ["version: 1", "cases:"]
    for i in range(n):
        sql = SLOW_SQL.format(k=(i % 5) + 1)
        out += [
            f"- id: d{i:04d}",
            f"  question: How many pairs share a bucket, case {i}?",
            "  datasources: [db]",
            "  status: approved",
            "  origin: hand",
            "  outcome: {admin: allowed}",
            "  order_matters: false",
            f"  sql: {sql}",
            "  plan:",
            "    datasource: db",
            "    from: {table: T, alias: a}",
            f"    joins: [{{table: T, alias: b, on: {{eq: [{{sql: (a.y * 7 + b.y) % 97}}, {(i % 5) + 1}]}}}}]",
            '    select: [{expr: {count: "*"}, alias: n}]',
        ]
    return "\n".join(out) + "\n"


def run(args: list[str], cwd: Path, *, all_pass: bool = False) -> float:
    env = dict(os.environ, NL2SQL_CACHE_DIR=str(cwd / "cache"))
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode not in ((0,) if all_pass else (0, 1)):
        print(proc.stdout[-2000:], proc.stderr[-2000:])
        raise SystemExit(f"pytest failed ({proc.returncode}): {' '.join(args)}")
    return elapsed


def cpu_run(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``python -m pytest`` subprocess; CPU is the child's user +
    system time, which other processes on a loaded machine disturb far less than the wall."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = run(args, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def startup_unused(root: Path, pairs: int) -> tuple[float, float]:
    """Medians over interleaved pairs of (with the plugin - with ``-p no:nl2sql``), in ms: CPU, wall."""
    (root / "test_a.py").write_text("def test_a():\n    assert 1 + 1 == 2\n")
    (root / "pytest.ini").write_text("[pytest]\n")
    cpu, wall = [], []
    for i in range(pairs + 1):
        with_plugin = cpu_run(["test_a.py"], root)
        without = cpu_run(["test_a.py", "-p", "no:nl2sql"], root)
        if i:  # the first pair warms the disk cache and the bytecode
            wall.append(with_plugin[0] - without[0])
            cpu.append(with_plugin[1] - without[1])
    return statistics.median(cpu) * 1000, statistics.median(wall) * 1000


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--db-cases", type=int, default=120)
    ap.add_argument("--startup-pairs", type=int, default=9)
    ap.add_argument("--startup-only", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        # 0. start-up cost when unused
        (root / "unused").mkdir()
        extra, wall = startup_unused(root / "unused", args.startup_pairs)
        print(f"startup unused: {extra:+.0f} ms  (CPU time, median of {args.startup_pairs} interleaved pairs; "
              f"wall {wall:+.0f} ms; target <= 50 ms)  {'PASS' if extra <= 50 else 'FAIL'}")
        if args.startup_only:
            return 0
        # 1. overhead
        a = root / "plugin"
        a.mkdir()
        (a / "conftest.py").write_text(STUB_CONFTEST)
        (a / "suite.yaml").write_text(routing_suite(args.cases))
        (a / "nl2sql.yaml").write_text("version: 1\ndatasources:\n  db: {url: 'sqlite:///db.sqlite'}\nroles:\n  admin: {datasources: '*'}\n  analyst: {datasources: '*'}\n  viewer: {datasources: '*'}\n")
        slow_db(a / "db.sqlite")
        b = root / "trivial"
        b.mkdir()
        items = 3 * args.cases
        (b / "test_trivial.py").write_text(TRIVIAL_TEST.format(n=items))
        run(["--nl2sql-suite", "suite.yaml", "--nl2sql-mode", "retrieval", "--co"], a)  # warm the suite cache
        base = run(["test_trivial.py"], b)
        ours = run(["--nl2sql-suite", "suite.yaml", "--nl2sql-mode", "retrieval"], a)
        ratio = ours / base
        print(f"{items} items: pytest trivial parametrized {base:.2f}s ({base / items * 1e6:.0f} us/item), "
              f"plugin mode retrieval {ours:.2f}s ({ours / items * 1e6:.0f} us/item)")
        print(f"{'plugin overhead / pytest per-item overhead':<46} {ratio:6.2f}x  (target <= 1.5x)  {'PASS' if ratio <= 1.5 else 'FAIL'}")

        # 2. xdist on database time
        c = root / "db"
        c.mkdir()
        slow_db(c / "db.sqlite")
        (c / "nl2sql.yaml").write_text("version: 1\ndatasources:\n  db: {url: 'sqlite:///db.sqlite', timeout_s: 60}\nroles:\n  admin: {datasources: '*'}\n")
        (c / "suite.yaml").write_text(db_suite(args.db_cases))
        from pytest_nl2sql.config import load_config
        from pytest_nl2sql.datasources import DatasourceRegistry
        from pytest_nl2sql.upkeep.regenerate import regenerate

        regenerate(c / "suite.yaml", DatasourceRegistry.from_config(load_config(c / "nl2sql.yaml")))
        serial = run(["--nl2sql-suite", "suite.yaml", "-n", "0"], c, all_pass=True)
        parallel = run(["--nl2sql-suite", "suite.yaml", "-n", "2"], c, all_pass=True)
        speedup = serial / parallel
        print(f"{args.db_cases} database-bound items: -n 0 {serial:.2f}s, -n 2 {parallel:.2f}s")
        print(f"{'-n 2 speed-up over -n 0':<46} {speedup:6.2f}x  (target >= 1.7x)  {'PASS' if speedup >= 1.7 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
