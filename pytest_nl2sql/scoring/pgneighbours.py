"""PostgreSQL neighbour databases: the real database's schema, rebuilt as small seeded databases
on a scratch server.

A datasource's own login may only read (docs/security.md), so the neighbours are built with
another one: ``test_suite.scratch_url`` in nl2sql.yaml names a PostgreSQL login that may create
databases (``CREATEDB``; a superuser is refused unless ``test_suite.allow_privileged_login``),
on the datasource's server or any other. From the real database (read through the
datasource's read-only login) come the schemas, enum and domain types, tables with their
column types, collations, NOT NULL and generated columns, primary keys, UNIQUE, CHECK,
exclusion and foreign-key constraints, unique indexes, views and materialized views, the
extensions in use, the database's encoding and collation, and a sample of each column's
values. Each neighbour is one database ``nl2sql_nb_<digest>_<seed>_<i>`` whose rows
``neighbourgen.fill`` draws. A changed schema or sample gives a new digest, so a new name.

A neighbour is built under a temporary name in one transaction and renamed when complete, so
a database of the final name is always whole and is reused as is (the cache); two processes
building the same one race harmlessly (the loser drops its copy). A table, constraint or view
the scratch server cannot create (a function or collation only the real server has) is left
out, and a query that needs it fails there: the gold failing on a neighbour passes it over.

Queries run on a neighbour through a ``datasources.Adapter``: the statement guard with its
function allow-list, a READ ONLY transaction, a statement timeout and a row cap, as on the
real database (``PgNeighbour.run``), and never as the scratch login: each neighbour has a
``NOLOGIN`` reader role of its own (``<name>_r``) that may only ``SELECT`` its tables, and every
query runs under ``SET LOCAL ROLE`` to it -- so even a superuser scratch login lends a query no
privilege (the scratch login needs ``CREATEROLE`` besides ``CREATEDB`` to make those roles).
Columns some role may not read get synthetic values (``neighbourgen.hide``). A neighbour the
scratch login cannot open or read as its reader (built by another login under the same name)
is an error (``NeighbourSetupError``), never a neighbour that passes everything.
``drop_neighbours`` removes them all from the server, with their reader roles.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import attrs

from pytest_nl2sql.config import redact_url
from pytest_nl2sql.datasources.adapter import Adapter, QueryError
from pytest_nl2sql.scoring.neighbourgen import (
    GENERATOR_VERSION,
    SAMPLE_VALUES,
    ColumnSpec,
    TableSpec,
    fill,
    fk_order,
    hide,
)

__all__ = ["NAME_PREFIX", "NeighbourSetupError", "PgNeighbour", "PgSource", "create_reader_role", "drop_neighbours"]

#: Every database this module creates starts with it (and only those are ever dropped).
NAME_PREFIX = "nl2sql_nb_"
#: Rows read per column to sample its values and to see whether it holds a NULL.
SCAN_ROWS = 5000
#: How long one query may run on a neighbour, and how many rows it may return.
QUERY_SECONDS = 5.0
QUERY_ROWS = 100_000

_USER_SCHEMA = "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'"
_INT_TYPES = ("int2", "int4", "int8")
_CATEGORIES = {"S": "text", "D": "time", "B": "bool"}


class NeighbourSetupError(Exception):
    """The scratch server cannot hold neighbours (unreachable, a login that may not create
    databases, a superuser not allowed); the message says what to change."""


@attrs.frozen
class PgNeighbour:
    """One built neighbour database; ``run`` queries it read-only."""

    datasource: str
    index: int
    dbname: str
    url: str = attrs.field(repr=redact_url)  # the scratch login's URL of this database

    def __str__(self) -> str:
        return redact_url(self.url)

    def run(self, sql: str, limit: int = QUERY_ROWS) -> tuple[tuple[str, ...], list[tuple]]:
        """The columns and rows of one SELECT on this neighbour, run as its reader role;
        ``QueryError`` when it fails or returns more than ``limit`` rows (``unreachable`` when
        the neighbour cannot be opened or read as its reader)."""
        try:
            result = _adapter(self).execute(sql, row_limit=limit, role=_Reader(reader_role(self.dbname)))
        except QueryError as exc:
            text = exc.message.lower()
            if "permission denied to set role" in text or f'role "{reader_role(self.dbname)}" does not exist' in text:
                raise QueryError("unreachable", f"cannot read the neighbour as its reader role: {exc.message}") from None
            raise
        if result.truncated:
            raise QueryError("sql_error", f"more than {limit} rows")
        return result.columns, result.rows


@attrs.frozen
class _Reader:
    """What ``Adapter.execute(role=...)`` reads of a role on PostgreSQL: the role to SET."""

    db_role: str

    def allows_column(self, *_: Any) -> bool:
        return True

    def allows_table(self, *_: Any) -> bool:
        return True


def reader_role(dbname: str) -> str:
    """The NOLOGIN role that reads neighbour ``dbname`` (and nothing else)."""
    return f"{dbname}_r"


_ADAPTERS: dict[str, Adapter] = {}
_ADAPTERS_LOCK = threading.Lock()


def _adapter(n: PgNeighbour) -> Adapter:
    with _ADAPTERS_LOCK:
        adapter = _ADAPTERS.get(n.url)
        if adapter is None:
            # the scratch login may create databases, so it is "privileged"; it reaches only
            # the disposable neighbours, and every query still runs READ ONLY behind the guard
            adapter = Adapter(
                f"{n.datasource} neighbour {n.index + 1}", n.url, row_limit=QUERY_ROWS,
                timeout_s=QUERY_SECONDS, allow_privileged_login=True,
            )
            _ADAPTERS[n.url] = adapter
        return adapter


@attrs.frozen
class _Schema:
    """What a neighbour is built from: DDL in the order it runs, the tables to fill."""

    setup: tuple[str, ...]  # extensions, schemas, enum and domain types
    tables: tuple[TableSpec, ...]  # parents first; TableSpec.sql is the CREATE TABLE
    constraints: tuple[str, ...]  # ALTER TABLE ... ADD CONSTRAINT (keys, checks), unique indexes
    foreign: tuple[str, ...]  # ALTER TABLE ... ADD CONSTRAINT ... FOREIGN KEY
    after: tuple[str, ...]  # views and materialized views (after the rows)
    locale: tuple[str, str, str, str, str]  # encoding, collate, ctype, provider, icu locale
    qualified: dict[str, tuple[str, str]]  # TableSpec.name -> (schema, table)

    def digest(self) -> str:
        h = hashlib.sha256(f"generator {GENERATOR_VERSION} postgresql".encode())
        h.update(json.dumps([self.setup, self.constraints, self.foreign, self.after, self.locale]).encode())
        for t in self.tables:
            h.update(t.sql.encode())
            for c in t.columns:
                h.update(repr((c.name, c.decl, c.category, c.values, c.has_null)).encode())
        return h.hexdigest()[:16]


@attrs.frozen
class PgSource:
    """A PostgreSQL datasource and the scratch server its neighbours are built on."""

    datasource: str
    url: str = attrs.field(repr=redact_url)  # the datasource's (read-only) URL
    scratch_url: str = attrs.field(repr=redact_url)
    allow_privileged_login: bool = False  # of the scratch login
    datasource_privileged: bool = False  # the datasource's own allow_privileged_login
    timeout_s: float = 10.0  # the datasource's: for reading its schema and samples

    dialect = "postgres"  # sqlglot's name, for mutants

    def build(self, k: int, seed: int, hidden: Any = None) -> list[PgNeighbour]:
        """``k`` neighbours (built once per schema digest and seed, then found by name); the
        columns ``hidden(table, column)`` names get synthetic values."""
        schema = self.read_schema()
        if hidden is not None:
            schema = attrs.evolve(schema, tables=tuple(hide(schema.tables, hidden)))
        key = schema.digest()
        with _scratch(self.scratch_url, self.allow_privileged_login) as admin:
            existing = {r[0] for r in admin.execute(
                "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{NAME_PREFIX}{key}_%",)
            )}
            out = []
            for i in range(k):
                name = f"{NAME_PREFIX}{key}_{seed}_{i}"
                if name not in existing:
                    _build(admin, self.scratch_url, name, schema, random.Random(f"{seed}:{i}"))
                out.append(PgNeighbour(self.datasource, i, name, self._neighbour_url(name)))
        for n in out:  # one that this login cannot open or read as its reader is no neighbour
            try:
                n.run("SELECT 1 AS n", 1)
            except QueryError as exc:
                raise NeighbourSetupError(
                    f"the neighbour database {n.dbname} exists but cannot be read here ({exc.message}); "
                    "another login may have built it: drop it (pytest-nl2sql cache neighbours --drop, as "
                    "that login) or use that login as test_suite.scratch_url"
                ) from None
        return out

    def _neighbour_url(self, dbname: str) -> str:
        from sqlalchemy.engine import make_url

        url = make_url(self.scratch_url).set(database=dbname)  # the Adapter picks the driver
        options = make_url(self.url).query.get("options")  # e.g. the datasource's search_path
        if isinstance(options, str) and options:
            url = url.update_query_dict({"options": options})
        return url.render_as_string(hide_password=False)

    def read_schema(self) -> _Schema:
        """The real database's schema and samples, read through its own read-only login."""
        adapter = Adapter(
            self.datasource, self.url, timeout_s=self.timeout_s, allow_privileged_login=self.datasource_privileged
        )
        try:
            with adapter.raw_connection() as con:
                return _read(con)
        finally:
            adapter.close()


