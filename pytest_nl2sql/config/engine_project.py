"""Reading an **nl2sql-engine** project as it is: ``nl2sql.yaml`` ``version: 2``.

nl2sql-engine (PyPI, import ``nl2sql``; the system the suite format comes from) writes a table of
contents: each section inline, or ``{file: PATH}`` relative to ``nl2sql.yaml``, and
``datasources`` may name a folder of ``*.yaml`` files, one datasource each, its ``id`` the file
name. This module reads what a pytest run needs, the way nl2sql-engine 0.7 reads it:

* ``datasources``: ``type`` (``sqlite``, ``duckdb``, ``postgres``), ``connection`` (a file path
  relative to ``nl2sql.yaml``; host/port/database/user/password/sslmode for PostgreSQL),
  ``limits.row_limit`` and ``limits.timeout_ms``, ``description``, ``sample_questions``;
* ``policies``: ``roles.NAME.allow`` / ``deny`` patterns (``*``, ``datasource`` or
  ``datasource.schema.table``, each part a glob, case-insensitive; deny beats allow) and
  ``allow_all`` -- into ``RolePolicy.allow_globs``;
* ``evals``: ``suites`` (paths relative to ``nl2sql.yaml``);
* ``settings.routing``: ``candidates`` and ``max_datasources``.

The other sections (``llm``, ``embeddings``, ``storage``, ``curated``, ``secrets``, ``api``,
``observers``, ``hooks``) belong to nl2sql-engine itself, which reads them when it is the engine
under test; only their ``file:`` includes are checked here. A ``${env:NAME}`` value is read
from the environment; other secret providers (``${aws:...}``) are nl2sql-engine's and a
problem here. Such a project's engine is nl2sql-engine (``ENGINE_NL2SQL``), and its
``result_match`` rule defaults to nl2sql-engine's own (``ENGINE_MATCH_DEFAULTS``): the gold's
column order, numbers within half a cent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from pytest_nl2sql.config.model import (
    ENGINE_MATCH_DEFAULTS,
    ENGINE_NL2SQL,
    NAME_RE,
    Config,
    DatasourceConfig,
    RoutingConfig,
)
from pytest_nl2sql.config.policy import RolePolicy, parse_glob
from pytest_nl2sql.config.reader import Reader, show, suggest
from pytest_nl2sql.config.urls import file_url

__all__ = ["ENGINE_MATCH_DEFAULTS", "build_engine_project", "is_engine_project"]


_SECTIONS = (
    "version", "datasources", "llm", "embeddings", "policies", "storage", "curated", "secrets",
    "settings", "api", "observers", "hooks", "evals",
)
_DATASOURCE_KEYS = (
    "id", "type", "description", "connection", "limits", "index", "preferred_tables",
    "sample_questions", "domains", "required",
)
_POLICY_KEYS = ("allow_all", "default_role", "admin_roles", "refusal_names_tables", "roles", "check")
_ROLE_KEYS = ("description", "allow", "deny")
_EVALS_KEYS = ("suites", "scorers", "curated", "max_cost_usd", "gate")
#: nl2sql-engine's datasource types this project can open, and the SQLAlchemy driver of each.
_TYPES = {"sqlite": "sqlite", "duckdb": "duckdb", "postgres": "postgresql+psycopg", "postgresql": "postgresql+psycopg"}
_DEFAULT_SCHEMA = {"sqlite": "main", "duckdb": "main", "postgres": "public", "postgresql": "public"}
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_-]*):([^{}]+)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_engine_project(document: Any) -> bool:
    """Whether a loaded ``nl2sql.yaml`` is nl2sql-engine's (``version: 2``)."""
    return isinstance(document, Mapping) and document.get("version") == 2 and not isinstance(document.get("version"), bool)


