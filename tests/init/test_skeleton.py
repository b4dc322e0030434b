"""`pytest-nl2sql init DIR` (without --demo): a project skeleton that passes at once, and the
hint pytest gives in a project's subfolder when the project has no pytest.ini."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CLI = [sys.executable, "-m", "pytest_nl2sql"]
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q"]


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_init_dir_writes_a_skeleton_that_passes_from_the_folder_and_its_subfolders(tmp_path: Path) -> None:
    made = _run([*CLI, "init", "lib"], tmp_path)
    assert made.returncode == 0, made.stderr
    root = tmp_path / "lib"
    for rel in ("nl2sql.yaml", "pytest.ini", "evals.yaml", "evals/example.yaml", "data/example.sqlite"):
        assert (root / rel).is_file(), rel
    text = (root / "nl2sql.yaml").read_text()
    assert "# warehouse:" in text and "roles:" in text and "# llm:" in text  # commented datasources and LLM
    assert _run([*CLI, "suite", "check", "evals/example.yaml"], root).returncode == 0
    for cwd in (root, root / "evals"):
        proc = _run(PYTEST, cwd)
        assert proc.returncode == 0, proc.stdout[-1500:]
        assert "2 passed" in proc.stdout  # the example case as admin (answered) and reader (refused)
    again = _run([*CLI, "init", "lib"], tmp_path)
    assert again.returncode == 0 and "kept 5 files" in again.stdout  # never overwrites


def test_a_subfolder_of_a_project_without_pytest_ini_gets_a_hint(tmp_path: Path) -> None:
    assert _run([*CLI, "init", "lib"], tmp_path).returncode == 0
    (tmp_path / "lib" / "pytest.ini").unlink()
    proc = _run(PYTEST, tmp_path / "lib" / "evals")
    assert proc.returncode == 5
    assert "nl2sql.yaml is above this folder" in proc.stdout and "add a pytest.ini beside nl2sql.yaml" in proc.stdout


def test_init_without_a_folder_names_both_forms(tmp_path: Path) -> None:
    proc = _run([*CLI, "init"], tmp_path)
    assert proc.returncode == 4
    assert "pytest-nl2sql init DIR" in proc.stderr and "pytest-nl2sql init --demo DIR" in proc.stderr