# -- reading the real database ----------------------------------------------------------------


def _rows(con: Any, sql: str, params: Sequence[Any] | None = None) -> list[tuple]:
    """The rows of one statement; without ``params`` its text goes to the server as it is
    (psycopg reads ``%s`` placeholders only when there are parameters)."""
    cur = con.cursor()
    try:
        cur.execute(sql, params)
        return list(cur.fetchall()) if cur.description else []
    finally:
        cur.close()


def _ident(*parts: str) -> str:
    return ".".join('"' + p.replace('"', '""') + '"' for p in parts)


def _read(con: Any) -> _Schema:
    # with only pg_catalog on the search path, every name the server prints (types, foreign
    # keys, view and index definitions) comes schema-qualified, whatever the login's own path
    _rows(con, "SET LOCAL search_path = pg_catalog")
    setup: list[str] = []
    for (ext,) in _rows(con, "SELECT extname FROM pg_extension WHERE extname <> 'plpgsql' ORDER BY 1"):
        setup.append(f"CREATE EXTENSION IF NOT EXISTS {_ident(ext)}")
    for (nsp,) in _rows(con, f"SELECT n.nspname FROM pg_namespace n WHERE {_USER_SCHEMA} ORDER BY 1"):
        setup.append(f"CREATE SCHEMA IF NOT EXISTS {_ident(nsp)}")
    for nsp, typ, labels in _rows(con, f"""
        SELECT n.nspname, t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace JOIN pg_enum e ON e.enumtypid = t.oid
        WHERE {_USER_SCHEMA} GROUP BY 1, 2 ORDER BY 1, 2"""):
        quoted = ", ".join("'" + str(label).replace("'", "''") + "'" for label in labels)
        setup.append(f"CREATE TYPE {_ident(nsp, typ)} AS ENUM ({quoted})")
    for nsp, typ, base, notnull, checks in _rows(con, f"""
        SELECT n.nspname, t.typname, format_type(t.typbasetype, t.typtypmod), t.typnotnull,
               ARRAY(SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c WHERE c.contypid = t.oid ORDER BY c.conname)
        FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE t.typtype = 'd' AND {_USER_SCHEMA} ORDER BY t.oid"""):
        setup.append(f"CREATE DOMAIN {_ident(nsp, typ)} AS {base}" + (" NOT NULL" if notnull else "")
                     + "".join(f" {c}" for c in checks or ()))
    found = _rows(con, f"""
        SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND {_USER_SCHEMA} ORDER BY 2, 3""")
    names = {oid: (nsp, rel) for oid, nsp, rel in found}
    key_of = {oid: f"{nsp}.{rel}" for oid, (nsp, rel) in names.items()}
    tables: dict[str, TableSpec] = {}
    constraints: list[str] = []
    foreign: list[str] = []
    after: list[str] = []
    for oid, (nsp, rel) in names.items():
        spec, cons, fks = _table(con, oid, nsp, rel, key_of)
        tables[spec.name] = spec
        constraints += cons
        foreign += fks
        constraints += [r[0] for r in _rows(con, """
            SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i
            WHERE i.indrelid = %s AND i.indisunique AND NOT i.indisprimary
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
            ORDER BY i.indexrelid""", (oid,))]
    for nsp, rel, kind, definition in _rows(con, f"""
        SELECT n.nspname, c.relname, c.relkind, pg_get_viewdef(c.oid)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('v', 'm') AND {_USER_SCHEMA} ORDER BY c.oid"""):
        what = "MATERIALIZED VIEW" if kind == "m" else "VIEW"
        after.append(f"CREATE {what} {_ident(nsp, rel)} AS {definition.rstrip().rstrip(';')}")
    (db,) = _rows(con, """
        SELECT pg_encoding_to_char(d.encoding), to_jsonb(d) FROM pg_database d
        WHERE d.datname = current_database()""")
    info = db[1] if isinstance(db[1], dict) else json.loads(db[1])
    locale = (
        db[0], str(info.get("datcollate") or ""), str(info.get("datctype") or ""),
        str(info.get("datlocprovider") or "c"), str(info.get("daticulocale") or info.get("datlocale") or ""),
    )
    return _Schema(
        tuple(setup), tuple(fk_order(tables)), tuple(constraints), tuple(foreign), tuple(after),
        locale, {k: names[o] for o, k in key_of.items()},
    )


