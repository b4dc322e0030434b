"""`pytest` in an nl2sql-engine project, as its users run it: no translation of any file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.engine.nl2sql_engine import installed_version

NO_ENGINE = pytest.mark.skipif(installed_version() is not None, reason="nl2sql-engine is installed here")


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
        cwd=project, capture_output=True, text=True, timeout=600,
    )


@NO_ENGINE
def test_without_nl2sql_engine_the_run_says_how_to_get_it(engine_project: Path):
    proc = _pytest(engine_project.parent, "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-mode", "plans")
    assert proc.returncode == 4, proc.stdout + proc.stderr  # a usage error, not 129 failures
    assert "nl2sql-engine, which is not installed" in proc.stderr
    assert "pip install 'nl2sql-engine>=0.7,<0.8'" in proc.stderr
    assert "--nl2sql-engine reference" in proc.stderr


def _predictions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_its_roles_hold_and_its_column_order_rule_decides(engine_project: Path, tmp_path: Path):
    """Replayed SQL in the project: the viewer's refusal comes from its policies.yaml, and an
    answer with the gold's columns swapped fails (nl2sql-engine's result_match keeps the
    gold's column order) -- unless the suite says column_order: any."""
    root = engine_project.parent
    preds = _predictions(tmp_path / "p.jsonl", [
        {"id": "chinook_001", "sql": "SELECT COUNT(CustomerId) AS n, Country FROM Customer GROUP BY Country"},
    ])
    proc = _pytest(root, "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-predictions", str(preds),
                   "-k", "chinook_001", "-rA", "--nl2sql-out", str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    verdicts = {r["role"]: r for r in report["items"]}
    # refused by its policies.yaml: the viewer may not read Customer
    assert (verdicts["viewer"]["verdict"], verdicts["viewer"]["status"]) == ("passed", "refused"), proc.stdout
    assert verdicts["admin"]["verdict"] == "failed"
    assert "column_order is strict" in verdicts["admin"]["scores"]["result_match"]["detail"]

    suite = root / "evals" / "chinook.yaml"
    suite.write_text(suite.read_text().replace("version: 1\n", "version: 1\nmatch: {column_order: any}\n", 1))
    proc = _pytest(root, "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-predictions", str(preds),
                   "-k", "chinook_001", "--nl2sql-out", str(tmp_path / "r2.json"))
    report = json.loads((tmp_path / "r2.json").read_text())
    assert [r["verdict"] for r in report["items"]] == ["passed"] * 3, proc.stdout
