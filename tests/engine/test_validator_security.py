"""Issue 10, the validator and engines side: what a query really reads, one refusal for denied
and missing names, refused answers that name nothing, the LLM's schema cut to the role, and
bounds on the validator's work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.config import RolePolicy
from pytest_nl2sql.datasources.guard import MAX_SQL_CHARS, MAX_SQL_NODES
from pytest_nl2sql.engine.reference import ReferenceEngine
from pytest_nl2sql.engine.replay import Prediction, ReplayEngine, sqlite_string_fallback
from pytest_nl2sql.engine.validator import (
    REFUSAL_MESSAGE,
    Validation,
    access_denied,
    is_system_catalog,
    policy_restricts,
    validate_sql,
)
from pytest_nl2sql.llm import FakeLLM
from pytest_nl2sql.suitefile.loader import load_suite
from tests.replay.conftest import project, shop  # noqa: F401 - fixtures for the end-to-end tests

SCHEMA = {"Customer": ["CustomerId", "Name", "Email"], "columns": ["x"]}
ADMIN = RolePolicy(name="admin")
VIEWER = RolePolicy(name="viewer", deny_columns=frozenset({("shop", "customer", "email")}))
PG, SQLITE, DUCKDB = "postgresql", "sqlite", "duckdb"


def check(sql: str, policy: Any = VIEWER, *, dialect: str = PG, schema: Any = None) -> Validation:
    return validate_sql(sql, dialect=dialect, datasource="shop", schema=schema or SCHEMA, policy=policy)


def assert_refused(v: Validation) -> None:
    assert (v.ok, v.status, v.message, v.unknown) == (False, "refused", REFUSAL_MESSAGE, ())
    assert v.tables == frozenset() and v.columns == frozenset()


EVERY_CUSTOMER_COLUMN = {"Customer.CustomerId", "Customer.Name", "Customer.Email"}

# -- 1a. whole-row references read every column ------------------------------------------------

WHOLE_ROW_PG = [
    'SELECT row_to_json(i.*) AS x FROM "Customer" i',
    'SELECT row_to_json(i) AS x FROM "Customer" i',
    'SELECT ROW_TO_JSON(I) AS x FROM "Customer" I',
    'SELECT "row_to_json"(i.*) AS x FROM "Customer" i',
    'SELECT to_jsonb(i) AS x FROM "Customer" i',
    "SELECT to_jsonb(i) ->> 'Email' AS x FROM \"Customer\" i",
    'SELECT (i.*)::text AS x FROM "Customer" i',
    'SELECT i::text AS x FROM "Customer" i',
    'SELECT CAST(i AS text) AS x FROM "Customer" i',
    'SELECT ROW(i.*)::text AS x FROM "Customer" i',
    'SELECT count(i.*) AS n FROM "Customer" i',
    'SELECT count(DISTINCT i.*) AS n FROM "Customer" i',
    'SELECT json_agg(i) AS x FROM "Customer" i',
    'SELECT md5(i::text) AS x FROM "Customer" i',
    'SELECT coalesce(i, i) AS x FROM "Customer" AS i',
    'SELECT "Customer" FROM "Customer"',
    'SELECT "Customer"::text AS x FROM "Customer"',
    'SELECT i FROM "Customer" AS i',
    """SELECT "Name" FROM "Customer" i WHERE i::text LIKE '%@%'""",
    'SELECT "Name" FROM "Customer" c WHERE EXISTS (SELECT 1 FROM "columns" k WHERE k.x = c::text)',
    'SELECT (SELECT count(c.*) FROM "columns" k) AS n FROM "Customer" c',
]


@pytest.mark.parametrize("sql", WHOLE_ROW_PG)
def test_a_whole_row_reference_reads_every_column(sql: str) -> None:
    assert_refused(check(sql))
    admin = check(sql, ADMIN)
    assert admin.ok, admin.message
    assert EVERY_CUSTOMER_COLUMN <= admin.columns


@pytest.mark.parametrize("dialect", [PG, DUCKDB])
def test_a_field_of_a_row_reads_that_column_only(dialect: str) -> None:
    """``(alias).col`` and ``(alias.*).col`` read ``col``, not the whole row: the denied
    column is refused, an allowed one answers (no false refusal)."""
    for row in ("(i)", "(i.*)"):
        assert_refused(check(f'SELECT {row}."Email" AS x FROM "Customer" i', dialect=dialect))
        assert check(f'SELECT {row}."Email" AS x FROM "Customer" i', ADMIN, dialect=dialect).columns == {
            "Customer.Email"
        }
        allowed = check(f'SELECT {row}."Name" AS x FROM "Customer" i', dialect=dialect)
        assert allowed.ok, allowed.message
        assert allowed.columns == {"Customer.Name"}


@pytest.mark.parametrize("sql", [
    'SELECT json_group_array(i.*) AS x FROM "Customer" i',
    'SELECT count(i.*) AS n FROM "Customer" i',
])
def test_sqlite_star_inside_a_call_reads_every_column(sql: str) -> None:
    assert_refused(check(sql, dialect=SQLITE))
    assert EVERY_CUSTOMER_COLUMN <= check(sql, ADMIN, dialect=SQLITE).columns


@pytest.mark.parametrize("sql", [
    "SELECT json_object(i.*) AS x FROM Customer i",
    "SELECT json_group_array(\"Email\") AS x FROM Customer",
    "SELECT json_object('e', Email) AS x FROM Customer",
])
def test_sqlite_json_functions_over_a_denied_column_are_not_ok(sql: str) -> None:
    v = check(sql, dialect=SQLITE)
    assert not v.ok and v.status in ("refused", "invalid")
    assert v.message == REFUSAL_MESSAGE or "Email" not in v.message


def test_a_bare_alias_on_duckdb_is_a_whole_row_too() -> None:
    assert_refused(check('SELECT to_json(i) AS x FROM "Customer" i', dialect=DUCKDB))


def test_a_bare_alias_on_sqlite_is_no_row_and_refused_like_a_missing_name() -> None:
    # SQLite has no row values: "i" is an unknown column there
    assert_refused(check('SELECT i FROM "Customer" AS i', dialect=SQLITE))
    assert check('SELECT i FROM "Customer" AS i', ADMIN, dialect=SQLITE).status == "unknown_reference"


def test_the_whole_row_of_a_derived_table_is_its_select_list() -> None:
    v = check('WITH c AS (SELECT "Name" FROM "Customer") SELECT row_to_json(c) AS x FROM c')
    assert v.ok and v.columns == {"Customer.Name"}
    v = check('SELECT to_jsonb(d.*) AS x FROM (SELECT "Name" FROM "Customer") d')
    assert v.ok and v.columns == {"Customer.Name"}
    assert_refused(check('WITH c AS (SELECT * FROM "Customer") SELECT row_to_json(c) AS x FROM c'))


def test_star_in_the_select_list_still_expands_and_count_star_reads_no_column() -> None:
    assert_refused(check('SELECT i.* FROM "Customer" i'))
    assert check('SELECT i.* FROM "columns" i').columns == {"columns.x"}
    v = check('SELECT count(*) AS n FROM "Customer"')
    assert v.ok and v.columns == frozenset() and v.tables == {"Customer"}


def test_a_column_named_like_its_alias_counts_as_the_whole_row_as_well() -> None:
    schema = {"t": ["t", "secret"], "u": ["a"]}
    policy = RolePolicy(name="v", deny_columns=frozenset({("shop", "t", "secret")}))
    assert_refused(check("SELECT t FROM t", policy, schema=schema))
    assert check("SELECT t FROM t", ADMIN, schema=schema).columns == {"t.t", "t.secret"}


# -- 1b. schema-qualified names ---------------------------------------------------------------


@pytest.mark.parametrize(("sql", "dialect"), [
    ("SELECT * FROM information_schema.columns", PG),
    ("SELECT x FROM information_schema.columns", PG),
    ("SELECT * FROM INFORMATION_SCHEMA.COLUMNS", PG),
    ('SELECT * FROM "information_schema"."columns"', PG),
    ("SELECT relname FROM pg_catalog.pg_class", PG),
    ("SELECT relname FROM pg_class", PG),
    ('SELECT attname FROM "pg_catalog"."pg_attribute"', PG),
    ("SELECT * FROM pg_stats", PG),
    ('SELECT "Name" FROM "Customer" WHERE EXISTS (SELECT 1 FROM information_schema.columns)', PG),
    ("SELECT * FROM information_schema.columns", DUCKDB),
    ("SELECT sql FROM sqlite_master", SQLITE),
    ("SELECT * FROM main.sqlite_master", SQLITE),
    ('SELECT * FROM "main"."sqlite_schema"', SQLITE),
    ("SELECT * FROM temp.sqlite_master", SQLITE),
    ("SELECT * FROM sqlite_temp_master", SQLITE),
    ("SELECT * FROM sqlite_temp_schema", SQLITE),
    ("SELECT * FROM sqlite_sequence", SQLITE),
    ("SELECT * FROM sqlite_stat1", SQLITE),
    ("SELECT * FROM [sqlite_master]", SQLITE),
    ("SELECT * FROM SQLITE_MASTER", SQLITE),
    ("SELECT * FROM pragma_table_info('Customer')", SQLITE),
    ("SELECT name FROM main.pragma_table_info('Customer')", SQLITE),
    ('SELECT "Name" FROM "Customer" WHERE (SELECT count(*) FROM sqlite_master) > 0', SQLITE),
])
def test_system_catalogs_are_never_the_schemas_tables(sql: str, dialect: str) -> None:
    assert_refused(check(sql, dialect=dialect))
    admin = check(sql, ADMIN, dialect=dialect)
    assert admin.status == "unknown_reference", admin


def test_a_catalog_does_not_resolve_to_a_same_named_table_of_the_schema() -> None:
    assert check("SELECT x FROM columns", dialect=PG).columns == {"columns.x"}
    v = check("SELECT x FROM information_schema.columns", ADMIN)
    assert v.unknown == ("information_schema.columns",)


@pytest.mark.parametrize(("sql", "dialect"), [
    ('SELECT "Name" FROM "public"."Customer"', PG),
    ('SELECT c."Name" FROM public."Customer" AS c', PG),
    ('SELECT public."Customer"."Name" FROM public."Customer"', PG),
    ('SELECT "Name" FROM main."Customer"', SQLITE),
    ('SELECT main."Customer"."Name" FROM main."Customer"', SQLITE),
    ('SELECT "Name" FROM main."Customer"', DUCKDB),
])
def test_the_datasources_own_schema_names_its_tables(sql: str, dialect: str) -> None:
    v = check(sql, dialect=dialect)
    assert v.ok and v.columns == {"Customer.Name"}, v
    assert_refused(check(sql.replace('"Name"', '"Email"', 1), dialect=dialect))


@pytest.mark.parametrize(("sql", "dialect", "shown"), [
    ('SELECT "Name" FROM temp."Customer"', SQLITE, "temp.Customer"),
    ('SELECT "Name" FROM other."Customer"', PG, "other.Customer"),
    ('SELECT "Name" FROM public."Customer"', SQLITE, "public.Customer"),
    ('SELECT "Name" FROM main."Customer"', PG, "main.Customer"),
    ('SELECT "Name" FROM shop.public."Customer"', PG, "shop.public.Customer"),
    ('SELECT other."Customer"."Name" FROM "Customer"', PG, "other.Customer.Name"),
])
def test_a_foreign_qualifier_names_nothing_of_the_schema(sql: str, dialect: str, shown: str) -> None:
    assert_refused(check(sql, dialect=dialect))
    assert check(sql, ADMIN, dialect=dialect).unknown == (shown,)


def test_a_qualified_table_named_like_a_cte_is_not_guessed() -> None:
    # main.Customer is the base table even where a CTE is called Customer
    v = check('WITH "Customer" AS (SELECT 1 AS x) SELECT * FROM main."Customer"', dialect=SQLITE)
    assert v.status == "invalid" and not v.ok


def test_is_system_catalog() -> None:
    assert is_system_catalog("columns", "information_schema")
    assert is_system_catalog("PG_CLASS") and is_system_catalog("sqlite_schema")
    assert is_system_catalog("pragma_table_info") and is_system_catalog("sqlite_stat4")
    assert not is_system_catalog("columns") and not is_system_catalog("Customer", "public")


# -- 1c. SQLite rowid pseudo-columns ----------------------------------------------------------


@pytest.mark.parametrize("sql", [
    'SELECT "rowid" FROM "Customer"',
    "SELECT rowid FROM Customer",
    'SELECT "oid" FROM "Customer"',
    'SELECT _rowid_ FROM "Customer"',
    'SELECT "_ROWID_" FROM "Customer"',
    'SELECT i.ROWID FROM "Customer" i',
    'SELECT "Name" FROM "Customer" WHERE "rowid" = 5',
    'SELECT "Name" FROM "Customer" WHERE oid BETWEEN 1 AND 7',
    'SELECT "Name" FROM "Customer" ORDER BY rowid DESC',
    'SELECT max(rowid) AS m FROM "Customer"',
    'SELECT (SELECT max(rowid) FROM "Customer") AS m FROM "columns"',
    'SELECT "Name" FROM "Customer" c WHERE EXISTS (SELECT 1 FROM "columns" k WHERE k.x = c.rowid)',
])
def test_rowid_reads_the_key_so_a_role_that_cannot_read_every_column_is_refused(sql: str) -> None:
    assert_refused(check(sql, dialect=SQLITE))
    admin = check(sql, ADMIN, dialect=SQLITE)
    assert admin.ok, admin
    assert EVERY_CUSTOMER_COLUMN <= admin.columns


def test_rowid_of_a_table_the_role_reads_whole_is_fine() -> None:
    v = check('SELECT rowid, x FROM "columns"', dialect=SQLITE)
    assert v.ok and v.columns == {"columns.x"}


def test_a_real_column_called_rowid_is_that_column() -> None:
    schema = {"t": ["rowid", "secret"]}
    policy = RolePolicy(name="v", deny_columns=frozenset({("shop", "t", "secret")}))
    v = check("SELECT rowid FROM t", policy, dialect=SQLITE, schema=schema)
    assert v.ok and v.columns == {"t.rowid"}


def test_rowid_is_an_ordinary_name_outside_sqlite() -> None:
    assert_refused(check('SELECT "rowid" FROM "Customer"', dialect=PG))
    assert check('SELECT "rowid" FROM "Customer"', ADMIN, dialect=PG).unknown == ("rowid",)


# -- 3. one refusal for denied and missing names ------------------------------------------------


@pytest.mark.parametrize(("denied", "missing"), [
    ('SELECT "Email" FROM "Customer"', 'SELECT "Emial" FROM "Customer"'),
    ('SELECT c."Email" FROM "Customer" c', 'SELECT c."Emale" FROM "Customer" c'),
    ("""SELECT "Name" FROM "Customer" WHERE "Email" = 'x'""", """SELECT "Name" FROM "Customer" WHERE "Emial" = 'x'"""),
    ('SELECT "Email" FROM "Customer"', 'SELECT "Email" FROM "Custmer"'),
    ('SELECT "rowid" FROM "Customer"', 'SELECT "rowidd" FROM "Customer"'),
    ("SELECT name FROM sqlite_master", "SELECT name FROM sqlite_mastr"),
    ('SELECT x FROM (SELECT "Email" AS x FROM "Customer") d', 'SELECT d.y FROM (SELECT "Name" AS x FROM "Customer") d'),
])
@pytest.mark.parametrize("dialect", [SQLITE, PG])
def test_denied_and_missing_names_are_indistinguishable(denied: str, missing: str, dialect: str) -> None:
    a, b = check(denied, dialect=dialect), check(missing, dialect=dialect)
    assert a == b
    assert_refused(a)


def test_an_unrestricted_role_still_gets_the_missing_names() -> None:
    v = check('SELECT "Emial" FROM "Customer"', ADMIN)
    assert (v.status, v.unknown) == ("unknown_reference", ("Emial",))
    assert "Emial" in v.message


def test_an_allow_list_restricts_too() -> None:
    allow = RolePolicy(name="a", allow_tables=frozenset({("shop", "customer")}))
    assert_refused(check('SELECT "Phone" FROM "Customer"', allow))
    assert_refused(check("SELECT x FROM columns", allow))
    allow_cols = RolePolicy(name="b", allow_columns=frozenset({("shop", "customer", "name")}))
    assert_refused(check('SELECT "Phone" FROM "Customer"', allow_cols))


def test_an_ambiguous_column_a_restricted_role_may_not_read_is_refused() -> None:
    schema = {"a": ["id", "secret"], "b": ["id", "secret"]}
    policy = RolePolicy(name="v", deny_columns=frozenset({("shop", "b", "secret")}))
    assert_refused(check("SELECT secret FROM a JOIN b ON a.id = b.id", policy, schema=schema))
    v = check("SELECT id FROM a JOIN b ON a.id = b.id", policy, schema=schema)
    assert v.status == "invalid" and "ambiguous" in v.message


def test_policy_restricts() -> None:
    assert not policy_restricts(ADMIN, "shop")
    assert policy_restricts(VIEWER, "shop")
    assert not policy_restricts(VIEWER, "other")  # its only deny rule is on shop
    assert policy_restricts(RolePolicy(name="t", deny_tables=frozenset({("shop", "x")})), "shop")
    assert policy_restricts(RolePolicy(name="t", allow_tables=frozenset()), "other")
    assert policy_restricts(RolePolicy(name="t", datasources=frozenset({"a"})), "shop")
    assert not policy_restricts(RolePolicy(name="t", datasources=frozenset({"shop"})), "shop")

    class Asks:
        allow_tables = frozenset()  # ignored: the method decides

        def restricts(self, ds: str) -> bool:
            return ds == "x"

    assert policy_restricts(Asks(), "x") and not policy_restricts(Asks(), "shop")


def test_access_denied_recognises_database_refusals() -> None:
    assert access_denied(Exception("access to Customer.Email is prohibited"))
    assert access_denied(Exception("not authorized"))
    assert access_denied(Exception('permission denied for table "Customer"'))
    assert not access_denied(Exception("no such column: x"))


# -- 5. bounds --------------------------------------------------------------------------------


def test_sql_over_the_size_limit_is_invalid_before_any_work() -> None:
    sql = "SELECT x FROM columns WHERE x = '" + "a" * MAX_SQL_CHARS + "'"
    v = check(sql, ADMIN)
    assert v.status == "invalid" and f"{MAX_SQL_CHARS:,}" in v.message


def test_a_parse_tree_over_the_node_limit_is_invalid() -> None:
    sql = "SELECT " + " + ".join(["x"] * (MAX_SQL_NODES // 2 + 10)) + " AS y FROM columns"
    v = check(sql, ADMIN)
    assert v.status == "invalid", v
    assert "nodes" in v.message or "tokens" in v.message


def test_a_big_in_list_is_bounded() -> None:
    sql = "SELECT x FROM columns WHERE x IN (" + ", ".join(str(i) for i in range(30_000)) + ")"
    assert check(sql, ADMIN).status == "invalid"


def test_deep_nesting_is_invalid_not_a_crash() -> None:
    sql = "SELECT " + "(" * 3000 + "1" + ")" * 3000 + " AS y"
    assert check(sql, ADMIN).status == "invalid"


# -- 2, 3, 4 end to end: the replay and reference engines on a SQLite file ----------------------


def _case(shop_dir: Path, case_id: str) -> Any:
    return load_suite(shop_dir / "evals" / "shop.yaml").get(case_id)


def _spy(engine: Any) -> list[tuple[str, Any]]:
    """Record (sql, role) of every adapter.execute call."""
    adapter = engine.registry.get("shop")
    calls: list[tuple[str, Any]] = []
    real = adapter.execute

    def execute(sql: str, **kw: Any) -> Any:
        calls.append((sql, kw.get("role")))
        return real(sql, **kw)

    adapter.execute = execute
    return calls


def test_replay_passes_the_roles_policy_to_the_adapter(shop: Path, project: Any) -> None:  # noqa: F811
    e = ReplayEngine([Prediction(id="shop_002", sql="SELECT name FROM customer WHERE city = 'Paris'")], project)
    calls = _spy(e)
    assert e.answer_case(_case(shop, "shop_002"), "clerk").status == "ok"
    assert calls == [("SELECT name FROM customer WHERE city = 'Paris'", project.role("clerk"))]


@pytest.mark.parametrize("sql", [
    'SELECT "rowid" FROM customer',
    'SELECT name FROM customer WHERE "rowid" = 1',
    "SELECT _rowid_ FROM customer",
    'SELECT "oid", name FROM customer',
])
def test_replay_rowid_for_a_restricted_role_is_refused_and_names_nothing(shop: Path, project: Any, sql: str) -> None:  # noqa: F811
    e = ReplayEngine([Prediction(id="shop_002", sql=sql)], project)
    calls = _spy(e)
    a = e.answer_case(_case(shop, "shop_002"), "clerk")
    assert (a.status, a.message, a.rows) == ("refused", REFUSAL_MESSAGE, None)
    assert a.retrieved_tables == () and a.retrieved_columns == ()
    assert calls == []  # nothing ran
    assert e.answer_case(_case(shop, "shop_002"), "admin").status == "ok"


def test_replay_missing_and_denied_names_answer_alike(shop: Path, project: Any) -> None:  # noqa: F811
    e = ReplayEngine([Prediction(id="shop_002", sql='SELECT "email" FROM customer', role="clerk"),
                      Prediction(id="shop_003", sql='SELECT "emial" FROM customer', role="clerk")], project)
    a = e.answer_case(_case(shop, "shop_002"), "clerk")
    b = e.answer_case(_case(shop, "shop_003"), "clerk")
    assert (a.status, a.message, a.rows, a.retrieved_tables, a.retrieved_columns) == \
        (b.status, b.message, b.rows, b.retrieved_tables, b.retrieved_columns) == \
        ("refused", REFUSAL_MESSAGE, None, (), ())


def test_the_fallback_never_turns_a_pseudo_column_or_alias_into_a_string() -> None:
    cols = ["name", "city"]
    assert sqlite_string_fallback('SELECT "rowid", "oid", "_ROWID_" FROM customer', cols) is None
    assert sqlite_string_fallback('SELECT "name" FROM customer c WHERE "c" IS NOT NULL', cols) is None
    assert sqlite_string_fallback('WITH t(a) AS (SELECT 1) SELECT "a" FROM t', cols) is None
    assert sqlite_string_fallback(
        """SELECT "rowid" FROM customer WHERE city = "O'Hare" AND name = "Ann\"""", cols
    ) == """SELECT "rowid" FROM customer WHERE city = 'O''Hare' AND name = 'Ann'"""


