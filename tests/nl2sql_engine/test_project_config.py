"""An nl2sql-engine project (nl2sql.yaml version 2) is read as nl2sql-engine reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_nl2sql.config import ENGINE_NL2SQL, ConfigError, load_config


def test_the_demo_project_reads_unchanged(engine_project: Path):
    config = load_config(engine_project)
    root = engine_project.parent
    assert config.source == "nl2sql-engine"
    assert config.engine == ENGINE_NL2SQL
    assert sorted(config.datasources) == ["chinook", "support", "webanalytics"]
    chinook = config.datasources["chinook"]
    assert chinook.url == f"sqlite:///{root / 'data' / 'chinook.sqlite'}"
    assert chinook.row_limit == 10000
    assert chinook.sample_questions[0] == "How many customers do we have, by country?"
    assert config.evals_suites == (root / "evals" / "chinook.yaml",)
    assert sorted(config.roles) == ["admin", "analyst", "viewer"]
    assert config.match_defaults["column_order"] == "strict"


def test_roles_follow_its_allow_and_deny_patterns(engine_project: Path):
    roles = load_config(engine_project).roles
    admin, analyst, viewer = roles["admin"], roles["analyst"], roles["viewer"]
    assert admin.allows_table("chinook", "Employee") and not admin.restricts("chinook")
    # analyst: allow [chinook, support, webanalytics], deny chinook.main.Employee, support.main.agents
    assert analyst.allows_table("chinook", "Invoice") and analyst.allows_table("chinook", "main.Invoice")
    assert not analyst.allows_table("chinook", "employee")  # patterns ignore case
    assert not analyst.allows_column("support", "AGENTS", "name")
    assert analyst.restricts("chinook") and not analyst.restricts("webanalytics")
    # viewer: an allow list of tables only
    assert viewer.allows_table("chinook", "Album") and not viewer.allows_table("chinook", "Customer")
    assert not viewer.allows_datasource("support")
    assert ("chinook", "playlisttrack") in viewer.named_tables()


def _write(root: Path, name: str, text: str) -> None:
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)


def test_globs_and_a_whole_datasource_deny(tmp_path: Path):
    _write(tmp_path, "nl2sql.yaml", "version: 2\ndatasources: {file: ds/}\npolicies: {file: p.yaml}\n")
    _write(tmp_path, "ds/shop.yaml", "type: sqlite\nconnection: {database: shop.sqlite}\n")
    _write(tmp_path, "ds/hr.yaml", "type: sqlite\nconnection: {database: hr.sqlite}\n")
    _write(tmp_path, "p.yaml", (
        "roles:\n"
        "  clerk: {description: c, allow: ['sh*.main.order*', 'hr'], deny: ['hr']}\n"
        "  auditor: {description: a, allow: ['*'], deny: ['*.main.salar?']}\n"
    ))
    roles = load_config(tmp_path / "nl2sql.yaml").roles
    clerk, auditor = roles["clerk"], roles["auditor"]
    assert clerk.allows_table("shop", "orders") and clerk.allows_table("shop", "order_lines")
    assert not clerk.allows_table("shop", "customers")
    assert not clerk.allows_datasource("hr")  # a deny of the whole datasource closes it
    assert auditor.allows_table("hr", "people") and not auditor.allows_table("hr", "Salary")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: nowhere/}\n"}, "the folder nowhere/ does not exist"),
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: ds/}\nllm: {file: llm.yaml}\n", "ds/a.yaml": "type: sqlite\nconnection: {database: a.sqlite}\n"},
         "llm.file: llm.yaml does not exist"),
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: ds/}\nsetings: {}\n", "ds/a.yaml": "type: sqlite\nconnection: {database: a.sqlite}\n"},
         "unknown key 'setings'"),
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: ds/}\n", "ds/a.yaml": "id: b\ntype: sqlite\nconnection: {database: a.sqlite}\n"},
         "id 'b' must equal the file name, 'a'"),
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: ds/}\n", "ds/a.yaml": "type: mysql\nconnection: {host: h}\n"},
         "type 'mysql': pytest-nl2sql opens"),
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: ds/}\n", "ds/a.yaml": "type: postgres\nconnection: {host: h, database: d, user: u, password: '${env:NO_SUCH_VAR_XYZ}'}\n"},
         "environment variable NO_SUCH_VAR_XYZ is not set"),
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: ds/}\n", "ds/a.yaml": "type: postgres\nconnection: {host: h, database: d, user: u, password: '${aws:db/pw}'}\n"},
         "${aws:...} is read by nl2sql-engine's secret provider 'aws', not by pytest-nl2sql"),
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: ds/}\npolicies: {roles: {r: {description: x, allow: [a.Orders]}}}\n",
          "ds/a.yaml": "type: sqlite\nconnection: {database: a.sqlite}\n"},
         "'a.Orders' has two parts: write 'a.<schema>.Orders'"),
        ({"nl2sql.yaml": "version: 2\ndatasources: {file: ds/}\npolicies: {roles: {r: {description: x, allow: [chinok]}}}\n",
          "ds/chinook.yaml": "type: sqlite\nconnection: {database: a.sqlite}\n"},
         "'chinok' names no datasource (did you mean 'chinook'?)"),
    ],
)
def test_each_problem_names_its_file_and_the_fix(tmp_path: Path, files: dict[str, str], expected: str):
    for name, text in files.items():
        _write(tmp_path, name, text)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nl2sql.yaml")
    assert expected in str(info.value)
    assert all(line.startswith(str(tmp_path)) for line in info.value.problems)


def test_postgres_connection_becomes_a_url_with_its_password_hidden(tmp_path: Path):
    _write(tmp_path, "nl2sql.yaml", "version: 2\ndatasources:\n- id: sales\n  type: postgres\n"
           "  connection: {host: db.internal, port: 5433, database: sales, user: reader, password: '${env:PGPW}', sslmode: require}\n"
           "  limits: {row_limit: 500, timeout_ms: 2500}\n")
    config = load_config(tmp_path / "nl2sql.yaml", environ={"PGPW": "s3cret"})
    ds = config.datasources["sales"]
    assert ds.url == "postgresql+psycopg://reader:s3cret@db.internal:5433/sales?sslmode=require"
    assert "s3cret" not in repr(ds) and "s3cret" not in ds.redacted_url
    assert (ds.row_limit, ds.timeout_s) == (500, 2.5)


def test_version_3_names_both_formats(tmp_path: Path):
    _write(tmp_path, "nl2sql.yaml", "version: 3\ndatasources: {}\n")
    with pytest.raises(ConfigError, match="version: 2 for nl2sql-engine's project"):
        load_config(tmp_path / "nl2sql.yaml")
