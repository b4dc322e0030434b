"""nl2sql-engine itself as the engine under test (runs where nl2sql-engine 0.7 is installed,
with its local embedding model: benchmarks/interop_nl2sql_engine.py builds such an environment;
CI has neither, so these skip there)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.engine.nl2sql_engine import installed_version

MODEL = Path.home() / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx" / "model.onnx"
pytestmark = [
    pytest.mark.skipif(installed_version() is None, reason="nl2sql-engine is not installed (Python 3.12 only; see docs/nl2sql-engine.md)"),
    pytest.mark.skipif(not MODEL.is_file(), reason="chromadb's local embedding model is absent (benchmarks/interop/minilm_onnx.py makes it)"),
]


@pytest.fixture
def indexed(engine_project: Path) -> Path:
    nl2sql = Path(sys.executable).parent / "nl2sql"
    subprocess.run([str(nl2sql if nl2sql.exists() else shutil.which("nl2sql")), "index"], cwd=engine_project.parent,
                   check=True, capture_output=True, timeout=600)
    return engine_project.parent


def _run(root: Path, *args: str) -> dict:
    out = root / "report.json"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q",
                           *args, "--nl2sql-out", str(out)], cwd=root, capture_output=True, text=True, timeout=900)
    assert out.exists(), proc.stdout + proc.stderr
    return json.loads(out.read_text())


def test_mode_plans_serves_each_cases_own_plan(indexed: Path):
    report = _run(indexed, "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-mode", "plans", "-k", "chinook_001 or chinook_008")
    verdicts = {(i["case_id"], i["role"]): (i["verdict"], i["status"]) for i in report["items"]}
    assert verdicts[("chinook_001", "admin")] == ("passed", "ok")
    assert verdicts[("chinook_001", "viewer")] == ("passed", "refused")  # its own refusal, its generic message
    assert all(v == "passed" for v, _ in verdicts.values())


def test_an_edited_plan_is_served_as_edited(indexed: Path):
    """nl2sql-engine's plan cache would serve the plan of the last run: it is off in mode plans."""
    assert _run(indexed, "--nl2sql-suite", "evals/chinook.yaml", "-k", "chinook_001 and admin")["items"][0]["verdict"] == "passed"
    suite = indexed / "evals" / "chinook.yaml"
    text = suite.read_text()
    start = text.index("- id: chinook_001")
    block = text[start:text.index("- id: chinook_002")]
    edited = block.replace("column_name: Country", "column_name: City", 1)
    assert edited != block
    suite.write_text(text.replace(block, edited))
    item = _run(indexed, "--nl2sql-suite", "evals/chinook.yaml", "-k", "chinook_001 and admin")["items"][0]
    assert item["verdict"] == "failed"


def test_mode_retrieval_routes_with_its_router(indexed: Path):
    report = _run(indexed, "--nl2sql-suite", "evals/routing.yaml", "--nl2sql-mode", "retrieval", "-k", "sample")
    assert report["items"] and all(i["route"] for i in report["items"])
    assert sum(i["verdict"] == "passed" for i in report["items"]) >= len(report["items"]) - 2