def test_replay_runs_the_fixed_sql_it_validated(shop: Path, project: Any) -> None:  # noqa: F811
    sql = 'SELECT name FROM customer WHERE city = "Paris" ORDER BY "rowid"'
    e = ReplayEngine([Prediction(id="shop_002", sql=sql)], project)
    calls = _spy(e)
    a = e.answer_case(_case(shop, "shop_002"), "admin")
    assert a.status == "ok" and a.rows == [("Ann",), ("Bob",)]
    assert calls == [("""SELECT name FROM customer WHERE city = 'Paris' ORDER BY "rowid\"""", project.role("admin"))]


def test_replay_gives_a_restricted_role_no_fallback(shop: Path, project: Any) -> None:  # noqa: F811
    # a fallback would tell a missing name ("Paris" becomes a string) from a denied one
    e = ReplayEngine([Prediction(id="shop_002", sql='SELECT name FROM customer WHERE city = "Paris"')], project)
    a = e.answer_case(_case(shop, "shop_002"), "clerk")
    assert (a.status, a.message) == ("refused", REFUSAL_MESSAGE)


class RecordingLLM(FakeLLM):
    def __init__(self, plans: dict[str, Any]) -> None:
        super().__init__(plans)
        self.requests: list[Any] = []

    def generate_plan(self, request: Any) -> Any:
        self.requests.append(request)
        return super().generate_plan(request)


