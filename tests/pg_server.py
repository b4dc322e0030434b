"""A real, throwaway PostgreSQL server for tests: the one helper new test code should use.

``running_server()`` runs ``initdb`` in a new temporary folder, starts ``postgres`` on a free
port of 127.0.0.1 (and a Unix socket in that folder) with durability turned off, yields a
:class:`PgServer`, then stops the server and removes the folder. PostgreSQL refuses to run as
root, so when the tests run as root (as CI does) the binaries run as the unprivileged
``postgres`` user, through ``setpriv`` (or ``runuser``). ``skip_reason()`` says, in words a
user can act on, why no server can start here (binaries missing, no user to run it as);
``server_or_skip()`` is ``running_server()`` that calls ``pytest.skip`` with that reason.

A session-scoped fixture built on it starts one server per test process, so one per xdist
worker at most::

    @pytest.fixture(scope="session")
    def pg(tmp_path_factory):
        with server_or_skip() as server:
            yield server

``PgServer`` carries the fields pytest-postgresql's ``postgresql_noproc(depends_on=...)``
reads, so its factories can create databases on it too.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import attrs
import pytest

__all__ = ["PG_USER", "PgServer", "running_server", "server_or_skip", "skip_reason"]

PG_USER = "postgres"
"""The account the server runs as when the tests run as root, and its superuser's name."""

_BINARIES = ("initdb", "pg_ctl", "postgres")
READER_LOGIN = "nl2sql_reader"  # the read-only login projects' URLs use
_SETTINGS = (
    "listen_addresses=127.0.0.1",
    "fsync=off",
    "synchronous_commit=off",
    "full_page_writes=off",
)
_START_TIMEOUT_S = 60
_START_ATTEMPTS = 3  # a free port can be taken by another process before the server binds it


@attrs.frozen
class PgServer:
    """A running server: where it listens and who may connect (``trust`` auth, no password)."""

    host: str
    port: int
    folder: Path
    user: str = PG_USER
    reader: str = READER_LOGIN
    password: str | None = None
    options: str = ""
    maintenance_dbname: str = "postgres"
    template_dbname: str = "template1"

    def url(
        self,
        dbname: str = "postgres",
        *,
        schema: str | None = None,
        driver: str = "postgresql+psycopg",
        superuser: bool = False,
    ) -> str:
        """A SQLAlchemy URL of database ``dbname`` on this server; with ``schema``, sessions
        opened through it see that schema's tables unqualified (their ``search_path``).

        It logs in as the read-only ``reader`` (member of ``pg_read_all_data``), as a project
        should; ``superuser=True`` logs in as the superuser (a datasource then needs
        ``allow_privileged_login: true``)."""
        login = self.user if superuser else self.reader
        url = f"{driver}://{login}@{self.host}:{self.port}/{quote(dbname, safe='')}"
        if schema is not None:
            url += "?options=" + quote(f"-c search_path={schema}", safe="")
        return url

    def dsn(self, dbname: str = "postgres") -> str:
        """A libpq connection string (for ``psycopg.connect``) of database ``dbname``."""
        from psycopg.conninfo import make_conninfo

        return make_conninfo(host=self.host, port=self.port, user=self.user, dbname=dbname)

    def create_database(self, dbname: str) -> str:
        """Create an empty database ``dbname`` (dropping one of that name) and return its
        superuser URL, for loading data (query it through ``url(dbname)``)."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.dsn(self.maintenance_dbname), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(dbname)))
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
        return self.url(dbname, superuser=True)


def create_reader(superuser_dsn: str, login: str = READER_LOGIN) -> str:
    """Create (once per server) the login ``login`` that may read every table and nothing
    else (``pg_read_all_data``), the kind of login docs/security.md asks a project to use."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(superuser_dsn, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (login,)).fetchone()
        if exists is None:
            conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(login)))
            conn.execute(sql.SQL("GRANT pg_read_all_data TO {}").format(sql.Identifier(login)))
    return login


def skip_reason() -> str | None:
    """Why no PostgreSQL server can be started here, or None when one can."""
    missing = [name for name in _BINARIES if shutil.which(name) is None]
    if missing:
        return (
            f"PostgreSQL server binaries not on PATH: {', '.join(missing)} "
            "(install the PostgreSQL server package, e.g. apt-get install postgresql)"
        )
    if _as_root():
        try:
            import pwd

            pwd.getpwnam(PG_USER)
        except KeyError:
            return (
                f"running as root, and PostgreSQL refuses root: there is no {PG_USER!r} user "
                f"to run it as (create one, e.g. useradd {PG_USER})"
            )
        if _switch_user() is None:
            return "running as root, and neither setpriv nor runuser is on PATH to run PostgreSQL as the postgres user"
        if _parent_folder() is None:
            return (
                f"running as root, and no temporary folder is reachable by the {PG_USER!r} user "
                "(set TMPDIR to a folder others can enter, e.g. /tmp)"
            )
    return None


