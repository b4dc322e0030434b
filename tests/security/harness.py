"""The machinery behind the attack corpus: projects per backend, the three SQL paths, and the
checks that say whether an attack escaped (changed something) or leaked (showed something).

Nothing here depends on pytest fixtures, so ``tests/security/report.py`` runs the same code
outside pytest. ``conftest.py`` wraps it in session-scoped fixtures.

Backends:

* ``sqlite`` -- a SQLite file in a temporary folder;
* ``pg_super`` -- a real PostgreSQL server, logged in as the superuser ``postgres`` (the
  datasource sets ``allow_privileged_login: true``);
* ``pg_ro`` -- the same server, logged in as ``nl2sql_ro`` (LOGIN, CONNECT, USAGE, SELECT only);
  its ``viewer`` role sets ``db_role: nl2sql_viewer``, a PostgreSQL role that may read only
  ``Customer.Name`` and ``Audit``.

Paths: ``adapter`` (``Adapter.execute``: what regenerate and audit run), ``replay``
(``ReplayEngine``, what ``--nl2sql-predictions`` runs) and ``reference`` (``ReferenceEngine``
with a ``FakeLLM`` serving a plan whose ``{sql: ...}`` expression carries the attack).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os
import re
import shutil
import sqlite3
import time
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.config import ConfigError, load_config
from pytest_nl2sql.datasources import DatasourceRegistry, QueryError, clear_schema_cache
from pytest_nl2sql.engine.reference import ReferenceEngine
from pytest_nl2sql.engine.replay import Prediction, ReplayEngine
from pytest_nl2sql.llm.fake import FakeLLM

from .corpus import Attack

__all__ = [
    "BACKENDS",
    "PATHS",
    "Backend",
    "Outcome",
    "Verdict",
    "pg_backends",
    "run_attack",
    "sqlite_backend",
]

PATHS = ("adapter", "replay", "reference")
BACKENDS = ("sqlite", "pg_super", "pg_ro", "duckdb")

# -- the data ------------------------------------------------------------------------------

# CustomerId, Name, Email, Secret. Every Email/Secret is a string found nowhere else, so any
# answer carrying one has leaked it; the ids are numbers no count or length will produce.
CUSTOMERS = [
    (7340001, "Ann", "ann.q7x2@leak.example", "SECRET-a91f3c-alpha-0000000000000001"),
    (7340002, "Bob", "bob.k3m9@leak.example", "SECRET-b27d4e-bravo-000000000000000000002"),
    (7340003, "Cid", "cid.z8w1@leak.example", "SECRET-c53a9b-charlie-0000000000000000000000003"),
]
AUDIT = [("first note",), ("second note",)]
PAYROLL = [(1, 91000), (2, 87000)]
FILE_SENTINEL = "FILE-SENTINEL-5d1e7a2c9b"  # the content of the file attacks try to read
SECRET_STRINGS = tuple(v for c in CUSTOMERS for v in c[2:]) + (FILE_SENTINEL, "root:x:0:0")
DENIED_NAMES = ("Email", "Secret", "SecretLen", "CustomerId", "Payroll", "Amount", "PayrollId")

SQLITE_DDL = [
    'CREATE TABLE "Customer" ("CustomerId" INTEGER PRIMARY KEY, "Name" TEXT, "Email" TEXT, '
    '"Secret" TEXT, "SecretLen" INTEGER GENERATED ALWAYS AS (length("Secret")))',
    'CREATE TABLE "Audit" ("note" TEXT)',
    'CREATE TABLE "Payroll" ("PayrollId" INTEGER PRIMARY KEY, "Amount" INTEGER)',
]
PG_DDL = [
    'CREATE TABLE "Customer" ("CustomerId" integer PRIMARY KEY, "Name" text, "Email" text, '
    '"Secret" text, "SecretLen" integer GENERATED ALWAYS AS (length("Secret")) STORED)',
    'CREATE TABLE "Audit" ("note" text)',
    'CREATE TABLE "Payroll" ("PayrollId" integer PRIMARY KEY, "Amount" integer)',
    "CREATE SEQUENCE audit_seq",
]
TABLES = ("Customer", "Audit", "Payroll")

RO_LOGIN = "nl2sql_ro"
VIEWER_DB_ROLE = "nl2sql_viewer"
PG_DB = "shop"
PG_TEMPLATE = "shop_tpl"

# Keys the fixes add to nl2sql.yaml. Until they land, a config naming them does not load; the
# harness then writes the file without them (and warns), so the corpus still runs.
NEW_KEYS = ("allow_privileged_login", "db_role")


def _roles_yaml(db_role: str | None) -> str:
    viewer_db_role = f"    db_role: {db_role}\n" if db_role else ""
    return (
        "roles:\n"
        '  admin: {datasources: "*"}\n'
        "  viewer:\n"
        "    datasources: [shop]\n"
        "    deny:\n"
        "      tables: [shop.Payroll]\n"
        "      columns: [shop.Customer.Email, shop.Customer.Secret, shop.Customer.CustomerId,\n"
        "                shop.Customer.SecretLen]\n" + viewer_db_role
    )


def write_project(
    folder: Path,
    url: str,
    *,
    timeout_s: float,
    privileged: bool = False,
    db_role: str | None = None,
    include_new_keys: bool = True,
) -> Path:
    """Write ``folder/nl2sql.yaml`` with datasource ``shop`` at ``url``; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    extra = "    allow_privileged_login: true\n" if privileged and include_new_keys else ""
    text = (
        "version: 1\n"
        "datasources:\n"
        "  shop:\n"
        f"    url: {url}\n"
        "    description: Shop customers, an audit log and the payroll.\n"
        "    row_limit: 50\n"
        f"    timeout_s: {timeout_s}\n" + extra + _roles_yaml(db_role if include_new_keys else None)
    )
    path = folder / "nl2sql.yaml"
    path.write_text(text)
    return path


