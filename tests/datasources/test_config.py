"""nl2sql.yaml: loading, defaults, ${ENV} values, hidden passwords, path:line errors, policies."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_nl2sql.config import (
    DEFAULT_ENGINE,
    Config,
    ConfigError,
    LLMConfig,
    RolePolicy,
    RoutingConfig,
    find_config,
    load_config,
    redact_url,
)

FULL = """\
version: 1
datasources:
  chinook:
    url: sqlite:///data/chinook.sqlite
    description: Music store sales
    sample_questions: [How many customers are there?, Top artists by sales]
    row_limit: 500
    timeout_s: 2.5
  support:
    url: postgresql+psycopg://reader:${PGPASSWORD}@db.example:5432/support
roles:
  admin: {datasources: "*"}
  analyst:
    datasources: [chinook, support]
    deny: {tables: [chinook.Employee], columns: [chinook.Customer.Email]}
  viewer:
    datasources: [chinook]
    allow: {tables: [chinook.Album, chinook.Track]}
routing: {candidates: 4, max_datasources: 1}
engine: mypkg.engines:build
llm: {model: gpt-4o, api_key_env: MY_KEY, price_input_per_1k: 0.01, timeout_s: 5, max_retries: 0}
feedback: {store: state/feedback.sqlite}
"""


def write(folder: Path, text: str, name: str = "nl2sql.yaml") -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems(path: Path, environ: dict[str, str] | None = None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ=environ or {})
    return list(caught.value.problems)


def test_full_file_loads_with_every_value(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    config = load_config(path, environ={"PGPASSWORD": "s3cret"})
    assert isinstance(config, Config)
    assert config.path == path and config.root == tmp_path
    chinook = config.datasources["chinook"]
    assert chinook.url == f"sqlite:///{tmp_path / 'data' / 'chinook.sqlite'}"
    assert chinook.description == "Music store sales"
    assert chinook.sample_questions == ("How many customers are there?", "Top artists by sales")
    assert (chinook.row_limit, chinook.timeout_s) == (500, 2.5)
    support = config.datasources["support"]
    assert support.url == "postgresql+psycopg://reader:s3cret@db.example:5432/support"
    assert (support.row_limit, support.timeout_s) == (1000, 10.0)
    assert config.routing == RoutingConfig(candidates=4, max_datasources=1)
    assert config.engine == "mypkg.engines:build"
    assert config.llm == LLMConfig(
        model="gpt-4o", api_key_env="MY_KEY", price_input_per_1k=0.01, timeout_s=5.0, max_retries=0
    )
    assert config.llm.api_key({"MY_KEY": "k"}) == "k" and config.llm.api_key({}) is None
    assert config.feedback_store == tmp_path / "state" / "feedback.sqlite"
    assert config.evals_suites == ()
    assert set(config.roles) == {"admin", "analyst", "viewer"}


def test_minimal_file_gets_the_documented_defaults(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\ndatasources:\n  db: {url: 'sqlite:////abs/db.sqlite'}\n")
    config = load_config(path, environ={})
    assert config.datasources["db"].url == "sqlite:////abs/db.sqlite"
    assert config.routing == RoutingConfig(3, 2)
    assert config.engine == DEFAULT_ENGINE
    assert config.llm == LLMConfig()
    assert config.feedback_store is None
    assert config.roles == {"admin": RolePolicy(name="admin")}
    assert config.roles["admin"].allows_table("db", "anything")


def test_env_interpolation_in_any_string_and_the_escape(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        version: 1
        datasources:
          db:
            url: sqlite:///${DB_DIR}/x.sqlite
            description: "costs $${PRICE} at ${SHOP}"
            row_limit: ${LIMIT}
        """,
    )
    config = load_config(path, environ={"DB_DIR": "/srv", "SHOP": "Acme", "LIMIT": "7"})
    ds = config.datasources["db"]
    assert ds.url == "sqlite:////srv/x.sqlite"
    assert ds.description == "costs ${PRICE} at Acme"
    assert ds.row_limit == 7