@contextlib.contextmanager
def running_server(*, prefix: str = "nl2sql-pg-") -> Iterator[PgServer]:
    """Start a PostgreSQL server in a new temporary folder; stop it and remove the folder after.

    Raises ``RuntimeError`` (with the tool's own output) when the server cannot be started and
    ``skip_reason()`` did not foresee why.
    """
    reason = skip_reason()
    if reason is not None:
        raise RuntimeError(f"cannot start PostgreSQL: {reason}")
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=_parent_folder()))
    if _as_root():
        import pwd

        account = pwd.getpwnam(PG_USER)
        os.chown(folder, account.pw_uid, account.pw_gid)
    data = folder / "data"
    try:
        _run(
            folder,
            "initdb",
            "-D",
            str(data),
            "-U",
            PG_USER,
            "--auth=trust",
            "--no-sync",
            "--no-locale",
            "-E",
            "UTF8",
        )
        port = _start(folder, data)
        server = PgServer(host="127.0.0.1", port=port, folder=folder)
        create_reader(server.dsn())
        yield server
    finally:
        if (data / "postmaster.pid").exists():  # started, or half-started by a failed attempt
            with contextlib.suppress(Exception):
                _run(folder, "pg_ctl", "stop", "-D", str(data), "-m", "immediate", "-w")
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def server_or_skip(*, prefix: str = "nl2sql-pg-") -> Iterator[PgServer]:
    """``running_server()``, or ``pytest.skip`` saying why when no server can start here."""
    reason = skip_reason()
    if reason is not None:
        pytest.skip(reason)
    with running_server(prefix=prefix) as server:
        yield server


# ---------------------------------------------------------------------------------------------
# helpers


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _switch_user() -> list[str] | None:
    """The command prefix that runs a program as ``PG_USER`` (setpriv needs no PAM session)."""
    setpriv = shutil.which("setpriv")
    if setpriv:
        return [setpriv, f"--reuid={PG_USER}", f"--regid={PG_USER}", "--init-groups"]
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", PG_USER, "--"]
    return None


def _parent_folder() -> str | None:
    """Where to make the server's folder: the usual temporary folder, or /tmp when running as
    root and the usual one sits below a folder the postgres user may not enter."""
    candidates = [tempfile.gettempdir()]
    if not _as_root():
        return candidates[0]
    candidates.append("/tmp")
    for candidate in candidates:
        if _enterable_by_others(Path(candidate)):
            return candidate
    return None


def _enterable_by_others(path: Path) -> bool:
    """True when every folder from / down to ``path`` lets any user pass (``o+x``)."""
    try:
        resolved = path.resolve(strict=True)
    except OSError:
        return False
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in (resolved, *resolved.parents))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(folder: Path, data: Path) -> int:
    """Start the server on a free port (another one if that was taken meanwhile); its port."""
    for attempt in range(1, _START_ATTEMPTS + 1):
        port = _free_port()
        options = f"-p {port} -k {folder} " + " ".join(f"-c {s}" for s in _SETTINGS)
        try:
            _run(
                folder,
                "pg_ctl",
                "start",
                "-D",
                str(data),
                "-w",
                "-t",
                str(_START_TIMEOUT_S),
                "-l",
                str(folder / "server.log"),
                "-o",
                options,
            )
        except RuntimeError:
            if attempt == _START_ATTEMPTS:
                raise
            continue
        return port
    raise AssertionError("unreachable")


def _run(folder: Path, program: str, *args: str) -> None:
    """Run a PostgreSQL binary (as ``PG_USER`` when we are root); raise with its output."""
    command = [shutil.which(program) or program, *args]
    if _as_root():
        command = [*(_switch_user() or []), *command]
    result = subprocess.run(
        command,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=_START_TIMEOUT_S * 2,
        env={**os.environ, "LC_ALL": "C"},
    )
    if result.returncode != 0:
        log = folder / "server.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        raise RuntimeError(
            f"{program} {' '.join(args[:1])} failed (exit {result.returncode}):\n"
            f"{result.stdout}\n{result.stderr}\n{tail}".rstrip()
        )