def load_project(folder: Path, url: str, **kw: Any) -> Any:
    """Load the project, falling back to a file without the not-yet-known keys (warned)."""
    path = write_project(folder, url, **kw)
    try:
        return load_config(path)
    except ConfigError as error:
        if not any(key in str(error) for key in NEW_KEYS):
            raise
        warnings.warn(
            f"nl2sql.yaml does not accept {', '.join(NEW_KEYS)} yet; the security corpus runs "
            f"without them ({str(error).splitlines()[0]})",
            stacklevel=2,
        )
        path = write_project(folder, url, **kw, include_new_keys=False)
        return load_config(path)


def build_sqlite(path: Path) -> Path:
    connection = sqlite3.connect(path)
    with connection:
        for statement in SQLITE_DDL:
            connection.execute(statement)
        connection.executemany(
            'INSERT INTO "Customer" ("CustomerId", "Name", "Email", "Secret") VALUES (?,?,?,?)',
            CUSTOMERS,
        )
        connection.executemany('INSERT INTO "Audit" VALUES (?)', AUDIT)
        connection.executemany('INSERT INTO "Payroll" VALUES (?,?)', PAYROLL)
    connection.close()
    return path


# -- outcomes and verdicts --------------------------------------------------------------------


@attrs.frozen
class Outcome:
    """What one path gave back for one attack, in one shape for all three paths."""

    status: str  # ok / refused / error / not_answerable / needs_clarification
    rows: tuple = ()
    columns: tuple = ()
    message: str = ""
    retrieved: tuple = ()
    elapsed_s: float = 0.0
    kind: str | None = None  # the QueryError kind on the adapter path

    def text(self) -> str:
        """Everything a caller of the path would see, as one string (for leak scans)."""
        return repr((self.rows, self.columns, self.message, self.retrieved))


@attrs.frozen
class Verdict:
    """The result of one attack on one path, backend and role."""

    attack: str
    family: str
    path: str
    backend: str
    role: str | None
    outcome: Outcome
    escapes: tuple[str, ...] = ()  # what changed / ran that must not have
    leaks: tuple[str, ...] = ()  # what was shown that must not have been
    false_refusals: tuple[str, ...] = ()  # a control that did not answer

    @property
    def ok(self) -> bool:
        return not self.escapes and not self.leaks and not self.false_refusals

    def describe(self) -> str:
        role = self.role or "-"
        what = "; ".join([*(f"ESCAPE {e}" for e in self.escapes), *(f"LEAK {x}" for x in self.leaks),
                          *(f"FALSE REFUSAL {x}" for x in self.false_refusals)])
        o = self.outcome
        got = f"status={o.status}" + (f" kind={o.kind}" if o.kind else "")
        return (
            f"[{self.backend}/{self.path}/{role}] {self.attack} ({self.family}): {what} "
            f"-- got {got}, {len(o.rows)} rows, message={o.message[:160]!r}"
        )


# -- backends ---------------------------------------------------------------------------------