def _table(con: Any, oid: int, nsp: str, rel: str, key_of: dict[int, str]) -> tuple[TableSpec, list[str], list[str]]:
    cols = _rows(con, """
        SELECT a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attgenerated,
               pg_get_expr(d.adbin, d.adrelid), t.typcategory, COALESCE(bt.typname, t.typname),
               CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation THEN
                 (SELECT quote_ident(cn.nspname) || '.' || quote_ident(co.collname)
                  FROM pg_collation co JOIN pg_namespace cn ON cn.oid = co.collnamespace WHERE co.oid = a.attcollation)
               END
        FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
        LEFT JOIN pg_type bt ON bt.oid = t.typbasetype
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum""", (oid,))
    attname = {num: name for num, name, *_ in cols}
    cons = _rows(con, """
        SELECT conname, contype, pg_get_constraintdef(oid), conkey, confrelid, confkey FROM pg_constraint
        WHERE conrelid = %s AND contype IN ('p', 'u', 'c', 'f', 'x') ORDER BY contype, conname""", (oid,))
    pk = next((list(c[3]) for c in cons if c[1] == "p"), [])
    key = key_of[oid]
    table = _ident(nsp, rel)
    lines, specs = [], []
    for num, name, typ, notnull, generated, default, category, base, collation in cols:
        line = f"{_ident(name)} {typ}" + (f" COLLATE {collation}" if collation else "")
        if generated == "s":
            lines.append(f"{line} GENERATED ALWAYS AS ({default}) STORED")
            continue  # computed: never written
        lines.append(line + (" NOT NULL" if notnull else ""))
        kind = "int" if base in _INT_TYPES else ("real" if category == "N" and base != "money" else
                                                  _CATEGORIES.get(category, "other"))
        values, has_null = _sample(con, table, name, kind)
        if values is None:  # its values do not come back as Python values: as text
            kind = "other"
            values, has_null = _sample(con, table, name, kind)
        specs.append(ColumnSpec(name, typ, bool(notnull), pk.index(num) + 1 if num in pk else 0,
                                tuple(values or ()), has_null, category=kind))
    foreign_cols: list[tuple[str, str, str]] = []
    added, fks = [], []
    for conname, contype, definition, conkey, confrelid, confkey in cons:
        statement = f"ALTER TABLE {table} ADD CONSTRAINT {_ident(conname)} {definition}"
        if contype != "f":
            added.append(statement)
            continue
        parent = key_of.get(confrelid)
        if parent is None:  # a parent the neighbour does not have (a partition, another schema)
            continue
        fks.append(statement)
        parent_cols = {num: name for num, name in _rows(con, """
            SELECT attnum, attname FROM pg_attribute WHERE attrelid = %s AND attnum > 0""", (confrelid,))}
        for mine, theirs in zip(conkey or (), confkey or (), strict=False):
            foreign_cols.append((attname[mine], parent, parent_cols.get(theirs, "")))
    spec = TableSpec(key, f"CREATE TABLE {table} ({', '.join(lines)})", tuple(specs), tuple(foreign_cols), ())
    return spec, added, fks


