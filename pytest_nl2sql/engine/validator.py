"""Check a SQL query against a datasource's schema and a role's access policy.

:func:`validate_sql` resolves every table and column the query reads - through aliases,
``*``, subqueries, CTEs, correlated references and set operations, using sqlglot's scope
machinery - case-insensitively against the schema, then asks the policy about each. A refusal
always carries the one :data:`REFUSAL_MESSAGE` and nothing else, so a role never learns the
name of something it may not see.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Protocol

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from .compiler import CompileError, sqlglot_dialect

__all__ = ["REFUSAL_MESSAGE", "AccessPolicy", "Validation", "validate_sql"]

#: The one message every refusal carries. It names no table and no column.
REFUSAL_MESSAGE = "This question needs data your role is not allowed to see."

Status = Literal["ok", "refused", "unknown_reference", "invalid"]


class AccessPolicy(Protocol):
    """What :func:`validate_sql` asks of a role's policy."""

    def allows_datasource(self, ds: str) -> bool: ...
    def allows_table(self, ds: str, table: str) -> bool: ...
    def allows_column(self, ds: str, table: str, column: str) -> bool: ...


@attrs.frozen
class Validation:
    """The verdict on one query.

    ``tables`` and ``columns`` (``'Table.Column'``, spelled as the schema spells them) are what
    an ``ok`` query reads; they are empty for any other status, so that a refusal reveals
    nothing. ``unknown`` lists the references that match nothing in the schema.
    """

    ok: bool
    status: Status
    message: str
    tables: frozenset[str] = frozenset()
    columns: frozenset[str] = frozenset()
    unknown: tuple[str, ...] = ()


def _invalid(message: str) -> Validation:
    return Validation(False, "invalid", message)


def _refused() -> Validation:
    return Validation(False, "refused", REFUSAL_MESSAGE)


def _unknown(names: Iterable[str]) -> Validation:
    unique = tuple(dict.fromkeys(names))
    return Validation(
        False, "unknown_reference",
        "The query refers to names that are not in the schema: " + ", ".join(unique),
        unknown=unique,
    )


class _Schema:
    """The datasource's schema, looked up case-insensitively."""

    def __init__(self, schema: Mapping[str, Sequence[str]]) -> None:
        self.tables: dict[str, str] = {}
        self.columns: dict[str, dict[str, str]] = {}
        for table, cols in schema.items():
            key = table.lower()
            self.tables[key] = table
            self.columns[key] = {c.lower(): c for c in cols}

    def for_sqlglot(self) -> dict[str, dict[str, str]]:
        return {t: {c: "UNKNOWN" for c in cols} for t, cols in self.columns.items()}


def _lowercase_identifiers(tree: exp.Expression) -> dict[str, str]:
    """Fold every identifier to lower case in place; return lower -> first spelling seen."""
    spelled: dict[str, str] = {}
    for ident in tree.find_all(exp.Identifier):
        name = ident.name
        spelled.setdefault(name.lower(), name)
        ident.set("this", name.lower())
        ident.set("quoted", False)
    return spelled


