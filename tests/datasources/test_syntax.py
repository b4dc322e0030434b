"""The guard refuses what it does not resolve (issue 21): node types outside the dialect's
allow-list, casts to non-scalar types, PostgreSQL attribute notation on a value, s.f on a
table function's alias; and it admits the false-refusal controls by the dialect's own names."""

from __future__ import annotations

import pytest

from pytest_nl2sql.datasources.guard import StatementRefused, check_statement

REFUSED = [
    ("postgresql", "SELECT ('server_version'::text).current_setting"),
    ("postgresql", "SELECT ((q).ts_stat).word FROM (SELECT 'x'::text AS q) s"),
    ("postgresql", "SELECT (q).pg_read_file FROM (SELECT 'x'::text AS q) s"),
    ("postgresql", "SELECT (s).pg_read_file FROM (SELECT 'x'::text AS q) s"),
    ("postgresql", "SELECT (s).pg_stat_get_backend_activity FROM generate_series(1, 3) AS s"),
    ("postgresql", "SELECT s.current_setting FROM unnest(ARRAY['server_version']) AS s"),
    ("postgresql", "SELECT s.pg_read_file FROM generate_series(1, 3) AS s(n)"),
    ("postgresql", """SELECT '"Payroll"'::regclass"""),
    ("postgresql", "SELECT g::oid::regrole FROM generate_series(1, 9) AS g"),
    ("postgresql", """SELECT (NULL::"Employee").*"""),
    ("postgresql", """SELECT NULL::public."Employee\""""),
    ("postgresql", "SELECT x FROM t WHERE y = $1"),
    ("postgresql", "SELECT x FROM t TABLESAMPLE SYSTEM (10)"),
    ("duckdb", 'SELECT #4 FROM "Invoice"'),
    ("duckdb", 'SELECT * FROM (SUMMARIZE "Secret")'),
    ("duckdb", 'SELECT * FROM (DESCRIBE "Customer")'),
    ("duckdb", 'SUMMARIZE "Secret"'),
    ("duckdb", "SHOW TABLES"),
    ("duckdb", 'PIVOT "Customer" ON "Name" USING max("Secret")'),
    ("duckdb", 'SELECT * FROM t UNPIVOT (v FOR k IN (a, b))'),
    ("duckdb", "SELECT 'x'.upper()"),
    ("duckdb", 'SELECT c."Name".upper() FROM t AS c'),
]
ADMITTED = [
    ("postgresql", "SELECT string_agg(x, ',' ORDER BY x) FROM t"),
    ("postgresql", "SELECT ARRAY(SELECT x FROM t)"),
    ("postgresql", "SELECT chr(65), x::int, CAST(y AS numeric(10, 2)), z::date, w::text, v::varchar(10), b::int[] FROM t"),
    ("postgresql", 'SELECT (a)."note", (a.*)."note" FROM "Audit" a'),
    ("postgresql", "SELECT (s).q FROM (SELECT 'x'::text AS q) s"),
    ("postgresql", "SELECT s.n, g, j.key FROM generate_series(1, 3) AS s(n), generate_series(1, 2) AS g, json_each('{}'::json) AS j"),
    ("postgresql", 'SELECT t."Total" FROM "Invoice" AS t("a", "b")'),
    ("duckdb", "SELECT chr(65), string_agg(x, ','), list_transform([1, 2], y -> y + 1), {'a': 1} FROM t"),
    ("duckdb", "SELECT * FROM t QUALIFY row_number() OVER () = 1"),
    ("sqlite", "SELECT char(65), group_concat(x, ','), CAST(x AS INTEGER), json_object('a', x) FROM t"),
]


@pytest.mark.parametrize(("dialect", "sql"), REFUSED)
def test_what_the_guard_does_not_resolve_is_refused(dialect: str, sql: str) -> None:
    with pytest.raises(StatementRefused):
        check_statement(sql, dialect)


@pytest.mark.parametrize(("dialect", "sql"), ADMITTED)
def test_the_false_refusal_controls_are_admitted(dialect: str, sql: str) -> None:
    check_statement(sql, dialect)
