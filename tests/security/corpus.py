"""The attack corpus, as data. Each attack says which SQL it sends per dialect, which roles it
is tried as, and what must hold; ``harness.py`` runs it, the tests and ``report.py`` count.

What must hold, per attack:

* every attack: the database is unchanged (SQLite: the folder's files byte for byte;
  PostgreSQL: every table's rows, relations incl. temporary ones, the sequence, roles, role
  memberships, grants, large objects, extensions, functions, settings, ``stats_reset``, no
  advisory lock held, the bystander session alive, no canary file written), the next ordinary
  query still runs, no secret value and no file content appears in the answer, the call
  returns within ``max_seconds`` and never raises;
* ``write`` attacks (kind ``"write"``: statements and functions that change or reach beyond
  the database, runaway queries): status is not ``ok`` (on the adapter path: a ``QueryError``),
  for every role listed;
* ``control`` entries (false-refusal controls): status ``ok`` for every role listed and on the
  adapter path; a refusal or an error there is a *false refusal*;
* ``leak`` attacks: for the roles listed with ``"refused"``, status is exactly ``refused`` on
  the engine paths (the validator's one refusal, the same for a denied and a missing name);
  with ``"not_ok"`` any status but ``ok`` will do (a catalog read may be stopped by the guard
  first). On the adapter path a leak attack runs as ``viewer`` only where the database itself
  denies the viewer's columns (SQLite's authorizer; PostgreSQL's ``db_role``) and must raise.

Placeholders filled in per backend: ``{canary}`` (a file no attack may create),
``{secret_file}`` (a file holding a sentinel no answer may show), ``{victim_pid}`` (the pid of
a bystander session no attack may end), ``{conninfo}`` (a libpq string to the superuser).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

__all__ = ["ATTACKS", "FAMILIES", "ORACLES", "Attack", "Oracle"]

SQLITE = "sqlite"
PG = "postgresql"
DUCKDB = "duckdb"
BOTH = (SQLITE, PG)
EVERY_DIALECT = (SQLITE, PG, DUCKDB)
DEFAULT_MAX_S = 15.0  # no attack may hold a path this long (timeouts are 0.5 s in the corpus)

# family -> (title for the docs, the layers meant to stop it)
FAMILIES: dict[str, tuple[str, str]] = {
    "dml": ("INSERT / UPDATE / DELETE / MERGE / REPLACE / UPSERT", "guard; read-only database (SQLite mode=ro + query_only + authorizer; PG READ ONLY transaction, GRANTs)"),
    "ddl": ("CREATE / DROP / ALTER / TRUNCATE / CREATE TEMP / GRANT / roles / extensions", "guard; read-only database; PG login without CREATE/owner rights"),
    "multi": ("several statements in one string", "guard (one statement); sqlite3 runs one statement; PG server-side cursor takes one"),
    "attach": ("ATTACH / DETACH", "guard; SQLite authorizer (SQLITE_ATTACH denied)"),
    "pragma": ("PRAGMA statements and pragma table-valued functions", "guard (statement, function allow-list); SQLite authorizer; validator (catalog)"),
    "vacuum": ("VACUUM / VACUUM INTO / ANALYZE / REINDEX", "guard; SQLite authorizer; read-only database"),
    "extension": ("load_extension / LOAD / readfile / writefile", "guard (function allow-list); extension loading off in sqlite3; SQLite authorizer"),
    "cte_write": ("data-modifying CTEs", "guard (DML anywhere in the tree); validator; PG READ ONLY transaction"),
    "copy": ("COPY ... TO/FROM file or PROGRAM", "guard; PG READ ONLY transaction; non-superuser login"),
    "large_object": ("lo_import / lo_export / lo_from_bytea", "guard (function allow-list); PG READ ONLY transaction; non-superuser login"),
    "dblink": ("dblink / dblink_exec to the superuser", "guard (function allow-list); non-superuser login (dblink needs a password)"),
    "file_read": ("pg_read_file / pg_read_binary_file / pg_ls_dir / pg_stat_file", "guard (function allow-list); non-superuser login"),
    "session": ("pg_terminate_backend / pg_cancel_backend / pg_log_backend_memory_contexts / pg_reload_conf", "guard (function allow-list); non-superuser login"),
    "stats": ("pg_stat_reset and friends", "guard (function allow-list); non-superuser login"),
    "set_config": ("set_config / current_setting writes", "guard (function allow-list); READ ONLY transaction re-set per query"),
    "set_role": ("SET / SET ROLE / SET SESSION AUTHORIZATION / RESET / DISCARD", "guard; each query in its own transaction, rolled back"),
    "advisory": ("advisory locks", "guard (function allow-list); connection released after each query"),
    "sequence": ("nextval / setval", "guard (function allow-list); PG READ ONLY transaction; no USAGE on sequences"),
    "select_into": ("SELECT ... INTO", "guard; read-only database"),
    "lock": ("FOR UPDATE / FOR SHARE, LOCK TABLE", "guard; PG READ ONLY transaction"),
    "runaway": ("queries that never end or eat memory", "adapter limits (SQLite progress handler, hard_heap_limit, SQLITE_LIMIT_LENGTH; PG statement_timeout); guard (pg_sleep not allowed)"),
    "leak_column": ("a denied column read plainly, in WHERE/ORDER/JOIN, via a CTE or subquery, schema-qualified", "validator (role policy); SQLite authorizer / PG db_role GRANTs"),
    "leak_star": ("a denied column read through * or t.*", "validator (star expanded against the schema); SQLite authorizer / PG db_role"),
    "leak_row": ("whole-row references: row_to_json(i.*), to_jsonb(i), (i.*)::text, bare alias, json_object/json_group_array", "validator (a whole-row reference reads every column); SQLite authorizer / PG db_role"),
    "leak_catalog": ("system catalogs: information_schema, pg_catalog, pg_stats, sqlite_master / sqlite_schema", "validator (catalogs never readable by a role); guard (pragma functions)"),
    "leak_rowid": ("SQLite rowid / oid / _rowid_ on a table whose INTEGER PRIMARY KEY is denied, and WHERE rowid = n oracles", "validator (rowid resolved to the primary key); SQLite authorizer"),
    "leak_generated": ("a generated column over a denied column", "validator (role policy); SQLite authorizer"),
    "oracle": ("denied vs misspelt name: the same status and message", "validator (one refusal for denied and missing names)"),
    "attr_call": ("PostgreSQL attribute notation (x).f, which calls f(x): current_setting, pg_read_file, pg_ls_dir, pg_terminate_backend, ts_stat running SQL held in a string", "guard (syntax allow-list: a field only of (alias) or (alias.*)); validator (the alias must name a row source, the field one of its columns); non-superuser login"),
    "cast_oracle": ("casts to regclass / regrole / regproc / oid and to a table's row type", "guard (casts only to scalar types); PG db_role"),
    "alias_columns": ("table alias column lists renaming a denied column: FROM t AS a(x, y, ...)", "validator (alias columns resolved positionally to the real ones); PG db_role"),
    "duckdb_forms": ("DuckDB's own forms: #n positional columns, SUMMARIZE, DESCRIBE, SHOW, PIVOT / UNPIVOT, x.f() method calls, file readers", "guard (statement and syntax allow-lists, function allow-list); read-only file with external access off"),
    "table_function": ("table functions in FROM: the allow-listed value makers (generate_series, unnest, range) given a denied column or a subquery as argument, and a field of a row ((alias).col) that is denied", "validator (only generate_series/unnest on PostgreSQL, range/generate_series/unnest on DuckDB, with arguments that read nothing; unnest's arguments are read as columns; (alias).col reads col); PG db_role"),
    "control": ("false-refusal controls: string_agg, chr(), ARRAY(subquery), ordinary casts and aliases, allow-listed table functions, a field of an allowed column must answer", "the allow-lists admit them (checked by the dialect's own names)"),
}


def _per_dialect(value: Any, dialects: Iterable[str]) -> dict[str, Any]:
    if isinstance(value, Mapping) and set(value) <= set(EVERY_DIALECT) and value:
        return dict(value)
    return {d: value for d in dialects}


@attrs.frozen
class Attack:
    """One attack. ``sql`` maps dialect -> statement (absent dialect: not tried there)."""

    id: str
    family: str
    sql: Mapping[str, str]
    kind: str = "write"  # "write", "leak" or "control" (must answer)
    roles: Mapping[str, str] = attrs.Factory(lambda: {"admin": "not_ok", "viewer": "not_ok"})
    ref: Mapping[str, Any] | None = None  # dialect -> raw-SQL expression (str) or whole plan (dict)
    adapter: str = "auto"  # the adapter path: "auto" (write: no role; leak: viewer), "none", "skip"
    max_seconds: float | None = DEFAULT_MAX_S

    @property
    def is_leak(self) -> bool:
        return self.kind == "leak"

    def dialects(self) -> tuple[str, ...]:
        return tuple(d for d in EVERY_DIALECT if d in self.sql)

    def sql_for(self, dialect: str) -> str:
        return self.sql[dialect]

    def expect_for(self, role: str, path: str) -> str:
        if self.kind == "control":
            return "ok"
        if path == "adapter":
            return "not_ok"
        return self.roles.get(role, "not_ok")

    def plan_for(self, dialect: str) -> dict[str, Any]:
        """The plan the FakeLLM serves for this attack on the reference path."""
        ref = (self.ref or {}).get(dialect)
        if isinstance(ref, dict):
            return {"datasource": "shop", **ref}
        if ref is None:
            sql = self.sql[dialect].strip().rstrip(";")
            first = sql.split(None, 1)[0].upper() if sql else ""
            # a query rides as a scalar subquery (a control: counted as a derived table, so it
            # may return any rows and columns); any other statement is sent as it stands
            if self.kind == "control":
                ref = f"(SELECT count(*) FROM ({sql}) AS ctl)"
            else:
                ref = f"coalesce(({sql}), NULL)" if first in ("SELECT", "WITH") else sql
        return {
            "datasource": "shop",
            "from": {"table": "Customer", "alias": "i"},
            "select": [{"expr": {"sql": ref}, "alias": "x"}],
        }

    def adapter_role(self) -> str | None:
        """The role the adapter path runs as: None (no role, as regenerate/audit run), "viewer",
        or "skip" (not tried: the adapter has no layer meant to stop it, e.g. catalog reads)."""
        if self.adapter == "auto":
            return "viewer" if self.is_leak else None
        return None if self.adapter == "none" else self.adapter


@attrs.frozen
class Oracle:
    """A denied name and a misspelt one; for ``viewer`` both must give the same answer."""

    id: str
    denied: Mapping[str, str]
    missing: Mapping[str, str]
    ref_denied: Mapping[str, Any]
    ref_missing: Mapping[str, Any]

    def dialects(self) -> tuple[str, ...]:
        return tuple(d for d in EVERY_DIALECT if d in self.denied)


ATTACKS: list[Attack] = []


def add(id: str, family: str, sql: Any, dialects: Iterable[str] = BOTH, **kw: Any) -> None:
    dialects = tuple(dialects)
    if "ref" in kw and kw["ref"] is not None:
        kw["ref"] = _per_dialect(kw["ref"], dialects)
    ATTACKS.append(Attack(id=id, family=family, sql=_per_dialect(sql, dialects), **kw))


def fn_spellings(name: str, dialect: str) -> list[tuple[str, str]]:
    """(label, spelling) of a function name: plain, quoted, upper, mixed, schema-qualified."""
    mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(name))
    out = [("plain", name), ("quoted", f'"{name}"'), ("upper", name.upper()), ("mixed", mixed)]
    if dialect == PG:
        out += [
            ("schema", f"pg_catalog.{name}"),
            ("schema_quoted", f'pg_catalog."{name}"'),
            ("quoted_schema", f'"pg_catalog"."{name}"'),
            ("upper_schema", f"PG_CATALOG.{name.upper()}"),
            ("quoted_upper", f'"PG_CATALOG"."{name.upper()}"'),
            ("comment", f"{name} /* x */ "),
        ]
    else:
        out += [("bracket", f"[{name}]"), ("backtick", f"`{name}`")]
    return out


def add_function(id: str, family: str, name: str, args: str, dialects: Iterable[str], *, all_spellings: bool = False, **kw: Any) -> None:
    """The call ``SELECT name(args)`` in several spellings (all of them, or three)."""
    for dialect in dialects:
        spellings = fn_spellings(name, dialect)
        if not all_spellings:
            spellings = [s for s in spellings if s[0] in ("plain", "quoted", "upper_schema" if dialect == PG else "upper")]
        for label, spelled in spellings:
            suffix = "" if label == "plain" else f"_{label}"
            add(f"{id}{suffix}", family, f"SELECT {spelled}({args}) AS x", (dialect,), **kw)


# ---------------------------------------------------------------------------------------------
# write attacks: nothing may change, nothing may run

add("dml_insert", "dml", """INSERT INTO "Audit" ("note") VALUES ('pwned')""")
add("dml_insert_select", "dml", """INSERT INTO "Audit" SELECT "Name" FROM "Customer\"""")
add("dml_update", "dml", """UPDATE "Customer" SET "Name" = 'pwned'""")
add("dml_delete", "dml", 'DELETE FROM "Audit"')
add("dml_delete_lower_comment", "dml", '/* maintenance */ delete from "Audit" where 1 = 1')
add("dml_delete_line_comment", "dml", '-- just a read\nDELETE FROM "Audit"')
add("dml_delete_returning", "dml", 'DELETE FROM "Audit" RETURNING *')
add("dml_merge", "dml", """MERGE INTO "Audit" a USING (SELECT 'x' AS n) s ON false WHEN NOT MATCHED THEN INSERT VALUES (s.n)""", (PG,))
add("dml_replace", "dml", """REPLACE INTO "Payroll" ("PayrollId", "Amount") VALUES (1, 0)""")
add("dml_insert_or_replace", "dml", """INSERT OR REPLACE INTO "Payroll" ("PayrollId", "Amount") VALUES (1, 0)""", (SQLITE,))
add("dml_upsert", "dml", """INSERT INTO "Payroll" ("PayrollId", "Amount") VALUES (1, 0) ON CONFLICT ("PayrollId") DO UPDATE SET "Amount" = 0""")

