"""The statement guard admits one read-only query and names what it refuses."""

from __future__ import annotations

import pytest

from pytest_nl2sql.datasources import StatementRefused, StatementUnparseable, check_statement

ADMITTED = [
    ("sqlite", "SELECT 1"),
    ("sqlite", "select Name from Artist where Name like '%a%';"),
    ("sqlite", "SELECT a FROM t UNION SELECT b FROM u ORDER BY 1"),
    ("postgresql", "WITH x AS (SELECT 1 AS n) SELECT n FROM x INTERSECT SELECT 1"),
    ("postgresql", "SELECT a FROM t EXCEPT SELECT a FROM u"),
    (
        "postgresql",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r",
    ),
    ("postgresql", "SELECT now(), lower('A')"),  # pg_sleep(0) was here: it is refused now
    ("duckdb", "FROM items"),
    ("duckdb", "SELECT * FROM main.items"),
    ("sqlite", 'SELECT * FROM "Order Details" -- trailing comment; DROP TABLE t'),
    ("mysql", "SELECT `a` FROM `t` LIMIT 3"),
    ("somedb", "SELECT 1"),
]


@pytest.mark.parametrize(("dialect", "sql"), ADMITTED)
def test_single_queries_are_admitted(dialect: str, sql: str) -> None:
    check_statement(sql, dialect)


REFUSED = [
    ("sqlite", "DELETE FROM t", "DELETE is not allowed"),
    ("sqlite", "SELECT 1; DROP TABLE t", "2 statements given (SELECT, DROP)"),
    ("sqlite", "SELECT 1; SELECT 2", "2 statements given"),
    (
        "postgresql",
        "WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d",
        "DELETE inside the query",
    ),
    ("postgresql", "SELECT * INTO t2 FROM t", "SELECT ... INTO"),
    ("postgresql", "SELECT * FROM t FOR SHARE", "row locks"),
    ("postgresql", "SELECT nextval('s')", "function nextval()"),
    ("postgresql", "SELECT pg_sleep(0)", "function pg_sleep()"),
    ("postgresql", "SELECT pg_advisory_lock(1)", "function pg_advisory_lock()"),
    ("postgresql", "SELECT dblink_exec('x', 'DROP TABLE t')", "function dblink_exec()"),
    (
        "postgresql",
        "SELECT query_to_xml('DELETE FROM t', true, true, '')",
        "function query_to_xml()",
    ),
    ("sqlite", "SELECT load_extension('evil.so')", "function load_extension()"),
    ("duckdb", "SELECT * FROM read_parquet('x.parquet')", "function read_parquet()"),
    ("duckdb", "SELECT * FROM 'data.csv'", "reading the file 'data.csv'"),
    ("duckdb", "INSTALL httpfs", "INSTALL is not allowed"),
    ("postgresql", "INSTALL httpfs", "INSTALL is not allowed"),
    ("postgresql", "REPLACE INTO t VALUES (1)", "REPLACE is not allowed"),
    ("sqlite", "  /* hi */ VACUUM", "VACUUM is not allowed"),
    ("postgresql", "EXPLAIN ANALYZE DELETE FROM t", "EXPLAIN is not allowed"),
    ("sqlite", "", "the SQL is empty"),
    ("sqlite", " ; ", "the SQL is empty"),
]


@pytest.mark.parametrize(("dialect", "sql", "reason"), REFUSED)
def test_everything_else_is_refused_with_a_reason(dialect: str, sql: str, reason: str) -> None:
    with pytest.raises(StatementRefused) as refused:
        check_statement(sql, dialect)
    assert not isinstance(refused.value, StatementUnparseable)
    assert reason in refused.value.reason


@pytest.mark.parametrize("sql", ["SELECT * FROM", "SELEC 1", "SELEC", "SELECT (1"])
def test_unparseable_sql_is_a_clear_error(sql: str) -> None:
    with pytest.raises(StatementUnparseable) as caught:
        check_statement(sql, "sqlite")
    assert "write one plain SELECT" in caught.value.reason


def test_the_guard_keeps_sqlglot_quiet_and_leaves_its_logger_as_it_was(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    import sqlglot

    logger = logging.getLogger("sqlglot")
    caplog.set_level(logging.WARNING, logger="sqlglot")
    with pytest.raises(StatementRefused, match="SHOW is not allowed"):
        check_statement("SHOW TABLES /* quiet */", "sqlite")  # sqlglot falls back to a Command: we say why
    assert caplog.records == []
    assert logger.level == logging.WARNING  # as it was set, not left at ERROR
    sqlglot.parse_one("SHOW TABLES /* loud */", read="sqlite")  # outside the guard, sqlglot's warning is the user's
    assert [r.levelname for r in caplog.records] == ["WARNING"]
