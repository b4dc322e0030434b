"""One adapter for any database URL: run one read-only query, get normalized rows back.

Every query passes the statement guard, then meets a database that is itself read-only
(SQLite ``mode=ro`` + ``query_only``; PostgreSQL read-only transactions; DuckDB ``read_only``
with external access off, in a memory-capped child process: ``duckchild``), in its own
transaction, rolled back. ``timeout_s`` covers the whole answer, fetching included (SQLite
progress handler; PostgreSQL ``statement_timeout``, a cancel request and the client's own
deadline, ``deadline``; DuckDB interrupt and the child's kill). A result is bounded in rows
(``row_limit``) and bytes (``max_result_bytes``, ``budget``). Failures are ``QueryError``
values with a ``kind``; a connection in doubt is thrown away. SQLite needs no SQLAlchemy: its
URL is read by ``config.urls`` and its ``sqlite3`` connections pooled by ``sqlitepool``;
other databases go through a SQLAlchemy engine, imported when first needed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import attrs

from pytest_nl2sql.config import RolePolicy, redact_url
from pytest_nl2sql.config.urls import read_url
from pytest_nl2sql.datasources.authorizer import base_authorizer, query_authorizer
from pytest_nl2sql.datasources.budget import (
    DEFAULT_MAX_RESULT_BYTES,
    PG_OVER_BUDGET,
    OverBudget,
    pg_bounded,
    row_bytes,
)
from pytest_nl2sql.datasources.deadline import DEFAULT_UNREACHABLE_AFTER, GRACE_S, ClientDeadline
from pytest_nl2sql.datasources.duckchild import CHILD_MEMORY_BYTES, ChildPool
from pytest_nl2sql.datasources.guard import StatementRefused, StatementUnparseable, check_statement
from pytest_nl2sql.datasources.pglogin import login_privileges
from pytest_nl2sql.datasources.sqlitepool import (  # noqa: F401  (SQLITE_HEAP_LIMIT_BYTES: re-exported)
    SQLITE_HEAP_LIMIT_BYTES,
    SqlitePool,
    ctrl_c_stops,
    lower_heap_limit,
)
from pytest_nl2sql.suitefile.values import normalize_row

if TYPE_CHECKING:
    import sqlalchemy as sa

__all__ = ["Adapter", "QueryError", "QueryResult", "QUERY_ERROR_KINDS"]

QUERY_ERROR_KINDS = ("refused", "timeout", "sql_error", "unreachable")
_SQLITE_PROGRESS_STEPS = 1000
#: The longest string or blob one SQLite value may grow to (SQLITE_LIMIT_LENGTH): a single
#: function call such as printf('%.*c', 999999999, 'x') cannot be interrupted by the
#: progress handler, so its size is capped instead.
SQLITE_MAX_VALUE_BYTES = 64 * 1024 * 1024
_SQLITE_MAX_SQL_BYTES = 1_000_000
_FETCH_BATCH = 500

@attrs.frozen
class QueryResult:
    """The normalized rows of one query, cut at the row limit (``truncated`` then True)."""

    columns: tuple[str, ...]
    rows: list[tuple]
    truncated: bool
    elapsed_s: float


class QueryError(Exception):
    """A query that did not return rows. ``kind`` is one of ``QUERY_ERROR_KINDS``."""

    def __init__(self, kind: str, message: str) -> None:
        if kind not in QUERY_ERROR_KINDS:
            raise ValueError(f"unknown QueryError kind {kind!r} (one of {QUERY_ERROR_KINDS})")
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __repr__(self) -> str:
        return f"QueryError({self.kind!r}, {self.message!r})"


class Adapter:
    """A datasource (SQLite through ``sqlite3``, others through SQLAlchemy); connections are
    opened on first use."""

    def __init__(
        self,
        name: str,
        url: str,
        *,
        row_limit: int = 1000,
        timeout_s: float = 10.0,
        allow_privileged_login: bool = False,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        unreachable_after: int = DEFAULT_UNREACHABLE_AFTER,
    ) -> None:
        try:
            parsed = read_url(url)  # SQLAlchemy's make_url unless a plain SQLite URL
        except ValueError:
            raise ValueError(
                f"datasource {name!r}: {redact_url(str(url))!r} is not a database URL "
                "(write e.g. sqlite:////path/to/file.sqlite)"
            ) from None
        if row_limit < 0:
            raise ValueError(f"datasource {name!r}: row_limit must be >= 0 (got {row_limit})")
        if not (isinstance(timeout_s, (int, float)) and math.isfinite(timeout_s) and timeout_s > 0):
            raise ValueError(
                f"datasource {name!r}: timeout_s must be a finite number > 0 (got {timeout_s})"
            )
        if not (isinstance(max_result_bytes, int) and max_result_bytes > 0):
            raise ValueError(
                f"datasource {name!r}: max_result_bytes must be a whole number > 0 (got {max_result_bytes})"
            )
        if not (isinstance(unreachable_after, int) and unreachable_after > 0):
            raise ValueError(
                f"datasource {name!r}: unreachable_after must be a whole number > 0 (got {unreachable_after})"
            )
        self.name = name
        self.unreachable_after = unreachable_after
        self._duck_pool: ChildPool | None = None
        self.row_limit = row_limit
        self.max_result_bytes = max_result_bytes
        self.timeout_s = float(timeout_s)
        self.dialect: str = parsed.get_backend_name()
        self._url: Any = parsed  # a config.urls.SqliteURL, or SQLAlchemy's URL
        self._secrets = _secrets_of(parsed)
        self._deadline = ClientDeadline(self.name, self.url, self.timeout_s, unreachable_after, QueryError)
        self._engine: sa.Engine | None = None
        self._sqlite_pool: SqlitePool | None = None
        self._lock = threading.Lock()
        self.allow_privileged_login = allow_privileged_login
        self._login_checked = False
        self._sqlite_layout: tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]] | None = None

    # -- identity

    @property
    def url(self) -> str:
        """The URL with its password hidden, fit for messages."""
        return redact_url(self._url.render_as_string(hide_password=False))

    @property
    def file_path(self) -> Path | None:
        """The database file of a SQLite or DuckDB datasource, else None."""
        database = self._url.database
        if self.dialect in ("sqlite", "duckdb") and database and database != ":memory:":
            return Path(database)
        return None

    def cache_key(self) -> tuple[Any, ...]:
        """What identifies this database's current contents for caching (URL, file stamp)."""
        key: tuple[Any, ...] = (self._url.render_as_string(hide_password=False),)
        path = self.file_path
        if path is not None:
            for candidate in (path, Path(f"{path}-wal"), Path(f"{path}.wal")):
                try:
                    stat = candidate.stat()
                except OSError:
                    continue
                key += (str(candidate), stat.st_mtime_ns, stat.st_size)
        return key

    def __repr__(self) -> str:
        return f"Adapter({self.name!r}, {self.url!r}, dialect={self.dialect!r})"

    # -- engine

    @property
    def engine(self) -> sa.Engine:
        """The SQLAlchemy engine (created on first use); its connections are read-only.

        Queries, ``raw_connection`` and SQLite's introspection do not use it on SQLite (they
        use the adapter's own ``sqlite3`` pool); it is there for callers that want one."""
        with self._lock:
            if self._engine is None:
                self._engine = self._create_engine()
            return self._engine

    def _create_engine(self) -> sa.Engine:
        import sqlalchemy as sa

        if self.dialect == "sqlite":
            from sqlalchemy.pool import QueuePool

            return sa.create_engine("sqlite://", creator=self._sqlite_connect, poolclass=QueuePool)
        if self.dialect == "postgresql":
            url = self._url
            if url.drivername == "postgresql" and importlib.util.find_spec("psycopg2") is None:
                url = url.set(drivername="postgresql+psycopg")
            timeout_ms = max(1, int(self.timeout_s * 1000))
            options = (
                f"-c default_transaction_read_only=on -c statement_timeout={timeout_ms} "
                f"-c idle_in_transaction_session_timeout={max(timeout_ms * 6, 60000)}"
            )
            extra = url.query.get("options")
            if isinstance(extra, str) and extra:
                options = f"{extra} {options}"
                url = url.difference_update_query(["options"])
            connect_args = {
                "options": options,
                "connect_timeout": max(1, int(round(self.timeout_s))),
                "application_name": "pytest-nl2sql",
                # a host that stops answering is noticed by the socket too, not only by the
                # caller's deadline (which also covers a server that is frozen but ACKs)
                "keepalives": 1,
                "keepalives_idle": max(1, int(self.timeout_s)),
                "keepalives_interval": 1,
                "keepalives_count": 3,
                "tcp_user_timeout": int((self.timeout_s + GRACE_S) * 1000),
            }
            return sa.create_engine(url, connect_args=connect_args, pool_pre_ping=True)
        if self.dialect == "duckdb":
            path = self.file_path
            if path is not None and not path.is_file():
                raise _Unreachable(f"the DuckDB file {path} does not exist")
            connect_args = {"read_only": True, "config": {"enable_external_access": False}}
            return sa.create_engine(self._url, connect_args=connect_args)
        return sa.create_engine(self._url, pool_pre_ping=True)

    def _sqlite_connect(self) -> sqlite3.Connection:
        path = self.file_path
        # No statement cache: a statement is authorized when it is prepared, and each query
        # is authorized for the role it runs as.
        if path is None:
            connection = sqlite3.connect(":memory:", check_same_thread=False, cached_statements=0)
        else:
            if not path.is_file():
                raise _Unreachable(f"the SQLite file {path} does not exist")
            uri = f"file:{quote(str(path.absolute()))}?mode=ro"
            connection = sqlite3.connect(
                uri, uri=True, check_same_thread=False, timeout=self.timeout_s, cached_statements=0
            )
        connection.execute("PRAGMA query_only = ON")
        lower_heap_limit(connection)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, SQLITE_MAX_VALUE_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, _SQLITE_MAX_SQL_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        connection.set_authorizer(base_authorizer)
        return connection

    def close(self) -> None:
        """Close every pooled connection (and DuckDB query process); the adapter reconnects
        if used again."""
        with self._lock:
            engine, self._engine = self._engine, None
            pool, self._duck_pool = self._duck_pool, None
            sqlite_pool, self._sqlite_pool = self._sqlite_pool, None
            self._sqlite_layout = None
        if engine is not None:
            engine.dispose()
        if pool is not None:
            pool.close()
        if sqlite_pool is not None:
            sqlite_pool.close()

    # -- connections

    @contextlib.contextmanager
    def raw_connection(self) -> Iterator[Any]:
        """A pooled DBAPI connection, read-only as configured, rolled back afterwards.

        This is below the statement guard: it is for introspection and for checking that the
        database itself refuses writes. Connection failures raise ``QueryError('unreachable')``.
        """
        connection = self._checkout()
        healthy = False
        try:
            yield connection
            healthy = True
        finally:
            self._release(connection, healthy)

    def _checkout(self) -> Any:
        try:
            if self.dialect == "sqlite":
                connection = self._sqlite_connections().checkout()
            else:
                connection = self.engine.raw_connection()
        except _Unreachable as error:
            raise QueryError(
                "unreachable",
                f"datasource {self.name!r} cannot be opened: {error} (check its url in nl2sql.yaml)",
            ) from None
        except Exception as error:  # any driver's connect failure
            raise QueryError(
                "unreachable",
                f"datasource {self.name!r} ({self.url}) cannot be reached: {self.scrub(_first_message(error))}",
            ) from None
        if self.dialect == "postgresql" and not self._login_checked:
            try:
                self._check_login(connection)
            except BaseException:
                self._release(connection, False)
                raise
        return connection

    def _sqlite_connections(self) -> SqlitePool:
        """SQLite: the pool of this adapter's read-only ``sqlite3`` connections."""
        with self._lock:
            if self._sqlite_pool is None:
                self._sqlite_pool = SqlitePool(self._sqlite_connect)
            return self._sqlite_pool

    # -- the login

    def check_login(self) -> None:
        """Refuse a PostgreSQL login that could write, unless ``allow_privileged_login``.

        Raises ``QueryError('refused')`` naming what makes the login privileged (superuser,
        a table it may write, CREATE on a schema, ...) and how to fix it; ``unreachable``
        when the server cannot be reached. Other databases are opened read-only and pass.
        Every query checks this once per adapter; call it to fail early.
        """
        if self.dialect != "postgresql" or self._login_checked:
            return
        with self.raw_connection():
            pass

    def _check_login(self, connection: Any) -> None:
        if self.allow_privileged_login:
            self._login_checked = True
            return
        found = login_privileges(connection)
        if found is None:
            return
        login, reasons = found
        if reasons:
            raise QueryError(
                "refused",
                f"datasource {self.name!r}: the login {login!r} {', '.join(reasons)}; "
                "pytest-nl2sql only reads, so connect as a role that may only SELECT "
                "(docs/security.md shows how to make one), or set "
                f"allow_privileged_login: true for {self.name!r} in nl2sql.yaml",
            )
        self._login_checked = True

    def _release(self, connection: Any, healthy: bool) -> None:
        try:
            connection.rollback()
            if self.dialect == "postgresql" and healthy:
                # session-level advisory locks outlive a rollback; a query may not keep any
                cursor = connection.cursor()
                cursor.execute("SELECT pg_advisory_unlock_all()")
                cursor.close()
                connection.rollback()
        except Exception:
            healthy = False
        if not healthy:
            with contextlib.suppress(Exception):
                connection.invalidate()
        with contextlib.suppress(Exception):
            connection.close()

    # -- queries

    def execute(
        self, sql: str, *, row_limit: int | None = None, role: RolePolicy | None = None
    ) -> QueryResult:
        """Run one read-only query and return at most ``row_limit`` normalized rows.

        ``row_limit`` defaults to the adapter's. Raises ``QueryError`` with kind ``refused``
        (not a single SELECT), ``sql_error`` (the database's or the parser's message),
        ``timeout`` (cancelled after ``timeout_s``) or ``unreachable``.
        """
        limit = self.row_limit if row_limit is None else row_limit
        if limit < 0:
            raise ValueError(f"row_limit must be >= 0 (got {limit})")
        try:
            check_statement(sql, self.dialect)
        except StatementUnparseable as refusal:
            raise QueryError("sql_error", refusal.reason) from None
        except StatementRefused as refusal:
            raise QueryError("refused", refusal.reason) from None
        if self.dialect == "duckdb":
            return self._execute_in_child(sql, limit)
        if self.dialect == "postgresql":
            return self.within_deadline(lambda: self._execute_here(sql, limit, role))
        return self._execute_here(sql, limit, role)

    def _execute_here(self, sql: str, limit: int, role: RolePolicy | None) -> QueryResult:
        """Run an admitted query on a pooled connection of this process."""
        wrapped = self.dialect == "postgresql"
        if wrapped:
            sql = pg_bounded(sql, self.max_result_bytes)
        connection = self._checkout()
        deadline = _Deadline(time.monotonic() + self.timeout_s)
        healthy = False
        try:
            started = time.perf_counter()
            with self._watch(connection, deadline), self._authorize(connection, role):
                cursor = self._cursor(connection)
                try:
                    cursor.execute(sql)
                    columns = tuple(str(d[0]) for d in (cursor.description or ()))
                    fetched = self._fetch(cursor, limit, deadline) if columns else []
                    if wrapped:  # the budget check column the server added
                        columns = columns[:-1]
                        fetched = [row[:-1] for row in fetched]
                finally:
                    with contextlib.suppress(Exception):
                        cursor.close()
            elapsed = time.perf_counter() - started
            healthy = True
        except Exception as error:
            raise self._classify(error, connection, deadline) from None
        finally:
            self._release(connection, healthy)
        rows = [normalize_row(row) for row in fetched[:limit]]
        return QueryResult(
            columns=columns, rows=rows, truncated=len(fetched) > limit, elapsed_s=elapsed
        )

    def within_deadline(self, run: Any, wait_s: float | None = None) -> Any:
        """``run()``, which talks to the server: on PostgreSQL the caller waits at most
        ``wait_s`` (default ``timeout_s`` + GRACE_S), see :class:`~.deadline.ClientDeadline`;
        other databases run it here (files in this process, or a DuckDB child with its own
        deadline)."""
        if self.dialect != "postgresql":
            return run()
        return self._deadline.run(run, wait_s)

    def _execute_in_child(self, sql: str, limit: int) -> QueryResult:
        """Run an admitted DuckDB query in a memory-capped child process (``duckchild``)."""
        with self._lock:
            if self._duck_pool is None:
                path = self.file_path
                if path is not None and not path.is_file():
                    raise QueryError(
                        "unreachable",
                        f"datasource {self.name!r} cannot be opened: the DuckDB file {path} "
                        "does not exist (check its url in nl2sql.yaml)",
                    )
                self._duck_pool = ChildPool(str(path.absolute()) if path is not None else ":memory:")
            pool = self._duck_pool
        answer = pool.ask(sql, limit, self.timeout_s, self.max_result_bytes)
        if answer[0] == "ok":
            _, columns, fetched, truncated, elapsed = answer
            rows = [normalize_row(row) for row in fetched[:limit]]
            return QueryResult(columns=columns, rows=rows, truncated=truncated, elapsed_s=elapsed)
        _, kind, message = answer
        texts = {
            "too_large": ("sql_error", self._too_large_text),
            "memory": ("sql_error", lambda: self._memory_text(message)),  # the child died, or said so
            "timeout": ("timeout", self._timeout_text),
            "unreachable": ("unreachable", lambda: f"datasource {self.name!r}: {self.scrub(message)}"),
        }
        error_kind, text = texts.get(kind, ("sql_error", lambda: self.scrub(message)))
        raise QueryError(error_kind, text())

    def _timeout_text(self) -> str:
        return (
            f"the query ran longer than {self.timeout_s:g} s and was cancelled "
            f"(datasource {self.name!r}; narrow the query or raise timeout_s)"
        )

    def _too_large_text(self) -> str:
        return (
            f"the result exceeds max_result_bytes ({self.max_result_bytes:,} bytes; "
            f"datasource {self.name!r}): select fewer or shorter values, or raise max_result_bytes"
        )

    def _memory_text(self, detail: str) -> str:
        why = f" ({detail})" if detail else ""
        return (
            f"the query needed more than the {CHILD_MEMORY_BYTES / 1024**3:g} GiB a DuckDB query may use{why} and was "
            f"stopped (datasource {self.name!r}): the result exceeds max_result_bytes "
            f"({self.max_result_bytes:,} bytes) or the query is too large; select fewer or shorter values"
        )

    def _fetch(self, cursor: Any, limit: int, deadline: _Deadline) -> list[tuple]:
        """Up to ``limit + 1`` rows, in batches: stop at the byte budget or the deadline."""
        rows: list[tuple] = []
        size = 0
        while len(rows) <= limit:
            batch = cursor.fetchmany(min(_FETCH_BATCH, limit + 1 - len(rows)))
            if not batch:
                break
            for row in batch:
                size += row_bytes(row)
            rows.extend(batch)
            if size > self.max_result_bytes:
                raise OverBudget(size)
            if time.monotonic() > deadline.stop_at:
                deadline.hit = True
                raise _Expired()
        return rows

    @contextlib.contextmanager
    def _authorize(self, connection: Any, role: RolePolicy | None) -> Iterator[None]:
        """Make the database itself hold the query to reading, for ``role`` when given.

        SQLite: :func:`~pytest_nl2sql.datasources.authorizer.query_authorizer` while the
        query is prepared and run. PostgreSQL: the transaction is ``READ ONLY`` with the
        adapter's ``statement_timeout``, and runs ``SET LOCAL ROLE`` to the role's
        ``db_role`` when it has one, so the server's GRANTs decide what it may read.
        """
        if self.dialect == "sqlite":
            generated, columns = self._layout(connection) if role is not None else ({}, {})
            driver = connection.driver_connection
            driver.set_authorizer(query_authorizer(self.name, role, generated, columns))
            try:
                yield
            finally:
                driver.set_authorizer(base_authorizer)
            return
        if self.dialect == "postgresql":
            timeout_ms = max(1, int(self.timeout_s * 1000))
            statements = [
                "SET TRANSACTION READ ONLY",
                f"SET LOCAL statement_timeout = {timeout_ms}",
            ]
            db_role = getattr(role, "db_role", None)
            if db_role:
                statements.append(f"SET LOCAL ROLE {_pg_ident(db_role)}")
            cursor = connection.cursor()
            try:
                for statement in statements:
                    cursor.execute(statement)
            finally:
                cursor.close()
        yield

    def _layout(self, connection: Any) -> tuple[dict[str, frozenset[str]], dict[str, tuple[str, ...]]]:
        """SQLite: each table's generated columns and all its columns (lowercase names)."""
        if self._sqlite_layout is None:
            cursor = connection.cursor()
            try:
                cursor.execute(
                    "SELECT m.name, x.name, x.hidden FROM sqlite_master AS m "
                    "JOIN pragma_table_xinfo(m.name) AS x WHERE m.type IN ('table', 'view')"
                )
                rows = cursor.fetchall()
            finally:
                cursor.close()
            generated: dict[str, set[str]] = {}
            columns: dict[str, list[str]] = {}
            for table, column, hidden in rows:
                columns.setdefault(str(table).lower(), []).append(str(column))
                if hidden in (2, 3):
                    generated.setdefault(str(table).lower(), set()).add(str(column).lower())
            self._sqlite_layout = (
                {t: frozenset(c) for t, c in generated.items()},
                {t: tuple(c) for t, c in columns.items()},
            )
        return self._sqlite_layout

    def _cursor(self, connection: Any) -> Any:
        if self.dialect == "postgresql" and self.engine.dialect.driver == "psycopg":
            # A server-side cursor, so a huge result is not pulled to the client whole.
            return connection.cursor(name="nl2sql_query")
        return connection.cursor()

    @contextlib.contextmanager
    def _watch(self, connection: Any, deadline: _Deadline) -> Iterator[None]:
        """Cancel the query at its deadline, while it runs and while its rows are fetched."""
        driver = connection.driver_connection
        if self.dialect == "sqlite":
            stop_at = deadline.stop_at

            def progress() -> int:
                if time.monotonic() > stop_at:
                    deadline.hit = True
                    return 1
                return 0

            driver.set_progress_handler(progress, _SQLITE_PROGRESS_STEPS)
            try:
                with ctrl_c_stops(driver):
                    yield
            finally:
                driver.set_progress_handler(None, 0)
        elif self.dialect in ("duckdb", "postgresql"):
            lock = threading.Lock()
            active = [True]
            # DuckDB: interrupt(); PostgreSQL: a cancel request (statement_timeout bounds each
            # statement, not the fetches of a server-side cursor)
            stop = driver.interrupt if self.dialect == "duckdb" else _pg_cancel(driver)

            def interrupt() -> None:
                with lock:
                    if active[0]:
                        deadline.hit = True
                        with contextlib.suppress(Exception):
                            stop()

            timer = threading.Timer(max(0.0, deadline.stop_at - time.monotonic()), interrupt)
            timer.daemon = True
            timer.start()
            try:
                yield
            finally:
                with lock:
                    active[0] = False
                timer.cancel()
        else:
            yield  # another database: its own driver's timeouts

    def _classify(self, error: Exception, connection: Any, deadline: _Deadline) -> QueryError:
        original = _driver_error(error)
        message = self.scrub(_first_message(original, full=True))
        timeout_text = self._timeout_text()
        if isinstance(original, OverBudget) or (
            getattr(original, "sqlstate", None) == "22P02" and PG_OVER_BUDGET in message
        ):
            return QueryError("sql_error", self._too_large_text())
        if self.dialect == "sqlite" and "string or blob too big" in message:
            return QueryError(
                "sql_error",
                f"a value in the result is larger than {SQLITE_MAX_VALUE_BYTES:,} bytes, the most "
                f"one SQLite value may hold here, so the result exceeds max_result_bytes "
                f"(datasource {self.name!r}): select fewer or shorter values",
            )
        if deadline.hit or getattr(original, "sqlstate", None) == "57014":
            return QueryError("timeout", timeout_text)
        if type(original).__name__ == "InterruptException":
            return QueryError("timeout", timeout_text)
        if self.dialect == "sqlite":  # what SQLAlchemy's pysqlite dialect calls a disconnect
            lost = isinstance(original, sqlite3.ProgrammingError) and (
                "Cannot operate on a closed database." in str(original)
            )
        else:
            try:
                lost = self.engine.dialect.is_disconnect(original, connection.dbapi_connection, None)
            except Exception:
                lost = False
        if lost or getattr(original, "sqlstate", "") in ("08000", "08003", "08006", "57P01"):
            return QueryError(
                "unreachable",
                f"datasource {self.name!r} ({self.url}) was lost during the query: {message}",
            )
        return QueryError("sql_error", message)

    def scrub(self, text: str) -> str:
        """``text`` with the URL's password (and password-like values) replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text


@attrs.define
class _Deadline:
    stop_at: float
    hit: bool = False


class _Expired(Exception):
    """The deadline passed while the rows were fetched."""


def _pg_cancel(driver: Any) -> Any:
    return getattr(driver, "cancel_safe", None) or driver.cancel


class _Unreachable(Exception):
    """The database cannot be opened (raised inside connection creation)."""


def _pg_ident(name: str) -> str:
    """``name`` as a PostgreSQL identifier, quoted."""
    return '"' + name.replace('"', '""') + '"'


def _secrets_of(url: Any) -> tuple[str, ...]:
    secrets = []
    if url.password:
        secrets.append(str(url.password))
        secrets.append(quote(str(url.password), safe=""))
    for key, value in url.query.items():
        if key.lower() in ("password", "passwd", "pwd", "secret", "token", "api_key", "apikey"):
            values = [value] if isinstance(value, str) else list(value)
            secrets.extend(v for v in values if v)
    return tuple(sorted({s for s in secrets if s}, key=len, reverse=True))


def _first_message(error: BaseException, *, full: bool = False) -> str:
    """The driver's own message: the whole text for SQL errors, the first line otherwise."""
    error = _driver_error(error)
    if isinstance(error, _Unreachable):
        return str(error)
    text = str(error).strip() or type(error).__name__
    return text if full else text.splitlines()[0]


def _driver_error(error: BaseException) -> BaseException:
    """The driver's own exception inside a SQLAlchemy ``DBAPIError`` (which cannot be one
    when SQLAlchemy was never imported), else ``error``."""
    exceptions = sys.modules.get("sqlalchemy.exc")
    if exceptions is not None and isinstance(error, exceptions.DBAPIError) and error.orig is not None:
        return error.orig
    return error
