"""Third-party engines in a demo project (pytest_nl2sql_make_engine in its conftest.py): one that
answers a clarify case without asking, one that asks about the wrong thing, one that answers the
clarified question wrongly -- each fails the item saying which -- and one without the
conversation method, whose clarification is reported as not checked."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CONFTEST = '''
import os

from pytest_nl2sql.engine.protocol import Answer
from pytest_nl2sql.engine.reference import ReferenceEngine

VARIANT = os.environ["CLARIFY_VARIANT"]
WRONG = Answer(status="ok", sql="SELECT 1 AS x", columns=("x",), rows=[(1,)], datasources=("chinook",))


class Asks:
    """Delegates to the reference engine, but misbehaves as CLARIFY_VARIANT says."""

    def __init__(self, project):
        self.inner = ReferenceEngine(project)
        self.refusal_message = self.inner.refusal_message

    def route(self, question, role):
        return self.inner.route(question, role)

    def answer(self, question, role, llm):
        first = self.inner.answer(question, role, llm)
        if first.status != "needs_clarification":
            return first
        if VARIANT == "no_question":
            return WRONG
        if VARIANT == "wrong_question":
            return Answer(status="needs_clarification", message="Should the amounts include taxes?")
        return first

    def follow_up(self, question, role, llm, history):
        assert [t["speaker"] for t in history] == ["user", "engine", "user"], history
        if VARIANT == "wrong_answer":
            return WRONG
        return self.inner.follow_up(question, role, llm, history)


class NoFollowUp:
    def __init__(self, project):
        self.inner = ReferenceEngine(project)

    def route(self, question, role):
        return self.inner.route(question, role)

    def answer(self, question, role, llm):
        return self.inner.answer(question, role, llm)


def pytest_nl2sql_make_engine(config, project):
    return NoFollowUp(project) if VARIANT == "no_follow_up" else Asks(project)
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, demo_dir: Path) -> Path:  # noqa: F811
    root = tmp_path_factory.mktemp("engines") / "demo"
    shutil.copytree(demo_dir, root)
    (root / "conftest.py").write_text(CONFTEST)
    return root


@pytest.mark.parametrize(
    ("variant", "code", "said", "flags"),
    [
        ("asks_right", 0, "resolved: reading 'total spending'", {"asked": True, "recognised": True, "resolved": True}),
        ("no_question", 1, "without asking which reading is meant ('total spending', 'spending in the latest year')", {"asked": False}),
        ("wrong_question", 1, "asked about something else: 'Should the amounts include taxes?' matches no reading", {"asked": True, "recognised": False}),
        ("wrong_answer", 1, "(reading 'total spending') the answer is wrong", {"recognised": True, "resolved": False}),
        ("no_follow_up", 0, "not checked: the engine has no follow_up method", {"asked": True, "checked": False}),
    ],
)
def test_an_engine_is_judged_on_its_conversation(project: Path, monkeypatch: pytest.MonkeyPatch, variant: str, code: int, said: str, flags: dict) -> None:
    monkeypatch.setenv("CLARIFY_VARIANT", variant)
    out = f"{variant}.json"
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "--nl2sql-suite", "evals/chinook.yaml",
         "--nl2sql-clarify", "--nl2sql-roles", "admin", "-k", "chinook_063", "--nl2sql-out", out],
        cwd=project, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == code, run.stdout[-3000:]
    (record,) = json.loads((project / out).read_text())["items"]
    assert said in record["scores"]["clarification"]["detail"]
    for key, value in flags.items():
        assert record["clarification"][key] is value, (key, record["clarification"])
    if code:
        assert said.split("(")[0].strip() in run.stdout  # the failure says which
    if variant == "no_follow_up":
        assert record["verdict"] == "passed" and record["scores"]["clarification"]["passed"] is None
        assert "1 not checked (the engine has no follow_up)" in run.stdout