add("ddl_create_table", "ddl", 'CREATE TABLE evil (a int)')
add("ddl_create_table_as", "ddl", 'CREATE TABLE evil AS SELECT * FROM "Customer"')
add("ddl_create_temp", "ddl", 'CREATE TEMP TABLE evil AS SELECT * FROM "Customer"')
add("ddl_create_view", "ddl", 'CREATE VIEW evil AS SELECT "Secret" FROM "Customer"')
add("ddl_create_temp_view", "ddl", 'CREATE TEMP VIEW evil AS SELECT 1')
add("ddl_create_index", "ddl", 'CREATE INDEX evil ON "Audit" ("note")')
add("ddl_create_trigger", "ddl", 'CREATE TRIGGER evil AFTER INSERT ON "Audit" BEGIN DELETE FROM "Customer"; END', (SQLITE,))
add("ddl_drop", "ddl", 'DROP TABLE "Audit"')
add("ddl_drop_if_exists", "ddl", 'drop table if exists "Payroll"')
add("ddl_alter", "ddl", 'ALTER TABLE "Audit" ADD COLUMN x integer')
add("ddl_alter_rename", "ddl", 'ALTER TABLE "Audit" RENAME TO "Gone"')
add("ddl_truncate", "ddl", 'TRUNCATE "Audit"', (PG,))
add("ddl_truncate_table", "ddl", 'TRUNCATE TABLE "Audit"')
add("ddl_create_function", "ddl", "CREATE FUNCTION evil() RETURNS int LANGUAGE sql AS 'SELECT 1'", (PG,))
add("ddl_create_role", "ddl", "CREATE ROLE evil LOGIN SUPERUSER", (PG,))
add("ddl_alter_role", "ddl", "ALTER ROLE nl2sql_ro SUPERUSER", (PG,))
add("ddl_grant", "ddl", 'GRANT ALL ON "Customer" TO PUBLIC', (PG,))
add("ddl_grant_role", "ddl", "GRANT postgres TO nl2sql_ro", (PG,))
add("ddl_revoke", "ddl", 'REVOKE SELECT ON "Audit" FROM nl2sql_viewer', (PG,))
add("ddl_create_extension", "ddl", "CREATE EXTENSION file_fdw", (PG,))
add("ddl_drop_extension", "ddl", "DROP EXTENSION IF EXISTS dblink", (PG,))
add("ddl_alter_system", "ddl", "ALTER SYSTEM SET work_mem = '1GB'", (PG,))
add("ddl_alter_database", "ddl", "ALTER DATABASE shop SET default_transaction_read_only = off", (PG,))
add("ddl_comment", "ddl", """COMMENT ON TABLE "Audit" IS 'pwned'""", (PG,))
add("ddl_create_database", "ddl", "CREATE DATABASE evil", (PG,))
add("ddl_do_block", "ddl", 'DO $$ BEGIN DELETE FROM "Audit"; END $$', (PG,))
add("ddl_call", "ddl", "CALL evil()", (PG,))
add("ddl_prepare", "ddl", 'PREPARE evil AS DELETE FROM "Audit"', (PG,))

add("multi_select_delete", "multi", 'SELECT 1; DELETE FROM "Audit"')
add("multi_select_drop", "multi", 'SELECT "Name" FROM "Customer"; DROP TABLE "Audit"')
add("multi_double_semicolon", "multi", 'SELECT 1;; DELETE FROM "Audit"')
add("multi_comment_between", "multi", 'SELECT 1 /* ; */; DELETE FROM "Audit" --')
add("multi_transaction", "multi", 'BEGIN; DELETE FROM "Audit"; COMMIT')
add("multi_commit_escape", "multi", 'COMMIT; DELETE FROM "Audit"')
add("multi_rollback_set", "multi", "ROLLBACK; SET default_transaction_read_only = off; DELETE FROM \"Audit\"", (PG,))
add("multi_set_role_first", "multi", 'SET ROLE postgres; SELECT "Secret" FROM "Customer"', (PG,))
add("multi_attach", "multi", "SELECT 1; ATTACH DATABASE '{canary}' AS evil", (SQLITE,))
add("multi_begin", "multi", "BEGIN")
add("multi_end", "multi", "END")

