"""Mode full: the reference engine's LLM (a real OpenAI-compatible HTTP server on 127.0.0.1)
sees the conversation -- the question, what it asked, what the user replied -- and plans the
clarified question. The response cache keys on the whole conversation; concurrency and repeats
work for conversations as for single answers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.full.conftest import KEY, use_server
from tests.llm.openai_server import OpenAITestServer

CASES = ("chinook_062", "chinook_064")


class ConversationServer:
    """Asks back on an ambiguous question; after the reply, plans the reading the reply names."""

    def __init__(self, suite: Path) -> None:
        cases = {c["id"]: c for c in yaml.safe_load(suite.read_text())["cases"]}
        self.first = {cases[c]["question"]: cases[c]["plan"] for c in CASES}
        self.readings = [(r["reply"], r["plan"]) for c in CASES for r in cases[c]["clarifications"]]
        self.calls = 0
        self.conversations: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        text = request["messages"][-1]["content"]
        with self._lock:
            self.calls += 1
        if "Conversation so far:" in text:
            said = text.split("Conversation so far:", 1)[1]
            with self._lock:
                self.conversations.append(said)
            for reply, plan in self.readings:
                if f"User replied: {reply}" in said:
                    return plan
            return {"kind": "not_answerable", "reason": "no such reading"}
        question = text.rsplit("Question:", 1)[1].strip()
        return self.first.get(question, {"kind": "not_answerable", "reason": "not in this test"})


def _plain(plan: Any) -> Any:  # PyYAML 1.1 reads the key `on` as True
    if isinstance(plan, dict):
        return {("on" if k is True else k): _plain(v) for k, v in plan.items()}
    if isinstance(plan, list):
        return [_plain(v) for v in plan]
    return plan


@pytest.fixture
def project(tmp_path: Path, demo_dir: Path, monkeypatch: pytest.MonkeyPatch):  # noqa: F811
    root = tmp_path / "demo"
    shutil.copytree(demo_dir, root)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = ConversationServer(root / "evals" / "chinook.yaml")
    server.first = _plain(server.first)
    server.readings = [(r, _plain(p)) for r, p in server.readings]
    http = OpenAITestServer(server).start()
    use_server(root, http.base_url)
    yield root, server
    http.stop()


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "--nl2sql-suite", "evals/chinook.yaml",
         "--nl2sql-mode", "full", "--nl2sql-clarify", "-k", " or ".join(CASES), *args],
        cwd=root, capture_output=True, text=True, timeout=600,
    )


def test_the_llm_sees_the_conversation_and_the_cache_keys_on_it(project: tuple[Path, ConversationServer]) -> None:
    root, server = project
    first = _run(root, "--nl2sql-cache", "--nl2sql-concurrency", "4", "--nl2sql-repeat", "2", "--nl2sql-out", "a.json")
    assert first.returncode == 0, first.stdout[-3000:]
    assert server.calls == 2 * 6 * 2  # 2 cases x 3 roles, two turns each, two attempts
    assert all("You asked:" in c and "User replied:" in c for c in server.conversations)
    summary = json.loads((root / "a.json").read_text())["summary"]
    assert summary["clarification"] == {"needed": 6, "asked": 6, "recognised": 6, "resolved": 6, "unnecessary": 0, "not_checked": 0}
    # each attempt is its own entry: 12 conversations of two calls, all cached
    assert summary["cache_misses"] == 24 and summary["llm_calls"] == 24
    again = _run(root, "--nl2sql-cache", "--nl2sql-repeat", "2", "--nl2sql-out", "b.json")
    assert again.returncode == 0, again.stdout[-3000:]
    assert server.calls == 24, "the rerun asked the server"
    b = json.loads((root / "b.json").read_text())
    assert b["summary"]["cache_hits"] == 24 and b["summary"]["clarification"]["resolved"] == 6
    items = {r["nodeid"]: r for r in b["items"]}
    record = items["evals/chinook.yaml::chinook_062[viewer]"]
    assert record["turns"][2]["reading"] == "per year" and record["turns"][3]["status"] == "ok"
