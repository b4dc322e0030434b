"""Issue 24 through the front doors, in a demo project: the Chinook run with --nl2sql-clarify
resolves every clarify item; its saved conversations replay; and the saved conversations,
changed into (a) a direct answer, (b) an unrelated question, (c) a wrong follow_up and (d) a
question on an allowed case, are each judged as the issue says."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q"]
SUITE = ["--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-clarify"]
CLARIFY_CASES = ("chinook_062", "chinook_063", "chinook_064")


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PYTEST, *SUITE, *args], cwd=root, capture_output=True, text=True, timeout=600)


def _items(path: Path) -> dict[str, dict[str, Any]]:
    return {r["nodeid"].split("::")[1]: r for r in json.loads(path.read_text())["items"]}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Path:  # noqa: F811
    """The demo's run with --nl2sql-clarify, its report and its saved predictions."""
    root = tmp_path_factory.mktemp("clarify") / "demo"
    shutil.copytree(demo_dir, root)
    run = _run(root, "--nl2sql-out", "r.json", "--nl2sql-save-predictions", "preds.jsonl", "--junitxml", "j.xml")
    assert run.returncode == 0, run.stdout[-3000:]
    (root / "stdout.txt").write_text(run.stdout)
    return root


def test_the_demo_run_resolves_every_clarify_item(saved: Path) -> None:
    report = json.loads((saved / "r.json").read_text())
    c = report["summary"]["clarification"]
    assert c["needed"] == 9 and c["resolved"] == c["needed"] and c["unnecessary"] == 0
    assert c["asked"] == c["recognised"] == 9 and c["not_checked"] == 0
    items = _items(saved / "r.json")
    for case in CLARIFY_CASES:
        for role in ("admin", "analyst", "viewer"):
            record = items[f"{case}[{role}]"]
            assert record["verdict"] == "passed"
            assert record["scores"]["clarification"]["passed"] is True
            turns = record["turns"]
            assert [t["speaker"] for t in turns] == ["user", "engine", "user", "engine"]
            assert turns[1]["status"] == "needs_clarification" and turns[3]["status"] == "ok" and turns[3]["sql"]
            assert turns[2]["reading"] == record["clarification"]["reading"]
    assert "clarification: 9 needed, 9 asked, 9 recognised, 9 resolved; 0 unnecessary" in (saved / "stdout.txt").read_text()
    junit = (saved / "j.xml").read_text()
    assert '<property name="nl2sql_clarification_resolved" value="9"' in junit
    lines = [json.loads(x) for x in (saved / "preds.jsonl").read_text().splitlines()]
    asked = [p for p in lines if p["id"] in CLARIFY_CASES]
    assert len(asked) == 9 and all(p["status"] == "needs_clarification" and p["message"] and p["follow_up"]["sql"] for p in asked)


def test_the_saved_conversations_replay_to_the_same_verdicts(saved: Path, tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(saved, root)
    replay = _run(root, "--nl2sql-predictions", "preds.jsonl", "--nl2sql-out", "replay.json")
    assert replay.returncode == 0, replay.stdout[-3000:]
    first, again = _items(root / "r.json"), _items(root / "replay.json")
    assert {k: r["verdict"] for k, r in again.items()} == {k: r["verdict"] for k, r in first.items()}
    assert json.loads((root / "replay.json").read_text())["summary"]["clarification"] == json.loads((root / "r.json").read_text())["summary"]["clarification"]


def test_changed_conversations_are_judged(saved: Path, tmp_path: Path) -> None:
    root = tmp_path / "demo"
    shutil.copytree(saved, root)
    lines = [json.loads(x) for x in (root / "preds.jsonl").read_text().splitlines()]
    for p in lines:
        if p["id"] == "chinook_062":  # (a) a direct answer, without a question
            p.update(sql=p["follow_up"]["sql"], status="ok")
            for key in ("follow_up", "message"):
                p.pop(key)
        elif p["id"] == "chinook_063":  # (b) a question about something unrelated (063 has no default)
            p["message"] = "Should the amounts include taxes?"
        elif p["id"] == "chinook_064":  # (c) a wrong follow_up
            p["follow_up"] = {"sql": "SELECT Name AS track FROM Track WHERE TrackId = 1"}
        elif p["id"] == "chinook_001" and p["role"] in ("admin", "analyst"):  # (d) a question on an allowed case
            p.update(sql=None, status="needs_clarification", message="By country, or by city?")
    (root / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in lines))
    replay = _run(root, "--nl2sql-predictions", "preds.jsonl", "--nl2sql-out", "changed.json")
    assert replay.returncode == 1
    items = _items(root / "changed.json")
    c = json.loads((root / "changed.json").read_text())["summary"]["clarification"]
    assert c == {"needed": 9, "asked": 6, "recognised": 3, "resolved": 0, "unnecessary": 2, "not_checked": 0}
    for role in ("admin", "analyst", "viewer"):
        a, b, cc = items[f"chinook_062[{role}]"], items[f"chinook_063[{role}]"], items[f"chinook_064[{role}]"]
        assert a["verdict"] == b["verdict"] == cc["verdict"] == "failed"
        assert "without asking which reading is meant" in a["scores"]["clarification"]["detail"]
        assert "asked about something else" in b["scores"]["clarification"]["detail"]
        assert b["clarification"]["recognised"] is False
        assert "the answer is wrong" in cc["scores"]["clarification"]["detail"]
        assert cc["clarification"]["recognised"] is True and cc["clarification"]["resolved"] is False
    for role in ("admin", "analyst"):
        d = items[f"chinook_001[{role}]"]
        assert d["verdict"] == "failed" and d["clarification"]["unnecessary"] is True
        assert "unnecessary clarification" in d["scores"]["clarification"]["detail"]
    assert items["chinook_001[viewer]"]["verdict"] == "passed"
    assert "clarification: without asking" not in replay.stdout  # the reason is the scorer's own words
    assert "chinook_062[admin]" in replay.stdout and "without asking which reading is meant" in replay.stdout


def test_a_question_about_something_else_gets_the_default_reading(saved: Path, tmp_path: Path) -> None:
    """chinook_062 has `default: all-time total`: an unrelated question gets "No preference", and
    the answer after it is judged against the default reading's rows."""
    root = tmp_path / "demo"
    shutil.copytree(saved, root)
    lines = [json.loads(x) for x in (root / "preds.jsonl").read_text().splitlines()]
    for p in lines:
        if p["id"] == "chinook_062":
            p["message"] = "Should the amounts include taxes?"
            p["follow_up"] = {"sql": "SELECT ROUND(SUM(Total), 2) AS sales FROM Invoice"}
    (root / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in lines))
    replay = _run(root, "--nl2sql-predictions", "preds.jsonl", "--nl2sql-out", "d.json", "-k", "chinook_062")
    assert replay.returncode == 0, replay.stdout[-3000:]
    items = _items(root / "d.json")
    for role in ("admin", "analyst", "viewer"):
        record = items[f"chinook_062[{role}]"]
        assert record["clarification"]["recognised"] is False and record["clarification"]["resolved"] is True
        assert record["clarification"]["reading"] == "all-time total"
        assert record["turns"][2] == {"speaker": "user", "text": "No preference - whichever you think is most usual.",
                                      "reading": "all-time total", "recognised": False}
