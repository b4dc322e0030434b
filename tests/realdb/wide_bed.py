"""The wide-schema test bed on real databases: load it, route its questions, judge the answers.

The 1,200-table schema of ``benchmarks/wide_schema.py`` becomes 20 datasources, one per
business domain, on each backend: a SQLite file per domain, and a database per domain on a
real PostgreSQL server (so each domain is one SQLAlchemy URL, as a user would configure it).
A router is built from what ``introspect`` reads through an ``Adapter`` on each URL, exactly
as the plugin builds it, so a difference between the backends' introspection would show up as
a difference in routing. Used by ``test_routing_wide.py`` and by ``measure.py``.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs

from benchmarks.wide_schema import WideCase, WideSchema
from pytest_nl2sql.datasources import Adapter, introspect
from pytest_nl2sql.engine.router import DatasourceDoc, Router, Routing, doc_from_schema
from tests.pg_server import PgServer

BACKENDS = ("sqlite", "postgresql")
BASELINE = Path(__file__).with_name("routing_wide.baseline.json")
_WORKERS = 4


# ---------------------------------------------------------------------------------------------
# Loading


def postgresql_ddl(schema: WideSchema) -> dict[str, list[str]]:
    """Per domain, the PostgreSQL statements that create and fill its tables.

    A column the generator declares numeric but fills with words (``pay_frequency``:
    weekly, biweekly...) is declared TEXT: SQLite stores the words anyway, PostgreSQL refuses
    them. Columns whose values fit their type are left exactly as generated.
    """
    result: dict[str, list[str]] = {}
    for domain, statements in schema.ddl("postgresql", rows=True).items():
        fixed = []
        for statement in statements:
            if statement.startswith("CREATE TABLE "):
                table = statement.split('"')[1]
                rows = schema.rows(domain, table)
                for j, (column, sql_type) in enumerate(schema.domains[domain][table]):
                    if sql_type != "TEXT" and any(isinstance(row[j], str) for row in rows):
                        statement = statement.replace(f'"{column}" {sql_type}', f'"{column}" TEXT')
            fixed.append(statement)
        result[domain] = fixed
    return result


def load_postgresql(server: PgServer, schema: WideSchema) -> dict[str, str]:
    """Create one database per domain on ``server``, load
    its tables, rows and foreign keys, and return ``{domain: SQLAlchemy URL}``."""
    import psycopg

    ddl = postgresql_ddl(schema)

    def load(domain: str) -> tuple[str, str]:
        url = server.create_database(domain)
        with psycopg.connect(server.dsn(domain)) as connection:
            connection.execute(";\n".join(ddl[domain]))
        return domain, url

    with ThreadPoolExecutor(_WORKERS) as pool:
        return dict(pool.map(load, list(ddl)))


def sqlite_urls(schema: WideSchema, folder: Path) -> dict[str, str]:
    """Write one SQLite file per domain into ``folder``; return ``{domain: SQLAlchemy URL}``."""
    return {domain: f"sqlite:///{path}" for domain, path in schema.write_sqlite(folder).items()}


def build_router(schema: WideSchema, urls: Mapping[str, str]) -> Router:
    """The router over the domains at ``urls``, built from each one's introspected schema and
    the domain's description (as a user's datasource config would give it)."""

    def document(domain: str) -> DatasourceDoc:
        adapter = Adapter(domain, urls[domain], timeout_s=30)
        try:
            return doc_from_schema(
                introspect(adapter, refresh=True), description=schema.descriptions[domain]
            )
        finally:
            adapter.close()

    with ThreadPoolExecutor(_WORKERS) as pool:
        return Router(list(pool.map(document, list(urls))))


# ---------------------------------------------------------------------------------------------
# Judging one routing


def miss_reason(case: WideCase, routing: Routing) -> str | None:
    """Why ``routing`` is wrong for ``case`` (None when right): the top datasource is not one
    the case needs, the shortlist lacks one it needs, or tables the answer reads are not among
    ``routing.tables``."""
    reasons = []
    if routing.top not in case.datasources:
        reasons.append(f"top-1 is {routing.top}, not {' or '.join(case.datasources)}")
    lacking = [name for name in case.datasources if name not in routing.shortlist]
    if lacking and routing.top in case.datasources:
        reasons.append(f"shortlist {list(routing.shortlist)} lacks {', '.join(lacking)}")
    missing = [table for table in case.tables if table not in routing.tables]
    if missing:
        reasons.append(f"tables missed: {', '.join(missing)}")
    return "; ".join(reasons) or None


def table_recall(case: WideCase, routing: Routing) -> float:
    """Share of the tables the case's answer reads that ``routing.tables`` holds."""
    return sum(table in routing.tables for table in case.tables) / len(case.tables)


def routed_right(case: WideCase, routing: Routing) -> bool:
    """Top-1 is a datasource the case needs and the shortlist holds all it needs."""
    return routing.top in case.datasources and set(case.datasources) <= set(routing.shortlist)


@attrs.frozen
class Scores:
    """How a router did on a set of cases."""

    cases: int
    top1: float
    routed: float
    recall: float
    misses: dict[str, str]


def score(cases: Sequence[WideCase], routings: Mapping[str, Routing]) -> Scores:
    """Accuracy (top-1; top-1 with a complete shortlist), mean table recall and the misses."""
    misses = {}
    for case in cases:
        reason = miss_reason(case, routings[case.id])
        if reason:
            misses[case.id] = reason
    return Scores(
        cases=len(cases),
        top1=statistics.mean(routings[c.id].top in c.datasources for c in cases),
        routed=statistics.mean(routed_right(c, routings[c.id]) for c in cases),
        recall=statistics.mean(table_recall(c, routings[c.id]) for c in cases),
        misses=misses,
    )


# ---------------------------------------------------------------------------------------------
# The baseline of known misses


def read_baseline(path: Path = BASELINE) -> dict[str, str]:
    """``{case id: reason}`` of the misses known when the baseline was written."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return dict(data["misses"])


def write_baseline(misses: Mapping[str, str], path: Path = BASELINE) -> None:
    """Record today's misses (sorted by id) as the known ones."""
    data = {
        "about": (
            "Wide-schema routing cases the reference router misses today, on SQLite and "
            "PostgreSQL alike (tests/realdb/test_routing_wide.py). A listed case is xfail; "
            "any other miss fails. Rewrite with: python -m tests.realdb.measure --write-baseline"
        ),
        "misses": {case_id: misses[case_id] for case_id in sorted(misses)},
    }
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
