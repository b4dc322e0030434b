"""Suite I/O speed and memory, as ratios against ruamel.yaml's C safe loader on the same file.

    python benchmarks/bench_suite_io.py [--cases 10000]

Generates a suite of N cases (about 6 MB for 10,000), then measures, in this one run:

* the C safe load (``ruamel.yaml.CSafeLoader``), the baseline;
* ``load_suite`` for collection (cache off)                      target <= 1.2x
* ``load_suite`` again on the unchanged file (cache on, warm)    target <= 0.1x
* rewriting the rows of every case (``writer.update_rows``)      target <= 1.5x
* peak memory of the 10,000-case load (tracemalloc)              target <= 300 MB

Prints each number with its target and PASS/FAIL; always exits 0 (it reports, it does not test).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from ruamel.yaml import CSafeLoader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_nl2sql.suitefile.loader import load_suite  # noqa: E402
from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows  # noqa: E402


def generate(n: int, seed: int = 1) -> str:
    r = random.Random(seed)
    out = ["# generated benchmark suite", "version: 1", "cases:"]
    countries = ["USA", "Canada", "Brazil", "France", "Germany", "United Kingdom", "Czech Republic", "India"]
    for i in range(n):
        out.append(f"- id: case_{i:05d}")
        out.append(f"  question: How many customers in {r.choice(countries)}, by city ({i})?")
        out.append("  datasources: [chinook]")
        out.append("  status: approved")
        out.append("  origin: hand")
        out.append(f"  difficulty: {r.choice(['easy', 'medium', 'hard'])}")
        out.append("  tags: [aggregation, generated]")
        out.append("  outcome: {admin: allowed, analyst: allowed, viewer: refused}")
        out.append("  tables: [Customer]")
        out.append("  columns: [Customer.Country, Customer.City, Customer.CustomerId]")
        out.append("  order_matters: false")
        out.append("  sql: |")
        out.append("    SELECT City, COUNT(CustomerId) AS customers")
        out.append("    FROM Customer")
        out.append(f"    WHERE Country = '{r.choice(countries)}'")
        out.append("    GROUP BY City")
        out.append("  rows:")
        for _ in range(r.randint(2, 4)):
            out.append(f"  - {{City: City {r.randint(1, 999)}, customers: {r.randint(1, 40)}, share: {r.random():.4f}}}")
        out.append("  plan:")
        out.append("    datasource: chinook")
        out.append("    from: Customer")
        out.append("    select: [City, {expr: {count: CustomerId}, alias: customers}]")
        out.append("    group_by: [City]")
    return "\n".join(out) + "\n"


def timed(fn, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "suite.yaml"
        text = generate(args.cases)
        path.write_text(text)
        os.environ["NL2SQL_CACHE_DIR"] = str(Path(tmp) / "cache")
        size = path.stat().st_size / 2**20
        print(f"suite: {args.cases} cases, {size:.1f} MB")

        c_safe = timed(lambda: CSafeLoader(path.read_text()).get_single_data())
        ours = timed(lambda: load_suite(path, use_cache=False))
        load_suite(path)  # fill the cache
        cached = timed(lambda: load_suite(path), repeat=3)
        suite = load_suite(path)
        r = random.Random(2)
        updates = {
            c.id: RowsUpdate([{**row, "customers": r.randint(1, 40)} for row in c.rows or ()]) for c in suite.cases
        }
        rewrite = timed(lambda: update_rows(path, updates))

        tracemalloc.start()
        load_suite(path, use_cache=False)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

    def line(name: str, value: float, target: float, unit: str = "x") -> None:
        verdict = "PASS" if value <= target else "FAIL"
        print(f"{name:<44} {value:8.3f}{unit}  (target <= {target}{unit})  {verdict}")

    print(f"{'C safe load (baseline)':<44} {c_safe:8.3f}s")
    line("load for collection / C safe load", ours / c_safe, 1.2)
    line("load again, unchanged (cache) / C safe load", cached / c_safe, 0.1)
    line("rewrite all rows / C safe load", rewrite / c_safe, 1.5)
    line("peak memory of the load", peak / 2**20, 300, " MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
