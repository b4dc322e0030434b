"""Hypothesis spells every denied function and every catalog table in every way SQL allows --
case, quotes, schema qualification, comments, and where in the query it sits -- and the guard
(``check_statement``) and/or the validator (``validate_sql``) must refuse each spelling."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_nl2sql.config import RolePolicy
from pytest_nl2sql.datasources import StatementRefused, check_statement
from pytest_nl2sql.engine.validator import validate_sql

from .corpus import CATALOG_TABLES, DENIED_FUNCTIONS, PG, SQLITE

SCHEMA = {
    "Customer": ["CustomerId", "Name", "Email", "Secret", "SecretLen"],
    "Audit": ["note"],
    "Payroll": ["PayrollId", "Amount"],
}
ADMIN = RolePolicy(name="admin")
VIEWER = RolePolicy(
    name="viewer",
    datasources=frozenset({"shop"}),
    deny_tables=frozenset({("shop", "payroll")}),
    deny_columns=frozenset(
        {("shop", "customer", c) for c in ("email", "secret", "customerid", "secretlen")}
    ),
)
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cased(draw: st.DrawFn, word: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(word), max_size=len(word)))
    return "".join(c.upper() if f else c.lower() for c, f in zip(word, flips, strict=True))


@st.composite
def identifier(draw: st.DrawFn, word: str, dialect: str) -> str:
    """``word`` with random case, maybe quoted (in PostgreSQL quoting keeps the case)."""
    text = draw(cased(word))
    quotes = ['"{}"', "{}"] + (["[{}]", "`{}`"] if dialect == SQLITE else [])
    return draw(st.sampled_from(quotes)).format(text)


_GAPS = ["", " ", "  ", "/**/", " /* x */ ", "\n", "\t"]

FUNCTION_PLACES = [
    "SELECT {call} AS x",
    'SELECT {call} AS x FROM "Customer"',
    'SELECT "Name" FROM "Customer" WHERE {call} IS NOT NULL',
    'SELECT "Name" FROM "Customer" ORDER BY {call}',
    "SELECT coalesce({call}, NULL) AS x",
    "SELECT CASE WHEN 1 = 1 THEN {call} END AS x",
    "WITH f AS (SELECT {call} AS x) SELECT x FROM f",
    "SELECT (SELECT {call}) AS x",
    'SELECT "Name" FROM "Customer" GROUP BY "Name" HAVING count({call}) > 0',
    'SELECT a."note" FROM "Audit" a JOIN "Customer" c ON {call} IS NOT NULL',
    'SELECT "note" FROM "Audit" UNION SELECT {call}',
    'SELECT "Name" FROM "Customer" WHERE EXISTS (SELECT {call})',
]
PG_ONLY_PLACES = [
    "SELECT * FROM {call} AS f",
    'SELECT f.* FROM "Customer" c, LATERAL (SELECT {call} AS x) f',
]


@st.composite
def function_attack(draw: st.DrawFn) -> tuple[str, str]:
    name, args, dialect = draw(st.sampled_from(DENIED_FUNCTIONS))
    spelled = draw(identifier(name, dialect))
    if dialect == PG and draw(st.booleans()):
        schema = "public" if name.startswith("dblink") else "pg_catalog"
        spelled = f"{draw(identifier(schema, dialect))}{draw(st.sampled_from(['.', ' . ']))}{spelled}"
    call = f"{spelled}{draw(st.sampled_from(_GAPS))}({args})"
    places = FUNCTION_PLACES + (PG_ONLY_PLACES if dialect == PG else [])
    return dialect, draw(st.sampled_from(places)).format(call=call)


CATALOG_PLACES = [
    "SELECT * FROM {t}",
    "SELECT x.* FROM {t} x",
    "SELECT count(*) AS n FROM {t}",
    'SELECT "Name" FROM "Customer" WHERE EXISTS (SELECT 1 FROM {t})',
    "WITH c AS (SELECT * FROM {t}) SELECT * FROM c",
    'SELECT c."Name" FROM "Customer" c JOIN {t} k ON 1 = 1',
    "SELECT (SELECT count(*) FROM {t}) AS n",
    'SELECT "Name" FROM "Customer" UNION SELECT NULL FROM {t}',
]
SQLITE_PRAGMA_FUNCTIONS = ["pragma_table_info", "pragma_table_xinfo", "pragma_index_list", "pragma_database_list", "pragma_function_list"]


@st.composite
def catalog_attack(draw: st.DrawFn) -> tuple[str, str]:
    if draw(st.integers(0, 4)) == 0:  # a pragma table-valued function (SQLite)
        name = draw(identifier(draw(st.sampled_from(SQLITE_PRAGMA_FUNCTIONS)), SQLITE))
        if draw(st.booleans()):
            name = f"{draw(identifier('main', SQLITE))}.{name}"
        return SQLITE, draw(st.sampled_from(CATALOG_PLACES)).format(t=f"{name}('Customer')")
    schema, table, dialect = draw(st.sampled_from(CATALOG_TABLES))
    spelled = draw(identifier(table, dialect))
    if schema is not None and (dialect == SQLITE or schema != "pg_catalog" or draw(st.booleans())):
        if dialect == SQLITE and schema == "main" and not draw(st.booleans()):
            pass  # sqlite_master unqualified
        else:
            spelled = f"{draw(identifier(schema, dialect))}.{spelled}"
    return dialect, draw(st.sampled_from(CATALOG_PLACES)).format(t=spelled)


def _guard_refuses(sql: str, dialect: str) -> bool:
    try:
        check_statement(sql, dialect)
    except StatementRefused:
        return True
    return False


@FUZZ
@given(function_attack())
def test_every_spelling_of_a_denied_function_is_refused(attack: tuple[str, str]) -> None:
    dialect, sql = attack
    if _guard_refuses(sql, dialect):
        return
    for policy in (ADMIN, VIEWER):
        check = validate_sql(sql, dialect=dialect, datasource="shop", schema=SCHEMA, policy=policy)
        assert not check.ok, f"{dialect}: {sql!r} passed the guard and the validator as {policy.name}"


@FUZZ
@given(catalog_attack())
def test_every_spelling_of_a_catalog_is_refused(attack: tuple[str, str]) -> None:
    dialect, sql = attack
    if _guard_refuses(sql, dialect):
        return
    admin = validate_sql(sql, dialect=dialect, datasource="shop", schema=SCHEMA, policy=ADMIN)
    assert not admin.ok, f"{dialect}: {sql!r} reads a catalog, passed as admin"
    viewer = validate_sql(sql, dialect=dialect, datasource="shop", schema=SCHEMA, policy=VIEWER)
    assert viewer.status == "refused", (
        f"{dialect}: {sql!r} as viewer gave {viewer.status} ({viewer.message}); a restricted role's "
        "catalog read must be refused like any denied name"
    )