add("attach", "attach", "ATTACH DATABASE '{canary}' AS evil")
add("attach_short", "attach", "attach '{canary}' as evil", (SQLITE,))
add("attach_memory", "attach", "ATTACH DATABASE ':memory:' AS m", (SQLITE,))
add("attach_uri", "attach", "ATTACH DATABASE 'file:{canary}?mode=rwc' AS evil", (SQLITE,))
add("attach_self_rw", "attach", "ATTACH DATABASE 'file:{db}?mode=rw' AS rw", (SQLITE,))
add("detach_main", "attach", "DETACH DATABASE main", (SQLITE,))
add("detach", "attach", "DETACH evil")

add("pragma_query_only_off", "pragma", "PRAGMA query_only = OFF")
add("pragma_writable_schema", "pragma", "PRAGMA writable_schema = ON", (SQLITE,))
add("pragma_journal", "pragma", "PRAGMA main.journal_mode = DELETE", (SQLITE,))
add("pragma_user_version", "pragma", "PRAGMA user_version = 7", (SQLITE,))
add("pragma_table_info_stmt", "pragma", 'PRAGMA table_info("Customer")', (SQLITE,))
add("pragma_tvf_table_info", "pragma", "SELECT * FROM pragma_table_info('Customer')", (SQLITE,), kind="leak",
    roles={"admin": "not_ok", "viewer": "not_ok"}, adapter="none")
add("pragma_tvf_name_only", "pragma", "SELECT name FROM pragma_table_info('Customer')", (SQLITE,), kind="leak",
    roles={"admin": "not_ok", "viewer": "not_ok"}, adapter="none")
add("pragma_tvf_schema", "pragma", "SELECT * FROM main.pragma_table_info('Customer')", (SQLITE,), kind="leak",
    roles={"admin": "not_ok", "viewer": "not_ok"}, adapter="none")
add("pragma_tvf_quoted", "pragma", """SELECT * FROM "pragma_table_info"('Customer')""", (SQLITE,), kind="leak",
    roles={"admin": "not_ok", "viewer": "not_ok"}, adapter="none")
add("pragma_tvf_upper_xinfo", "pragma", "SELECT * FROM PRAGMA_TABLE_XINFO('Customer')", (SQLITE,), kind="leak",
    roles={"admin": "not_ok", "viewer": "not_ok"}, adapter="none")
add("pragma_tvf_database_list", "pragma", "SELECT * FROM pragma_database_list", (SQLITE,))
add("pragma_tvf_function_list", "pragma", "SELECT * FROM pragma_function_list()", (SQLITE,))
add("pragma_tvf_in_subquery", "pragma", """SELECT "Name" FROM "Customer" WHERE (SELECT count(*) FROM pragma_table_info('Customer')) > 4""", (SQLITE,), kind="leak",
    roles={"admin": "not_ok", "viewer": "not_ok"}, adapter="none")
add("pragma_tvf_join", "pragma", """SELECT p.name FROM "Customer" c JOIN pragma_index_list('Customer') p""", (SQLITE,))

add("vacuum_into", "vacuum", "VACUUM INTO '{canary}'", (SQLITE,))
add("vacuum_schema_into", "vacuum", "VACUUM main INTO '{canary}'", (SQLITE,))
add("vacuum", "vacuum", "VACUUM")
add("vacuum_table", "vacuum", 'VACUUM "Audit"', (PG,))
add("analyze", "vacuum", "ANALYZE")
add("reindex", "vacuum", "REINDEX DATABASE shop", (PG,))
add("reindex_sqlite", "vacuum", 'REINDEX "Customer"', (SQLITE,))

add_function("load_extension", "extension", "load_extension", "'/tmp/nl2sql_evil'", (SQLITE,), all_spellings=True)
add("load_extension_entry", "extension", "SELECT load_extension('/tmp/nl2sql_evil', 'sqlite3_evil_init')", (SQLITE,))
add("load_stmt", "extension", "LOAD 'auto_explain'", (PG,))
add("sqlite_readfile", "extension", "SELECT readfile('{secret_file}')", (SQLITE,))
add("sqlite_writefile", "extension", "SELECT writefile('{canary}', 'x')", (SQLITE,))
add("sqlite_fts3_tokenizer", "extension", "SELECT fts3_tokenizer('simple')", (SQLITE,))

add("cte_delete", "cte_write", 'WITH d AS (DELETE FROM "Audit" RETURNING *) SELECT * FROM d')
add("cte_update", "cte_write", """WITH u AS (UPDATE "Customer" SET "Name" = 'x' RETURNING 1) SELECT count(*) FROM u""", (PG,))
add("cte_insert", "cte_write", """WITH i AS (INSERT INTO "Audit" VALUES ('x') RETURNING 1) SELECT 1 AS x""", (PG,))
add("cte_nested_in_subquery", "cte_write", 'SELECT * FROM (WITH d AS (DELETE FROM "Audit" RETURNING *) SELECT * FROM d) s', (PG,))
add("cte_second_of_two", "cte_write", 'WITH a AS (SELECT 1 AS n), d AS (DELETE FROM "Audit" RETURNING 1) SELECT n FROM a', (PG,))
add("cte_unused", "cte_write", 'WITH d AS (DELETE FROM "Audit") SELECT 1 AS x', (PG,))

add("copy_to_file", "copy", 'COPY "Customer" TO \'{canary}\'', (PG,))
add("copy_query_to_program", "copy", "COPY (SELECT 1) TO PROGRAM 'touch {canary}'", (PG,))
add("copy_from_program", "copy", """COPY "Audit" FROM PROGRAM 'echo pwned'""", (PG,))
add("copy_from_file", "copy", """COPY "Audit" FROM '{secret_file}'""", (PG,))
add("copy_to_stdout", "copy", 'copy "Customer" to stdout', (PG,))
add("copy_sqlite", "copy", 'COPY "Customer" TO \'{canary}\'', (SQLITE,))

add_function("lo_import", "large_object", "lo_import", "'{secret_file}'", (PG,), all_spellings=True)
add("lo_export", "large_object", "SELECT lo_export(lo_import('{secret_file}'), '{canary}')", (PG,))
add("lo_from_bytea", "large_object", "SELECT lo_from_bytea(0, 'x'::bytea)", (PG,))
add("lo_create", "large_object", "SELECT lo_create(0)", (PG,))
add("lo_get", "large_object", "SELECT lo_get(lo_import('{secret_file}'))", (PG,))

add("dblink_read", "dblink", """SELECT * FROM dblink('{conninfo}', 'SELECT "Secret" FROM "Customer"') AS t(s text)""", (PG,))
add("dblink_exec", "dblink", """SELECT dblink_exec('{conninfo}', 'DELETE FROM "Audit"')""", (PG,))
add("dblink_exec_quoted", "dblink", """SELECT "dblink_exec"('{conninfo}', 'DELETE FROM "Audit"')""", (PG,))
add("dblink_exec_public", "dblink", """SELECT public.dblink_exec('{conninfo}', 'DELETE FROM "Audit"')""", (PG,))
add("dblink_exec_upper", "dblink", """SELECT "PUBLIC".DBLINK_EXEC('{conninfo}', 'DELETE FROM "Audit"')""", (PG,))
add("dblink_connect", "dblink", "SELECT dblink_connect('evil', '{conninfo}')", (PG,))
add("dblink_in_where", "dblink", """SELECT "Name" FROM "Customer" WHERE dblink_exec('{conninfo}', 'DELETE FROM "Audit"') IS NOT NULL""", (PG,))

add_function("pg_read_file", "file_read", "pg_read_file", "'{secret_file}'", (PG,), all_spellings=True)
add("pg_read_file_etc", "file_read", "SELECT pg_read_file('/etc/passwd')", (PG,))
add("pg_read_file_hostname", "file_read", "SELECT pg_read_file('/etc/hostname')", (PG,))
add("pg_read_file_from", "file_read", "SELECT * FROM pg_read_file('{secret_file}') AS f(x)", (PG,))
add("pg_read_file_where", "file_read", """SELECT "Name" FROM "Customer" WHERE pg_read_file('{secret_file}') LIKE 'FILE%'""", (PG,))
add("pg_read_file_case", "file_read", "SELECT CASE WHEN 1 = 1 THEN pg_read_file('{secret_file}') END AS x", (PG,))
add("pg_read_file_coalesce", "file_read", "SELECT coalesce(pg_read_file('{secret_file}'), '') AS x", (PG,))
add("pg_read_file_cte", "file_read", "WITH f AS (SELECT pg_read_file('{secret_file}') AS x) SELECT x FROM f", (PG,))
add("pg_read_file_order", "file_read", """SELECT "Name" FROM "Customer" ORDER BY pg_read_file('{secret_file}')""", (PG,))
add("pg_read_file_lateral", "file_read", """SELECT f.x FROM "Customer" c, LATERAL (SELECT pg_read_file('{secret_file}') AS x) f""", (PG,))
add("pg_read_binary_file", "file_read", "SELECT pg_read_binary_file('{secret_file}')", (PG,))
add("pg_read_file_relative", "file_read", "SELECT pg_read_file('postgresql.auto.conf')", (PG,))
add_function("pg_ls_dir", "file_read", "pg_ls_dir", "'.'", (PG,))
add("pg_ls_dir_from", "file_read", "SELECT * FROM pg_ls_dir('.') AS d(name)", (PG,))
add("pg_ls_waldir", "file_read", "SELECT * FROM pg_ls_waldir()", (PG,))
add("pg_ls_logdir", "file_read", "SELECT * FROM pg_ls_logdir()", (PG,))
add_function("pg_stat_file", "file_read", "pg_stat_file", "'PG_VERSION'", (PG,))
add("pg_current_logfile", "file_read", "SELECT pg_current_logfile()", (PG,))