def _parse(sql: str, dialect: str) -> exp.Expression | Validation:
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except SqlglotError as err:
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        return _invalid(f"The SQL does not parse as {dialect}: {first}")
    if len(statements) != 1:
        return _invalid(f"Expected exactly one SQL statement, got {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        first = sql.split(None, 1)[0].upper() if sql.strip() else ""
        return _invalid(f"Only a read-only query (SELECT) may run, got {first}")
    for node in tree.walk():
        if isinstance(node, exp.DML | exp.DDL) and node is not tree:
            return _invalid("Only a read-only query (SELECT) may run")
    return tree


def _scopes(tree: exp.Expression) -> list[Scope] | Validation:
    try:
        return traverse_scope(tree)
    except (OptimizeError, SqlglotError) as err:
        return _invalid(f"The SQL could not be analysed: {err}")


def _base_tables(scopes: list[Scope]) -> list[exp.Table] | Validation:
    tables = []
    for scope in scopes:
        for source in scope.selected_sources.values():
            node = source[1]
            if isinstance(node, exp.Table):
                if not isinstance(node.this, exp.Identifier):
                    return _invalid("Table functions are not allowed; read tables by name")
                tables.append(node)
    return tables


def _find_source(scope: Scope | None, qualifier: str) -> exp.Table | Scope | None:
    """The table or derived scope ``qualifier`` names, looking outward for correlated refs."""
    while scope is not None:
        source = scope.sources.get(qualifier)
        if source is not None:
            return source
        scope = scope.parent
    return None


def _derived_outputs(scope: Scope) -> set[str] | None:
    """Output names of a derived table or CTE scope; None when it cannot be told (e.g. UNION)."""
    try:
        return {name.lower() for name in scope.expression.named_selects}
    except Exception:  # noqa: BLE001 - a shape sqlglot cannot name; do not guess
        return None


def validate_sql(
    sql: str,
    *,
    dialect: str,
    datasource: str,
    schema: Mapping[str, Sequence[str]],
    policy: AccessPolicy,
) -> Validation:
    """Resolve what ``sql`` reads against ``schema`` and check it against ``policy``.

    Statuses: ``invalid`` (not one parseable read-only query), ``unknown_reference`` (names
    missing from the schema, listed in ``unknown``), ``refused`` (the role may not read
    something; message :data:`REFUSAL_MESSAGE`), ``ok``.
    """
    try:
        d = sqlglot_dialect(dialect)
    except CompileError as err:
        return _invalid(str(err))
    if not policy.allows_datasource(datasource):
        return _refused()
    parsed = _parse(sql, d)
    if isinstance(parsed, Validation):
        return parsed
    tree = parsed
    spelled = _lowercase_identifiers(tree)
    known = _Schema(schema)

    scopes = _scopes(tree)
    if isinstance(scopes, Validation):
        return scopes
    tables = _base_tables(scopes)
    if isinstance(tables, Validation):
        return tables
    missing = [spelled.get(t.name, t.name) for t in tables if t.name not in known.tables]
    if missing:
        return _unknown(missing)
    # Qualified references to columns a base table does not have; sqlglot stops at the first.
    missing = []
    for scope in scopes:
        for col in scope.columns:
            if not col.table or isinstance(col.this, exp.Star):
                continue
            src = _find_source(scope, col.table)
            shown = spelled.get(col.name, col.name)
            if isinstance(src, exp.Table):
                if col.name not in known.columns[src.name]:
                    missing.append(f"{known.tables[src.name]}.{shown}")
            elif isinstance(src, Scope):
                outputs = _derived_outputs(src)
                if outputs is not None and "*" not in outputs and col.name not in outputs:
                    missing.append(f"{spelled.get(col.table, col.table)}.{shown}")
    if missing:
        return _unknown(missing)

    try:
        tree = qualify(
            tree, schema=known.for_sqlglot(), dialect=d, validate_qualify_columns=False,
            quote_identifiers=False, identify=False,
        )
    except OptimizeError as err:
        text = str(err)
        if text.startswith("Unknown column"):
            return _unknown([text.split(":", 1)[-1].strip()])
        return _invalid(f"The SQL could not be analysed: {text}")
    scopes = _scopes(tree)
    if isinstance(scopes, Validation):
        return scopes

    read_tables: set[str] = set()
    read_columns: set[tuple[str, str]] = set()
    missing = []
    for scope in scopes:
        for source in scope.selected_sources.values():
            if isinstance(source[1], exp.Table):
                read_tables.add(source[1].name)
        for col in scope.columns:
            if isinstance(col.this, exp.Star):
                continue
            name = col.name
            if not col.table:
                owners = [
                    s.name for _, s in scope.selected_sources.values()
                    if isinstance(s, exp.Table) and name in known.columns[s.name]
                ]
                if len(owners) > 1:
                    return _invalid(f"Column '{spelled.get(name, name)}' is ambiguous; "
                                    "qualify it with its table or alias")
                missing.append(spelled.get(name, name))
                continue
            src = _find_source(scope, col.table)
            if isinstance(src, exp.Table):
                if name in known.columns[src.name]:
                    read_columns.add((src.name, name))
                else:
                    missing.append(f"{known.tables[src.name]}.{spelled.get(name, name)}")
            elif isinstance(src, Scope):
                outputs = _derived_outputs(src)
                if outputs is not None and name not in outputs:
                    missing.append(f"{spelled.get(col.table, col.table)}.{spelled.get(name, name)}")
            else:
                missing.append(f"{spelled.get(col.table, col.table)}.{spelled.get(name, name)}")
    if missing:
        return _unknown(missing)

    for table in sorted(read_tables):
        if not policy.allows_table(datasource, known.tables[table]):
            return _refused()
    for table, column in sorted(read_columns):
        if not policy.allows_column(datasource, known.tables[table], known.columns[table][column]):
            return _refused()
    return Validation(
        True, "ok", "",
        tables=frozenset(known.tables[t] for t in read_tables),
        columns=frozenset(f"{known.tables[t]}.{known.columns[t][c]}" for t, c in read_columns),
    )