def test_missing_env_variable_names_it_and_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, FULL)
    assert problems(path) == [
        f"{path}:10: datasources.support.url: environment variable PGPASSWORD is not set "
        "(set PGPASSWORD, or write the value in place of ${PGPASSWORD})"
    ]


def test_redact_url_hides_passwords_and_secret_query_values() -> None:
    assert redact_url("postgresql://u:pa%40ss@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact_url("postgresql://h/db?password=topsecret&sslmode=require") == (
        "postgresql://h/db?password=***&sslmode=require"
    )
    assert redact_url("sqlite:////x/y.sqlite") == "sqlite:////x/y.sqlite"
    assert "hunter2" not in redact_url("not a url://me:hunter2@host")


def test_password_never_in_reprs_or_errors(tmp_path: Path) -> None:
    path = write(tmp_path, FULL.replace("row_limit: 500", "row_limit: -1"))
    environ = {"PGPASSWORD": "s3cret-pw"}
    with pytest.raises(ConfigError) as caught:
        load_config(path, environ=environ)
    assert "s3cret-pw" not in str(caught.value)
    good = load_config(write(tmp_path, FULL), environ=environ)
    assert "s3cret-pw" not in repr(good)
    assert "s3cret-pw" not in repr(good.datasources["support"])
    assert "reader:***@db.example" in repr(good.datasources["support"])
    assert good.datasources["support"].redacted_url.endswith("reader:***@db.example:5432/support")
    bad_url = write(
        tmp_path,
        "version: 1\ndatasources:\n  db: {url: 'nope://me:${PW}@host/x y'}\n",
    )
    # an unparseable URL is reported, with its password hidden
    text = str(pytest.raises(ConfigError, load_config, bad_url, environ={"PW": "s3cret-pw"}).value)
    assert "s3cret-pw" not in text


