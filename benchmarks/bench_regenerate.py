"""Regenerate speed: ``regenerate`` on a 10,000-case suite against the sum of its parts.

    python benchmarks/bench_regenerate.py [--cases 10000]

Baseline, measured in the same run: the time to execute all the suite's SQL with the adapter
plus the ruamel C safe load of the file. Target: regenerate <= 1.3x that baseline.
Prints the ratio with PASS/FAIL; always exits 0.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from ruamel.yaml import CSafeLoader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_nl2sql.config import load_config  # noqa: E402
from pytest_nl2sql.datasources import Adapter, DatasourceRegistry  # noqa: E402
from pytest_nl2sql.suitefile.loader import load_suite  # noqa: E402
from pytest_nl2sql.upkeep.regenerate import regenerate  # noqa: E402


def suite_text(n: int) -> str:
    out = ["# regenerate benchmark", "version: 1", "cases:"]
    for i in range(n):
        out += [
            f"- id: r{i:05d}",
            f"  question: What are the items of group {i % 50}?",
            "  datasources: [db]",
            "  status: approved",
            "  origin: hand",
            "  outcome: {admin: allowed}",
            "  order_matters: false",
            "  sql: |",
            f"    SELECT x, y, label FROM T WHERE y = {i % 50} AND x < {100 + i % 7}",
        ]
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["NL2SQL_CACHE_DIR"] = str(root / "cache")
        con = sqlite3.connect(root / "db.sqlite")
        con.execute("CREATE TABLE T (x INTEGER, y INTEGER, label TEXT)")
        con.executemany("INSERT INTO T VALUES (?, ?, ?)", [(i, i % 50, f"item {i}") for i in range(5000)])
        con.commit()
        con.close()
        (root / "nl2sql.yaml").write_text("version: 1\ndatasources:\n  db: {url: 'sqlite:///db.sqlite'}\n")
        path = root / "suite.yaml"
        path.write_text(suite_text(args.cases))

        t = time.perf_counter()
        CSafeLoader(path.read_text()).get_single_data()
        c_load = time.perf_counter() - t
        suite = load_suite(path, use_cache=False)
        adapter = Adapter("db", f"sqlite:///{root / 'db.sqlite'}")
        t = time.perf_counter()
        for case in suite.cases:
            adapter.execute(case.sql)
        sql_time = time.perf_counter() - t
        adapter.close()

        registry = DatasourceRegistry.from_config(load_config(root / "nl2sql.yaml"))
        t = time.perf_counter()
        report = regenerate(path, registry)
        regen = time.perf_counter() - t
        registry.close()
    baseline = c_load + sql_time
    ratio = regen / baseline
    print(f"{args.cases} cases: C safe load {c_load:.2f}s + executing all SQL {sql_time:.2f}s = {baseline:.2f}s; "
          f"regenerate {regen:.2f}s ({len(report.cases_written)} cases written, {len(report.failed)} failed)")
    print(f"{'regenerate / (SQL + C safe load)':<40} {ratio:6.2f}x  (target <= 1.3x)  {'PASS' if ratio <= 1.3 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
