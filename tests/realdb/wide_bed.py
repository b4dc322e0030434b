"""The wide-schema test bed on real databases: load it, route its questions, judge the answers.

The 1,200-table schema of ``benchmarks/wide_schema.py`` becomes 20 datasources, one per
business domain, on each backend: a SQLite file per domain, and a schema per domain in one
database of a real PostgreSQL server (each domain one SQLAlchemy URL, as a user configures it).
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
import psycopg
from psycopg import sql

from benchmarks.wide_schema import WideCase, WideSchema
from pytest_nl2sql.datasources import Adapter, introspect
from pytest_nl2sql.engine.router import DatasourceDoc, Router, Routing, doc_from_schema
from tests.pg_server import PgServer

BACKENDS = ("sqlite", "postgresql")
BASELINE = Path(__file__).with_name("routing_wide.baseline.json")
_WORKERS = 4
_LOAD_WORKERS = 2  # more only adds lock contention on a 2-core runner


# ---------------------------------------------------------------------------------------------
# Loading


def _numeric(sql_type: str) -> bool:
    return sql_type.startswith(("INTEGER", "NUMERIC"))


def postgresql_rows(schema: WideSchema, domain: str, table: str) -> list[tuple[object, ...]]:
    """The table's generated rows, fit for PostgreSQL.

    The generator declares a few columns numeric yet fills them with words (``pay_frequency``:
    weekly, biweekly...). SQLite keeps the words in the NUMERIC column and its introspection
    treats the column as numeric (no sampled values); PostgreSQL refuses them, so they load as
    NULL. The declared schema is then the same on both backends, and so is what the router sees.
    """
    columns = schema.domains[domain][table]
    return [
        tuple(
            None if _numeric(sql_type) and isinstance(value, str) else value
            for value, (_, sql_type) in zip(row, columns, strict=True)
        )
        for row in schema.rows(domain, table)
    ]


def _load_domain(
    connection: psycopg.Connection, schema: WideSchema, domain: str, statements: list[str]
) -> None:
    """Run the domain's CREATE TABLE ``statements`` in the connection's current schema, fill
    the tables, then run its other statements (the foreign keys, after the rows, so load order
    does not matter); one round trip."""
    parts = [s for s in statements if s.startswith("CREATE TABLE ")]
    for table in schema.domains[domain]:
        rows = sql.SQL(", ").join(
            sql.SQL("({})").format(sql.SQL(", ").join(map(sql.Literal, row)))
            for row in postgresql_rows(schema, domain, table)
        )
        insert = sql.SQL("INSERT INTO {} VALUES {}").format(sql.Identifier(table), rows)
        parts.append(insert.as_string(connection))
    parts += [s for s in statements if not s.startswith("CREATE TABLE ")]
    connection.execute(";\n".join(parts))


def load_postgresql(server: PgServer, schema: WideSchema, dbname: str = "wide") -> dict[str, str]:
    """Load the schema into database ``dbname`` on ``server``, one PostgreSQL schema per domain,
    and return ``{domain: SQLAlchemy URL}``; each URL sets its sessions' ``search_path`` to its
    domain, so a datasource sees only its own 60 tables.

    One database with a schema per domain is how a warehouse is usually laid out, and it loads
    faster than 20 databases (``CREATE DATABASE`` copies a template each time).
    """
    ddl = schema.ddl("postgresql", rows=False)
    server.create_database(dbname)

    def load(domain: str) -> tuple[str, str]:
        with psycopg.connect(server.dsn(dbname)) as connection:
            name = sql.Identifier(domain)
            connection.execute(sql.SQL("CREATE SCHEMA {}").format(name))
            connection.execute(sql.SQL("SET LOCAL search_path TO {}").format(name))
            _load_domain(connection, schema, domain, ddl[domain])
        return domain, server.url(dbname, schema=domain)

    with ThreadPoolExecutor(_LOAD_WORKERS) as pool:
        return dict(pool.map(load, list(schema.domains)))


def sqlite_urls(schema: WideSchema, folder: Path) -> dict[str, str]:
    """Write one SQLite file per domain into ``folder``; return ``{domain: SQLAlchemy URL}``."""
    return {domain: f"sqlite:///{path}" for domain, path in schema.write_sqlite(folder).items()}


def build_docs(schema: WideSchema, urls: Mapping[str, str]) -> tuple[DatasourceDoc, ...]:
    """What the router knows of each domain at ``urls``: its introspected schema (through an
    ``Adapter``, as the plugin reads it) and the domain's description, as a user's datasource
    config would give it."""

    def document(domain: str) -> DatasourceDoc:
        adapter = Adapter(domain, urls[domain], timeout_s=30)
        try:
            return doc_from_schema(
                introspect(adapter, refresh=True), description=schema.descriptions[domain]
            )
        finally:
            adapter.close()

    with ThreadPoolExecutor(_WORKERS) as pool:
        return tuple(pool.map(document, list(urls)))


def build_router(schema: WideSchema, urls: Mapping[str, str]) -> Router:
    """The router over the domains at ``urls`` (see :func:`build_docs`)."""
    return Router(build_docs(schema, urls))


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