BAD_FILES = [
    pytest.param(
        "version: 3\ndatasources:\n  db: {url: 'sqlite:///x'}\n",
        [":1: version 3 is not supported (write version: 1 for pytest-nl2sql's format, or version: 2 for nl2sql-engine's project: docs/nl2sql-engine.md)"],
        id="version",
    ),
    pytest.param(
        "datasources:\n  db: {url: 'sqlite:///x'}\n",
        [":1: 'version' is missing (add version: 1 at the top)"],
        id="no-version",
    ),
    pytest.param(
        "version: 1\n",
        [":1: 'datasources' is missing (add datasources: with at least one database)"],
        id="no-datasources",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nroutng: {candidates: 2}\n",
        [":4: unknown key 'routng' in nl2sql.yaml (did you mean 'routing'?)"],
        id="unknown-top-key",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db:\n    url: 'sqlite:///x'\n    row_limt: 5\n",
        [":5: unknown key 'row_limt' in datasources.db (did you mean 'row_limit'?)"],
        id="unknown-datasource-key",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db:\n    description: no url\n",
        [":4: datasources.db: 'url' is missing (add url: ...)"],
        id="no-url",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db:\n    url: just words\n",
        [
            ":4: datasources.db.url 'just words' is not a database URL (write e.g. "
            "sqlite:///data/chinook.sqlite or postgresql+psycopg://user:${PGPASSWORD}@host/db)"
        ],
        id="bad-url",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db:\n    url: sqlite:///x\n    row_limit: lots\n    timeout_s: 0\n",
        [
            ":5: datasources.db.row_limit must be a whole number >= 1 (got 'lots')",
            ":6: datasources.db.timeout_s must be > 0 (got 0)",
        ],
        id="bad-numbers",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db:\n    url: sqlite:///x\n    row_limit: true\n",
        [":5: datasources.db.row_limit must be a whole number >= 1 (got true)"],
        id="bool-is-not-a-number",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  my.db: {url: 'sqlite:///x'}\n",
        [
            ":3: datasource name 'my.db' is not allowed "
            "(use letters, digits, _ and -, starting with a letter or _)"
        ],
        id="bad-datasource-name",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nroles:\n  analyst:\n    datasources: [dbb]\n",
        [":6: roles.analyst.datasources: unknown datasource 'dbb' (did you mean 'db'?)"],
        id="unknown-role-datasource",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nroles:\n  analyst:\n"
        "    datasources: [db]\n    deny: {tables: [Employee], colums: [db.T.c]}\n",
        [
            ":7: unknown key 'colums' in roles.analyst.deny (did you mean 'columns'?)",
            ":7: roles.analyst.deny.tables: 'Employee' is not 'datasource.Table' "
            "(write e.g. chinook.Employee)",
        ],
        id="bad-deny",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nroles:\n  analyst:\n"
        "    datasources: [db]\n    deny:\n      columns: [db.Customer]\n",
        [
            ":8: roles.analyst.deny.columns: 'db.Customer' is not 'datasource.Table.Column' "
            "(write e.g. chinook.Customer.Email)"
        ],
        id="bad-column-ref",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\n  other: {url: 'sqlite:///y'}\n"
        "roles:\n  viewer:\n    datasources: [db, other]\n    allow: {tables: [db.Album]}\n",
        [
            ":8: roles.viewer may use datasource 'other' but allow.tables names none of its "
            "tables, so it could read nothing there (add its tables to allow.tables, or remove "
            "it from datasources)"
        ],
        id="allow-list-misses-a-datasource",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nroles:\n  viewer: {allow: {}}\n",
        [":5: roles.viewer: 'datasources' is missing (write datasources: '*' or a list of names)"],
        id="role-without-datasources",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nengine: not a path\n",
        [
            ":4: engine 'not a path' is not a 'module:callable' path "
            f"(write e.g. engine: {DEFAULT_ENGINE})"
        ],
        id="engine",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nllm:\n  api_key_env: sk-abc123\n  modle: x\n",
        [
            ":5: llm.api_key_env is not an environment variable name (its value is not shown) "
            "(write the variable's name, e.g. OPENAI_API_KEY, never the key itself)",
            ":6: unknown key 'modle' in llm (did you mean 'model'?)",
        ],
        id="llm",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nrouting: {candidates: 0}\n",
        [":4: routing.candidates must be >= 1 (got 0)"],
        id="routing",
    ),
    pytest.param(
        "version: 1\ndatasources: [db]\n",
        [":2: datasources must be a mapping of keys to values (got a list)"],
        id="datasources-not-a-mapping",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'\n",
        [":4: YAML syntax error:"],
        id="yaml-syntax",
    ),
    pytest.param(
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\n  db: {url: 'sqlite:///y'}\n",
        [":4: YAML syntax error:"],
        id="duplicate-key",
    ),
    pytest.param(
        "- just a list\n", [":1: the file must be a YAML mapping of settings"], id="not-a-mapping"
    ),
]


@pytest.mark.parametrize(("text", "expected"), BAD_FILES)
def test_each_bad_config_is_reported_as_path_line_message(
    tmp_path: Path, text: str, expected: list[str]
) -> None:
    path = write(tmp_path, text)
    found = problems(path)
    assert len(found) == len(expected), found
    for line, fragment in zip(found, expected, strict=True):
        assert line.startswith(f"{path}{fragment}"), line


def test_llm_key_written_in_place_of_its_variable_name_is_not_echoed(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\nllm: {api_key_env: sk-abc123}\n",
    )
    assert all("sk-abc123" not in line for line in problems(path))


