"""What the validator's front (``engine/validator.py``) and its rules
(``engine/validatorrules.py``) share, without sqlglot: the verdict (:class:`Validation`), the
one refusal message, what a policy is asked and whether it restricts a datasource, the names
of system catalogs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

import attrs

__all__ = [
    "REFUSAL_MESSAGE",
    "ROWID_NAMES",
    "AccessPolicy",
    "FrozenSchema",
    "SchemaKey",
    "Status",
    "Validation",
    "invalid",
    "is_system_catalog",
    "policy_restricts",
    "refused",
    "schema_key",
    "unknown",
]

#: The one message every refusal carries. It names no table and no column.
REFUSAL_MESSAGE = "This question needs data your role is not allowed to see."

Status = Literal["ok", "refused", "unknown_reference", "invalid"]

#: SQLite's pseudo-columns: each reads the table's rowid (its INTEGER PRIMARY KEY, if any).
ROWID_NAMES = frozenset({"rowid", "oid", "_rowid_"})
_CATALOG_SCHEMAS = frozenset({"information_schema", "pg_catalog"})
_CATALOG_PREFIXES = ("pg_", "sqlite_", "pragma_")


class AccessPolicy(Protocol):
    """What :func:`validate_sql` asks of a role's policy."""

    def allows_datasource(self, ds: str) -> bool: ...
    def allows_table(self, ds: str, table: str) -> bool: ...
    def allows_column(self, ds: str, table: str, column: str) -> bool: ...


def _names_datasource(entry: Any, ds: str) -> bool:
    """Whether one allow/deny entry concerns ``ds`` (entries that do not say: assume so)."""
    if isinstance(entry, tuple) and entry and isinstance(entry[0], str):
        return entry[0].lower() == ds.lower()
    return True


def policy_restricts(policy: Any, datasource: str) -> bool:
    """Whether ``policy`` restricts anything on ``datasource`` (an allow list, a deny rule).

    A policy with a ``restricts(ds)`` method is asked; otherwise its ``allow_tables``,
    ``allow_columns``, ``deny_tables`` and ``deny_columns`` attributes are read (as
    :class:`~pytest_nl2sql.config.RolePolicy` has them): any allow list, or any deny entry
    for this datasource, restricts. A role that may not use the datasource at all restricts it.
    """
    method = getattr(policy, "restricts", None)
    if callable(method):
        return bool(method(datasource))
    try:
        if not policy.allows_datasource(datasource):
            return True
    except Exception:  # noqa: BLE001 - a policy that cannot say is treated as restrictive
        return True
    if getattr(policy, "allow_tables", None) is not None:
        return True
    if getattr(policy, "allow_columns", None) is not None:
        return True
    for attr in ("deny_tables", "deny_columns"):
        entries = getattr(policy, attr, ()) or ()
        if any(_names_datasource(e, datasource) for e in entries):
            return True
    return False


def is_system_catalog(name: str, schema: str | None = None) -> bool:
    """Whether ``[schema.]name`` is a system catalog (never part of a datasource's schema)."""
    if schema is not None and schema.lower() in _CATALOG_SCHEMAS:
        return True
    return name.lower().startswith(_CATALOG_PREFIXES)


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


def invalid(message: str) -> Validation:
    return Validation(False, "invalid", message)


def refused() -> Validation:
    return Validation(False, "refused", REFUSAL_MESSAGE)


def unknown(names: Iterable[str]) -> Validation:
    unique = tuple(dict.fromkeys(names))
    return Validation(
        False, "unknown_reference",
        "The query refers to names that are not in the schema: " + ", ".join(unique),
        unknown=unique,
    )


class SchemaKey:
    """A schema as a memo key's part: its tables and their columns, in order (``items``), equal to
    another by content and hashed once (a wide schema's tuple took ~10 us to hash on every
    look-up). ``digest`` is the verdict store's name for it, once computed (validator.py)."""

    __slots__ = ("_hash", "digest", "items")

    def __init__(self, items: tuple[tuple[str, tuple[str, ...]], ...]) -> None:
        self.items = items
        self._hash = hash(items)
        self.digest: str | None = None

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return type(other) is SchemaKey and self._hash == other._hash and self.items == other.items

    def __repr__(self) -> str:
        return f"SchemaKey({len(self.items)} tables)"


class FrozenSchema(Mapping[str, tuple[str, ...]]):
    """A datasource's tables and their columns (table -> column names), which cannot change:
    its memo key is made once, so a verdict's look-up costs the same on a wide schema as on a
    small one. The engines keep their schemas as these."""

    __slots__ = ("_tables", "key")

    def __init__(self, tables: Mapping[str, Iterable[str]]) -> None:
        self._tables = {str(t): tuple(cols) for t, cols in tables.items()}
        self.key = SchemaKey(tuple(self._tables.items()))

    @classmethod
    def of(cls, info: Any) -> FrozenSchema:
        """The tables and column names of an introspected ``SchemaInfo`` (datasources.introspect)."""
        return cls({name: [c.name for c in table.columns] for name, table in info.tables.items()})

    def __getitem__(self, table: str) -> tuple[str, ...]:
        return self._tables[table]

    def __iter__(self) -> Any:
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)

    def __repr__(self) -> str:
        return f"FrozenSchema({self._tables!r})"


def schema_key(schema: Mapping[str, Sequence[str]]) -> SchemaKey:
    """``schema`` as a memo key's part (made once for a :class:`FrozenSchema`)."""
    if type(schema) is FrozenSchema:
        return schema.key
    return SchemaKey(tuple((t, tuple(cols)) for t, cols in schema.items()))