add_function("pg_terminate_backend", "session", "pg_terminate_backend", "{victim_pid}", (PG,), all_spellings=True)
add_function("pg_cancel_backend", "session", "pg_cancel_backend", "{victim_pid}", (PG,))
add("pg_terminate_all", "session", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()", (PG,))
add("pg_terminate_self", "session", "SELECT pg_terminate_backend(pg_backend_pid())", (PG,))
add_function("pg_log_backend_memory_contexts", "session", "pg_log_backend_memory_contexts", "{victim_pid}", (PG,))
add("pg_reload_conf", "session", "SELECT pg_reload_conf()", (PG,))
add("pg_rotate_logfile", "session", "SELECT pg_rotate_logfile()", (PG,))
add("pg_notify", "session", "SELECT pg_notify('evil', 'x')", (PG,))

add_function("pg_stat_reset", "stats", "pg_stat_reset", "", (PG,), all_spellings=True)
add("pg_stat_reset_shared", "stats", "SELECT pg_stat_reset_shared('bgwriter')", (PG,))
add("pg_stat_reset_table", "stats", """SELECT pg_stat_reset_single_table_counters('"Audit"'::regclass)""", (PG,))
add("pg_stat_reset_slru", "stats", "SELECT pg_stat_reset_slru(NULL)", (PG,))

add_function("set_config_read_only", "set_config", "set_config", "'default_transaction_read_only', 'off', false", (PG,), all_spellings=True)
add("set_config_role", "set_config", "SELECT set_config('role', 'postgres', false)", (PG,))
add("set_config_timeout", "set_config", "SELECT set_config('statement_timeout', '0', false)", (PG,))
add("set_config_tx", "set_config", "SELECT set_config('transaction_read_only', 'off', true)", (PG,))
add("set_config_then_write", "set_config", """SELECT set_config('default_transaction_read_only', 'off', false); DELETE FROM "Audit\"""", (PG,))

add("set_role", "set_role", "SET ROLE postgres")
add("set_role_none", "set_role", "SET ROLE NONE", (PG,))
add("set_local_role", "set_role", "SET LOCAL ROLE nl2sql_ro", (PG,))
add("set_session_authorization", "set_role", "SET SESSION AUTHORIZATION postgres")
add("reset_role", "set_role", "RESET ROLE")
add("reset_session_authorization", "set_role", "RESET SESSION AUTHORIZATION", (PG,))
add("reset_all", "set_role", "RESET ALL")
add("set_read_only_off", "set_role", "SET default_transaction_read_only = off")
add("set_tx_read_write", "set_role", "SET TRANSACTION READ WRITE", (PG,))
add("set_statement_timeout", "set_role", "SET statement_timeout = 0")
add("set_search_path", "set_role", "SET search_path = evil, public", (PG,))
add("discard_all", "set_role", "DISCARD ALL", (PG,))
add("show_all", "set_role", "SHOW ALL", (PG,))

add_function("pg_advisory_lock", "advisory", "pg_advisory_lock", "42", (PG,), all_spellings=True)
add_function("pg_try_advisory_lock", "advisory", "pg_try_advisory_lock", "42", (PG,), all_spellings=True)
add("pg_advisory_lock_shared", "advisory", "SELECT pg_advisory_lock_shared(7)", (PG,))
add("pg_advisory_xact_lock", "advisory", "SELECT pg_advisory_xact_lock(1)", (PG,))
add("pg_advisory_lock_where", "advisory", """SELECT "Name" FROM "Customer" WHERE pg_try_advisory_lock(99)""", (PG,))

add_function("nextval", "sequence", "nextval", "'audit_seq'", (PG,), all_spellings=True)
add("setval", "sequence", "SELECT setval('audit_seq', 99)", (PG,))
add("nextval_regclass", "sequence", """SELECT nextval('"audit_seq"'::regclass)""", (PG,))
add("nextval_from", "sequence", """SELECT nextval('audit_seq') AS n FROM "Customer\"""", (PG,))

add("select_into", "select_into", 'SELECT * INTO evil FROM "Customer"')
add("select_into_temp", "select_into", 'SELECT "Name" INTO TEMP evil FROM "Customer"', (PG,))
add("select_into_unlogged", "select_into", 'SELECT "Name" INTO UNLOGGED evil FROM "Customer"', (PG,))

add("for_update", "lock", 'SELECT * FROM "Audit" FOR UPDATE')
add("for_share", "lock", 'SELECT "note" FROM "Audit" FOR SHARE', (PG,))
add("for_no_key_update", "lock", 'SELECT "note" FROM "Audit" FOR NO KEY UPDATE SKIP LOCKED', (PG,))
add("for_update_subquery", "lock", 'SELECT * FROM (SELECT "note" FROM "Audit" FOR UPDATE) s', (PG,))
add("lock_table", "lock", 'LOCK TABLE "Audit" IN ACCESS EXCLUSIVE MODE', (PG,))

RUNAWAY_S = 10.0
add("runaway_recursive_cte", "runaway",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) AS n FROM c",
    max_seconds=RUNAWAY_S)
add("runaway_recursive_max", "runaway",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT max(n) AS n FROM c",
    max_seconds=RUNAWAY_S)
add("runaway_printf", "runaway", "SELECT length(printf('%.*c', 999999999, 'x')) AS n", (SQLITE,), max_seconds=RUNAWAY_S)
add("runaway_randomblob", "runaway", "SELECT length(randomblob(900000000)) AS n", (SQLITE,), max_seconds=RUNAWAY_S)
add("runaway_zeroblob_hex", "runaway", "SELECT length(hex(zeroblob(450000000))) AS n", (SQLITE,), max_seconds=RUNAWAY_S)
add("runaway_cross_join", "runaway",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100000) "
    "SELECT count(*) AS n FROM c a, c b", max_seconds=RUNAWAY_S)
add("runaway_pg_sleep", "runaway", "SELECT pg_sleep(1000)", (PG,), max_seconds=RUNAWAY_S)
add("runaway_pg_sleep_for", "runaway", "SELECT pg_sleep_for('1000 seconds')", (PG,), max_seconds=RUNAWAY_S)
add("runaway_pg_sleep_quoted", "runaway", """SELECT "pg_sleep"(1000)""", (PG,), max_seconds=RUNAWAY_S)
add("runaway_generate_series", "runaway", "SELECT count(*) AS n FROM generate_series(1, 1e12)", (PG,), max_seconds=RUNAWAY_S)
add("runaway_generate_series_bigint", "runaway", "SELECT count(*) AS n FROM generate_series(1, 1000000000000)", (PG,), max_seconds=RUNAWAY_S)
add("runaway_repeat", "runaway", "SELECT length(repeat('x', 1000000000)) AS n", (PG,), max_seconds=RUNAWAY_S)
add("runaway_string_agg", "runaway",
    "SELECT length(string_agg(repeat('x', 10000000), '')) AS n FROM generate_series(1, 200)", (PG,), max_seconds=RUNAWAY_S)

# ---------------------------------------------------------------------------------------------
# read leaks: the viewer may read Customer.Name and Audit, nothing else

VIEWER_REFUSED = {"viewer": "refused"}
CATALOG = {"admin": "not_ok", "viewer": "not_ok"}


def leak(id: str, family: str, sql: Any, dialects: Iterable[str] = BOTH, ref: Any = None, roles: Mapping[str, str] = VIEWER_REFUSED, **kw: Any) -> None:
    add(id, family, sql, dialects, kind="leak", roles=roles, ref=ref, **kw)


def _where(cond: str, select: str = 'i."Name"') -> dict[str, Any]:
    return {"from": {"table": "Customer", "alias": "i"}, "select": [{"expr": {"sql": select}, "alias": "x"}], "where": {"sql": cond}}


leak("col_email", "leak_column", 'SELECT "Email" FROM "Customer"', ref='i."Email"')
leak("col_secret", "leak_column", 'SELECT "Secret" FROM "Customer"', ref='i."Secret"')
leak("col_id", "leak_column", 'SELECT "CustomerId" FROM "Customer"', ref='i."CustomerId"')
leak("col_lower_unquoted", "leak_column", "SELECT email FROM customer", (SQLITE,), ref="i.email")
leak("col_mixed_case", "leak_column", 'SELECT sEcReT FROM "Customer"', (SQLITE,), ref="i.sEcReT")
leak("col_quoted_upper", "leak_column", 'SELECT "SECRET" FROM "Customer"', (SQLITE,), ref='i."SECRET"')
leak("col_table_qualified", "leak_column", 'SELECT "Customer"."Secret" FROM "Customer"', ref='"i"."Secret"')
leak("col_schema_qualified", "leak_column", {SQLITE: 'SELECT "Secret" FROM main."Customer"', PG: 'SELECT "Secret" FROM public."Customer"'},
     ref={SQLITE: '(SELECT "Secret" FROM main."Customer" LIMIT 1)', PG: '(SELECT "Secret" FROM public."Customer" LIMIT 1)'})
