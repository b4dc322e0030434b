"""The harness is sound (honest queries answer on every path, the read-only login and the
viewer's db_role really are read-only), and the setup-time defences hold: a superuser or
writing PostgreSQL login is refused unless the datasource opts in, and the schema text the
LLM is shown for a role names none of the role's denied columns."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_nl2sql.config import ConfigError, load_config
from pytest_nl2sql.datasources import DatasourceRegistry
from pytest_nl2sql.engine.reference import ReferenceEngine

from .harness import (
    AUDIT,
    CUSTOMERS,
    DENIED_NAMES,
    RO_LOGIN,
    SECRET_STRINGS,
    VIEWER_DB_ROLE,
    Backend,
    run_adapter,
    run_reference,
    run_replay,
    write_project,
)

BACKENDS = ["sqlite", "pg_super", "pg_ro", "duckdb"]


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_honest_queries_answer_on_every_path(backend_name: str, security_backend: Callable[[str], Backend]) -> None:
    """Without this, 'every attack was refused' could mean 'nothing works at all'."""
    backend = security_backend(backend_name)
    try:
        names = sorted((c[1],) for c in CUSTOMERS)
        got = run_adapter(backend, 'SELECT "Name" FROM "Customer" ORDER BY "Name"', None)
        assert got.status == "ok" and sorted(got.rows) == names, got
        got = run_adapter(backend, 'SELECT "Name" FROM "Customer" ORDER BY "Name"', "viewer")
        assert got.status == "ok" and sorted(got.rows) == names, got
        for role in ("viewer", "admin"):
            got = run_replay(backend, 'SELECT "Name" FROM "Customer"', role)
            assert got.status == "ok" and sorted(got.rows) == names, (role, got)
            plan = {"datasource": "shop", "from": "Audit", "select": [{"expr": {"count": "*"}, "alias": "n"}]}
            got = run_reference(backend, plan, role)
            assert got.status == "ok" and got.rows == ((len(AUDIT),),), (role, got)
        got = run_replay(backend, 'SELECT "Secret" FROM "Customer"', "admin")
        assert got.status == "ok" and len(got.rows) == len(CUSTOMERS), got
    finally:
        backend.release()


def test_ro_login_and_viewer_db_role_are_read_only(pg_security) -> None:
    """The fixture's PostgreSQL grants: nl2sql_ro only reads; nl2sql_viewer reads Name and Audit."""
    import psycopg

    cluster, _ = pg_security
    dsn = cluster.server.dsn("shop").replace("user=postgres", f"user={RO_LOGIN}")
    with psycopg.connect(dsn, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("""INSERT INTO "Audit" VALUES ('x')""")
        assert conn.execute('SELECT count(*) FROM "Customer"').fetchone()[0] == len(CUSTOMERS)
        conn.execute(f"SET ROLE {VIEWER_DB_ROLE}")
        assert conn.execute('SELECT count("Name") FROM "Customer"').fetchone()[0] == len(CUSTOMERS)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute('SELECT "Secret" FROM "Customer"')


def _refused_somewhere(folder: Path, url: str) -> str | None:
    """Where a project on ``url`` (no allow_privileged_login) is refused, or None."""
    path = write_project(folder, url, timeout_s=2)
    try:
        config = load_config(path)
    except ConfigError as error:
        return f"load_config: {error}"
    registry = DatasourceRegistry.from_config(config)
    try:
        try:
            ReferenceEngine(config, registry=registry).check_setup()
        except Exception as error:  # noqa: BLE001 - SetupError, or whatever the fix raises
            return f"check_setup: {error}"
        try:
            registry.get("shop").execute('SELECT count(*) FROM "Audit"')
        except Exception as error:  # noqa: BLE001
            return f"execute: {error}"
    finally:
        registry.close()
    return None


def test_superuser_login_is_refused_without_opt_in(pg_security, tmp_path: Path) -> None:
    cluster, _ = pg_security
    s = cluster.server
    where = _refused_somewhere(tmp_path, f"postgresql+psycopg://postgres@{s.host}:{s.port}/shop")
    assert where is not None, "a superuser login ran queries without allow_privileged_login: true"


def test_writing_login_is_refused_without_opt_in(pg_security, tmp_path: Path) -> None:
    cluster, _ = pg_security
    with cluster.connect("postgres") as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'nl2sql_writer'").fetchone() is None:
            conn.execute("CREATE ROLE nl2sql_writer LOGIN")
    with cluster.connect() as conn:
        conn.execute("GRANT USAGE ON SCHEMA public TO nl2sql_writer")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO nl2sql_writer")
        conn.execute('GRANT INSERT, UPDATE, DELETE ON "Audit" TO nl2sql_writer')
    s = cluster.server
    try:
        where = _refused_somewhere(tmp_path, f"postgresql+psycopg://nl2sql_writer@{s.host}:{s.port}/shop")
    finally:
        with cluster.connect() as conn:
            conn.execute("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM nl2sql_writer")
            conn.execute("REVOKE ALL ON SCHEMA public FROM nl2sql_writer")
    assert where is not None, "a login that may write ran queries without allow_privileged_login: true"


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_schema_text_for_viewer_names_no_denied_column(backend_name: str, security_backend: Callable[[str], Backend]) -> None:
    backend = security_backend(backend_name)
    plan = {"datasource": "shop", "from": "Audit", "select": [{"expr": {"count": "*"}, "alias": "n"}]}
    seen: dict[str, str] = {}
    try:
        for role in ("admin", "viewer"):
            requests: list = []
            run_reference(backend, plan, role, llm_out=requests)
            assert requests, f"the LLM was not asked ({role})"
            seen[role] = "\n".join(r.schema_text for r in requests)
    finally:
        backend.release()
    assert re.search(r"\bSecret\b", seen["admin"]), seen["admin"]  # the check can see names at all
    named = [n for n in DENIED_NAMES if re.search(rf"\b{n}\b", seen["viewer"])]
    values = [v for v in SECRET_STRINGS if v in seen["viewer"]]
    assert not named and not values, f"the viewer's schema text shows {named + values}:\n{seen['viewer']}"
