"""The rules of the real database, kept on its neighbours.

A neighbour database is small and made up, but the SQL that runs there is an engine's answer
for a role. So, as on the real database (docs/security.md):

* ``hidden_columns``: a column that some role of the datasource may not read gets synthetic
  values on every neighbour (``neighbourgen.hide``), never a sample of its real ones;
* ``admission``: the answer's SQL runs on a neighbour only when it passes the statement guard
  and the validator for the role it answered as; the SQL that runs there is that SQL, and a
  SQLite neighbour runs it under the same authorizer (function allow-list, the role's columns).
  A PostgreSQL neighbour runs it as a reader role that may only ``SELECT`` there
  (``pgneighbours``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["admission", "hidden_columns"]


def _policies(project: Any, datasource: str) -> list[Any]:
    roles = getattr(project, "roles", None) or {}
    return [p for p in roles.values() if p.allows_datasource(datasource)]


def hidden_columns(project: Any, datasource: str) -> Callable[[str, str], bool]:
    """``hidden(table, column)``: whether any role that may use ``datasource`` may not read it.

    ``table`` is a SQLite table's name or a PostgreSQL neighbour's ``schema.table`` (a table of
    ``public`` is named bare, as the roles name it)."""
    policies = _policies(project, datasource)

    def hidden(table: str, column: str) -> bool:
        schema, _, rel = table.rpartition(".")
        name = rel if schema.lower() == "public" else table
        return any(not p.allows_column(datasource, name, column) for p in policies)

    return hidden


def admission(project: Any) -> Callable[[str, str, str], tuple[str | None, Any]]:
    """``admit(datasource, role, sql)`` -> ``(reason, policy)``: why ``sql`` may not run on the
    neighbours of ``datasource`` for ``role`` (None: it may), and the role's policy."""
    from pytest_nl2sql.datasources import (
        DatasourceRegistry,
        StatementRefused,
        check_statement,
        introspect,
    )
    from pytest_nl2sql.engine.validator import validate_sql
    from pytest_nl2sql.engine.validatorbase import FrozenSchema

    registry: list[Any] = []
    schemas: dict[str, FrozenSchema] = {}

    def schema(datasource: str) -> FrozenSchema:
        if datasource not in schemas:
            if not registry:
                registry.append(DatasourceRegistry.from_config(project))
            info = introspect(registry[0].get(datasource))
            schemas[datasource] = FrozenSchema.of(info)
        return schemas[datasource]

    def admit(datasource: str, role: str, sql: str) -> tuple[str | None, Any]:
        try:
            policy = project.role(role)
        except KeyError:
            return f"unknown role {role!r}", None
        adapter_dialect = _dialect(project, datasource)
        try:
            check_statement(sql, adapter_dialect)
        except StatementRefused as refusal:
            return refusal.reason, policy
        check = validate_sql(sql, dialect=adapter_dialect, datasource=datasource, schema=schema(datasource), policy=policy)
        if not check.ok:
            return f"{check.status}: {check.message}", policy
        return None, policy

    return admit


def _dialect(project: Any, datasource: str) -> str:
    from pytest_nl2sql.config.urls import read_url  # a SQLite URL without SQLAlchemy

    configs = {name.lower(): cfg for name, cfg in (getattr(project, "datasources", None) or {}).items()}
    cfg = configs.get(datasource.lower())
    return read_url(cfg.url).get_backend_name() if cfg is not None else "sqlite"