def _sample(con: Any, table: str, column: str, kind: str) -> tuple[list | None, bool]:
    """Up to SAMPLE_VALUES distinct values of a column among its first SCAN_ROWS rows (in the
    column's own order), and whether it holds a NULL; (None, ...) when they cannot be read as
    Python values (then ``kind`` 'other' reads them as text)."""
    col = _ident(column)
    value = "v::text" if kind == "other" else "v"
    # a savepoint, not a rollback: the transaction's search_path (``_read``) must outlive a failure
    _rows(con, "SAVEPOINT nl2sql_sample")
    try:
        values = [r[0] for r in _rows(con, f"""
            SELECT DISTINCT {value} FROM (SELECT {col} AS v FROM {table} WHERE {col} IS NOT NULL LIMIT {SCAN_ROWS}) s
            ORDER BY 1 LIMIT {SAMPLE_VALUES}""")]
        has_null = bool(_rows(con, f"SELECT EXISTS (SELECT 1 FROM {table} WHERE {col} IS NULL)")[0][0])
    except Exception:  # noqa: BLE001 -- e.g. a value Python cannot hold (infinity dates), no equality
        _rows(con, "ROLLBACK TO SAVEPOINT nl2sql_sample")
        if kind == "other":
            return [], True
        return None, True
    return values, has_null


