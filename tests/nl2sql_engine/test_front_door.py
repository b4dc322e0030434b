"""`pytest` in an nl2sql-engine project, as its users run it: no translation of any file."""

from __future__ import annotations

import json
import os
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


def test_its_suites_run_on_the_reference_engine_unchanged(engine_project: Path, tmp_path: Path):
    """--nl2sql-engine reference: its PlanModel plans, its policies, its suite, no nl2sql-engine."""
    proc = _pytest(engine_project.parent, "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-engine", "reference",
                   "--nl2sql-out", str(tmp_path / "r.json"), "-n", "2")
    report = json.loads((tmp_path / "r.json").read_text())
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert len(report["items"]) == 141 and {i["verdict"] for i in report["items"]} == {"passed"}
    refused = [i for i in report["items"] if i["expected"] == "refused"]
    assert refused and {i["status"] for i in refused} == {"refused"}


def test_suite_check_reports_no_plan_error_on_its_suites(engine_project: Path):
    root = engine_project.parent
    proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql", "suite", "check", "--config", "nl2sql.yaml",
                           "evals/chinook.yaml", "evals/routing.yaml"], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "evals/chinook.yaml: ok (47 cases" in proc.stdout
    assert "evals/routing.yaml: ok (78 cases" in proc.stdout


def test_an_engine_without_a_plan_validator_takes_any_mapping(tmp_path: Path):
    """Plans are the engine's data: with an engine of its own that brings no validate_plan,
    suite check accepts any mapping as a plan."""
    (tmp_path / "my_engine.py").write_text(
        "class Engine:\n    def __init__(self, project): pass\n"
        "    def route(self, q, r): pass\n    def answer(self, q, r, llm): pass\n"
    )
    (tmp_path / "db.sqlite").write_bytes(b"")
    (tmp_path / "nl2sql.yaml").write_text("version: 1\nengine: my_engine:Engine\ndatasources:\n  db: {url: 'sqlite:///db.sqlite'}\n")
    (tmp_path / "s.yaml").write_text(
        "version: 1\ncases:\n- id: c1\n  question: q?\n  datasources: [db]\n  status: approved\n  origin: hand\n"
        "  outcome: {admin: unanswerable}\n  sql: null\n  plan: {prompt_template: 7, steps: [a, b]}\n"
    )
    env_path = {"PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql", "suite", "check", "--config", "nl2sql.yaml", "s.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, env={**os.environ, **env_path})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (tmp_path / "my_engine.py").write_text(
        (tmp_path / "my_engine.py").read_text()
        + "    @staticmethod\n    def validate_plan(plan):\n        return [] if 'steps' in plan else ['plan: no steps']\n"
    )
    (tmp_path / "s.yaml").write_text((tmp_path / "s.yaml").read_text().replace("steps: [a, b]", "stages: [a]"))
    proc = subprocess.run([sys.executable, "-m", "pytest_nl2sql", "suite", "check", "--config", "nl2sql.yaml", "s.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, env={**os.environ, **env_path})
    assert proc.returncode == 1
    assert "s.yaml:10:9: case 'c1': plan: no steps" in proc.stdout + proc.stderr