class EngineReader(Reader):
    """A Reader for nl2sql-engine's files: ``${env:NAME}`` references, whole values only."""

    def interpolate(self, value: str, line: int, where: str) -> str | None:
        match = _REFERENCE.fullmatch(value)
        if match is None:
            if "${" in value:
                self.problem(line, f"{where}: a ${{provider:key}} reference must be the whole value (as nl2sql-engine requires)")
                return None
            return value
        provider, key = match.groups()
        if provider != "env":
            self.problem(
                line,
                f"{where}: ${{{provider}:...}} is read by nl2sql-engine's secret provider {provider!r}, not by "
                f"pytest-nl2sql (use ${{env:NAME}} and set NAME in the environment of the test run)",
            )
            return None
        if not _ENV_NAME.match(key):
            self.problem(line, f"{where}: {key!r} is not an environment variable name")
            return None
        if key not in self.env:
            self.problem(line, f"{where}: environment variable {key} is not set (set {key} for the test run)")
            return None
        return self.env[key]


def build_engine_project(reader: Reader, document: CommentedMap) -> tuple[Config | None, list[str]]:
    """The ``Config`` of an nl2sql-engine project whose ``nl2sql.yaml`` ``reader`` read, and
    every problem found in it and the files it includes (``path:line: message``)."""
    builder = _ProjectBuilder(reader)
    config = builder.build(document)
    return config, builder.problems