def test_unknown_dialect_is_reported(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\ndatasources:\n  db: {url: 'nosuchdb://u:pw@h/x'}\n")
    assert problems(path) == [
        f"{path}:3: datasources.db.url: no SQLAlchemy dialect 'nosuchdb' is installed "
        "(use sqlite, postgresql+psycopg or duckdb, or install the dialect's package)"
    ]


def test_all_problems_of_a_file_are_reported_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "version: 1\ndatasources:\n  db:\n    url: sqlite:///x\n    row_limit: 0\n"
        "routing: {candidates: x}\nfeedbak: {}\n",
    )
    found = problems(path)
    assert [line.split(":")[1] for line in found] == ["5", "6", "7"]


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    found = problems(tmp_path / "nl2sql.yaml")
    assert found == [
        f"{tmp_path / 'nl2sql.yaml'}:1: file not found (create it, see docs/config.md)"
    ]


def test_find_config(tmp_path: Path) -> None:
    assert find_config(tmp_path) is None
    path = write(tmp_path, FULL)
    assert find_config(tmp_path) == path
    assert find_config(path) == path


def test_evals_yaml_lists_suites_relative_to_the_config(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\n")
    write(tmp_path, "version: 1\ncases: []\n", "evals/chinook.yaml")
    write(tmp_path, "suites: [evals/chinook.yaml]\n", "evals.yaml")
    assert load_config(path, environ={}).evals_suites == (tmp_path / "evals" / "chinook.yaml",)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("suites: evals/chinook.yaml\n", ":1: suites must be a list of suite file paths"),
        ("suites: [evals/missing.yaml]\n", ":1: suites: 'evals/missing.yaml' does not exist at"),
        ("suites:\n- evals/a.yaml\n- evals/a.yaml\n", ":3: suites: 'evals/a.yaml' is listed twice"),
        ("suites:\n- 3\n", ":2: suites: each entry must be non-empty text (got 3)"),
        ("suits: []\n", ":1: unknown key 'suits' in evals.yaml (did you mean 'suites'?)"),
    ],
)
def test_bad_evals_yaml_is_a_config_error(tmp_path: Path, text: str, fragment: str) -> None:
    path = write(tmp_path, "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\n")
    write(tmp_path, "version: 1\ncases: []\n", "evals/a.yaml")
    evals = write(tmp_path, text, "evals.yaml")
    found = problems(path)
    assert found[0].startswith(f"{evals}{fragment}"), found


# ---------------------------------------------------------------------------------------------
# role policies


@pytest.fixture
def roles(tmp_path: Path) -> dict[str, RolePolicy]:
    text = FULL.replace("${PGPASSWORD}", "pw") + ("  # extra role for column allow lists\n")
    text = text.replace(
        "routing:",
        "  clerk:\n    datasources: [chinook]\n"
        "    allow: {tables: [chinook.Customer, chinook.Invoice], columns: [chinook.Customer.Country]}\n"
        "routing:",
    )
    return load_config(write(tmp_path, text), environ={}).roles


def test_admin_star_allows_everything(roles: dict[str, RolePolicy]) -> None:
    admin = roles["admin"]
    assert admin.allows_datasource("anything")
    assert admin.allows_column("chinook", "Employee", "Salary")


def test_deny_lists(roles: dict[str, RolePolicy]) -> None:
    analyst = roles["analyst"]
    assert analyst.allows_datasource("support") and not analyst.allows_datasource("webanalytics")
    assert not analyst.allows_table("chinook", "Employee")
    assert not analyst.allows_column("chinook", "Employee", "FirstName")  # denied table's columns
    assert analyst.allows_table("chinook", "Customer")
    assert not analyst.allows_column("chinook", "Customer", "Email")
    assert analyst.allows_column("chinook", "Customer", "Country")


def test_names_are_case_insensitive(roles: dict[str, RolePolicy]) -> None:
    analyst = roles["analyst"]
    assert not analyst.allows_table("CHINOOK", "employee")
    assert not analyst.allows_column("Chinook", "CUSTOMER", "email")
    assert analyst.allows_datasource("Support")