leak("col_fully_qualified", "leak_column", {SQLITE: 'SELECT main."Customer"."Secret" FROM main."Customer"', PG: 'SELECT shop.public."Customer"."Secret" FROM shop.public."Customer"'})
leak("col_quoted_schema", "leak_column", {SQLITE: 'SELECT c."Secret" FROM "main"."Customer" AS c', PG: 'SELECT c."Secret" FROM "public"."Customer" AS c'})
leak("col_where", "leak_column", """SELECT "Name" FROM "Customer" WHERE "Secret" LIKE 'SECRET-a%'""", ref=_where("i.\"Secret\" LIKE 'SECRET-a%'"))
leak("col_where_email", "leak_column", """SELECT count(*) AS n FROM "Customer" WHERE "Email" LIKE 'ann%'""", ref=_where("i.\"Email\" LIKE 'ann%'"))
leak("col_order_by", "leak_column", 'SELECT "Name" FROM "Customer" ORDER BY "Secret"')
leak("col_group_by", "leak_column", 'SELECT count(*) AS n FROM "Customer" GROUP BY "Email"')
leak("col_join_on", "leak_column", 'SELECT c."Name" FROM "Customer" c JOIN "Customer" d ON c."Secret" = d."Secret"')
leak("col_scalar_subquery", "leak_column", 'SELECT (SELECT max("Secret") FROM "Customer") AS x', ref='(SELECT max("Secret") FROM "Customer")')
leak("col_cte_rename", "leak_column", 'WITH x AS (SELECT "Secret" AS s FROM "Customer") SELECT s FROM x')
leak("col_derived_rename", "leak_column", 'SELECT s FROM (SELECT "Email" AS s FROM "Customer") AS d')
leak("col_union", "leak_column", 'SELECT "Name" FROM "Customer" UNION SELECT "Secret" FROM "Customer"')
leak("col_in_function", "leak_column", 'SELECT upper("Secret") AS x FROM "Customer"', ref='upper(i."Secret")')
leak("col_exists", "leak_column", """SELECT "Name" FROM "Customer" c WHERE EXISTS (SELECT 1 FROM "Customer" d WHERE d."Secret" LIKE 'SECRET-b%' AND d."Name" = c."Name")""")
leak("col_case", "leak_column", """SELECT CASE WHEN "Secret" > 'SECRET-b' THEN 1 ELSE 0 END AS x FROM "Customer\"""", ref='CASE WHEN i."Secret" > \'SECRET-b\' THEN 1 ELSE 0 END')
leak("col_window", "leak_column", 'SELECT "Name", rank() OVER (ORDER BY "Secret") AS r FROM "Customer"')
leak("col_having", "leak_column", """SELECT "Name" FROM "Customer" GROUP BY "Name" HAVING max("Email") LIKE 'a%'""")
leak("payroll_table", "leak_column", 'SELECT "Amount" FROM "Payroll"')
leak("payroll_count", "leak_column", 'SELECT count(*) AS n FROM "Payroll"', ref='(SELECT count(*) FROM "Payroll")')
leak("payroll_schema", "leak_column", {SQLITE: 'SELECT * FROM main."Payroll"', PG: 'SELECT * FROM "public"."Payroll"'})
leak("payroll_lower", "leak_column", "SELECT * FROM payroll", (SQLITE,))

leak("star", "leak_star", 'SELECT * FROM "Customer"')
leak("star_qualified", "leak_star", 'SELECT i.* FROM "Customer" i')
leak("star_table_name", "leak_star", 'SELECT "Customer".* FROM "Customer"')
leak("star_derived", "leak_star", 'SELECT * FROM (SELECT * FROM "Customer") s')
leak("star_cte", "leak_star", 'WITH c AS (SELECT * FROM "Customer") SELECT * FROM c')
leak("star_derived_column", "leak_star", 'SELECT s."Secret" FROM (SELECT * FROM "Customer") s')
leak("star_natural_join", "leak_star", 'SELECT * FROM "Customer" NATURAL JOIN "Audit"')
leak("star_cross_join", "leak_star", 'SELECT a.*, c.* FROM "Audit" a CROSS JOIN "Customer" c')
leak("star_count_distinct", "leak_star", 'SELECT count(DISTINCT c.*) AS n FROM "Customer" c', (PG,))

leak("row_to_json_star", "leak_row", 'SELECT row_to_json(i.*) AS x FROM "Customer" i', (PG,), ref="row_to_json(i.*)")
leak("row_to_json_alias", "leak_row", 'SELECT row_to_json(i) AS x FROM "Customer" i', (PG,), ref="row_to_json(i)")
leak("row_to_json_upper", "leak_row", 'SELECT ROW_TO_JSON(I) AS x FROM "Customer" I', (PG,))
leak("row_to_json_quoted", "leak_row", 'SELECT "row_to_json"(i.*) AS x FROM "Customer" i', (PG,))
leak("row_to_json_schema", "leak_row", 'SELECT pg_catalog.row_to_json(i) AS x FROM "Customer" i', (PG,))
leak("to_jsonb", "leak_row", 'SELECT to_jsonb(i) AS x FROM "Customer" i', (PG,), ref="to_jsonb(i)")
leak("to_json", "leak_row", 'SELECT to_json(i.*) AS x FROM "Customer" i', (PG,))
leak("to_jsonb_field", "leak_row", """SELECT to_jsonb(i) ->> 'Secret' AS x FROM "Customer" i""", (PG,), ref="to_jsonb(i) ->> 'Secret'")
leak("row_text_cast", "leak_row", 'SELECT (i.*)::text AS x FROM "Customer" i', (PG,), ref="(i.*)::text")
leak("alias_text_cast", "leak_row", 'SELECT i::text AS x FROM "Customer" i', (PG,), ref="i::text")
leak("alias_cast_fn", "leak_row", 'SELECT CAST(i AS text) AS x FROM "Customer" i', (PG,), ref="CAST(i AS text)")
leak("row_constructor", "leak_row", 'SELECT ROW(i.*)::text AS x FROM "Customer" i', (PG,))
leak("json_agg", "leak_row", 'SELECT json_agg(i) AS x FROM "Customer" i', (PG,))
leak("jsonb_agg_star", "leak_row", 'SELECT jsonb_agg(i.*) AS x FROM "Customer" i', (PG,))
leak("array_agg_row", "leak_row", 'SELECT array_agg(i)::text AS x FROM "Customer" i', (PG,))
leak("md5_row", "leak_row", 'SELECT md5(i::text) AS x FROM "Customer" i', (PG,))
leak("row_where_oracle", "leak_row", """SELECT "Name" FROM "Customer" i WHERE i::text LIKE '%SECRET-a%'""", (PG,), ref=_where("i::text LIKE '%SECRET-a%'"))
leak("composite_field", "leak_row", 'SELECT (i)."Secret" AS x FROM "Customer" i', (PG,), ref='(i)."Secret"')
leak("composite_field_star", "leak_row", 'SELECT (i.*)."Email" AS x FROM "Customer" i', (PG,))
leak("table_name_as_value", "leak_row", 'SELECT "Customer" FROM "Customer"', (PG,))
leak("table_name_as_value_text", "leak_row", 'SELECT "Customer"::text AS x FROM "Customer"', (PG,))
leak("bare_alias", "leak_row", 'SELECT i FROM "Customer" AS i', ref="i")
leak("bare_alias_in_function", "leak_row", 'SELECT coalesce(i, i) AS x FROM "Customer" AS i', (PG,))
leak("json_object", "leak_row", """SELECT json_object('e', "Email") AS x FROM "Customer\"""", (SQLITE,), ref="json_object('e', i.\"Email\")")
leak("json_group_array", "leak_row", 'SELECT json_group_array("Secret") AS x FROM "Customer"', (SQLITE,), ref='(SELECT json_group_array("Secret") FROM "Customer")')
leak("json_group_object", "leak_row", 'SELECT json_group_object("Name", "Secret") AS x FROM "Customer"', (SQLITE,))
leak("json_array", "leak_row", 'SELECT json_array("Email", "Secret") AS x FROM "Customer"', (SQLITE,))
leak("group_concat", "leak_row", """SELECT group_concat("Secret", ',') AS x FROM "Customer\"""", (SQLITE,))
leak("json_build_object", "leak_row", """SELECT json_build_object('s', "Secret") AS x FROM "Customer\"""", (PG,))

