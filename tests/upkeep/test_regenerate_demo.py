"""Regenerate on a copy of the demo: only the edited case's rows change, broken cases are listed."""

from __future__ import annotations

import difflib
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.upkeep.init import init_demo


@pytest.fixture
def project(tmp_path: Path) -> Path:
    init_demo(tmp_path)
    return tmp_path


def _regenerate(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_nl2sql.cli", "eval", "regenerate", "evals/chinook.yaml", *args],
        cwd=project,
        capture_output=True,
        text=True,
    )


def _data_digest(project: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((project / "data").glob("*.sqlite"))}


def test_only_the_edited_case_rows_change_and_a_broken_case_is_listed(project: Path) -> None:
    suite_path = project / "evals" / "chinook.yaml"
    before = suite_path.read_text()
    suite = load_suite(suite_path)
    edited = next(c for c in suite.cases if c.id == "chinook_001")
    broken = next(c for c in suite.cases if c.id == "chinook_002")
    assert "\nFROM Customer\n" in edited.sql
    lines = before.splitlines(keepends=True)
    start = lines.index("- id: chinook_001\n")
    at = lines.index("    FROM Customer\n", start)  # the edit: keep only the customers of one country
    lines[at] = "    FROM Customer WHERE Country = 'Brazil'\n"
    text = "".join(lines)
    assert f"sql: {broken.sql}" in text
    text = text.replace(f"sql: {broken.sql}", f"sql: {broken.sql.replace('SELECT', 'SELEC', 1)}", 1)
    suite_path.write_text(text)
    data_before = _data_digest(project)

    result = _regenerate(project)

    assert result.returncode == 1  # a case failed
    assert "regenerated 1 cases" in result.stdout
    assert "failed: case 'chinook_002': sql failed:" in result.stdout
    after = suite_path.read_text()
    changed = [
        line
        for line in difflib.unified_diff(text.splitlines(), after.splitlines(), lineterm="", n=0)
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]
    assert changed, "the edited case's rows changed"
    # every changed line is a row of chinook_001, which lies between its "- id:" and the next case
    lines = after.splitlines()
    start = lines.index("- id: chinook_001")
    end = lines.index("- id: chinook_002")
    case_block = set(lines[start:end]) | set(text.splitlines()[start : text.splitlines().index("- id: chinook_002")])
    assert all(line[1:] in case_block and line[1:].lstrip().startswith("- {") for line in changed)
    assert all("Brazil" in line for line in changed if line.startswith("+"))
    assert _data_digest(project) == data_before  # the datasource was not written


def test_regenerate_leaves_an_up_to_date_suite_byte_identical(project: Path) -> None:
    suite_path = project / "evals" / "chinook.yaml"
    before = suite_path.read_bytes()
    result = _regenerate(project)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "regenerated 0 cases" in result.stdout
    assert suite_path.read_bytes() == before


def test_a_packaged_suite_is_refused_without_the_flag(project: Path) -> None:
    from pytest_nl2sql.upkeep.init import shipped_suites

    shipped = next(p for p in shipped_suites() if p.name == "chinook.yaml")
    copy = project / "shipped-copy.yaml"
    shutil.copy(shipped, copy)
    result = subprocess.run(
        [sys.executable, "-m", "pytest_nl2sql.cli", "eval", "regenerate", str(shipped), "--config", str(project / "nl2sql.yaml")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "a suite the package ships is not yours to rewrite" in result.stderr
    assert shipped.read_bytes() == copy.read_bytes()


def test_a_result_with_a_repeated_column_name_is_refused_not_squashed(tmp_path: Path) -> None:
    import sqlite3

    from pytest_nl2sql.config import load_config
    from pytest_nl2sql.datasources import DatasourceRegistry
    from pytest_nl2sql.upkeep.regenerate import regenerate

    con = sqlite3.connect(tmp_path / "db.sqlite")
    con.execute("CREATE TABLE a (id INTEGER, name TEXT)")
    con.execute("INSERT INTO a VALUES (1, 'x')")
    con.commit()
    con.close()
    (tmp_path / "nl2sql.yaml").write_text("version: 1\ndatasources:\n  db: {url: 'sqlite:///db.sqlite'}\n")
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "version: 1\ncases:\n- id: c1\n  question: Which names?\n  datasources: [db]\n  status: approved\n"
        "  outcome: {admin: allowed}\n  sql: SELECT name, name FROM a\n"
    )
    before = suite.read_bytes()
    with DatasourceRegistry.from_config(load_config(tmp_path / "nl2sql.yaml")) as registry:
        report = regenerate(suite, registry)
    assert report.failed == (("c1", "sql: the result names column 'name' twice (give each column its own alias)"),)
    assert suite.read_bytes() == before
