"""Measure the wide-schema routing on both backends: ``python -m tests.realdb.measure``.

Starts a throwaway PostgreSQL server (tests/pg_server.py), loads the 1,200-table schema into
it and into SQLite files, builds a router per backend from introspection, and prints routing
accuracy, table recall, per-question ``route()`` latency (median and p95 over every question,
five runs each) and the PostgreSQL load and introspection times - the numbers docs/realdb.md
quotes. ``--write-baseline`` also rewrites ``routing_wide.baseline.json`` with today's misses
(run it when a router change moves cases, and review the diff). It reports; it asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.wide_schema import generate
from pytest_nl2sql.engine.router import Router
from tests.pg_server import running_server, skip_reason
from tests.realdb.wide_bed import (
    build_router,
    load_postgresql,
    score,
    sqlite_urls,
    write_baseline,
)

_REPEATS = 5


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _timed(call: Callable[[], object]) -> tuple[object, float]:
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def _report(backend: str, router: Router, questions: list[str]) -> dict:
    schema_cases = generate().routing_cases()
    routings = {case.id: router.route(case.question) for case in schema_cases}
    latencies = []
    for question in questions:
        for _ in range(_REPEATS):
            start = time.perf_counter()
            router.route(question)
            latencies.append((time.perf_counter() - start) * 1000)
    scores = score(schema_cases, routings)
    print(f"{backend}:")
    print(f"  top-1 datasource right           {scores.top1:.3f}")
    print(f"  top-1 right, shortlist complete  {scores.routed:.3f}")
    print(f"  mean table recall                {scores.recall:.3f}")
    print(
        f"  route() latency                  median {statistics.median(latencies):.2f} ms, "
        f"p95 {_percentile(latencies, 0.95):.2f} ms"
    )
    print(f"  misses ({len(scores.misses)}):")
    for case_id, reason in scores.misses.items():
        print(f"    {case_id}: {reason}")
    return {"scores": scores, "routings": routings}


def main(argv: list[str] | None = None) -> int:
    """Print the numbers; with ``--write-baseline`` also record today's misses."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-baseline", action="store_true")
    args = parser.parse_args(argv)
    schema = generate()
    questions = [case.question for case in schema.routing_cases()]
    print(
        f"{schema.table_count} tables, {len(schema.domains)} datasources, {len(questions)} questions"
    )
    results = {}
    with tempfile.TemporaryDirectory(prefix="nl2sql-realdb-") as folder:
        urls, seconds = _timed(lambda: sqlite_urls(schema, Path(folder)))
        print(f"sqlite: write_sqlite {seconds:.2f} s", end="")
        router, seconds = _timed(lambda: build_router(schema, urls))
        print(f", introspect + index {seconds:.2f} s")
        results["sqlite"] = _report("sqlite", router, questions)
    reason = skip_reason()
    if reason is not None:
        print(f"postgresql: skipped, {reason}")
    else:
        with running_server() as server:
            urls, seconds = _timed(lambda: load_postgresql(server, schema))
            print(
                f"postgresql: load (one database, 20 schemas: tables, rows, keys) {seconds:.2f} s",
                end="",
            )
            router, seconds = _timed(lambda: build_router(schema, urls))
            print(f", introspect + index {seconds:.2f} s")
            results["postgresql"] = _report("postgresql", router, questions)
        same = sum(
            results["sqlite"]["routings"][key] == results["postgresql"]["routings"][key]
            for key in results["sqlite"]["routings"]
        )
        print(f"identical Routing (ranked, shortlist, tables, columns) on both: {same} cases")
    if args.write_baseline:
        write_baseline(results["sqlite"]["scores"].misses)
        print("wrote tests/realdb/routing_wide.baseline.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