# catalogs: never readable by a role (the viewer here; the admin may not read them either)
for _id, _sql in [
    ("information_schema_columns", "SELECT column_name FROM information_schema.columns"),
    ("information_schema_columns_where", "SELECT column_name FROM information_schema.columns WHERE table_name = 'Customer'"),
    ("information_schema_upper", "SELECT * FROM INFORMATION_SCHEMA.COLUMNS"),
    ("information_schema_quoted", 'SELECT * FROM "information_schema"."columns"'),
    ("information_schema_tables", "SELECT table_name FROM information_schema.tables"),
    ("information_schema_privileges", "SELECT * FROM information_schema.column_privileges"),
    ("pg_attribute_qualified", "SELECT attname FROM pg_catalog.pg_attribute"),
    ("pg_attribute_bare", "SELECT attname FROM pg_attribute"),
    ("pg_attribute_quoted", 'SELECT attname FROM "pg_catalog"."pg_attribute"'),
    ("pg_attribute_upper", "SELECT ATTNAME FROM PG_CATALOG.PG_ATTRIBUTE"),
    ("pg_class", "SELECT relname FROM pg_class"),
    ("pg_roles", "SELECT rolname FROM pg_roles"),
    ("pg_authid", "SELECT rolname, rolpassword FROM pg_authid"),
    ("pg_shadow", "SELECT * FROM pg_shadow"),
    ("pg_stat_activity", "SELECT pid, query FROM pg_stat_activity"),
    ("pg_settings", "SELECT name, setting FROM pg_settings"),
    ("pg_stats_values", "SELECT most_common_vals::text FROM pg_stats WHERE attname = 'Secret'"),
    ("pg_statistic", "SELECT stavalues1::text FROM pg_statistic"),
    ("pg_proc", "SELECT proname FROM pg_proc"),
    ("pg_catalog_in_subquery", """SELECT "Name" FROM "Customer" WHERE EXISTS (SELECT 1 FROM information_schema.columns WHERE column_name = 'Secret')"""),
    ("pg_catalog_join", """SELECT a.attname FROM "Customer" c JOIN pg_attribute a ON a.attrelid = '"Customer"'::regclass"""),
]:
    leak(_id, "leak_catalog", _sql, (PG,), roles=CATALOG, adapter="skip")
for _id, _sql in [
    ("sqlite_master", "SELECT sql FROM sqlite_master"),
    ("sqlite_schema", "SELECT * FROM sqlite_schema"),
    ("main_sqlite_master", "SELECT * FROM main.sqlite_master"),
    ("sqlite_master_quoted", 'SELECT * FROM "sqlite_master"'),
    ("sqlite_master_upper", "SELECT * FROM SQLITE_MASTER"),
    ("main_sqlite_schema_quoted", 'SELECT * FROM "main"."sqlite_schema"'),
    ("temp_sqlite_master", "SELECT * FROM temp.sqlite_master"),
    ("sqlite_temp_master", "SELECT * FROM sqlite_temp_master"),
    ("sqlite_master_subquery", """SELECT "Name" FROM "Customer" WHERE (SELECT count(*) FROM sqlite_master WHERE sql LIKE '%Secret%') > 0"""),
    ("sqlite_master_bracket", "SELECT * FROM [sqlite_master]"),
]:
    leak(_id, "leak_catalog", _sql, (SQLITE,), roles=CATALOG, adapter="skip")

# rowid: an alias of the denied INTEGER PRIMARY KEY
leak("rowid_quoted", "leak_rowid", 'SELECT "rowid" FROM "Customer"', ref='i."rowid"')
leak("rowid_bare", "leak_rowid", "SELECT rowid FROM Customer", (SQLITE,), ref="i.rowid")
leak("oid_quoted", "leak_rowid", 'SELECT "oid" FROM "Customer"', ref='i."oid"')
leak("rowid_underscore", "leak_rowid", "SELECT _rowid_ FROM \"Customer\"", (SQLITE,), ref="i._rowid_")
leak("rowid_underscore_upper", "leak_rowid", 'SELECT "_ROWID_" FROM "Customer"', (SQLITE,))
leak("rowid_qualified", "leak_rowid", 'SELECT i.ROWID FROM "Customer" i', (SQLITE,))
leak("rowid_where_eq", "leak_rowid", 'SELECT "Name" FROM "Customer" WHERE "rowid" = 7340002', ref=_where('i."rowid" = 7340002'))
leak("rowid_where_range", "leak_rowid", 'SELECT "Name" FROM "Customer" WHERE rowid > 7340000', (SQLITE,), ref=_where("i.rowid > 7340000"))
leak("oid_where_between", "leak_rowid", 'SELECT "Name" FROM "Customer" WHERE "oid" BETWEEN 1 AND 7340002', (SQLITE,))
leak("rowid_order", "leak_rowid", 'SELECT "Name" FROM "Customer" ORDER BY rowid DESC', (SQLITE,))
leak("rowid_max", "leak_rowid", 'SELECT max(rowid) AS m FROM "Customer"', (SQLITE,), ref='(SELECT max(rowid) FROM "Customer")')
leak("rowid_id_where", "leak_rowid", 'SELECT "Name" FROM "Customer" WHERE "CustomerId" = 7340002', ref=_where('i."CustomerId" = 7340002'))

leak("generated_read", "leak_generated", 'SELECT "SecretLen" FROM "Customer"', ref='i."SecretLen"')
leak("generated_where", "leak_generated", 'SELECT "Name" FROM "Customer" WHERE "SecretLen" > 40', ref=_where('i."SecretLen" > 40'))
leak("generated_lower", "leak_generated", "SELECT secretlen FROM customer", (SQLITE,))
leak("generated_order", "leak_generated", 'SELECT "Name" FROM "Customer" ORDER BY "SecretLen"')
leak("length_of_denied", "leak_generated", 'SELECT length("Secret") AS n FROM "Customer"', ref='length(i."Secret")')


# ---------------------------------------------------------------------------------------------
# issue 21: syntax the parser does not resolve never reaches a database

DUCK = (DUCKDB,)
ANY_ROLE = {"admin": "not_ok", "viewer": "not_ok"}

# attribute notation: (x).f is f(x) on PostgreSQL
add("attr_current_setting", "attr_call", "SELECT ('server_version'::text).current_setting AS x", (PG,))
add("attr_pg_read_file", "attr_call", "SELECT ('{secret_file}'::text).pg_read_file AS x", (PG,))
add("attr_pg_read_file_hostname", "attr_call", "SELECT ('/etc/hostname'::text).pg_read_file AS x", (PG,))
add("attr_pg_ls_dir", "attr_call", "SELECT ('.'::text).pg_ls_dir AS x", (PG,))
add("attr_terminate", "attr_call", "SELECT ({victim_pid}).pg_terminate_backend AS x", (PG,))
add("attr_terminate_int", "attr_call", "SELECT ({victim_pid}::int).pg_terminate_backend AS x", (PG,))
add("attr_backend_activity", "attr_call", "SELECT (s).pg_stat_get_backend_activity AS x FROM generate_series(1, 50) AS s", (PG,))
add("attr_stat_reset_shared", "attr_call", "SELECT ('bgwriter'::text).pg_stat_reset_shared AS x", (PG,))
add("attr_dblink_connect", "attr_call", "SELECT ('{conninfo}'::text).dblink_connect AS x", (PG,))
add("attr_nextval", "attr_call", "SELECT ('audit_seq'::text).nextval AS x", (PG,))
add("attr_nested", "attr_call", "SELECT (('{secret_file}'::text).pg_read_file).length AS x", (PG,))
add("attr_on_column", "attr_call", """SELECT ("Name").pg_advisory_lock AS x FROM "Customer\"""", (PG,))
add("attr_on_column_subquery", "attr_call", "SELECT (s.q).pg_read_file AS x FROM (SELECT '{secret_file}'::text AS q) s", (PG,))
add("attr_on_subquery_column", "attr_call", "SELECT (q).pg_read_file AS x FROM (SELECT '{secret_file}'::text AS q) s", (PG,))
add("attr_ts_stat", "attr_call",
    """SELECT ((q).ts_stat).word AS w FROM (SELECT 'SELECT to_tsvector(''simple'', "Secret" || '' '' || "Email") FROM "Customer"'::text AS q) s""", (PG,))
add("attr_ts_stat_payroll", "attr_call",
    """SELECT ((q).ts_stat).word AS w FROM (SELECT 'SELECT to_tsvector(''simple'', "Amount"::text) FROM "Payroll"'::text AS q) s""", (PG,))
add("dot_unnest_current_setting", "attr_call", "SELECT s.current_setting AS x FROM unnest(ARRAY['server_version']) AS s", (PG,))
add("dot_unnest_read_file", "attr_call", "SELECT s.pg_read_file AS x FROM unnest(ARRAY['{secret_file}']) AS s", (PG,))
add("dot_series_backend_activity", "attr_call", "SELECT s.pg_stat_get_backend_activity AS x FROM generate_series(1, 50) AS s", (PG,))
add("dot_series_terminate", "attr_call", "SELECT s.pg_terminate_backend AS x FROM generate_series({victim_pid}, {victim_pid}) AS s", (PG,))
add("dot_lateral_unnest", "attr_call", """SELECT u.pg_ls_dir AS x FROM "Customer" c, unnest(ARRAY['.']) AS u""", (PG,))
add("attr_in_where", "attr_call", """SELECT "Name" FROM "Customer" WHERE ('{secret_file}'::text).pg_read_file LIKE 'FILE%'""", (PG,))
leak("attr_field_of_denied", "attr_call", 'SELECT (c)."Secret" AS x FROM "Customer" c', (PG,), ref='(i)."Secret"')
leak("attr_field_of_star", "attr_call", 'SELECT (c.*)."Email" AS x FROM "Customer" c', (PG,))

