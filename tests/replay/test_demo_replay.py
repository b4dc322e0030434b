"""A run's saved predictions replay to the same verdicts, item for item: the demo's Chinook
suite (answers with SQL, refusals, not answerable, clarify) saved, then replayed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.demo_fixtures import _isolated_cache, demo_dir  # noqa: F401  (shared fixtures)

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q"]
SUITE = ["--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-clarify"]


def test_the_demo_saved_and_replayed_gives_the_same_verdicts(tmp_path: Path, demo_dir: Path) -> None:  # noqa: F811
    root = tmp_path / "demo"
    shutil.copytree(demo_dir, root)
    first = subprocess.run([*PYTEST, *SUITE, "--nl2sql-save-predictions", "preds.jsonl", "--nl2sql-out", "run.json"],
                           cwd=root, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stdout[-2000:]
    lines = [json.loads(x) for x in (root / "preds.jsonl").read_text().splitlines()]
    statuses = {p.get("status") for p in lines if p["sql"] is None}
    assert {"not_answerable", "needs_clarification", "refused"} <= statuses
    replay = subprocess.run([*PYTEST, *SUITE, "--nl2sql-predictions", "preds.jsonl", "--nl2sql-out", "replay.json"],
                            cwd=root, capture_output=True, text=True, timeout=600)
    assert replay.returncode == 0, replay.stdout[-3000:]
    run = {r["nodeid"]: r["verdict"] for r in json.loads((root / "run.json").read_text())["items"]}
    again = {r["nodeid"]: r["verdict"] for r in json.loads((root / "replay.json").read_text())["items"]}
    assert len(run) >= 192
    assert again == run
    assert f"{len(run)} passed" in replay.stdout or "passed" in replay.stdout
