"""Building a ``Config`` from the read document: datasources, roles, routing, the LLM, feedback
and ``evals.yaml``; every problem of the file is collected and raised at once."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from pytest_nl2sql.config.engine_project import build_engine_project, is_engine_project
from pytest_nl2sql.config.model import (
    DEFAULT_ENGINE,
    ENGINE_NL2SQL,
    ENGINE_RE,
    ENV_NAME_RE,
    ENV_REF_RE,
    EVALS_FILENAME,
    FILE_BACKENDS,
    NAME_RE,
    Config,
    ConfigError,
    DatasourceConfig,
    LLMConfig,
    RoutingConfig,
    ScratchConfig,
    VerifiedQuery,
    redact_url,
)
from pytest_nl2sql.config.policy import RolePolicy
from pytest_nl2sql.config.reader import Reader, show, suggest
from pytest_nl2sql.config.urls import SqliteURL, read_url

__all__ = ["load_config"]




def load_config(path: Path | str, *, environ: Mapping[str, str] | None = None) -> Config:
    """Read and check ``nl2sql.yaml`` at ``path`` (and ``evals.yaml`` beside it).

    ``environ`` (default ``os.environ``) supplies ``${NAME}`` values. Raises ``ConfigError``
    listing every problem found.
    """
    path = Path(path).absolute()
    env = os.environ if environ is None else environ
    reader = Reader(path, env)
    document = reader.read_document()
    if is_engine_project(document):  # nl2sql-engine's own project (version 2), read as it is
        config, problems = build_engine_project(reader, document)
        if problems or config is None:
            raise ConfigError(problems)
        return config
    config = _ConfigBuilder(reader).build(document) if document is not None else None
    evals_path = path.parent / EVALS_FILENAME
    suites: tuple[Path, ...] = ()
    evals_reader: Reader | None = None
    if evals_path.is_file():
        evals_reader = Reader(evals_path, env)
        evals_document = evals_reader.read_document()
        if evals_document is not None:
            suites = _read_evals(evals_reader, evals_document, path.parent)
    problems = reader.problems + (evals_reader.problems if evals_reader is not None else [])
    if problems or config is None:
        raise ConfigError(problems)
    return attrs.evolve(config, evals_suites=suites)


_TOP_KEYS = ("version", "datasources", "roles", "routing", "engine", "llm", "llms", "feedback", "test_suite", "verified")
_VERIFIED_KEYS = ("id", "datasource", "questions", "sql")
#: An LLM config's name: it becomes part of node ids (``case[role-NAME]``) and ``-k NAME``.
LLM_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,39}$")
_TEST_SUITE_KEYS = ("scratch_url", "allow_privileged_login")
_DATASOURCE_KEYS = (
    "url", "description", "sample_questions", "row_limit", "timeout_s", "allow_privileged_login",
    "max_result_bytes", "unreachable_after",
)
_ROLE_KEYS = ("datasources", "allow", "deny", "db_role")
_DB_ROLE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]{0,62}$")
#: The longest timeout nl2sql.yaml accepts, in seconds (a day): a timeout must be able to fire.
MAX_TIMEOUT_S = 86_400.0
_RULE_KEYS = ("tables", "columns")
_ROUTING_KEYS = ("candidates", "max_datasources", "reranker", "reranker_model")
RERANKERS = ("none", "minilm")
_LLM_KEYS = tuple(f.name for f in attrs.fields(LLMConfig))
_FEEDBACK_KEYS = ("store",)



class _ConfigBuilder:
    def __init__(self, reader: Reader) -> None:
        self.r = reader
        self.root = reader.path.parent
        self.declared: dict[str, str] = {}  # lowercase -> name of every datasource named
        self.dialects: dict[str, str] = {}  # lowercase name -> backend of each readable url

    def build(self, doc: CommentedMap) -> Config | None:
        r = self.r
        r.check_keys(doc, _TOP_KEYS, "nl2sql.yaml")
        if "version" not in doc:
            r.problem(1, "'version' is missing (add version: 1 at the top)")
        elif doc["version"] != 1 or isinstance(doc["version"], bool):
            r.problem(
                r.value_line(doc, "version"),
                f"version {show(doc['version'])} is not supported (write version: 1 for "
                "pytest-nl2sql's format, or version: 2 for nl2sql-engine's project: docs/nl2sql-engine.md)",
            )
        datasources = self.datasources(doc)
        roles = self.roles(doc, datasources)
        routing = self.routing(doc)
        engine = r.string(doc, "engine", "nl2sql.yaml", DEFAULT_ENGINE)
        if engine is not None and engine != ENGINE_NL2SQL and not ENGINE_RE.match(engine):
            r.problem(
                r.value_line(doc, "engine"),
                f"engine {engine!r} is not a 'module:callable' path "
                f"(write e.g. engine: {DEFAULT_ENGINE})",
            )
        llm = self.llm(doc)
        llms = self.llms(doc, llm)
        feedback_store = self.feedback(doc)
        test_suite = self.test_suite(doc)
        verified = self.verified(doc, datasources)
        if r.problems:
            return None
        return Config(
            path=r.path,
            root=self.root,
            datasources=datasources,
            roles=roles,
            routing=routing,
            engine=engine,
            llm=llm,
            feedback_store=feedback_store,
            test_suite=test_suite,
            verified=verified,
            llms=llms,
        )

    # -- datasources

    def datasources(self, doc: CommentedMap) -> dict[str, DatasourceConfig]:
        r = self.r
        if "datasources" not in doc:
            r.problem(1, "'datasources' is missing (add datasources: with at least one database)")
            return {}
        section = r.mapping(doc, "datasources", "datasources")
        if section is None:
            if doc["datasources"] is None:
                r.problem(
                    r.key_line(doc, "datasources"),
                    "datasources is empty (name at least one database with its url)",
                )
            return {}
        result: dict[str, DatasourceConfig] = {}
        seen: dict[str, str] = {}
        for name in section:
            line = r.key_line(section, name)
            if not isinstance(name, str) or not NAME_RE.match(name):
                r.problem(
                    line,
                    f"datasource name {show(name)} is not allowed "
                    "(use letters, digits, _ and -, starting with a letter or _)",
                )
                continue
            if name.lower() in seen:
                r.problem(
                    line,
                    f"datasource '{name}' differs from '{seen[name.lower()]}' only in case "
                    "(names are case-insensitive: rename one)",
                )
                continue
            seen[name.lower()] = name
            self.declared[name.lower()] = name
            body = section[name]
            where = f"datasources.{name}"
            if not isinstance(body, CommentedMap):
                r.problem(line, f"{where} must be a mapping with at least url: (got {show(body)})")
                continue
            built = self.datasource(name, body, where)
            if built is not None:
                result[name] = built
        return result

    def datasource(self, name: str, body: CommentedMap, where: str) -> DatasourceConfig | None:
        r = self.r
        r.check_keys(body, _DATASOURCE_KEYS, where)
        url = r.string(body, "url", where)
        if url is not None:
            url = self.resolve_url(url, r.value_line(body, "url"), where)
        if url is not None:
            self.dialects[name.lower()] = read_url(url).get_backend_name()
        description = r.string(body, "description", where, "")
        questions = [
            text for text, _ in r.string_list(body, "sample_questions", f"{where}.sample_questions")
        ]
        row_limit = r.number(body, "row_limit", where, 1000, integer=True, minimum=1)
        timeout_s = r.number(
            body, "timeout_s", where, 10.0, integer=False, minimum=0, strict=True,
            maximum=MAX_TIMEOUT_S,
        )
        privileged = r.boolean(body, "allow_privileged_login", where, False)
        max_bytes = r.number(
            body, "max_result_bytes", where, 64 * 1024 * 1024, integer=True, minimum=1024,
        )
        unreachable_after = r.number(body, "unreachable_after", where, 3, integer=True, minimum=1)
        if None in (url, description, row_limit, timeout_s, privileged, max_bytes, unreachable_after):
            return None
        return DatasourceConfig(
            name=name,
            url=url,
            description=description.strip(),
            sample_questions=tuple(questions),
            row_limit=row_limit,
            timeout_s=timeout_s,
            allow_privileged_login=privileged,
            max_result_bytes=max_bytes,
            unreachable_after=unreachable_after,
        )

    def resolve_url(self, url: str, line: int, where: str) -> str | None:
        try:
            parsed = read_url(url)  # SQLAlchemy's make_url unless a plain SQLite URL
        except ValueError:
            self.r.problem(
                line,
                f"{where}.url {redact_url(url)!r} is not a database URL (write e.g. "
                "sqlite:///data/chinook.sqlite or postgresql+psycopg://user:${PGPASSWORD}@host/db)",
            )
            return None
        try:
            _check_dialect(parsed)
        except ImportError:
            self.r.problem(
                line,
                f"{where}.url: no SQLAlchemy dialect {parsed.drivername!r} is installed "
                "(use sqlite, postgresql+psycopg or duckdb, or install the dialect's package)",
            )
            return None
        database = parsed.database
        if (
            parsed.get_backend_name() in FILE_BACKENDS
            and database
            and database != ":memory:"
            and not database.startswith("file:")
            and not Path(database).is_absolute()
        ):
            parsed = parsed.set(database=str((self.root / database).resolve()))
            return parsed.render_as_string(hide_password=False)
        return url

    # -- roles

    def roles(
        self, doc: CommentedMap, datasources: dict[str, DatasourceConfig]
    ) -> dict[str, RolePolicy]:
        r = self.r
        if "roles" not in doc:
            return {"admin": RolePolicy(name="admin")}
        section = r.mapping(doc, "roles", "roles")
        if section is None:
            if doc["roles"] is None:
                r.problem(
                    r.key_line(doc, "roles"),
                    "roles is empty (define at least one role, e.g. admin: {datasources: '*'})",
                )
            return {}
        known = dict(self.declared)
        result: dict[str, RolePolicy] = {}
        for name in section:
            line = r.key_line(section, name)
            if not isinstance(name, str) or not NAME_RE.match(name):
                r.problem(
                    line, f"role name {show(name)} is not allowed (use letters, digits, _ and -)"
                )
                continue
            body = section[name]
            where = f"roles.{name}"
            if not isinstance(body, CommentedMap):
                r.problem(line, f"{where} must be a mapping with datasources: (got {show(body)})")
                continue
            policy = self.role(name, body, where, known)
            if policy is not None:
                result[name] = policy
        return result

    def role(
        self, name: str, body: CommentedMap, where: str, known: dict[str, str]
    ) -> RolePolicy | None:
        r = self.r
        r.check_keys(body, _ROLE_KEYS, where)
        before = len(r.problems)
        scope: frozenset[str] | None
        if "datasources" not in body:
            r.problem(
                body.lc.line + 1,
                f"{where}: 'datasources' is missing (write datasources: '*' or a list of names)",
            )
            scope = frozenset()
        elif body["datasources"] == "*":
            scope = None
        else:
            if body["datasources"] is None:
                r.problem(
                    r.value_line(body, "datasources"),
                    f"{where}.datasources is empty (write '*' or a list of datasource names)",
                )
            names = r.string_list(body, "datasources", f"{where}.datasources")
            scope_set = set()
            for ds, line in names:
                if ds.lower() not in known:
                    r.problem(
                        line,
                        f"{where}.datasources: unknown datasource '{ds}' ({suggest(ds, known.values())})",
                    )
                scope_set.add(ds.lower())
            scope = frozenset(scope_set)
        rules: dict[str, dict[str, Any]] = {}
        for kind in ("allow", "deny"):
            section = r.mapping(body, kind, f"{where}.{kind}")
            rules[kind] = {"tables": None, "columns": None}
            if section is None:
                continue
            r.check_keys(section, _RULE_KEYS, f"{where}.{kind}")
            if "tables" in section:
                rules[kind]["tables"] = self.table_refs(section, f"{where}.{kind}.tables", known)
            if "columns" in section:
                rules[kind]["columns"] = self.column_refs(section, f"{where}.{kind}.columns", known)
        allow_tables, allow_columns = rules["allow"]["tables"], rules["allow"]["columns"]
        if allow_tables is not None and allow_columns is not None:
            tables = {key for key, _ in allow_tables}
            for (ds, tb, col), line in allow_columns:
                if (ds, tb) not in tables:
                    r.problem(
                        line,
                        f"{where}.allow.columns names {ds}.{tb}.{col} but allow.tables does not "
                        f"allow {ds}.{tb} (add it to allow.tables)",
                    )
        if allow_tables is not None and scope:
            covered = {ds for (ds, _), _ in allow_tables}
            for ds in sorted(scope - covered):
                if ds in known:
                    r.problem(
                        r.value_line(body, "allow"),
                        f"{where} may use datasource '{known[ds]}' but allow.tables names none of "
                        f"its tables, so it could read nothing there (add its tables to "
                        f"allow.tables, or remove it from datasources)",
                    )
        db_role = None
        if "db_role" in body:
            db_role = r.string(body, "db_role", where)
            if db_role is not None and not _DB_ROLE_RE.match(db_role):
                r.problem(
                    r.value_line(body, "db_role"),
                    f"{where}.db_role {show(db_role)} is not a PostgreSQL role name "
                    "(letters, digits, _ and $, at most 63 characters)",
                )
            elif db_role is not None and any(
                self.dialects.get(ds) not in (None, "postgresql") for ds in (scope or self.dialects)
            ):
                r.problem(
                    r.value_line(body, "db_role"),
                    f"{where}.db_role applies to PostgreSQL datasources only, but the role may "
                    "use a datasource that is not PostgreSQL (limit its datasources, or drop db_role)",
                )
        if len(r.problems) > before:
            return None

        def keys(items: list[tuple[Any, int]] | None) -> frozenset | None:
            return None if items is None else frozenset(key for key, _ in items)

        return RolePolicy(
            name=name,
            datasources=scope,
            allow_tables=keys(allow_tables),
            allow_columns=keys(allow_columns),
            deny_tables=keys(rules["deny"]["tables"]) or frozenset(),
            deny_columns=keys(rules["deny"]["columns"]) or frozenset(),
            db_role=db_role,
        )

    def table_refs(
        self, section: CommentedMap, where: str, known: dict[str, str]
    ) -> list[tuple[tuple[str, str], int]]:
        result = []
        for text, line in self.r.string_list(section, "tables", where):
            ds, _, table = text.partition(".")
            if not ds or not table:
                self.r.problem(
                    line,
                    f"{where}: {text!r} is not 'datasource.Table' (write e.g. chinook.Employee)",
                )
                continue
            if ds.lower() not in known:
                self.r.problem(
                    line,
                    f"{where}: unknown datasource '{ds}' in {text!r} ({suggest(ds, known.values())})",
                )
                continue
            result.append(((ds.lower(), table.lower()), line))
        return result

    def column_refs(
        self, section: CommentedMap, where: str, known: dict[str, str]
    ) -> list[tuple[tuple[str, str, str], int]]:
        result = []
        for text, line in self.r.string_list(section, "columns", where):
            ds, _, rest = text.partition(".")
            table, _, column = rest.rpartition(".")
            if not ds or not table or not column:
                self.r.problem(
                    line,
                    f"{where}: {text!r} is not 'datasource.Table.Column' (write e.g. chinook.Customer.Email)",
                )
                continue
            if ds.lower() not in known:
                self.r.problem(
                    line,
                    f"{where}: unknown datasource '{ds}' in {text!r} ({suggest(ds, known.values())})",
                )
                continue
            result.append(((ds.lower(), table.lower(), column.lower()), line))
        return result

    # -- the small sections

    def routing(self, doc: CommentedMap) -> RoutingConfig:
        section = self.r.mapping(doc, "routing", "routing")
        if section is None:
            return RoutingConfig()
        self.r.check_keys(section, _ROUTING_KEYS, "routing")
        candidates = self.r.number(section, "candidates", "routing", 3, integer=True, minimum=1)
        max_ds = self.r.number(section, "max_datasources", "routing", 2, integer=True, minimum=1)
        reranker = self.r.string(section, "reranker", "routing", "none")
        if reranker is not None and reranker not in RERANKERS:
            self.r.problem(
                self.r.value_line(section, "reranker"),
                f"routing.reranker: unknown re-ranker {reranker!r} (use one of: {', '.join(RERANKERS)})",
            )
            reranker = None
        model = self.r.string(section, "reranker_model", "routing", None)
        if candidates is None or max_ds is None:
            return RoutingConfig()
        return RoutingConfig(
            candidates=candidates,
            max_datasources=max_ds,
            reranker=None if reranker in (None, "none") else reranker,
            reranker_model=(self.root / model).resolve() if model else None,
        )

    def llm(self, doc: CommentedMap) -> LLMConfig:
        section = self.r.mapping(doc, "llm", "llm")
        if section is None:
            return LLMConfig()
        return self.llm_section(section, "llm", LLMConfig())

    def llms(self, doc: CommentedMap, base: LLMConfig) -> dict[str, LLMConfig]:
        """``llms: {NAME: {model: ..., ...}}``: named LLM configs, each key over ``llm:``'s."""
        r = self.r
        section = r.mapping(doc, "llms", "llms")
        if section is None:
            return {}
        out: dict[str, LLMConfig] = {}
        for name, body in section.items():
            where = f"llms.{name}"
            if not isinstance(name, str) or not LLM_NAME_RE.match(name):
                r.problem(r.key_line(section, name), f"llms: {show(name)} is not a name (a letter, then letters, digits or _; at most 40)")
                continue
            if body is None:
                body = CommentedMap()
            if not isinstance(body, CommentedMap):
                r.problem(r.value_line(section, name), f"{where} must be a mapping of llm keys (got {show(body)})")
                continue
            out[name] = self.llm_section(body, where, base)
        return out

    def llm_section(self, section: CommentedMap, where: str, d: LLMConfig) -> LLMConfig:
        r = self.r
        r.check_keys(section, _LLM_KEYS, where)
        values = {
            "base_url": r.string(section, "base_url", where, d.base_url),
            "model": r.string(section, "model", where, d.model),
            # left out: OPENAI_API_KEY; `api_key_env: null` (or ""): a server that needs no key
            "api_key_env": (
                "" if "api_key_env" in section and section["api_key_env"] in (None, "")
                else r.string(section, "api_key_env", where, d.api_key_env)
            ),
            "price_input_per_1k": r.number(
                section, "price_input_per_1k", where, d.price_input_per_1k, integer=False, minimum=0
            ),
            "price_output_per_1k": r.number(
                section,
                "price_output_per_1k",
                where,
                d.price_output_per_1k,
                integer=False,
                minimum=0,
            ),
            "timeout_s": r.number(
                section, "timeout_s", where, d.timeout_s, integer=False, minimum=0, strict=True,
                maximum=MAX_TIMEOUT_S,
            ),
            "max_retries": r.number(
                section, "max_retries", where, d.max_retries, integer=True, minimum=0
            ),
        }
        env_name = values["api_key_env"]
        if env_name and not ENV_NAME_RE.match(env_name):
            r.problem(
                r.value_line(section, "api_key_env"),
                f"{where}.api_key_env is not an environment variable name (its value is not shown) "
                "(write the variable's name, e.g. OPENAI_API_KEY, never the key itself)",
            )
            return d
        if any(value is None for value in values.values()):
            return d
        values["api_key_env"] = values["api_key_env"] or None
        return LLMConfig(**values)

    def test_suite(self, doc: CommentedMap) -> ScratchConfig:
        """``test_suite: {scratch_url, allow_privileged_login}``. A ``${NAME}`` in scratch_url
        that is not set leaves no scratch server (runs without --nl2sql-test-suite must not
        need it); the record of a PostgreSQL item then says which variable to set."""
        r = self.r
        section = r.mapping(doc, "test_suite", "test_suite")
        if section is None:
            return ScratchConfig()
        r.check_keys(section, _TEST_SUITE_KEYS, "test_suite")
        privileged = r.boolean(section, "allow_privileged_login", "test_suite", False)
        raw = section.get("scratch_url")
        if raw is None:
            return ScratchConfig(allow_privileged_login=bool(privileged))
        line = r.value_line(section, "scratch_url")
        if isinstance(raw, str):
            unset = [m.group(2) for m in ENV_REF_RE.finditer(raw)
                     if not m.group(1) and ENV_NAME_RE.match(m.group(2)) and m.group(2) not in r.env]
            if unset:
                return ScratchConfig(allow_privileged_login=bool(privileged), unset_env=unset[0])
        url = r.string(section, "scratch_url", "test_suite")
        if url is None:
            return ScratchConfig()
        try:
            backend = read_url(url).get_backend_name()
        except ValueError:
            backend = None
        if backend != "postgresql":
            r.problem(
                line,
                f"test_suite.scratch_url {redact_url(url)!r} is not a PostgreSQL URL (write e.g. "
                "postgresql+psycopg://nl2sql_scratch:${PGPASSWORD}@localhost/postgres; SQLite "
                "datasources need no scratch server)",
            )
            return ScratchConfig()
        return ScratchConfig(scratch_url=url, allow_privileged_login=bool(privileged))

    def verified(self, doc: CommentedMap, datasources: Mapping[str, DatasourceConfig]) -> tuple[VerifiedQuery, ...]:
        """``verified:`` -- a list of ``{id, datasource, questions, sql}``: curated queries."""
        r = self.r
        value = doc.get("verified")
        if value is None:
            return ()
        line = r.value_line(doc, "verified")
        if not isinstance(value, CommentedSeq):
            r.problem(line, f"verified must be a list of curated queries ({{id, datasource, questions, sql}}; got {show(value)})")
            return ()
        out: list[VerifiedQuery] = []
        seen: set[str] = set()
        for i, body in enumerate(value):
            where = f"verified[{i}]"
            item_line = r.item_line(value, i, line)
            if not isinstance(body, CommentedMap):
                r.problem(item_line, f"{where} must be a mapping {{id, datasource, questions, sql}} (got {show(body)})")
                continue
            r.check_keys(body, _VERIFIED_KEYS, where)
            missing = [k for k in _VERIFIED_KEYS if k not in body]
            if missing:
                r.problem(item_line, f"{where}: {', '.join(missing)} missing (a curated query has id, datasource, questions and sql)")
                continue
            qid, ds, sql = (r.string(body, k, where) for k in ("id", "datasource", "sql"))
            questions = [q for q, _ in r.string_list(body, "questions", f"{where}.questions")]
            if None in (qid, ds, sql) or not questions:
                if not questions:
                    r.problem(r.value_line(body, "questions"), f"{where}.questions: list at least one question it answers")
                continue
            if qid in seen:
                r.problem(r.value_line(body, "id"), f"{where}: id {qid!r} is used twice (each curated query has its own id)")
            seen.add(qid)
            if ds not in datasources:
                r.problem(r.value_line(body, "datasource"), f"{where}.datasource: unknown datasource {ds!r} ({suggest(ds, list(datasources))})")
                continue
            out.append(VerifiedQuery(id=qid, datasource=ds, questions=tuple(questions), sql=sql))
        return tuple(out)

    def feedback(self, doc: CommentedMap) -> Path | None:
        section = self.r.mapping(doc, "feedback", "feedback")
        if section is None:
            return None
        self.r.check_keys(section, _FEEDBACK_KEYS, "feedback")
        store = self.r.string(section, "store", "feedback", "feedback.sqlite")
        return None if store is None else (self.root / store).resolve()