def test_allow_list_restricts_tables(roles: dict[str, RolePolicy]) -> None:
    viewer = roles["viewer"]
    assert viewer.allows_table("chinook", "album") and viewer.allows_table("chinook", "Track")
    assert not viewer.allows_table("chinook", "Customer")
    assert not viewer.allows_datasource("support")
    assert not viewer.allows_table("support", "Album")


def test_allow_columns_restricts_only_the_tables_it_names(roles: dict[str, RolePolicy]) -> None:
    clerk = roles["clerk"]
    assert clerk.allows_column("chinook", "Customer", "Country")
    assert not clerk.allows_column("chinook", "Customer", "Email")
    assert clerk.allows_column("chinook", "Invoice", "Total")


def test_deny_beats_allow() -> None:
    policy = RolePolicy(
        name="x",
        datasources=frozenset({"db"}),
        allow_tables=frozenset({("db", "t")}),
        allow_columns=frozenset({("db", "t", "c")}),
        deny_tables=frozenset({("db", "t")}),
    )
    assert not policy.allows_table("db", "t")
    assert not policy.allows_column("db", "t", "c")
    policy = RolePolicy(
        name="y",
        allow_columns=frozenset({("db", "t", "c")}),
        deny_columns=frozenset({("db", "t", "c")}),
    )
    assert not policy.allows_column("db", "t", "c")


def test_config_role_lookup_lists_known_roles(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, FULL), environ={"PGPASSWORD": "x"})
    with pytest.raises(KeyError, match="known roles: admin, analyst, viewer"):
        config.role("auditor")


# -- test_suite: the scratch server for PostgreSQL neighbour databases ------------------------

BASE = "version: 1\ndatasources:\n  db: {url: 'sqlite:///x'}\n"


def test_test_suite_scratch_url_is_read_with_env_values_and_hidden_passwords(tmp_path: Path) -> None:
    path = write(tmp_path, BASE + "test_suite:\n  scratch_url: postgresql+psycopg://maker:${SCRATCH_PW}@db:5432/postgres\n")
    config = load_config(path, environ={"SCRATCH_PW": "s3cret"})
    assert config.test_suite.scratch_url == "postgresql+psycopg://maker:s3cret@db:5432/postgres"
    assert config.test_suite.allow_privileged_login is False
    assert "s3cret" not in repr(config.test_suite)
    assert load_config(write(tmp_path, BASE), environ={}).test_suite.scratch_url is None


def test_an_unset_variable_in_scratch_url_leaves_no_scratch_server_and_says_which(tmp_path: Path) -> None:
    from pytest_nl2sql.scoring.neighbours import from_project

    path = write(tmp_path, "version: 1\ndatasources:\n  pg: {url: 'postgresql+psycopg://r@h/db'}\n"
                           "test_suite: {scratch_url: '${NL2SQL_SCRATCH_URL}'}\n")
    config = load_config(path, environ={})  # a run without --nl2sql-test-suite must not need it
    assert config.test_suite.scratch_url is None and config.test_suite.unset_env == "NL2SQL_SCRATCH_URL"
    hood = from_project(config, 2, tmp_path / "cache")
    assert hood.of("pg") is None
    assert "NL2SQL_SCRATCH_URL, which is not set" in hood.why_not("pg")


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ("test_suite: {scratch_url: 'sqlite:///scratch.db'}\n", "test_suite.scratch_url 'sqlite:///scratch.db' is not a PostgreSQL URL"),
        ("test_suite: {scrach_url: 'postgresql://u@h/db'}\n", "unknown key 'scrach_url' in test_suite (did you mean 'scratch_url'?)"),
        ("test_suite: {scratch_url: 'postgresql://u@h/db', allow_privileged_login: maybe}\n", "allow_privileged_login"),
    ],
)
def test_a_wrong_test_suite_section_is_a_clear_problem(tmp_path: Path, section: str, expected: str) -> None:
    found = problems(write(tmp_path, BASE + section))
    assert any(expected in p for p in found), found
    assert all(":4:" in p for p in found), found
