"""A PostgreSQL login that could write stops a run before anything runs, unless the datasource
opts in; a read-only login runs. Checked through the plugin, as a user runs it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_nl2sql.config import ConfigError, load_config
from tests.pg_server import PgServer, server_or_skip


@pytest.fixture(scope="module")
def shop_server() -> Iterator[PgServer]:
    import psycopg

    with server_or_skip(prefix="nl2sql-logins-") as server:
        server.create_database("shop")
        with psycopg.connect(server.dsn("shop"), autocommit=True) as conn:
            conn.execute('CREATE TABLE t (n integer); INSERT INTO t VALUES (1)')
        yield server


def _project(root: Path, url: str, extra: str = "") -> None:
    (root / "nl2sql.yaml").write_text(
        f"version: 1\ndatasources:\n  shop:\n    url: {url}\n{extra}roles:\n  admin: {{datasources: \"*\"}}\n"
    )
    (root / "suite.yaml").write_text(
        "version: 1\ncases:\n- id: c_1\n  question: How many rows?\n  datasources: [shop]\n"
        "  status: approved\n  outcome: {admin: allowed}\n  sql: SELECT n FROM t\n  rows:\n  - {n: 1}\n"
    )
    (root / "p.jsonl").write_text(json.dumps({"id": "c_1", "sql": "SELECT n FROM t"}) + "\n")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--nl2sql-suite", "suite.yaml", "--nl2sql-config", "nl2sql.yaml",
        "-p", "no:cacheprovider", "-p", "no:randomly", *args,
    )


@pytest.mark.parametrize("engine_args", [(), ("--nl2sql-predictions", "p.jsonl")], ids=["reference", "replay"])
def test_a_superuser_login_is_a_usage_error(pytester: pytest.Pytester, shop_server: PgServer, engine_args: tuple) -> None:
    _project(pytester.path, shop_server.url("shop", superuser=True))
    result = _run(pytester, *engine_args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*login 'postgres' is a superuser*allow_privileged_login: true*"])
    result.stdout.no_fnmatch_line("*passed*")


def test_regenerate_refuses_a_superuser_login_before_it_writes(pytester: pytest.Pytester, shop_server: PgServer) -> None:
    _project(pytester.path, shop_server.url("shop", superuser=True))
    before = (pytester.path / "suite.yaml").read_bytes()
    result = _run(pytester, "--nl2sql-regenerate")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*is a superuser*"])
    assert (pytester.path / "suite.yaml").read_bytes() == before


def test_the_opt_in_and_a_read_only_login_both_run(pytester: pytest.Pytester, shop_server: PgServer) -> None:
    _project(pytester.path, shop_server.url("shop", superuser=True), "    allow_privileged_login: true\n")
    _run(pytester, "--nl2sql-predictions", "p.jsonl").assert_outcomes(passed=1)
    _project(pytester.path, shop_server.url("shop"))  # the reader: pg_read_all_data only
    _run(pytester, "--nl2sql-predictions", "p.jsonl").assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("    timeout_s: .nan\n", "timeout_s must be a finite number"),
        ("    timeout_s: .inf\n", "timeout_s must be a finite number"),
        ("    timeout_s: 1e308\n", "timeout_s must be at most 86400"),
        ("    allow_privileged_login: yes please\n", "allow_privileged_login must be true or false"),
    ],
)
def test_datasource_settings_that_cannot_hold_are_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "nl2sql.yaml").write_text(
        f"version: 1\ndatasources:\n  shop:\n    url: sqlite:///x.sqlite\n{text}"
    )
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path / "nl2sql.yaml")


def test_db_role_is_checked(tmp_path: Path) -> None:
    body = "version: 1\ndatasources:\n  shop:\n    url: {url}\nroles:\n  viewer:\n    datasources: [shop]\n    db_role: {role}\n"
    (tmp_path / "nl2sql.yaml").write_text(body.format(url="postgresql+psycopg://r@h/db", role="shop_viewer"))
    assert load_config(tmp_path / "nl2sql.yaml").role("viewer").db_role == "shop_viewer"
    (tmp_path / "nl2sql.yaml").write_text(body.format(url="postgresql+psycopg://r@h/db", role='"x; DROP"'))
    with pytest.raises(ConfigError, match="is not a PostgreSQL role name"):
        load_config(tmp_path / "nl2sql.yaml")
    (tmp_path / "nl2sql.yaml").write_text(body.format(url="sqlite:///x.sqlite", role="shop_viewer"))
    with pytest.raises(ConfigError, match="db_role applies to PostgreSQL datasources only"):
        load_config(tmp_path / "nl2sql.yaml")