# ---------------------------------------------------------------------------------------------
# evals.yaml


def _check_dialect(parsed: Any) -> None:
    """Raise ImportError when no SQLAlchemy dialect serves ``parsed``'s drivername. A plain
    SQLite URL needs none: its driver is the standard library's sqlite3."""
    if isinstance(parsed, SqliteURL):
        return
    from sqlalchemy.exc import NoSuchModuleError

    try:
        parsed.get_dialect()
    except NoSuchModuleError as error:
        raise ImportError(str(error)) from None


def _read_evals(reader: Reader, doc: CommentedMap, root: Path) -> tuple[Path, ...]:
    reader.check_keys(doc, ("version", "suites"), EVALS_FILENAME)
    if "version" in doc and (doc["version"] != 1 or isinstance(doc["version"], bool)):
        reader.problem(
            reader.value_line(doc, "version"),
            f"version {show(doc['version'])} is not supported (write version: 1)",
        )
    if "suites" not in doc:
        reader.problem(
            1,
            "'suites' is missing (write suites: [evals/chinook.yaml], paths relative to nl2sql.yaml)",
        )
        return ()
    if not isinstance(doc["suites"], CommentedSeq):
        reader.problem(
            reader.value_line(doc, "suites"),
            f"suites must be a list of suite file paths (got {show(doc['suites'])}; write suites: [evals/chinook.yaml])",
        )
        return ()
    suites: list[Path] = []
    for text, line in reader.string_list(doc, "suites", "suites"):
        resolved = (root / text).resolve()
        if resolved in suites:
            reader.problem(line, f"suites: {text!r} is listed twice (list each suite once)")
        elif not resolved.is_file():
            reader.problem(
                line,
                f"suites: {text!r} does not exist at {resolved} (give the path relative to nl2sql.yaml)",
            )
        else:
            suites.append(resolved)
    return tuple(suites)