class Backend:
    """One database behind one project: builds engines, snapshots and restores the data."""

    name: str
    dialect: str
    db_column_denial = False  # does the database itself deny the viewer's columns?

    def __init__(self, folder: Path, config: Any) -> None:
        self.folder = folder
        self.config = config
        self.registry = DatasourceRegistry.from_config(config)
        self.policies = {name: config.role(name) for name in ("admin", "viewer")}

    # substitution values for the corpus' placeholders
    def context(self) -> dict[str, str]:
        raise NotImplementedError

    def snapshot(self) -> dict[str, Any]:
        raise NotImplementedError

    def restore(self) -> None:
        raise NotImplementedError

    def canary_paths(self) -> list[Path]:
        return [Path(self.context()["canary"])]

    def adapter(self) -> Any:
        return self.registry.get("shop")

    def release(self) -> None:
        """End every session the paths opened (after the 'after' snapshot); the engines stay."""
        for name in self.registry.names():
            self.registry.get(name).engine.dispose()

    def close(self) -> None:
        self.registry.close()


class FileBackend(Backend):
    """A database in one file of a temporary folder (SQLite, DuckDB): the folder's bytes are
    the snapshot, a pristine copy the restore."""

    scheme = ""  # the URL scheme
    suffix = ""

    def __init__(self, folder: Path, timeout_s: float) -> None:
        self.data = folder / "data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.db = self.build(self.data / f"shop{self.suffix}")
        self.pristine = folder / f"pristine{self.suffix}"
        shutil.copyfile(self.db, self.pristine)
        self.secret_file = folder / "secret.txt"
        self.secret_file.write_text(FILE_SENTINEL + "\n")
        config = load_project(folder / "project", f"{self.scheme}:///{self.db}", timeout_s=timeout_s)
        super().__init__(folder, config)

    def build(self, path: Path) -> Path:
        raise NotImplementedError

    def context(self) -> dict[str, str]:
        return {
            "canary": str(self.data / "canary.db"),
            "secret_file": str(self.secret_file),
            "victim_pid": "0",
            "conninfo": "",
            "db": str(self.db),
        }

    def snapshot(self) -> dict[str, Any]:
        files = {}
        for path in sorted(self.data.iterdir()):
            files[path.name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        return {"files": files}

    def restore(self) -> None:
        self.registry.close()
        for path in self.data.iterdir():
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink()
        shutil.copyfile(self.pristine, self.db)
        clear_schema_cache()


class SqliteBackend(FileBackend):
    name = "sqlite"
    dialect = "sqlite"
    db_column_denial = True  # the SQLite authorizer denies a role's columns
    scheme = "sqlite"
    suffix = ".sqlite"

    def build(self, path: Path) -> Path:
        return build_sqlite(path)


class PgCluster:
    """The per-process server's databases and login roles, shared by both PG backends."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self.secret_file = Path(server.folder) / "secret.txt"
        self.secret_file.write_text(FILE_SENTINEL + "\n")
        os.chmod(self.secret_file, 0o644)
        self.canary = Path(server.folder) / "canary.out"
        self.dblink = False
        self._build_template()
        self._create_db()
        self.bystander = None
        self.bystander_pid = 0
        self._start_bystander()

    # -- plumbing
    def connect(self, dbname: str = PG_DB, **kw: Any) -> Any:
        import psycopg

        return psycopg.connect(self.server.dsn(dbname), autocommit=True, **kw)

    def _build_template(self) -> None:
        with self.connect("postgres") as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {PG_TEMPLATE}")
            conn.execute(f"CREATE DATABASE {PG_TEMPLATE}")
            for role, login in ((RO_LOGIN, "LOGIN"), (VIEWER_DB_ROLE, "NOLOGIN")):
                if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
                    conn.execute(f"CREATE ROLE {role} {login}")
            conn.execute(f"GRANT {VIEWER_DB_ROLE} TO {RO_LOGIN}")
        with self.connect(PG_TEMPLATE) as conn:
            for statement in PG_DDL:
                conn.execute(statement)
            with conn.cursor() as cursor:
                cursor.executemany(
                    'INSERT INTO "Customer" ("CustomerId", "Name", "Email", "Secret") VALUES (%s,%s,%s,%s)',
                    CUSTOMERS,
                )
                cursor.executemany('INSERT INTO "Audit" VALUES (%s)', AUDIT)
                cursor.executemany('INSERT INTO "Payroll" VALUES (%s,%s)', PAYROLL)
            try:
                conn.execute("CREATE EXTENSION dblink")
                self.dblink = True
            except Exception:  # contrib not installed: the dblink attacks then meet no function
                self.dblink = False
            conn.execute(f"GRANT USAGE ON SCHEMA public TO {RO_LOGIN}, {VIEWER_DB_ROLE}")
            conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {RO_LOGIN}")
            conn.execute(f'GRANT SELECT ("Name") ON "Customer" TO {VIEWER_DB_ROLE}')
            conn.execute(f'GRANT SELECT ON "Audit" TO {VIEWER_DB_ROLE}')
            conn.execute("ANALYZE")  # pg_stats then holds the columns' common values
        with self.connect("postgres") as conn:
            conn.execute(f"GRANT CONNECT ON DATABASE {PG_TEMPLATE} TO {RO_LOGIN}")

    def _create_db(self) -> None:
        with self.connect("postgres") as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {PG_DB} TEMPLATE {PG_TEMPLATE}")
            conn.execute(f"GRANT CONNECT ON DATABASE {PG_DB} TO {RO_LOGIN}")
            conn.execute(f"ALTER ROLE {RO_LOGIN} NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS")
            conn.execute("ALTER SYSTEM RESET ALL")
            conn.execute("SELECT pg_reload_conf()")
            known = ("postgres", RO_LOGIN, VIEWER_DB_ROLE)
            for (role,) in conn.execute(
                "SELECT rolname FROM pg_roles WHERE rolname NOT LIKE 'pg\\_%%' AND rolname <> ALL(%s)",
                (list(known),),
            ).fetchall():
                conn.execute(f'DROP ROLE IF EXISTS "{role}"')
        with contextlib.suppress(OSError):
            self.canary.unlink()

    def _start_bystander(self) -> None:
        with contextlib.suppress(Exception):
            if self.bystander is not None:
                self.bystander.close()
        self.bystander = self.connect("postgres", application_name="nl2sql-bystander")
        self.bystander_pid = self.bystander.execute("SELECT pg_backend_pid()").fetchone()[0]

    def bystander_alive(self) -> bool:
        try:
            self.bystander.execute("SELECT 1").fetchone()
            return True
        except Exception:
            return False

    def context(self) -> dict[str, str]:
        s = self.server
        return {
            "canary": str(self.canary),
            "secret_file": str(self.secret_file),
            "victim_pid": str(self.bystander_pid),
            "conninfo": f"host={s.host} port={s.port} dbname={PG_DB} user=postgres",
            "db": PG_DB,
        }

    _SNAPSHOT_SQL = """
        SELECT json_build_object(
          'tables', (SELECT json_object_agg(name, digest) FROM (
              SELECT 'Customer' AS name, (SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM "Customer" t) AS digest
              UNION ALL SELECT 'Audit', (SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM "Audit" t)
              UNION ALL SELECT 'Payroll', (SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM "Payroll" t)) d),
          'relations', (SELECT json_agg(x ORDER BY x) FROM (
              SELECT (n.nspname ~ '^pg_temp')::text || ' ' || c.relname || ' ' || c.relkind::text AS x
              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_toast') r),
          'sequence audit_seq', (SELECT last_value || ' ' || is_called FROM audit_seq),
          'stats_reset', (SELECT stats_reset::text FROM pg_stat_database WHERE datname = current_database()),
          'bgwriter stats_reset', (SELECT stats_reset::text FROM pg_stat_bgwriter),
          'advisory locks', (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'),
          'roles', (SELECT json_agg(concat_ws(' ', rolname, rolsuper, rolcreaterole, rolcreatedb, rolcanlogin) ORDER BY rolname)
                    FROM pg_roles WHERE rolname !~ '^pg_'),
          'role members', (SELECT json_agg(roleid::regrole::text || '>' || member::regrole::text ORDER BY 1)
                           FROM pg_auth_members WHERE roleid::regrole::text !~ '^pg_'),
          'large objects', (SELECT count(*) FROM pg_largeobject_metadata),
          'extensions', (SELECT json_agg(extname ORDER BY extname) FROM pg_extension),
          'functions', (SELECT count(*) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'),
          'grants', (SELECT json_agg(c.relname || '=' || coalesce(c.relacl::text, '') ORDER BY c.relname)
                     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'),
          'db settings', (SELECT count(*) FROM pg_db_role_setting),
          'auto.conf', (SELECT md5(pg_read_file('postgresql.auto.conf'))),
          'databases', (SELECT json_agg(datname ORDER BY datname) FROM pg_database),
          'table comments', (SELECT count(*) FROM pg_description d JOIN pg_class c ON c.oid = d.objoid
                             JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'),
          'bystander', (SELECT count(*) FROM pg_stat_activity WHERE pid = %s)
        )"""

    def _observer(self) -> Any:
        conn = getattr(self, "_observer_conn", None)
        if conn is None or conn.closed or conn.broken:
            conn = self._observer_conn = self.connect(application_name="nl2sql-observer")
        return conn

    def snapshot(self) -> dict[str, Any]:
        try:
            state = dict(self._observer().execute(self._SNAPSHOT_SQL, (self.bystander_pid,)).fetchone()[0])
        except Exception:  # the observer's session was ended (by an attack, or a restore)
            self._observer_conn = None
            state = dict(self._observer().execute(self._SNAPSHOT_SQL, (self.bystander_pid,)).fetchone()[0])
        state["bystander alive"] = self.bystander_alive()
        state["canary file"] = self.canary.exists()
        return state

    def restore(self) -> None:
        self._create_db()
        if not self.bystander_alive():
            self._start_bystander()
        clear_schema_cache()

    def close(self) -> None:
        for conn in (self.bystander, getattr(self, "_observer_conn", None)):
            with contextlib.suppress(Exception):
                conn.close()


class PgBackend(Backend):
    dialect = "postgresql"

    def __init__(self, cluster: PgCluster, folder: Path, name: str, timeout_s: float) -> None:
        self.cluster = cluster
        self.name = name
        server = cluster.server
        if name == "pg_super":
            url = f"postgresql+psycopg://postgres@{server.host}:{server.port}/{PG_DB}"
            config = load_project(folder, url, timeout_s=timeout_s, privileged=True)
        else:
            url = f"postgresql+psycopg://{RO_LOGIN}@{server.host}:{server.port}/{PG_DB}"
            config = load_project(folder, url, timeout_s=timeout_s, db_role=VIEWER_DB_ROLE)
            # the viewer's reads run as nl2sql_viewer (SET ROLE), once the fix reads db_role
            self.db_column_denial = "db_role" in folder.joinpath("nl2sql.yaml").read_text()
        super().__init__(folder, config)

    def context(self) -> dict[str, str]:
        return self.cluster.context()

    def snapshot(self) -> dict[str, Any]:
        return self.cluster.snapshot()

    def restore(self) -> None:
        self.registry.close()
        self.cluster.restore()


def sqlite_backend(folder: Path, *, timeout_s: float = 0.5) -> SqliteBackend:
    return SqliteBackend(folder, timeout_s)


def pg_backends(server: Any, folder: Path, *, timeout_s: float = 0.5) -> tuple[PgCluster, dict[str, PgBackend]]:
    cluster = PgCluster(server)
    return cluster, {
        name: PgBackend(cluster, folder / name, name, timeout_s) for name in ("pg_super", "pg_ro")
    }


# -- running one attack -------------------------------------------------------------------


def _fill(text: str, context: Mapping[str, str]) -> str:
    for key, value in context.items():
        text = text.replace("{" + key + "}", value)
    return text


def _fill_plan(value: Any, context: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _fill(value, context)
    if isinstance(value, list):
        return [_fill_plan(v, context) for v in value]
    if isinstance(value, dict):
        return {k: _fill_plan(v, context) for k, v in value.items()}
    return value


def _accepts_role(adapter: Any) -> bool:
    try:
        return "role" in inspect.signature(adapter.execute).parameters
    except (TypeError, ValueError):
        return False


def run_adapter(backend: Backend, sql: str, role: str | None) -> Outcome:
    adapter = backend.adapter()
    kwargs: dict[str, Any] = {}
    if role is not None and _accepts_role(adapter):
        kwargs["role"] = backend.policies[role]
    started = time.perf_counter()
    try:
        result = adapter.execute(sql, **kwargs)
    except QueryError as error:
        status = "refused" if error.kind == "refused" else "error"
        return Outcome(status=status, message=error.message, kind=error.kind, elapsed_s=time.perf_counter() - started)
    return Outcome(
        status="ok",
        rows=tuple(result.rows),
        columns=tuple(result.columns),
        elapsed_s=time.perf_counter() - started,
    )


def _answer_outcome(answer: Any, started: float) -> Outcome:
    return Outcome(
        status=answer.status,
        rows=tuple(answer.rows or ()),
        columns=tuple(answer.columns or ()),
        message=" | ".join(x for x in (answer.message, answer.error or "") if x),
        retrieved=tuple(answer.retrieved_tables) + tuple(answer.retrieved_columns),
        elapsed_s=time.perf_counter() - started,
    )


def run_replay(backend: Backend, sql: str, role: str) -> Outcome:
    question = "security corpus question"
    engine = ReplayEngine(
        [Prediction(id="attack", sql=sql, question=question, datasource="shop")],
        backend.config,
        registry=backend.registry,
    )
    started = time.perf_counter()
    return _answer_outcome(engine.answer(question, role), started)


class RecordingLLM(FakeLLM):
    """A FakeLLM that keeps every request (to check the schema text a role is shown)."""

    def __init__(self, plans: Mapping[str, Mapping[str, Any]]) -> None:
        super().__init__(plans)
        self.requests: list[Any] = []

    def generate_plan(self, request: Any) -> Any:
        self.requests.append(request)
        return super().generate_plan(request)


def run_reference(backend: Backend, plan: dict[str, Any], role: str, *, llm_out: list | None = None) -> Outcome:
    question = "How many notes are in the audit log of the shop?"
    llm = RecordingLLM({question: plan})
    engine = ReferenceEngine(backend.config, registry=backend.registry)
    started = time.perf_counter()
    try:
        answer = engine.answer(question, role, llm)
    except Exception as error:  # a traceback instead of an answer: no data, but say so
        return Outcome(status="exception", message=f"{type(error).__name__}: {error}", elapsed_s=time.perf_counter() - started)
    if llm_out is not None:
        llm_out.extend(llm.requests)
    return _answer_outcome(answer, started)


def _leaks_in(outcome: Outcome, backend: Backend) -> list[str]:
    text = outcome.text()
    found = [f"{value!r} in the answer" for value in SECRET_STRINGS if value in text]
    hostname = _hostname()
    if hostname and hostname in text:
        found.append(f"/etc/hostname content {hostname!r} in the answer")
    if backend.dialect == "postgresql" and re.search(r"\bPG_VERSION\b|postgresql\.conf", text):
        found.append("a server file name in the answer (a directory was listed)")
    return found


_HOSTNAME: list[str | None] = []


def _hostname() -> str | None:
    if not _HOSTNAME:
        try:
            value = Path("/etc/hostname").read_text().strip()
        except OSError:
            value = ""
        _HOSTNAME.append(value if len(value) >= 6 else None)  # a short name may occur by chance
    return _HOSTNAME[0]


def _expectation_problems(attack: Attack, path: str, role: str | None, outcome: Outcome, backend: Backend) -> tuple[list[str], list[str]]:
    """(escapes, leaks) from the outcome alone, against what the corpus says must hold."""
    escapes: list[str] = []
    leaks: list[str] = []
    expect = attack.expect_for(role if path != "adapter" else (role or "admin"), path)
    if outcome.status == "exception":
        escapes.append(f"raised instead of answering: {outcome.message[:200]}")
    if attack.kind == "control":
        pass  # judged by run_attack: a control must answer
    elif attack.is_leak:
        if expect == "refused" and outcome.status != "refused":
            if outcome.status == "ok":
                leaks.append(f"status ok with {len(outcome.rows)} rows (must be refused)")
            elif path != "adapter":
                leaks.append(f"status {outcome.status} (a denied name must be refused like any other)")
        elif expect == "not_ok" and outcome.status == "ok":
            leaks.append(f"status ok with {len(outcome.rows)} rows (must not run)")
        if role == "viewer" and outcome.status == "refused":
            named = [n for n in DENIED_NAMES if re.search(rf"\b{n}\b", repr(outcome.retrieved))]
            if named:
                leaks.append(f"a refusal names what it refused: {', '.join(named)}")
    else:
        if outcome.status == "ok":
            escapes.append(f"status ok with {len(outcome.rows)} rows (the attack ran)")
    if attack.max_seconds is not None and outcome.elapsed_s > attack.max_seconds:
        escapes.append(f"took {outcome.elapsed_s:.1f} s (bound {attack.max_seconds:g} s)")
    leaks.extend(_leaks_in(outcome, backend))
    return escapes, leaks


def _diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(before) | set(after)):
        if before.get(key) != after.get(key):
            b, a = repr(before.get(key)), repr(after.get(key))
            out.append(f"{key} changed: {b[:120]} -> {a[:120]}")
    return out


def _still_works(backend: Backend) -> str | None:
    """The next ordinary query still runs after the attack (nothing was left broken)."""
    try:
        result = backend.adapter().execute('SELECT count(*) AS n FROM "Audit"')
    except QueryError as error:
        return f"the next ordinary query failed: {error.kind}: {error.message[:160]}"
    if [tuple(r) for r in result.rows] != [(len(AUDIT),)]:
        return f"the next ordinary query returned {result.rows!r}"
    return None


def run_attack(backend: Backend, attack: Attack, path: str, role: str | None) -> Verdict:
    """Run ``attack`` on ``path`` as ``role``; snapshot before and after; restore if needed."""
    context = backend.context()
    before = backend.snapshot()
    try:
        if path == "adapter":
            outcome = run_adapter(backend, _fill(attack.sql_for(backend.dialect), context), role)
        elif path == "replay":
            outcome = run_replay(backend, _fill(attack.sql_for(backend.dialect), context), role or "admin")
        else:
            plan = _fill_plan(attack.plan_for(backend.dialect), context)
            outcome = run_reference(backend, plan, role or "admin")
    except Exception as error:  # noqa: BLE001 - a traceback out of a path is a finding
        outcome = Outcome(status="exception", message=f"{type(error).__name__}: {error}")
    escapes, leaks = _expectation_problems(attack, path, role, outcome, backend)
    refusals = []
    if attack.kind == "control" and outcome.status != "ok":
        refusals.append(f"status {outcome.status} (a control must answer): {outcome.message[:200]}")
    broken = _still_works(backend)
    after = backend.snapshot()
    backend.release()
    changed = _diff(before, after)
    if broken:
        changed.append(broken)
    if changed:
        escapes.extend(changed)
        backend.restore()
    return Verdict(
        attack=attack.id,
        family=attack.family,
        path=path,
        backend=backend.name,
        role=role,
        outcome=outcome,
        escapes=tuple(escapes),
        leaks=tuple(leaks),
        false_refusals=tuple(refusals),
    )


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def hush_sqlglot() -> None:
    """sqlglot logs 'falling back to Command' for every DDL attack; the verdicts say enough."""
    import logging

    logging.getLogger("sqlglot").setLevel(logging.ERROR)


# -- the matrix ---------------------------------------------------------------------------

DIALECT_OF = {"sqlite": "sqlite", "pg_super": "postgresql", "pg_ro": "postgresql", "duckdb": "duckdb"}
# Does the database itself deny the viewer's columns (so the adapter path alone must refuse)?
# SQLite: the authorizer; pg_ro: the viewer's db_role; pg_super: no db_role, only the validator.
# duckdb: no column privileges at all, only the validator.
DB_COLUMN_DENIAL = {"sqlite": True, "pg_super": False, "pg_ro": True, "duckdb": False}


def matrix(backends: Iterator[str] | tuple[str, ...] = BACKENDS, paths: tuple[str, ...] = PATHS) -> Iterator[tuple[str, Attack, str, str | None]]:
    """Every (backend, attack, path, role) the corpus tries."""
    from .corpus import ATTACKS

    for backend in backends:
        dialect = DIALECT_OF[backend]
        for attack in ATTACKS:
            if dialect not in attack.sql:
                continue
            for path in paths:
                if path == "adapter":
                    role = attack.adapter_role()
                    if role == "skip" or (role == "viewer" and not DB_COLUMN_DENIAL[backend]):
                        continue
                    yield backend, attack, path, role
                else:
                    for role in attack.roles:
                        yield backend, attack, path, role


def oracle_matrix(backends: tuple[str, ...] = BACKENDS) -> Iterator[tuple[str, Any, str]]:
    from .corpus import ORACLES

    for backend in backends:
        for oracle in ORACLES:
            if DIALECT_OF[backend] in oracle.dialects():
                for path in ("replay", "reference"):
                    yield backend, oracle, path


def run_oracle(backend: Backend, oracle: Any, path: str) -> Verdict:
    """A denied and a misspelt name, as viewer: the same status and message, status refused."""
    d = backend.dialect
    context = backend.context()
    before = backend.snapshot()
    outcomes = []
    for sql, plan in ((oracle.denied[d], oracle.ref_denied[d]), (oracle.missing[d], oracle.ref_missing[d])):
        try:
            if path == "replay":
                outcomes.append(run_replay(backend, _fill(sql, context), "viewer"))
            else:
                outcomes.append(run_reference(backend, {"datasource": "shop", **plan}, "viewer"))
        except Exception as error:  # noqa: BLE001
            outcomes.append(Outcome(status="exception", message=f"{type(error).__name__}: {error}"))
    after = backend.snapshot()
    backend.release()
    denied, missing = outcomes
    leaks = []
    if (denied.status, denied.message) != (missing.status, missing.message):
        leaks.append(
            f"denied and misspelt names are told apart: denied -> {denied.status} {denied.message[:120]!r}; "
            f"misspelt -> {missing.status} {missing.message[:120]!r}"
        )
    if denied.status != "refused":
        leaks.append(f"the denied name gave status {denied.status} (must be refused)")
    for o in outcomes:
        leaks.extend(_leaks_in(o, backend))
    escapes = _diff(before, after)
    if escapes:
        backend.restore()
    return Verdict(
        attack=f"oracle_{oracle.id}", family="oracle", path=path, backend=backend.name,
        role="viewer", outcome=denied, escapes=tuple(escapes), leaks=tuple(leaks),
    )


# -- the regenerate front door --------------------------------------------------------------

REGENERATE_ATTACKS = {
    "sqlite": [
        ("atk_delete", 'DELETE FROM "Audit"'),
        ("atk_attach", "ATTACH DATABASE '{canary}' AS evil"),
        ("atk_vacuum_into", "VACUUM INTO '{canary}'"),
        ("atk_multi", 'SELECT 1 AS n; DROP TABLE "Audit"'),
        ("atk_load_extension", "SELECT load_extension('/tmp/nl2sql_evil') AS x"),
        ("atk_runaway", "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) AS n FROM c"),
        ("atk_randomblob", "SELECT length(randomblob(900000000)) AS n"),
    ],
    "duckdb": [
        ("atk_delete", 'DELETE FROM "Audit"'),
        ("atk_summarize", 'SUMMARIZE "Customer"'),
        ("atk_positional", 'SELECT #4 AS n FROM "Customer"'),
        ("atk_describe", 'SELECT count(*) AS n FROM (DESCRIBE "Customer")'),
        ("atk_read_text", "SELECT content AS n FROM read_text('{secret_file}')"),
        ("atk_attach", "ATTACH '{canary}' AS evil"),
    ],
    "postgresql": [
        ("atk_attr_read_file", "SELECT ('/etc/hostname'::text).pg_read_file AS n"),
        ("atk_attr_ls_dir", "SELECT ('.'::text).pg_ls_dir AS n"),
        ("atk_regclass", """SELECT '"Payroll"'::regclass::text AS n"""),
        ("atk_delete", 'DELETE FROM "Audit"'),
        ("atk_cte_delete", 'WITH d AS (DELETE FROM "Audit" RETURNING *) SELECT * FROM d'),
        ("atk_read_file", """SELECT "pg_catalog"."pg_read_file"('{secret_file}') AS x"""),
        ("atk_copy_program", "COPY (SELECT 1) TO PROGRAM 'touch {canary}'"),
        ("atk_terminate", "SELECT pg_terminate_backend({victim_pid}) AS x"),
        ("atk_advisory", "SELECT pg_advisory_lock(42) AS x"),
        ("atk_set_config", "SELECT set_config('default_transaction_read_only', 'off', false) AS x"),
        ("atk_sleep", "SELECT pg_sleep(1000) AS x"),
        ("atk_runaway", "SELECT count(*) AS n FROM generate_series(1, 1e12)"),
    ],
}


def write_suite(backend: Backend, path: Path) -> tuple[list[str], bytes]:
    """A suite of approved cases: one honest (rows already right), the rest attacks."""
    import json

    context = backend.context()
    lines = [
        "version: 1",
        "cases:",
        "- id: honest",
        "  question: How many notes are in the audit log?",
        "  datasources: [shop]",
        "  status: approved",
        "  outcome: {admin: allowed}",
        '  sql: SELECT count(*) AS n FROM "Audit"',
        "  rows:",
        f"  - {{n: {len(AUDIT)}}}",
    ]
    ids = []
    for number, (case_id, sql) in enumerate(REGENERATE_ATTACKS[backend.dialect]):
        ids.append(case_id)
        lines += [
            f"- id: {case_id}",
            f"  question: Attack number {number} on the shop?",
            "  datasources: [shop]",
            "  status: approved",
            "  outcome: {admin: allowed}",
            f"  sql: {json.dumps(_fill(sql, context))}",
            "  rows:",
            "  - {n: 1}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return ids, path.read_bytes()


def run_regenerate(backend: Backend, folder: Path) -> tuple[list[Verdict], Any]:
    """Regenerate a suite of attacks through ``Engine.from_config(...).evals.regenerate``."""
    import gc

    from pytest_nl2sql.api import Engine

    suite = backend.config.path.parent / "attacks.yaml"
    ids, original = write_suite(backend, suite)
    before = backend.snapshot()
    report = None
    error = None
    try:
        engine = Engine.from_config(backend.config.path)
        try:
            report = engine.evals.regenerate(suite)
        finally:
            with contextlib.suppress(Exception):
                engine.engine.close()
    except Exception as exc:  # noqa: BLE001
        error = f"{type(exc).__name__}: {exc}"
    broken = _still_works(backend)
    after = backend.snapshot()
    backend.release()
    gc.collect()  # regenerate's own registry holds pooled connections until collected
    changed = _diff(before, after) + ([broken] if broken else [])
    failed = dict(report.failed) if report is not None else {}
    verdicts = []
    for case_id in ids:
        escapes = list(changed)
        if error:
            escapes.append(f"regenerate raised: {error[:200]}")
        elif case_id not in failed:
            escapes.append("the attack case was not listed as failed (its SQL ran)")
        if suite.read_bytes() != original:
            escapes.append("the suite file changed")
        leaks = [f"{v!r} in the failure reason" for v in SECRET_STRINGS if v in failed.get(case_id, "")]
        verdicts.append(Verdict(
            attack=f"regenerate_{case_id}", family="regenerate", path="adapter", backend=backend.name,
            role=None, outcome=Outcome(status="failed" if case_id in failed else "ok", message=failed.get(case_id, error or "")),
            escapes=tuple(escapes), leaks=tuple(leaks),
        ))
    if changed:
        backend.restore()
    return verdicts, report
