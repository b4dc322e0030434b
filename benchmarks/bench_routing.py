"""Routing benchmark: ``python benchmarks/bench_routing.py``.

Builds the 1,200-table wide schema (benchmarks/wide_schema.py), writes its SQLite files to a
temporary folder, introspects them, and measures the router on the test bed's hand-written
questions: index build time, route() latency (against a plain ``BM25Okapi.get_scores`` call
over the same tables, measured in the same run), routing accuracy and table recall. When the
Spider data set is in /work/shared/data/spider, it also routes Spider's dev questions among
its SQLite databases - a real-data check nobody here wrote.

It reports; it is not a test: it always exits 0.
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rank_bm25 import BM25Okapi  # noqa: E402

from benchmarks.wide_schema import WideCase, WideSchema, generate  # noqa: E402
from pytest_nl2sql.engine.router import DatasourceDoc, Router, tokenize  # noqa: E402

SPIDER = Path("/work/shared/data/spider")

TARGETS = {
    "write_s": 5.0,
    "introspect_s": 3.0,
    "build_s": 2.0,
    "route_median_ms": 5.0,
}


def _line(
    label: str,
    value: float,
    unit: str,
    target: float | None = None,
    *,
    at_least: bool = False,
    note: str = "",
) -> None:
    shown = f"{value:.3f} {unit}" if unit else f"{value:.3f}"
    if target is None:
        print(f"  {label:<44} {shown:>14}{'   ' + note if note else ''}")
        return
    ok = value >= target if at_least else value <= target
    sign = ">=" if at_least else "<="
    verdict = "PASS" if ok else "FAIL"
    print(
        f"  {label:<44} {shown:>14}   target {sign} {target:g} {unit:<3} {verdict}"
        f"{'   ' + note if note else ''}"
    )


# ---------------------------------------------------------------------------------------------
# Introspection: the project's own, or raw PRAGMAs while it is not importable


def _introspector() -> tuple[str, Callable[[str, Path], DatasourceDoc]]:
    try:
        from pytest_nl2sql.datasources import Adapter, introspect
        from pytest_nl2sql.engine.router import doc_from_schema
    except ImportError as error:
        reason = f"pytest_nl2sql.datasources not importable ({error}); raw sqlite3 PRAGMAs"
        return reason, _pragma_doc

    def read(name: str, path: Path) -> DatasourceDoc:
        adapter = Adapter(name, f"sqlite:///{path}")
        try:
            return doc_from_schema(introspect(adapter, refresh=True))
        finally:
            adapter.close()

    return "pytest_nl2sql.datasources.introspect", read


def _pragma_doc(name: str, path: Path) -> DatasourceDoc:
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables: dict[str, list[str]] = {}
        samples: dict[str, list[str]] = {}
        names = [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        for table in names:
            columns = connection.execute(f'PRAGMA table_info("{table}")').fetchall()
            tables[table] = [column[1] for column in columns]
            for column in columns:
                if "CHAR" in column[2].upper() or "TEXT" in column[2].upper():
                    values = connection.execute(
                        f'SELECT DISTINCT "{column[1]}" FROM "{table}" '
                        f'WHERE "{column[1]}" IS NOT NULL LIMIT 5'
                    ).fetchall()
                    texts = [str(value[0]) for value in values if isinstance(value[0], str)]
                    if texts:
                        samples[f"{table}.{column[1]}"] = texts
    finally:
        connection.close()
    return DatasourceDoc(name=name, tables=tables, samples=samples)


# ---------------------------------------------------------------------------------------------
# Measures


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def _timed(call: Callable[[], Any], repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def _accuracy(router: Router, cases: Sequence[WideCase]) -> tuple[float, float, float, list[str]]:
    top1 = shortlisted = 0
    recalls = []
    misses = []
    for case in cases:
        routing = router.route(case.question)
        first = routing.top in case.datasources
        complete = set(case.datasources) <= set(routing.shortlist)
        top1 += first
        shortlisted += first and complete
        got = set(routing.tables)
        recalls.append(sum(table in got for table in case.tables) / len(case.tables))
        if not (first and complete):
            misses.append(f"{case.id}: {case.question} -> {', '.join(routing.shortlist)}")
    count = len(cases)
    return top1 / count, shortlisted / count, statistics.mean(recalls), misses


def wide(workdir: Path) -> None:
    print("Wide schema (benchmarks/wide_schema.py)")
    start = time.perf_counter()
    schema: WideSchema = generate()
    generated = time.perf_counter() - start
    print(
        f"  generated {schema.table_count} tables over {len(schema.domains)} domains "
        f"in {generated * 1000:.0f} ms"
    )
    start = time.perf_counter()
    paths = schema.write_sqlite(workdir)
    _line("write_sqlite, 1,200 tables", time.perf_counter() - start, "s", TARGETS["write_s"])

    how, read = _introspector()
    start = time.perf_counter()
    docs = [read(domain, path) for domain, path in paths.items()]
    introspected = time.perf_counter() - start
    _line("introspect 1,200 tables", introspected, "s", TARGETS["introspect_s"], note=f"via {how}")
    docs = [_described(doc, schema.descriptions[doc.name]) for doc in docs]

    builds = _timed(lambda: Router(docs), 3)
    router = Router(docs)
    _line("Router index build (median of 3)", statistics.median(builds), "s", TARGETS["build_s"])

    cases = schema.routing_cases()
    questions = [case.question for case in cases]
    for question in questions:  # warm up
        router.route(question)
    latencies = [t * 1000 for q in questions for t in _timed(lambda q=q: router.route(q), 5)]

    corpus = [
        tokenize(" ".join([table, *columns]))
        for doc in docs
        for table, columns in doc.tables.items()
    ]
    plain = BM25Okapi(corpus)
    baseline = [
        t * 1000 for q in questions for t in _timed(lambda q=q: plain.get_scores(tokenize(q)), 5)
    ]
    median = statistics.median(latencies)
    base_median = statistics.median(baseline)
    _line(
        "route() median latency",
        median,
        "ms",
        TARGETS["route_median_ms"],
        note=f"{median / base_median:.2f}x a plain BM25Okapi.get_scores over 1,200 tables ({base_median:.3f} ms)",
    )
    _line("route() p95 latency", _percentile(latencies, 0.95), "ms")

    top1, shortlist, recall, misses = _accuracy(router, cases)
    print(
        f"  {len(cases)} routing cases ({sum(len(c.datasources) > 1 for c in cases)} need two datasources)"
    )
    _line("top-1 datasource is one the case needs", top1, "", 0.85, at_least=True)
    _line("top-1 right and shortlist holds all needed", shortlist, "", 0.85, at_least=True)
    _line("table recall (case tables in Routing.tables)", recall, "", 0.85, at_least=True)

    plain_docs = [
        tokenize(" ".join([doc.name, *(f"{t} {' '.join(c)}" for t, c in doc.tables.items())]))
        for doc in docs
    ]
    plain_sources = BM25Okapi(plain_docs)
    names = [doc.name for doc in docs]
    hits = 0
    for case in cases:
        scores = plain_sources.get_scores(tokenize(case.question))
        best = max(range(len(names)), key=lambda i: (scores[i], -i))
        hits += names[best] in case.datasources
    _line(
        "baseline: top-1 of one plain BM25 doc per datasource",
        hits / len(cases),
        "",
        note=f"router is {top1 / max(hits / len(cases), 1e-9):.2f}x",
    )
    if misses:
        print(f"  routing misses ({len(misses)}):")
        for miss in misses:
            print(f"    {miss}")


def _described(doc: DatasourceDoc, description: str) -> DatasourceDoc:
    import attrs

    return attrs.evolve(doc, description=description)


# ---------------------------------------------------------------------------------------------
# Spider


def spider() -> None:
    database = SPIDER / "database"
    if not (SPIDER / "dev.json").exists() or not database.is_dir():
        print(f"Spider: {SPIDER} not found; skipped")
        return
    print("Spider dev questions routed among the Spider SQLite databases")
    dev = json.loads((SPIDER / "dev.json").read_text())
    schemas = {entry["db_id"]: entry for entry in json.loads((SPIDER / "tables.json").read_text())}
    names = sorted(
        {q["db_id"] for q in dev if (database / q["db_id"] / f"{q['db_id']}.sqlite").exists()}
    )
    how, read = _introspector()
    docs = []
    for name in names:
        entry = schemas[name]
        tables: dict[str, list[str]] = {table: [] for table in entry["table_names_original"]}
        for table_index, column in entry["column_names_original"]:
            if table_index >= 0:
                tables[entry["table_names_original"][table_index]].append(column)
        introspected = read(name, database / name / f"{name}.sqlite")
        docs.append(DatasourceDoc(name=name, tables=tables, samples=introspected.samples))
    router = Router(docs)
    questions = [q for q in dev if q["db_id"] in names]
    skipped = len(dev) - len(questions)
    top1 = shortlisted = 0
    for question in questions:
        routing = router.route(question["question"])
        top1 += routing.top == question["db_id"]
        shortlisted += question["db_id"] in routing.shortlist
    plain = BM25Okapi(
        [
            tokenize(" ".join([doc.name, *(f"{t} {' '.join(c)}" for t, c in doc.tables.items())]))
            for doc in docs
        ]
    )
    plain_hits = 0
    for question in questions:
        scores = plain.get_scores(tokenize(question["question"]))
        best = max(range(len(names)), key=lambda i: (scores[i], -i))
        plain_hits += names[best] == question["db_id"]
    count = len(questions)
    print(
        f"  {count} questions over {len(names)} databases (samples via {how}); "
        f"{skipped} skipped, their database has no SQLite file"
    )
    _line("top-1 database right", top1 / count, "", 0.80, at_least=True)
    _line("right database in the shortlist", shortlisted / count, "", 0.85, at_least=True)
    _line(
        "baseline: top-1 of one plain BM25 doc per database",
        plain_hits / count,
        "",
        note=f"router is {top1 / max(plain_hits, 1):.2f}x",
    )


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="nl2sql-wide-") as workdir:
        wide(Path(workdir))
    print()
    spider()
    return 0


if __name__ == "__main__":
    try:
        main()
    except Exception as error:  # a benchmark reports; it never fails the caller
        print(f"benchmark stopped early: {type(error).__name__}: {error}")
    sys.exit(0)