class _ProjectBuilder:
    def __init__(self, reader: Reader) -> None:
        self.top = EngineReader(reader.path, reader.env)
        self.root = reader.path.parent
        self.readers: list[Reader] = [self.top]
        self.schemas: dict[str, str] = {}

    @property
    def problems(self) -> list[str]:
        """Every problem of every file read, each as ``path:line: message``."""
        return [p for r in self.readers for p in r.problems]

    # -- sections and includes ----------------------------------------------------------
    def section(self, doc: CommentedMap, name: str) -> tuple[Reader, Any]:
        """The body of section ``name`` and the reader of the file it is in (None if absent)."""
        value = doc.get(name)
        if not (isinstance(value, CommentedMap) and "file" in value):
            return self.top, value
        line = self.top.value_line(doc, name)
        if set(value) != {"file"}:
            self.top.problem(line, f"{name}: a section is either inline or exactly {{file: PATH}}, with no other keys")
            return self.top, None
        written = value["file"]
        if not isinstance(written, str) or not written.strip() or "${" in written:
            self.top.problem(line, f"{name}.file must be a literal path relative to nl2sql.yaml (got {show(written)})")
            return self.top, None
        target = self.root / written
        if target.is_dir() or written.endswith(("/", "\\")):
            if name != "datasources":
                self.top.problem(line, f"{name}.file: {written} is a folder; only datasources may name a folder")
                return self.top, None
            if not target.is_dir():
                self.top.problem(line, f"{name}.file: the folder {written} does not exist (beside {self.top.path.name})")
                return self.top, None
            return self.top, target
        if not target.is_file():
            self.top.problem(line, f"{name}.file: {written} does not exist (paths are relative to nl2sql.yaml)")
            return self.top, None
        reader = EngineReader(target, self.top.env)
        self.readers.append(reader)
        return reader, reader.read_yaml()

    def build(self, doc: CommentedMap) -> Config | None:
        self.top.check_keys(doc, _SECTIONS, "nl2sql.yaml (nl2sql-engine version 2)")
        for name in _SECTIONS[1:]:
            if name in doc:
                self.section(doc, name)  # an include that points nowhere is a problem even if unused here
        datasources = self.datasources(doc)
        roles = self.roles(doc, datasources)
        routing = self.routing(doc)
        suites = self.evals(doc)
        if self.problems:
            return None
        return Config(
            path=self.top.path,
            root=self.root,
            datasources=datasources,
            roles=roles,
            routing=routing,
            engine=ENGINE_NL2SQL,
            evals_suites=suites,
            source="nl2sql-engine",
        )

    # -- datasources ------------------------------------------------------------------------
    def datasources(self, doc: CommentedMap) -> dict[str, DatasourceConfig]:
        if "datasources" not in doc:
            self.top.problem(1, "'datasources' is missing (nl2sql-engine writes datasources: {file: datasources/})")
            return {}
        reader, body = self.section(doc, "datasources")
        entries: list[tuple[Reader, Any, str | None]] = []
        if isinstance(body, Path):
            for path in sorted(p for p in body.glob("*.yaml") if p.is_file()):
                r = EngineReader(path, self.top.env)
                self.readers.append(r)
                entries.append((r, r.read_yaml(), path.stem))
        elif isinstance(body, CommentedSeq):
            entries = [(reader, item, None) for item in body]
        elif body is not None:
            reader.problem(1, f"datasources must be a list of datasources or {{file: FOLDER/}} (got {show(body)})")
        result: dict[str, DatasourceConfig] = {}
        for r, item, stem in entries:
            if item is None:
                continue
            if not isinstance(item, CommentedMap):
                r.problem(1, f"a datasource must be a mapping with type: and connection: (got {show(item)})")
                continue
            name = item.get("id", stem)
            if stem is not None and "id" in item and item["id"] != stem:
                r.problem(r.value_line(item, "id"), f"id {show(item['id'])} must equal the file name, {stem!r}")
                continue
            if not isinstance(name, str) or not NAME_RE.match(name):
                r.problem(item.lc.line + 1, f"datasource id {show(name)} is not allowed (letters, digits, _ and -)")
                continue
            if name.lower() in {n.lower() for n in result}:
                r.problem(item.lc.line + 1, f"datasource {name!r} is defined twice")
                continue
            built = self.datasource(r, name, item)
            if built is not None:
                result[name] = built
        return result

    def datasource(self, r: Reader, name: str, body: CommentedMap) -> DatasourceConfig | None:
        where = f"datasources.{name}"
        r.check_keys(body, _DATASOURCE_KEYS, where)
        kind = r.string(body, "type", where)
        if kind is None:
            return None
        if kind not in _TYPES:
            r.problem(
                r.value_line(body, "type"),
                f"{where}.type {kind!r}: pytest-nl2sql opens {', '.join(sorted(_TYPES))} datasources "
                f"(nl2sql-engine's other adapters have no SQLAlchemy driver here); {suggest(kind, _TYPES)}",
            )
            return None
        connection = r.mapping(body, "connection", f"{where}.connection") or CommentedMap()
        url = self.url(r, where, kind, connection)
        limits = r.mapping(body, "limits", f"{where}.limits") or CommentedMap()
        r.check_keys(limits, ("row_limit", "timeout_ms", "max_bytes"), f"{where}.limits")
        # nl2sql-engine's evaluator compares every row (100,000); its adapter's default row limit
        row_limit = r.number(limits, "row_limit", f"{where}.limits", 100_000, integer=True, minimum=1)
        timeout_ms = r.number(limits, "timeout_ms", f"{where}.limits", 10_000, integer=True, minimum=1, maximum=86_400_000)
        description = r.string(body, "description", where, "")
        questions = [t for t, _ in r.string_list(body, "sample_questions", f"{where}.sample_questions")]
        if None in (url, row_limit, timeout_ms, description):
            return None
        self.schemas[name.lower()] = _DEFAULT_SCHEMA[kind]
        return DatasourceConfig(
            name=name,
            url=url,
            description=str(description).strip(),
            sample_questions=tuple(questions),
            row_limit=row_limit,
            timeout_s=timeout_ms / 1000.0,
        )

    def url(self, r: Reader, where: str, kind: str, connection: CommentedMap) -> str | None:
        w = f"{where}.connection"
        if kind in ("sqlite", "duckdb"):
            r.check_keys(connection, ("database",), w)
            database = r.string(connection, "database", w)
            if database is None:
                return None
            if database != ":memory:" and not Path(database).is_absolute():
                database = str((self.root / database).resolve())
            return file_url(_TYPES[kind], database)
        r.check_keys(connection, ("host", "port", "database", "user", "password", "sslmode"), w)
        host = r.string(connection, "host", w)
        database = r.string(connection, "database", w)
        user = r.string(connection, "user", w)
        password = r.string(connection, "password", w)
        port = r.number(connection, "port", w, 5432, integer=True, minimum=1, maximum=65535)
        sslmode = r.string(connection, "sslmode", w, None)
        if None in (host, database, user, password, port):
            return None
        query = {"sslmode": sslmode} if sslmode else {}
        from sqlalchemy.engine import URL  # PostgreSQL only: SQLite and DuckDB need no SQLAlchemy

        return URL.create(
            _TYPES[kind], username=user, password=password, host=host, port=port, database=database, query=query
        ).render_as_string(hide_password=False)

    # -- policies ---------------------------------------------------------------------------
    def roles(self, doc: CommentedMap, datasources: dict[str, DatasourceConfig]) -> dict[str, RolePolicy]:
        r, body = self.section(doc, "policies")
        schemas = frozenset(self.schemas.items())
        if body is None:
            return {"admin": RolePolicy(name="admin")}  # nl2sql-engine without policies: roles are not checked
        if not isinstance(body, CommentedMap):
            r.problem(1, f"policies must be a mapping with roles: (got {show(body)})")
            return {}
        r.check_keys(body, _POLICY_KEYS, "policies")
        allow_all = r.boolean(body, "allow_all", "policies", False)
        roles = r.mapping(body, "roles", "policies.roles") or CommentedMap()
        result: dict[str, RolePolicy] = {}
        known = {n.lower(): n for n in datasources}
        for name in roles:
            line = r.key_line(roles, name)
            where = f"policies.roles.{name}"
            role = roles[name]
            if not isinstance(name, str) or not NAME_RE.match(name):
                r.problem(line, f"role name {show(name)} is not allowed (letters, digits, _ and -)")
                continue
            if not isinstance(role, CommentedMap):
                r.problem(line, f"{where} must be a mapping with description:, allow: and deny: (got {show(role)})")
                continue
            r.check_keys(role, _ROLE_KEYS, where)
            globs: dict[str, list] = {}
            for kind in ("allow", "deny"):
                globs[kind] = []
                for text, item_line in r.string_list(role, kind, f"{where}.{kind}"):
                    try:
                        glob = parse_glob(text)
                    except ValueError as exc:
                        r.problem(item_line, f"{where}.{kind}: {exc}")
                        continue
                    if "*" not in glob.datasource and "?" not in glob.datasource and "[" not in glob.datasource \
                            and glob.datasource not in known:
                        r.problem(item_line, f"{where}.{kind}: {text!r} names no datasource ({suggest(glob.datasource, known.values())})")
                        continue
                    globs[kind].append(glob)
            allow = [parse_glob("*")] if allow_all else globs["allow"]
            result[name] = RolePolicy(
                name=name, allow_globs=tuple(allow), deny_globs=tuple(globs["deny"]), default_schemas=schemas
            )
        if not result:
            if allow_all:
                return {"admin": RolePolicy(name="admin")}
            r.problem(1, "policies.roles is empty (a suite's outcomes name roles: define them here)")
        return result

    # -- settings and evals -----------------------------------------------------------------
    def routing(self, doc: CommentedMap) -> RoutingConfig:
        r, body = self.section(doc, "settings")
        section = body.get("routing") if isinstance(body, CommentedMap) else None
        if not isinstance(section, CommentedMap):
            return RoutingConfig(candidates=3, max_datasources=3)  # nl2sql-engine's defaults
        candidates = r.number(section, "candidates", "settings.routing", 3, integer=True, minimum=1)
        max_ds = r.number(section, "max_datasources", "settings.routing", 3, integer=True, minimum=1)
        return RoutingConfig(candidates=candidates or 3, max_datasources=max_ds or 3)

    def evals(self, doc: CommentedMap) -> tuple[Path, ...]:
        r, body = self.section(doc, "evals")
        if body is None:
            return ()
        if not isinstance(body, CommentedMap):
            r.problem(1, f"evals must be a mapping with suites: (got {show(body)})")
            return ()
        r.check_keys(body, _EVALS_KEYS, "evals")
        suites: list[Path] = []
        for text, line in r.string_list(body, "suites", "evals.suites"):
            resolved = (self.root / text).resolve()  # relative to nl2sql.yaml, as nl2sql-engine reads it
            if not resolved.is_file():
                r.problem(line, f"evals.suites: {text!r} does not exist at {resolved} (paths are relative to nl2sql.yaml)")
            elif resolved not in suites:
                suites.append(resolved)
        return tuple(suites)

