"""A role that restricts nothing on a datasource gets the verdict a policy allowing everything
gets, so the validator remembers such verdicts once, under :data:`validator.UNRESTRICTED`:
shared by every unrestricted role and by the reference engine's check that a plan's names exist
(``resolver.resolve``, which before checked under a policy object the memo could not key, so
mode plans computed that verdict again on every item of every run, warm or cold)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_nl2sql.config.policy import RolePolicy, parse_glob
from pytest_nl2sql.datasources import guard
from pytest_nl2sql.datasources.memo import STORE
from pytest_nl2sql.engine import validator
from pytest_nl2sql.engine import validatorrules as rules
from pytest_nl2sql.engine.plan import PlanModel
from pytest_nl2sql.engine.resolver import resolve
from tests.replay.conftest import project, shop  # noqa: F401 - fixtures for the engine's test

SCHEMA = {"singer": ["singer_id", "Name", "country", "age"], "concert": ["concert_id", "singer_id", "year"]}

QUERIES = [
    "select name from singer where age > 40",
    "select s.name, c.year from singer as s join concert as c on s.singer_id = c.singer_id",
    "select * from singer",
    "select count(*) from concert",
    "select nme from singer",  # a name the datasource lacks
    "select rowid, name from singer",
    "select name from singer; select 1",  # two statements
    "delete from singer",
    "select singer_id from singer, concert",  # ambiguous
]

#: restrict nothing on ``music`` (rules on other datasources, whole-datasource patterns)
OPEN = [
    RolePolicy("admin"),
    RolePolicy("analyst", datasources=frozenset({"music", "shop"})),
    RolePolicy("other-rules", deny_tables=frozenset({("shop", "orders")}), deny_columns=frozenset({("shop", "c", "email")})),
    RolePolicy("globs", allow_globs=(parse_glob("music"),)),
    RolePolicy("star", allow_globs=(parse_glob("*"),), deny_globs=(parse_glob("shop.main.orders"),)),
    RolePolicy("schema-star", allow_globs=(parse_glob("music.*.*"),)),
]
#: restrict something on ``music``
CLOSED = [
    RolePolicy("no-age", deny_columns=frozenset({("music", "singer", "age")})),
    RolePolicy("no-concerts", deny_tables=frozenset({("music", "concert")})),
    RolePolicy("only-singer", allow_tables=frozenset({("music", "singer")})),
    RolePolicy("some-columns", allow_columns=frozenset({("music", "singer", "name")})),
    RolePolicy("one-table", allow_globs=(parse_glob("music.main.singer"),)),
    RolePolicy("deny-glob", allow_globs=(parse_glob("*"),), deny_globs=(parse_glob("music.main.concert"),)),
    RolePolicy("elsewhere", datasources=frozenset({"shop"})),
]


@pytest.fixture(autouse=True)
def _nothing_remembered() -> None:
    validator.VERDICTS.clear()
    guard.VERDICTS.clear()
    guard.PARSES.clear()


def _computed(sql: str, policy: RolePolicy) -> tuple:
    v = rules.validate_now(sql, "sqlite", "sqlite", "music", SCHEMA, policy)
    return v.ok, v.status, v.message, sorted(v.tables), sorted(v.columns), list(v.unknown)


@pytest.mark.parametrize("policy", OPEN, ids=[p.name for p in OPEN])
@pytest.mark.parametrize("sql", QUERIES)
def test_a_role_that_restricts_nothing_gets_the_unrestricted_verdict(sql: str, policy: RolePolicy) -> None:
    assert not policy.restricts("music")
    assert _computed(sql, policy) == _computed(sql, validator.UNRESTRICTED)


#: for each restricting policy, a query reading what it closes
CLOSED_QUERY = {
    "no-age": "select age from singer",
    "no-concerts": "select year from concert",
    "only-singer": "select year from concert",
    "some-columns": "select country from singer",
    "one-table": "select year from concert",
    "deny-glob": "select year from concert",
    "elsewhere": "select name from singer",
}


@pytest.mark.parametrize("policy", CLOSED, ids=[p.name for p in CLOSED])
def test_a_role_that_restricts_something_never_reads_the_unrestricted_verdict(policy: RolePolicy) -> None:
    """The security side of the shared key: with the unrestricted verdict remembered first, a
    role that restricts something still gets its own verdict -- refused."""
    assert policy.restricts("music")
    sql = CLOSED_QUERY[policy.name]
    key = validator._verdict_key(sql, "sqlite", "music", SCHEMA, policy)
    assert key is not None and key[-1] is policy
    opened = validator.validate_sql(sql, dialect="sqlite", datasource="music", schema=SCHEMA, policy=OPEN[0])
    assert opened.status == "ok"
    closed = validator.validate_sql(sql, dialect="sqlite", datasource="music", schema=SCHEMA, policy=policy)
    assert closed.status == "refused" and not closed.ok


def test_unrestricted_roles_share_one_remembered_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = rules.validate_now
    monkeypatch.setattr(rules, "validate_now", lambda sql, *a: calls.append(sql) or real(sql, *a))
    verdicts = {
        validator.validate_sql(QUERIES[1], dialect="sqlite", datasource="music", schema=SCHEMA, policy=p).status for p in OPEN
    }
    assert verdicts == {"ok"}
    assert calls == [QUERIES[1]]  # computed for the first role, remembered for the other five
    validator.validate_sql(QUERIES[1], dialect="sqlite", datasource="music", schema=SCHEMA, policy=CLOSED[0])
    assert calls == [QUERIES[1], QUERIES[1]]  # a restricted role's verdict is computed for it


def test_a_plans_check_of_names_is_remembered_and_shared_with_the_roles_check(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    calls: list[str] = []
    real = rules.validate_now
    monkeypatch.setattr(rules, "validate_now", lambda sql, *a: calls.append(sql) or real(sql, *a))
    plan = PlanModel.from_dict({"datasource": "music", "from": "singer", "select": ["Name", "country"]})
    assert resolve(plan, SCHEMA).status == "answer"
    assert resolve(plan, SCHEMA).status == "answer"
    assert len(calls) == 1  # the second resolution is a look-up (it used to be computed each time)
    from pytest_nl2sql.engine.compiler import compile_plan

    v = validator.validate_sql(compile_plan(plan, "sqlite"), dialect="sqlite", datasource="music", schema=SCHEMA, policy=OPEN[1])
    assert v.ok and len(calls) == 1  # an unrestricted role's check reads the same verdict

    # and it is written to the verdict store, read back by the next run
    STORE.enable(tmp_path)
    try:
        validator.VERDICTS.clear()
        resolve(plan, SCHEMA)
        STORE.flush()
        validator.VERDICTS.clear()
        STORE.enable(tmp_path)  # a new run: the file read afresh
        calls.clear()
        assert resolve(plan, SCHEMA).status == "answer"
        assert calls == []
    finally:
        STORE.enable(None)


def test_the_reference_engine_compiles_a_plan_once_per_answer(project: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The names check compiles the plan; the answer runs that SQL (it compiled it twice)."""
    from pytest_nl2sql.engine import plancompiler
    from pytest_nl2sql.engine.reference import ReferenceEngine
    from tests.engine.test_validator_security import PLANS, Q_NAMES, RecordingLLM

    compiled: list[str] = []
    real = plancompiler.compile_plan
    monkeypatch.setattr(plancompiler, "compile_plan", lambda plan, d: compiled.append(real(plan, d)) or compiled[-1])
    engine = ReferenceEngine(project)
    try:
        answer = engine.answer(Q_NAMES, "clerk", RecordingLLM(PLANS))
    finally:
        engine.close()
    assert answer.status == "ok" and answer.rows
    assert compiled == [answer.sql]