Q_EMAIL, Q_EMIAL, Q_NAMES, Q_ROWID, Q_COUNT = (
    "List the customers' emails.", "List the customers' emials.", "Which customers live in Paris?",
    "Customer row ids?", "How many customers are there?",
)
PLANS = {
    Q_EMAIL: {"datasource": "shop", "from": "customer", "select": ["email"]},
    Q_EMIAL: {"datasource": "shop", "from": "customer", "select": ["emial"]},
    Q_NAMES: {"datasource": "shop", "from": "customer", "select": ["name"],
              "where": {"eq": ["city", {"value": "Paris"}]}},
    Q_ROWID: {"datasource": "shop", "from": "customer", "select": [{"expr": {"sql": "rowid"}, "alias": "r"}]},
    Q_COUNT: {"datasource": "shop", "from": "customer", "select": [{"expr": {"count": "*"}, "alias": "n"}]},
}


@pytest.fixture
def reference(project: Any) -> ReferenceEngine:  # noqa: F811
    engine = ReferenceEngine(project)
    yield engine
    engine.close()


def test_reference_passes_the_roles_policy_to_the_adapter(reference: ReferenceEngine, project: Any) -> None:  # noqa: F811
    calls = _spy(reference)
    a = reference.answer(Q_NAMES, "clerk", RecordingLLM(PLANS))
    assert a.status == "ok", a
    assert len(calls) == 1 and calls[0][1] == project.role("clerk")


