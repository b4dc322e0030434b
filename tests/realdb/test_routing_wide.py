"""Routing among 20 real datasources of a 1,200-table schema, on SQLite and on PostgreSQL.

Each of the wide schema's 142 hand-written questions (benchmarks/wide_schema.py, written
against what the domains mean, not their table names) is routed by a ``Router`` built from
``introspect`` on each datasource's URL - once over SQLite files, once over a real PostgreSQL
server. A case passes when the top datasource is one it needs, the shortlist holds every one
it needs, and ``Routing.tables`` holds every table its answer reads. Today's misses are listed
with their reasons in ``routing_wide.baseline.json``: a listed case is xfail, any other miss
fails, so no case may start failing unnoticed. Both backends must route every case the same
way, down to the scores and the columns handed on: a difference would be an introspection
difference a user would see as a different answer.

The floors sit a little under what was measured when they were set (on both backends: top-1
0.958, top-1 with a complete shortlist 0.937, mean table recall 0.937; see docs/realdb.md).
"""

from __future__ import annotations

import pytest

from benchmarks.wide_schema import WideCase, WideSchema, generate
from tests.realdb.conftest import Backend
from tests.realdb.wide_bed import BACKENDS, BASELINE, miss_reason, read_baseline, score

TOP1_FLOOR = 0.94
ROUTED_FLOOR = 0.92
RECALL_FLOOR = 0.92

CASES = generate().routing_cases()
KNOWN_MISSES = read_baseline()


def _describe(case: WideCase, backend: Backend, reason: str) -> str:
    routing = backend.router.route(case.question)
    ranked = ", ".join(f"{name} {score:.3f}" for name, score in routing.ranked[:4])
    return (
        f"case {case.id!r} on {backend.name}: {reason}\n"
        f"  question:  {case.question}\n"
        f"  needs:     {', '.join(case.datasources)}; tables {', '.join(case.tables)}\n"
        f"  ranked:    {ranked}\n"
        f"  shortlist: {', '.join(routing.shortlist)}\n"
        f"  tables:    {', '.join(routing.tables)}\n"
        f"(a new miss: fix the router, or - if the miss is accepted - record it with "
        f"python -m tests.realdb.measure --write-baseline and review the diff of {BASELINE.name})"
    )


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_question_routes_to_its_datasources_and_tables(case: WideCase, backend: Backend) -> None:
    reason = miss_reason(case, backend.router.route(case.question))
    if reason is None:
        return
    if case.id in KNOWN_MISSES:
        pytest.xfail(f"known miss ({BASELINE.name}): {KNOWN_MISSES[case.id]}")
    pytest.fail(_describe(case, backend, reason), pytrace=False)


def test_the_baseline_lists_only_cases_that_exist_with_a_reason() -> None:
    ids = {case.id for case in CASES}
    unknown = sorted(set(KNOWN_MISSES) - ids)
    assert not unknown, f"{BASELINE.name} lists cases the test bed does not have: {unknown}"
    assert all(isinstance(r, str) and r.strip() for r in KNOWN_MISSES.values()), (
        f"every miss in {BASELINE.name} needs its reason"
    )


def test_there_are_enough_questions_over_every_domain(wide_schema: WideSchema) -> None:
    assert len(CASES) >= 100
    assert len({case.id for case in CASES}) == len(CASES)
    assert {name for case in CASES for name in case.datasources} == set(wide_schema.domains)
    assert any(len(case.datasources) > 1 for case in CASES)


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_accuracy_and_table_recall_hold_their_floors(backend: Backend) -> None:
    scores = score(CASES, {case.id: backend.router.route(case.question) for case in CASES})
    summary = (
        f"{backend.name}: top-1 {scores.top1:.3f}, top-1 with complete shortlist "
        f"{scores.routed:.3f}, table recall {scores.recall:.3f} over {scores.cases} questions"
    )
    assert scores.top1 >= TOP1_FLOOR, summary
    assert scores.routed >= ROUTED_FLOOR, summary
    assert scores.recall >= RECALL_FLOOR, summary


@pytest.mark.parametrize("backend", BACKENDS, indirect=True)
def test_every_domain_is_one_datasource_of_60_tables(
    backend: Backend, wide_schema: WideSchema
) -> None:
    docs = {doc.name: doc for doc in backend.docs}
    assert set(docs) == set(wide_schema.domains)
    for domain, tables in wide_schema.domains.items():
        seen = {table: list(columns) for table, columns in docs[domain].tables.items()}
        assert seen == {table: [name for name, _ in cols] for table, cols in tables.items()}, (
            f"{backend.name} datasource {domain!r} does not hold exactly its domain's tables"
        )


def test_postgresql_introspection_reads_what_sqlite_introspection_reads(
    sqlite_backend: Backend, postgresql_backend: Backend
) -> None:
    lite = {doc.name: doc for doc in sqlite_backend.docs}
    for pg in postgresql_backend.docs:
        other = lite[pg.name]
        assert dict(pg.tables) == dict(other.tables), pg.name
        assert {k: set(v) for k, v in pg.samples.items()} == {
            k: set(v) for k, v in other.samples.items()
        }, f"{pg.name}: sampled values differ"
        assert {k: set(v) for k, v in pg.links.items()} == {
            k: set(v) for k, v in other.links.items()
        }, f"{pg.name}: foreign keys differ"


def test_sqlite_and_postgresql_route_every_case_alike(
    sqlite_backend: Backend, postgresql_backend: Backend
) -> None:
    different = []
    for case in CASES:
        lite = sqlite_backend.router.route(case.question)
        pg = postgresql_backend.router.route(case.question)
        fields = [
            f
            for f in ("ranked", "shortlist", "tables", "columns")
            if getattr(lite, f) != getattr(pg, f)
        ]
        if fields:
            different.append(
                f"{case.id}: {', '.join(fields)} differ - sqlite {lite.shortlist} "
                f"{lite.tables[:3]}, postgresql {pg.shortlist} {pg.tables[:3]}"
            )
    assert not different, "routing differs between the backends:\n" + "\n".join(different)