# -- building on the scratch server -----------------------------------------------------------


def _conninfo(url: str, dbname: str | None = None) -> dict[str, Any]:
    from sqlalchemy.engine import make_url  # here: a run on SQLite never imports it

    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise NeighbourSetupError(
            f"test_suite.scratch_url {redact_url(url)!r} is not a PostgreSQL URL "
            "(write e.g. postgresql+psycopg://nl2sql_scratch:${PGPASSWORD}@host/postgres)"
        )
    info: dict[str, Any] = {k: v for k, v in parsed.query.items() if isinstance(v, str)}
    info.update(host=parsed.host, port=parsed.port, user=parsed.username, password=parsed.password,
                dbname=dbname or parsed.database or "postgres", application_name="pytest-nl2sql neighbours")
    return {k: v for k, v in info.items() if v is not None}


@contextlib.contextmanager
def _scratch(url: str, allow_privileged: bool) -> Iterator[Any]:
    """An autocommit connection to the scratch server's maintenance database, its login checked."""
    import psycopg

    try:
        con = psycopg.connect(**_conninfo(url), autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        raise NeighbourSetupError(
            f"the scratch server for neighbour databases ({redact_url(url)}) cannot be reached: "
            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__} "
            "(check test_suite.scratch_url in nl2sql.yaml)"
        ) from None
    try:
        login, superuser, createdb, createrole = con.execute(
            "SELECT rolname, rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        if superuser and not allow_privileged:
            raise NeighbourSetupError(
                f"test_suite.scratch_url: the login {login!r} is a superuser; neighbour databases need "
                "only CREATEDB (CREATE ROLE nl2sql_scratch LOGIN CREATEDB), or set "
                "test_suite.allow_privileged_login: true in nl2sql.yaml"
            )
        if not (superuser or createdb):
            raise NeighbourSetupError(
                f"test_suite.scratch_url: the login {login!r} may not create databases "
                f"(ALTER ROLE {login} CREATEDB), and each neighbour is a database of its own"
            )
        if not (superuser or createrole):
            raise NeighbourSetupError(
                f"test_suite.scratch_url: the login {login!r} may not create roles "
                f"(ALTER ROLE {login} CREATEROLE): each neighbour is read as a role of its own "
                "that may only SELECT there, never as the scratch login"
            )
        yield con
    finally:
        con.close()


def _build(admin: Any, scratch_url: str, name: str, schema: _Schema, rnd: random.Random) -> None:
    """Build neighbour ``name`` under a temporary name, then rename it (module docstring)."""
    import psycopg
    from psycopg import sql

    temp = f"{name[:40]}_t{os.getpid():x}{random.SystemRandom().getrandbits(24):06x}"
    encoding, collate, ctype, provider, icu = schema.locale
    clause = sql.SQL("ENCODING {} LC_COLLATE {} LC_CTYPE {}").format(
        sql.Literal(encoding), sql.Literal(collate), sql.Literal(ctype))
    if provider == "i" and icu:
        clause = sql.SQL("{} LOCALE_PROVIDER icu ICU_LOCALE {}").format(clause, sql.Literal(icu))
    try:
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0 {}").format(sql.Identifier(temp), clause))
    except psycopg.Error:  # a locale the scratch server lacks: its default one
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0").format(sql.Identifier(temp)))
    reader = reader_role(name)
    try:
        create_reader_role(admin, reader)
        with contextlib.suppress(psycopg.Error):  # already a member (PostgreSQL 16 grants it to the creator)
            admin.execute(sql.SQL("GRANT {} TO CURRENT_USER").format(sql.Identifier(reader)))
        with psycopg.connect(**_conninfo(scratch_url, temp)) as con:
            _load(con, schema, rnd)
            _grant_reader(con, reader)
        # whole: from now on every session on it is read-only by default, on the server's
        # side too, and no other login may connect
        admin.execute(sql.SQL("ALTER DATABASE {} SET default_transaction_read_only = on").format(sql.Identifier(temp)))
        admin.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(sql.Identifier(temp)))
        try:
            admin.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(sql.Identifier(temp), sql.Identifier(name)))
            temp = ""
        except (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation):
            pass  # another process built it meanwhile (renaming at the same moment: UniqueViolation)
    finally:
        if temp:
            with contextlib.suppress(psycopg.Error):
                admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(temp)))