def test_reference_refusals_name_nothing_and_missing_names_answer_alike(reference: ReferenceEngine) -> None:
    llm = RecordingLLM(PLANS)
    answers = [reference.answer(q, "clerk", llm) for q in (Q_EMAIL, Q_EMIAL, Q_ROWID)]
    for a in answers:
        assert (a.status, a.message, a.rows, a.sql) == ("refused", REFUSAL_MESSAGE, None, None), a
        assert a.retrieved_tables == () and a.retrieved_columns == ()
        assert a.error is None and a.code is None
    assert len({(a.status, a.message, a.code, a.datasources) for a in answers}) == 1
    admin = reference.answer(Q_EMIAL, "admin", llm)
    assert admin.status == "not_answerable" and "emial" in admin.message  # useful to people


def test_reference_retrieved_names_leave_out_what_the_role_may_not_read(reference: ReferenceEngine) -> None:
    a = reference.answer(Q_COUNT, "clerk", RecordingLLM(PLANS))
    assert a.status == "ok"
    assert not any("email" in c.lower() for c in a.retrieved_columns)


def test_reference_schema_text_lists_only_what_the_role_may_read(reference: ReferenceEngine, project: Any) -> None:  # noqa: F811
    llm = RecordingLLM(PLANS)
    reference.answer(Q_COUNT, "admin", llm)
    reference.answer(Q_COUNT, "clerk", llm)
    admin_text, clerk_text = (r.schema_text for r in llm.requests)
    assert "email" in admin_text and "email" not in clerk_text
    assert "customer(id, name, city)" in clerk_text and "orders(" in clerk_text
    no_orders = RolePolicy(name="n", deny_tables=frozenset({("shop", "orders")}))
    assert "orders" not in reference.schema_text(("shop",), reference.route(Q_COUNT, "admin"), no_orders)
    only_email = RolePolicy(name="o", allow_columns=frozenset({("shop", "orders", "total")}),
                            deny_columns=frozenset({("shop", "customer", c) for c in ("id", "name", "city", "email")}))
    text = reference.schema_text(("shop",), reference.route(Q_COUNT, "admin"), only_email)
    assert "customer" not in text and "orders(total)" in text  # a table with no readable column is left out
    assert reference.schema_text(("shop",), reference.route(Q_COUNT, "admin")) == admin_text