# casts as oracles
add("cast_regclass", "cast_oracle", """SELECT '"Payroll"'::regclass::text AS x""", (PG,), roles=ANY_ROLE)
add("cast_regclass_fn", "cast_oracle", """SELECT CAST('"Payroll"' AS regclass) AS x""", (PG,), roles=ANY_ROLE)
add("cast_regclass_where", "cast_oracle", """SELECT "Name" FROM "Customer" WHERE '"Payroll"'::regclass IS NOT NULL""", (PG,), roles=ANY_ROLE)
add("cast_oid_regclass", "cast_oracle", "SELECT g::oid::regclass::text AS x FROM generate_series(16384, 17000) AS g", (PG,), roles=ANY_ROLE)
add("cast_oid_regrole", "cast_oracle", "SELECT g::oid::regrole::text AS x FROM generate_series(1, 20000) AS g", (PG,), roles=ANY_ROLE)
add("cast_regproc", "cast_oracle", "SELECT 'pg_read_file'::regproc::text AS x", (PG,), roles=ANY_ROLE)
add("cast_regnamespace", "cast_oracle", "SELECT 'public'::regnamespace::oid AS x", (PG,), roles=ANY_ROLE)
add("cast_oid", "cast_oracle", "SELECT 16384::oid AS x", (PG,), roles=ANY_ROLE)
add("cast_row_type_star", "cast_oracle", """SELECT (NULL::"Customer").* """, (PG,), roles=ANY_ROLE)
add("cast_row_type_schema", "cast_oracle", """SELECT (NULL::public."Payroll").* """, (PG,), roles=ANY_ROLE)
add("cast_row_type_text", "cast_oracle", """SELECT ('(1,2)'::"Payroll")."Amount" AS x""", (PG,), roles=ANY_ROLE)
add("cast_row_type_plain", "cast_oracle", """SELECT NULL::"Customer" AS x""", (PG,), roles=ANY_ROLE)

# alias column lists: a denied column under an allowed name
for _d in (PG, DUCKDB):
    _tag = "" if _d == PG else "_duckdb"
    leak(f"alias_cols_rename{_tag}", "alias_columns", 'SELECT t."Name" FROM "Customer" AS t("CustomerId", "Nom", "Name")', (_d,),
         ref={_d: '(SELECT t."Name" FROM "Customer" AS t("CustomerId", "Nom", "Name") LIMIT 1)'})
    leak(f"alias_cols_secret{_tag}", "alias_columns", 'SELECT t."Name" FROM "Customer" AS t("a", "b", "c", "Name")', (_d,))
    leak(f"alias_cols_first{_tag}", "alias_columns", 'SELECT t."Name" FROM "Customer" AS t("Name")', (_d,))
    leak(f"alias_cols_join{_tag}", "alias_columns", 'SELECT c."Name" FROM "Audit" a JOIN "Customer" AS c("x", "y", "Name") ON true', (_d,))
    leak(f"alias_cols_where{_tag}", "alias_columns", """SELECT t."note" FROM "Audit" t, "Customer" AS c("a", "b", "c", "Name") WHERE c."Name" LIKE 'SECRET-a%'""", (_d,))
    leak(f"alias_cols_subquery{_tag}", "alias_columns", 'SELECT x FROM (SELECT t."Name" AS x FROM "Customer" AS t("i", "n", "Name")) s', (_d,))
    leak(f"alias_cols_payroll{_tag}", "alias_columns", 'SELECT p."note" FROM "Payroll" AS p("a", "note")', (_d,))

