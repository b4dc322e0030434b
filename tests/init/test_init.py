"""`pytest-nl2sql init --demo DIR`: what it writes, and that it never overwrites a file you changed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.config import load_config
from pytest_nl2sql.upkeep.init import init_demo, shipped_suites


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    init_demo(root)
    return root


def test_writes_config_evals_suites_and_databases(demo: Path) -> None:
    for rel in ("nl2sql.yaml", "evals.yaml", "evals/chinook.yaml", "evals/routing.yaml", "evals/routing.baseline.json",
                "data/chinook.sqlite", "data/support.sqlite", "data/webanalytics.sqlite"):
        assert (demo / rel).is_file(), rel
    config = load_config(demo / "nl2sql.yaml")
    assert sorted(config.datasources) == ["chinook", "support", "webanalytics"]
    assert [p.name for p in config.evals_suites] == ["chinook.yaml"]  # evals.yaml names only chinook.yaml
    assert not config.roles["viewer"].allows_table("chinook", "Customer")
    assert not config.roles["analyst"].allows_table("chinook", "Employee")
    assert config.roles["analyst"].allows_table("chinook", "Invoice")


def test_copies_are_the_shipped_suites_byte_for_byte(demo: Path) -> None:
    for suite in shipped_suites():
        assert (demo / "evals" / suite.name).read_bytes() == suite.read_bytes()


def test_a_second_init_changes_nothing(demo: Path) -> None:
    before = {p: p.read_bytes() for p in demo.rglob("*") if p.is_file() and p.suffix in (".yaml", ".json")}
    init_demo(demo)
    assert {p: p.read_bytes() for p in before} == before


def test_keeps_a_file_the_user_changed_and_refreshes_the_rest(tmp_path: Path) -> None:
    init_demo(tmp_path)
    suite = tmp_path / "evals" / "chinook.yaml"
    edited = suite.read_bytes() + b"# my note\n"
    suite.write_bytes(edited)
    (tmp_path / "evals.yaml").unlink()  # something to refresh
    written = init_demo(tmp_path)
    assert written.kept == ["evals/chinook.yaml"]
    assert suite.read_bytes() == edited  # never overwritten without force
    assert (tmp_path / "evals.yaml").is_file()  # the rest was refreshed around it
    assert init_demo(tmp_path).kept == ["evals/chinook.yaml"]  # and it stays yours
    assert init_demo(tmp_path, force=True).kept == []
    assert suite.read_bytes() != edited


def test_cli_says_which_files_it_kept_and_succeeds(tmp_path: Path) -> None:
    init_demo(tmp_path)
    (tmp_path / "nl2sql.yaml").write_text((tmp_path / "nl2sql.yaml").read_text() + "# mine\n")
    proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql.cli", "init", "--demo", str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "kept 1 file you changed: nl2sql.yaml (use --force to overwrite it)" in proc.stdout
    assert (tmp_path / "nl2sql.yaml").read_text().endswith("# mine\n")


def test_a_demo_folder_is_its_own_pytest_root_wherever_it_is_made(tmp_path: Path) -> None:
    outer = tmp_path / "checkout"
    outer.mkdir()
    (outer / "pytest.ini").write_text("[pytest]\ntestpaths = tests\n")  # like a project's own root
    demo = outer / "nl2sql-demo"
    init_demo(demo)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "--co"],
        cwd=demo, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids and all(line.startswith("evals/chinook.yaml::") for line in ids), proc.stdout[:500]
