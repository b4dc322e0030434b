"""Check a SQL query against a datasource's schema and a role's access policy.

:func:`validate_sql` resolves every table and column the query reads - through aliases,
``*``, subqueries, CTEs, correlated references and set operations, using sqlglot's scope
machinery - case-insensitively against the schema, then asks the policy about each. A refusal
always carries the one :data:`REFUSAL_MESSAGE` and nothing else, so a role never learns the
name of something it may not see.

What counts as a read, beyond plain column references:

* a whole-row reference reads every column of its table: ``t.*`` anywhere but directly in
  the select list (``row_to_json(t.*)``, ``(t.*)::text``, ``count(t.*)``,
  ``json_group_array(t.*)``), a table name or alias used as a value (``to_jsonb(t)``,
  ``t::text``, ``(t)."Col"``; PostgreSQL and DuckDB), and ``*`` inside a call other than
  ``count(*)``;
* on SQLite, the pseudo-columns ``rowid``, ``oid`` and ``_rowid_`` (when the table has no
  real column of that name) read the table's INTEGER PRIMARY KEY; the schema does not say
  which column that is, so they count as reading every column of the table.

Schema qualifiers are resolved: the datasource's own schema (``main`` on SQLite and DuckDB,
``public`` on PostgreSQL) names the schema's tables; any other qualifier (``temp``,
``information_schema``, ``pg_catalog``, another database) names nothing the schema has.
System catalogs (``information_schema.*``, ``pg_catalog.*``, any ``pg_*`` relation,
``sqlite_*`` tables, ``pragma_*`` table functions) are never part of the schema.

A role whose policy restricts anything on the datasource (see :func:`policy_restricts`) gets
``refused`` with :data:`REFUSAL_MESSAGE` for a missing name too, exactly as for a denied one,
so that the answer is no oracle of what exists. An unrestricted role gets
``unknown_reference`` with the names listed.

The validator answers from its verdict memos first (this process's, then the verdict store of
earlier runs, :data:`~pytest_nl2sql.datasources.memo.STORE`); its rules
(``engine/validatorrules.py``) and sqlglot are imported only when a verdict must be computed.

The validator is bounded like the statement guard: SQL over
:data:`~pytest_nl2sql.datasources.guard.MAX_SQL_CHARS` characters, or with a parse tree over
:data:`~pytest_nl2sql.datasources.guard.MAX_SQL_NODES` nodes, is ``invalid`` before any
analysis.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_nl2sql.config.policy import RolePolicy
from pytest_nl2sql.datasources.memo import STORE, Memo, canonical, text_key
from pytest_nl2sql.engine.dialects import CompileError, sqlglot_dialect
from pytest_nl2sql.engine.refusals import access_denied, without_suggestions
from pytest_nl2sql.engine.validatorbase import (
    REFUSAL_MESSAGE,
    ROWID_NAMES,
    AccessPolicy,
    SchemaKey,
    Status,
    Validation,
    is_system_catalog,
    policy_restricts,
)
from pytest_nl2sql.engine.validatorbase import invalid as _invalid
from pytest_nl2sql.engine.validatorbase import refused as _refused
from pytest_nl2sql.engine.validatorbase import schema_key as _schema_key

__all__ = [
    "REFUSAL_MESSAGE",
    "ROWID_NAMES",
    "UNRESTRICTED",
    "AccessPolicy",
    "Status",
    "Validation",
    "access_denied",
    "is_system_catalog",
    "policy_restricts",
    "remembered",
    "validate_sql",
    "without_suggestions",
]


def validate_sql(
    sql: str,
    *,
    dialect: str,
    datasource: str,
    schema: Mapping[str, Sequence[str]],
    policy: AccessPolicy,
) -> Validation:
    """Resolve what ``sql`` reads against ``schema`` and check it against ``policy``.

    Statuses: ``invalid`` (not one parseable read-only query, or too big to check),
    ``unknown_reference`` (names missing from the schema, listed in ``unknown``; only for a
    role that restricts nothing on the datasource), ``refused`` (the role may not read
    something, or - for a restricted role - a name is missing; message
    :data:`REFUSAL_MESSAGE`), ``ok``.
    """
    try:
        d = sqlglot_dialect(dialect)
    except CompileError as err:
        return _invalid(str(err))
    if not policy.allows_datasource(datasource):
        return _refused()
    key = _verdict_key(sql, dialect.lower(), datasource, schema, policy)
    if key is None:
        return _validate_sql(sql, d, dialect, datasource, schema, policy)
    return VERDICTS.get(key, lambda: _remembered(key, lambda: _validate_sql(sql, d, dialect, datasource, schema, policy)))


def remembered(
    sql: str, *, dialect: str, datasource: str, schema: Mapping[str, Sequence[str]], policy: AccessPolicy
) -> bool:
    """Whether an earlier run's verdict on ``sql`` (under this schema and policy) is in the verdict
    store (a look-up, nothing computed; False without a store)."""
    key = _verdict_key(sql, dialect.lower(), datasource, schema, policy)
    return key is not None and _decode(STORE.lookup(_store_key(key))) is not None


def _store_key(key: Any) -> str | None:
    """The verdict store's key of a memo key ``(dialect, SQL digest, datasource, schema, policy)``;
    the schema is named by its digest (:func:`_schema_digest`)."""
    schema = _schema_digest(key[3])
    if schema is None:
        return None
    return STORE.key("validator", key[0], key[1].hex(), key[2], schema, *key[4:])


#: How many schemas' digests are kept (a run has one per datasource).
SCHEMA_DIGESTS_MAX = 256
_SCHEMA_DIGESTS: dict[Any, str] = {}


def _schema_digest(schema: SchemaKey) -> str | None:
    """A sha256 of ``schema`` (a memo key's schema part) as canonical JSON, remembered by its
    content: writing a wide schema out (2,000 columns: ~0.4 ms) once per run, not once for every
    verdict looked up in the store. None when it has no canonical form (then nothing is stored)."""
    if schema.digest is not None:
        return schema.digest
    found = _SCHEMA_DIGESTS.get(schema)
    if found is None:
        try:
            raw = json.dumps(canonical(schema.items), ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            return None
        found = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
        if len(_SCHEMA_DIGESTS) >= SCHEMA_DIGESTS_MAX:
            _SCHEMA_DIGESTS.clear()
        _SCHEMA_DIGESTS[schema] = found
    schema.digest = found
    return found


def _remembered(key: Any, compute: Any) -> Validation:
    """``compute()``, or the verdict an earlier run gave under the same key (datasources.memo.STORE)."""
    stored = _store_key(key)
    found = _decode(STORE.lookup(stored))
    if found is not None:
        return found
    verdict: Validation = compute()
    STORE.record(stored, [verdict.ok, verdict.status, verdict.message, sorted(verdict.tables),
                          sorted(verdict.columns), list(verdict.unknown)])
    return verdict


_STATUSES = frozenset({"ok", "refused", "unknown_reference", "invalid"})


def _decode(found: Any) -> Validation | None:
    """A stored verdict, or None for a miss or anything that is not one."""
    if type(found) is not list or len(found) != 6:
        return None
    ok, status, message, tables, columns, unknown = found
    if type(ok) is not bool or status not in _STATUSES or ok != (status == "ok") or type(message) is not str:
        return None
    if any(type(v) is not list or any(type(x) is not str for x in v) for v in (tables, columns, unknown)):
        return None
    return Validation(ok, status, message, frozenset(tables), frozenset(columns), tuple(unknown))


#: The validator's verdict per (dialect, SQL text, datasource, schema, role policy): the same
#: SQL is validated for every role and on every neighbour database (datasources.memo).
VERDICTS: Memo[Validation] = Memo(8192)


#: The policy of a verdict on a datasource the role may read whole: every table and column
#: allowed (no datasource list, no allow or deny rule). A role that restricts nothing on the
#: datasource gets the same verdict as this policy (nothing it asks is ever refused), so such
#: verdicts are remembered under it -- shared by every unrestricted role and by the reference
#: engine's check that a plan's names exist (``engine/resolver.py``).
UNRESTRICTED = RolePolicy(name="*every name*")


def _verdict_key(sql: str, dialect: str, datasource: str, schema: Mapping[str, Sequence[str]], policy: Any) -> Any:
    """The memo key of a verdict, or None (not remembered) for a policy that is not a frozen
    :class:`RolePolicy` value: what another object answers may change between calls."""
    if type(policy) is not RolePolicy:
        return None
    try:
        hash(policy)
    except TypeError:
        return None
    if not policy.restricts(datasource):
        policy = UNRESTRICTED
    return (dialect, text_key(sql), datasource, _schema_key(schema), policy)


def _validate_sql(
    sql: str, d: str | None, dialect: str, datasource: str, schema: Mapping[str, Sequence[str]], policy: AccessPolicy
) -> Validation:
    """The verdict computed by the validator's rules (``engine/validatorrules.py``: sqlglot is
    imported here)."""
    from pytest_nl2sql.engine import validatorrules

    return validatorrules.validate_now(sql, d, dialect, datasource, schema, policy)


def __getattr__(name: str) -> Any:
    """``SQLGLOT_SCHEMAS``, which moved to the rules (PEP 562): reading it imports sqlglot."""
    if name == "SQLGLOT_SCHEMAS":
        from pytest_nl2sql.engine.validatorrules import SQLGLOT_SCHEMAS

        return SQLGLOT_SCHEMAS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