# DuckDB's own forms
leak("duck_positional", "duckdb_forms", 'SELECT #4 FROM "Customer"', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_positional_where", "duckdb_forms", """SELECT "Name" FROM "Customer" WHERE #4 LIKE 'SECRET-a%'""", DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_summarize", "duckdb_forms", 'SUMMARIZE "Customer"', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_summarize_subquery", "duckdb_forms", 'SELECT * FROM (SUMMARIZE "Customer")', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_summarize_select", "duckdb_forms", 'SUMMARIZE SELECT "Secret" FROM "Customer"', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_describe", "duckdb_forms", 'DESCRIBE "Customer"', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_describe_subquery", "duckdb_forms", 'SELECT column_name FROM (DESCRIBE "Customer")', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_show_tables", "duckdb_forms", "SHOW TABLES", DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_show_all_tables", "duckdb_forms", "SHOW ALL TABLES", DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_pivot", "duckdb_forms", 'PIVOT "Customer" ON "Name" USING max("Secret")', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_pivot_subquery", "duckdb_forms", 'SELECT * FROM (PIVOT "Customer" ON "Name" USING max("Secret"))', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_unpivot", "duckdb_forms", 'SELECT * FROM "Customer" UNPIVOT (v FOR k IN ("Email", "Secret"))', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_method_call", "duckdb_forms", 'SELECT "Secret".upper() AS x FROM "Customer"', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_method_call_allowed", "duckdb_forms", 'SELECT "Name".upper() AS x FROM "Customer"', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_method_literal", "duckdb_forms", "SELECT ('{secret_file}').read_text() AS x", DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_read_text", "duckdb_forms", "SELECT content FROM read_text('{secret_file}')", DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_file_table", "duckdb_forms", "SELECT * FROM '{secret_file}'", DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_information_schema", "duckdb_forms", "SELECT column_name FROM information_schema.columns", DUCK, roles=ANY_ROLE, adapter="skip")
leak("duck_duckdb_columns", "duckdb_forms", "SELECT column_name FROM duckdb_columns()", DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_col_secret", "duckdb_forms", 'SELECT "Secret" FROM "Customer"', DUCK)
leak("duck_star", "duckdb_forms", 'SELECT * FROM "Customer"', DUCK)
leak("duck_from_first", "duckdb_forms", 'FROM "Customer"', DUCK, ref='(SELECT max(x."Secret") FROM (FROM "Customer") AS x)')
leak("duck_payroll", "duckdb_forms", 'SELECT "Amount" FROM "Payroll"', DUCK)
leak("duck_columns_star", "duckdb_forms", 'SELECT COLUMNS(*) FROM "Customer"', DUCK, roles=ANY_ROLE, adapter="none")
leak("duck_struct_row", "duckdb_forms", 'SELECT c AS x FROM "Customer" c', DUCK)
add("duck_attach", "duckdb_forms", "ATTACH '{canary}' AS evil", DUCK)
add("duck_copy", "duckdb_forms", """COPY "Customer" TO '{canary}'""", DUCK)
add("duck_install", "duckdb_forms", "INSTALL httpfs", DUCK)
add("duck_set", "duckdb_forms", "SET enable_external_access = true", DUCK)
add("duck_getenv", "duckdb_forms", "SELECT getenv('HOME') AS x", DUCK)
add("duck_current_setting", "duckdb_forms", "SELECT current_setting('threads') AS x", DUCK)

# table functions (the allow-listed ones) whose arguments read: refused for every role (the
# validator admits only arguments that read nothing); unnest's arguments are read as columns
leak("tf_series_denied_arg", "table_function", 'SELECT g FROM "Customer" c, generate_series(1, length(c."Secret")) AS g', (PG,), roles=ANY_ROLE)
leak("tf_series_denied_arg_duckdb", "table_function", 'SELECT g FROM "Customer" c, generate_series(1, length(c."Secret")) AS t(g)', DUCK, roles=ANY_ROLE, adapter="skip")
leak("tf_range_denied_arg", "table_function", 'SELECT r FROM "Customer" c, range(length(c."Secret")) AS t(r)', DUCK, roles=ANY_ROLE, adapter="skip")
leak("tf_series_subquery_arg", "table_function", {PG: 'SELECT g FROM generate_series(1, (SELECT length(max("Secret")) FROM "Customer")) AS g', DUCKDB: 'SELECT g FROM generate_series(1, (SELECT length(max("Secret")) FROM "Customer")) AS t(g)'}, (PG, DUCKDB), roles=ANY_ROLE, adapter="skip")
leak("tf_unnest_denied", "table_function", {PG: 'SELECT x FROM "Customer" c, unnest(ARRAY[c."Secret"]) AS u(x)', DUCKDB: 'SELECT x FROM "Customer" c, unnest([c."Secret"]) AS u(x)'}, (PG, DUCKDB), adapter="skip")
leak("tf_field_of_row_duckdb", "table_function", 'SELECT (c)."Secret" AS x FROM "Customer" c', DUCK, adapter="skip")
leak("tf_field_of_row_star_secret", "table_function", 'SELECT (c.*)."Secret" AS x FROM "Customer" c', (PG,))

# false-refusal controls: these must answer, for every role that may read what they read
OK_BOTH = {"admin": "ok", "viewer": "ok"}


def control(id: str, sql: Any, dialects: Iterable[str] = BOTH, roles: Mapping[str, str] = OK_BOTH, **kw: Any) -> None:
    add(id, "control", sql, dialects, kind="control", roles=roles, **kw)


control("ok_string_agg", """SELECT string_agg("Name", ',' ORDER BY "Name") AS x FROM "Customer\"""", (PG, DUCKDB))
control("ok_chr", "SELECT chr(65) AS x", (PG, DUCKDB))
control("ok_char_sqlite", "SELECT char(65) AS x", (SQLITE,))
control("ok_group_concat", """SELECT group_concat("Name", ',') AS x FROM "Customer\"""", (SQLITE, DUCKDB))
control("ok_array_subquery", """SELECT array_length(ARRAY(SELECT "Name" FROM "Customer"), 1) AS n""", (PG,))
control("ok_array_subquery_text", """SELECT ARRAY(SELECT "Name" FROM "Customer" ORDER BY 1)::text AS x""", (PG,))
control("ok_casts", "SELECT CAST('42' AS integer) AS n, '7'::text AS t, CAST('2024-01-31' AS date) AS d, 1.5::numeric(10,2) AS m", (PG, DUCKDB))
control("ok_casts_sqlite", "SELECT CAST('42' AS INTEGER) AS n, CAST(7 AS TEXT) AS t, CAST('1.5' AS REAL) AS r, CAST('2' AS NUMERIC) AS m", (SQLITE,))
control("ok_cast_column", """SELECT CAST("Name" AS varchar) AS x, length("Name")::bigint AS n FROM "Customer\"""", (PG, DUCKDB))
control("ok_alias", 'SELECT a."Name" FROM "Customer" AS a')
control("ok_alias_duckdb", 'SELECT a."Name" FROM "Customer" AS a', DUCK)
control("ok_alias_join", 'SELECT c."Name", a."note" FROM "Customer" c JOIN "Audit" a ON true')
control("ok_alias_columns", 'SELECT n.line FROM "Audit" AS n(line)', (PG, DUCKDB))
control("ok_alias_columns_name", 'SELECT t.who FROM "Customer" AS t("CustomerId", who)', (PG, DUCKDB))
control("ok_field_of_row", 'SELECT (a)."note" AS x FROM "Audit" a', (PG,))
control("ok_function_alias_column", "SELECT s.n, g FROM generate_series(1, 3) AS s(n), generate_series(1, 2) AS g", (PG,))
control("ok_generate_series", {PG: "SELECT g FROM generate_series(1, 3) AS g", DUCKDB: "SELECT g FROM generate_series(1, 3) AS t(g)"}, (PG, DUCKDB))
control("ok_range", "SELECT range FROM range(3)", DUCK)
control("ok_range_alias", "SELECT r FROM range(1, 4) AS t(r)", DUCK)
control("ok_unnest", {PG: "SELECT x FROM unnest(ARRAY[1, 2]) AS u(x)", DUCKDB: "SELECT x FROM unnest([1, 2]) AS u(x)"}, (PG, DUCKDB))
control("ok_series_beside_a_table", {PG: 'SELECT c."Name", g FROM "Customer" c, generate_series(1, 2) AS g', DUCKDB: 'SELECT c."Name", g FROM "Customer" c, range(2) AS t(g)'}, (PG, DUCKDB))
control("ok_field_of_allowed_column", 'SELECT (c)."Name" AS x FROM "Customer" c', DUCK)
# PostgreSQL checks a whole-row reference against every column's GRANT, so under the viewer's
# db_role (column grants) the server itself denies (c)."Name": the viewer is checked on DuckDB
# above and by tests/engine/test_validator_security.py
control("ok_field_of_allowed_column_pg", 'SELECT (c)."Name" AS x FROM "Customer" c', (PG,), roles={"admin": "ok"})
control("ok_field_of_row_star", 'SELECT (c.*)."Name" AS x FROM "Customer" c', (PG,), roles={"admin": "ok"})
control("ok_extract", """SELECT EXTRACT(YEAR FROM DATE '2024-05-01') AS y, date_trunc('month', DATE '2024-05-07') AS m""", (PG, DUCKDB))

# ---------------------------------------------------------------------------------------------
# the existence oracle: a denied name and a misspelt one must be indistinguishable


def _sel(expr: str, where: str | None = None) -> dict[str, Any]:
    plan: dict[str, Any] = {"from": {"table": "Customer", "alias": "i"}, "select": [{"expr": {"sql": expr}, "alias": "x"}]}
    if where:
        plan["where"] = {"sql": where}
    return plan


def _both(value: Any) -> dict[str, Any]:
    return {SQLITE: value, PG: value}


ORACLES: list[Oracle] = [
    Oracle("column", _both('SELECT "Email" FROM "Customer"'), _both('SELECT "Emial" FROM "Customer"'),
           _both(_sel('i."Email"')), _both(_sel('i."Emial"'))),
    Oracle("column_where", _both("""SELECT "Name" FROM "Customer" WHERE "Secret" = 'x'"""),
           _both("""SELECT "Name" FROM "Customer" WHERE "Secrte" = 'x'"""),
           _both(_sel('i."Name"', """i."Secret" = 'x'""")), _both(_sel('i."Name"', """i."Secrte" = 'x'"""))),
    Oracle("generated", _both('SELECT i."SecretLen" FROM "Customer" i'), _both('SELECT i."SecretLem" FROM "Customer" i'),
           _both(_sel('i."SecretLen"')), _both(_sel('i."SecretLem"'))),
    Oracle("table", _both('SELECT "Amount" FROM "Payroll"'), _both('SELECT "Amount" FROM "Payrol"'),
           _both({"from": "Payroll", "select": ["Amount"]}), _both({"from": "Payrol", "select": ["Amount"]})),
    Oracle("plan_column", _both('SELECT i."Email" FROM "Customer" i'), _both('SELECT i."Emale" FROM "Customer" i'),
           _both({"from": {"table": "Customer", "alias": "i"}, "select": ["i.Email"]}),
           _both({"from": {"table": "Customer", "alias": "i"}, "select": ["i.Emale"]})),
    Oracle("rowid", {SQLITE: 'SELECT "rowid" FROM "Customer"'}, {SQLITE: 'SELECT "rowidd" FROM "Customer"'},
           {SQLITE: _sel('i."rowid"')}, {SQLITE: _sel('i."rowidd"')}),
    Oracle("catalog", {SQLITE: "SELECT name FROM sqlite_master", PG: "SELECT column_name FROM information_schema.columns"},
           {SQLITE: "SELECT name FROM sqlite_mastr", PG: "SELECT column_name FROM information_schema.colums"},
           {SQLITE: _sel("(SELECT max(name) FROM sqlite_master)"), PG: _sel("(SELECT max(column_name) FROM information_schema.columns)")},
           {SQLITE: _sel("(SELECT max(name) FROM sqlite_mastr)"), PG: _sel("(SELECT max(column_name) FROM information_schema.colums)")}),
]


def _check_ids() -> None:
    seen: set[str] = set()
    for attack in ATTACKS:
        assert attack.id not in seen, f"duplicate attack id {attack.id}"
        assert attack.family in FAMILIES, attack.family
        seen.add(attack.id)


_check_ids()

# names the hypothesis fuzz spells in every way: (name, args, dialect)
DENIED_FUNCTIONS: list[tuple[str, str, str]] = [
    ("pg_read_file", "'/etc/passwd'", PG),
    ("pg_read_binary_file", "'/etc/passwd'", PG),
    ("pg_ls_dir", "'.'", PG),
    ("pg_stat_file", "'PG_VERSION'", PG),
    ("lo_import", "'/etc/passwd'", PG),
    ("lo_export", "1, '/tmp/x'", PG),
    ("lo_from_bytea", "0, 'x'", PG),
    ("dblink", "'dbname=x', 'SELECT 1'", PG),
    ("dblink_exec", "'dbname=x', 'DELETE FROM t'", PG),
    ("pg_terminate_backend", "1", PG),
    ("pg_cancel_backend", "1", PG),
    ("pg_stat_reset", "", PG),
    ("pg_stat_reset_shared", "'bgwriter'", PG),
    ("pg_log_backend_memory_contexts", "1", PG),
    ("pg_reload_conf", "", PG),
    ("set_config", "'role', 'postgres', false", PG),
    ("pg_advisory_lock", "1", PG),
    ("pg_try_advisory_lock", "1", PG),
    ("pg_advisory_xact_lock", "1", PG),
    ("nextval", "'s'", PG),
    ("setval", "'s', 1", PG),
    ("pg_sleep", "100", PG),
    ("pg_notify", "'c', 'x'", PG),
    ("load_extension", "'/tmp/x'", SQLITE),
    ("readfile", "'/etc/passwd'", SQLITE),
    ("writefile", "'/tmp/x', 'y'", SQLITE),
    ("fts3_tokenizer", "'simple'", SQLITE),
]
CATALOG_TABLES: list[tuple[str | None, str, str]] = [
    ("information_schema", "columns", PG),
    ("information_schema", "tables", PG),
    ("pg_catalog", "pg_attribute", PG),
    ("pg_catalog", "pg_class", PG),
    ("pg_catalog", "pg_authid", PG),
    ("pg_catalog", "pg_stats", PG),
    ("pg_catalog", "pg_statistic", PG),
    ("pg_catalog", "pg_roles", PG),
    ("pg_catalog", "pg_stat_activity", PG),
    ("pg_catalog", "pg_settings", PG),
    ("main", "sqlite_master", SQLITE),
    ("main", "sqlite_schema", SQLITE),
    ("temp", "sqlite_master", SQLITE),
    (None, "sqlite_temp_master", SQLITE),
]