def create_reader_role(admin: Any, reader: str) -> None:
    """``CREATE ROLE reader``, or nothing when it exists. A racing builder (another xdist worker
    building the same neighbour) may create it at the same moment: PostgreSQL then says
    ``DuplicateObject``, or, while both transactions commit, ``UniqueViolation`` on pg_authid's
    name index (about 4 in 10 exact races on PostgreSQL 15); either way the role is there."""
    import psycopg
    from psycopg import sql

    with contextlib.suppress(psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
        admin.execute(sql.SQL("CREATE ROLE {} NOLOGIN NOINHERIT").format(sql.Identifier(reader)))


def _try(con: Any, statement: str) -> bool:
    import psycopg

    try:
        with con.transaction():
            con.execute(statement)  # no parameters: the text goes as it is, '%' included
        return True
    except psycopg.Error:
        return False


def _load(con: Any, schema: _Schema, rnd: random.Random) -> None:
    """Create the schema, draw and write the rows, then the views; one transaction."""
    import psycopg
    from psycopg import sql

    for statement in schema.setup:
        _try(con, statement)
    made = []
    for t in schema.tables:
        if _try(con, t.sql) or _try(con, _without_collations(t.sql)):
            made.append(t)
    for statement in (*schema.constraints, *schema.foreign):
        _try(con, statement)
    inserts = {}
    for t in made:
        nsp, rel = schema.qualified[t.name]
        values = sql.SQL(", ").join(sql.SQL("{}::" + c.decl.replace("%", "%%")).format(sql.Placeholder()) for c in t.columns)
        inserts[t.name] = sql.SQL("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT DO NOTHING").format(
            sql.Identifier(nsp, rel), sql.SQL(", ").join(sql.Identifier(c.name) for c in t.columns), values)

    def insert(t: TableSpec, row: list) -> bool:
        if t.name not in inserts or not t.columns:
            return False
        try:
            with con.transaction():
                cur = con.execute(inserts[t.name], row)
            return cur.rowcount == 1
        except (psycopg.Error, OverflowError, ValueError, TypeError):  # a row a constraint refuses
            return False

    fill(made, rnd, insert)
    pending = list(schema.after)
    while pending:  # a view may read another one: repeat while any is made
        left = [s for s in pending if not _try(con, s)]
        if len(left) == len(pending):
            break
        pending = left
    con.commit()


def _grant_reader(con: Any, reader: str) -> None:
    """The reader may use each user schema and SELECT its tables and views; nothing else."""
    from psycopg import sql

    for (nsp,) in _rows(con, f"SELECT n.nspname FROM pg_namespace n WHERE {_USER_SCHEMA}"):
        con.execute(sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(nsp), sql.Identifier(reader)))
        con.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA {} TO {}").format(sql.Identifier(nsp), sql.Identifier(reader)))
    con.commit()


def _without_collations(create: str) -> str:
    import re

    return re.sub(r' COLLATE (?:"[^"]*"|\w+)(?:\.(?:"[^"]*"|\w+))?', "", create)


def drop_neighbours(scratch_url: str, *, allow_privileged_login: bool = False, dry_run: bool = False) -> list[str]:
    """Drop every neighbour database (and half-built one) on the scratch server that its login
    owns; their names (``dry_run``: only list them)."""
    from psycopg import sql

    with _scratch(scratch_url, allow_privileged_login) as admin:
        names = [r[0] for r in admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s AND pg_has_role(current_user, datdba, 'USAGE') "
            "ORDER BY 1", (NAME_PREFIX.replace("_", "\\_") + "%",))]
        if dry_run:
            return names
        for name in names:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            with contextlib.suppress(Exception):
                admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(reader_role(name))))
    with _ADAPTERS_LOCK:
        for url in [u for u in _ADAPTERS if any(f"/{n}" in u for n in names)]:
            _ADAPTERS.pop(url).close()
    return names
