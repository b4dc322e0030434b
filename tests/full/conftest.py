"""Fixtures for mode full at scale: a demo project whose llm is a real local OpenAI-compatible
server (tests/llm/openai_server.py), answering each question with the mini suite's plan."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.demo_fixtures import _isolated_cache, demo_dir  # noqa: F401  (shared fixtures)
from tests.llm.openai_server import OpenAITestServer
from tests.plugin.conftest import MINI_SUITE, project  # noqa: F401  (shared fixtures)

KEY = "sk-test-full-7c1d"


def _yaml12(node: Any) -> Any:
    """PyYAML reads the key ``on`` as True (YAML 1.1); the suites are YAML 1.2."""
    if isinstance(node, dict):
        return {("on" if k is True else k): _yaml12(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_yaml12(v) for v in node]
    return node


PLANS = {c["question"]: _yaml12(c["plan"]) for c in yaml.safe_load(MINI_SUITE)["cases"] if c.get("plan")}
WRONG_PLAN = {"datasource": "chinook", "from": "Genre", "select": ["Name"]}


def question_of(request: dict[str, Any]) -> str:
    text = request["messages"][-1]["content"]
    return text.rsplit("Question:", 1)[-1].strip()


class PlanServer:
    """Answers with the mini suite's plan; counts the calls in flight at once (the most seen)."""

    def __init__(self, hold_s: float = 0.0, *, flaky: bool = False) -> None:
        self.hold_s = hold_s
        self.flaky = flaky
        self.active = 0
        self.most = 0
        self.calls = 0
        self.by_question: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        question = question_of(request)
        with self._lock:
            self.active += 1
            self.calls += 1
            self.most = max(self.most, self.active)
            seen = self.by_question.get(question, 0)
            self.by_question[question] = seen + 1
        try:
            if self.hold_s:
                time.sleep(self.hold_s)
            if self.flaky and seen % 2 == 1 and question.startswith("How many tracks"):
                return WRONG_PLAN  # every other call of mini_002 answers wrong
            return PLANS.get(question, {"kind": "not_answerable", "reason": "unknown"})
        finally:
            with self._lock:
                self.active -= 1


def use_server(project: Path, base_url: str, *, max_retries: int = 0) -> None:
    cfg = project / "nl2sql.yaml"
    text = cfg.read_text()
    text = text.replace("base_url: https://api.openai.com/v1", f"base_url: {base_url}")
    text = text.replace("price_input_per_1k: 0.00015", "price_input_per_1k: 0.01")
    text = text.replace("price_output_per_1k: 0.0006", f"price_output_per_1k: 0.0\n  max_retries: {max_retries}")
    cfg.write_text(text)


@pytest.fixture
def serve(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., tuple[OpenAITestServer, PlanServer]]]:  # noqa: F811
    """Start a plan server (``serve(hold_s=..., flaky=...)``) and point the project's llm at it."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    started: list[OpenAITestServer] = []

    def start(hold_s: float = 0.0, *, flaky: bool = False, prompt_tokens: int = 1000, completion_tokens: int = 0):
        plans = PlanServer(hold_s, flaky=flaky)
        server = OpenAITestServer(plans, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens).start()
        started.append(server)
        use_server(project, server.base_url)
        return server, plans

    yield start
    for server in started:
        server.stop()


def stripped(path: Path) -> dict[str, Any]:
    """A JSON report without what differs between equal runs (times, concurrency)."""
    report = json.loads(path.read_text())
    for key in ("started", "duration_s", "workers", "concurrency"):
        report["run"].pop(key, None)
    for key in ("latency_p50_s", "latency_p95_s"):
        report["summary"].pop(key, None)
        for figures in [*(report["summary"].get("steps") or {}).values(), *(report["summary"].get("by_llm") or {}).values()]:
            figures.pop(key, None)  # the engine steps' and each LLM config's timings
    for item in report["items"]:
        item.pop("latency_s", None)
        for step in item.get("steps") or []:
            step.pop("latency_s", None)  # the engine's own timings of each step
        (item.get("llm") or {}).pop("llm_latency_s", None)
        for attempt in item.get("attempts") or []:
            attempt.pop("latency_s", None)
            (attempt.get("llm") or {}).pop("llm_latency_s", None)
    return report


FULL = ("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-mode", "full", "--nl2sql-clarify", "-p", "no:cacheprovider")
