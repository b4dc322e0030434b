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
        if VARIANT == "asks_twice" and len(history) == 3:
            return Answer(status="needs_clarification", message="And over which years?")
        if VARIANT == "asks_twice":
            assert [t["speaker"] for t in history] == ["user", "engine", "user", "engine", "user"], history
        else:
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


def test_turns_bound_how_many_questions_the_engine_may_ask(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "demo"
    shutil.copytree(project, root)
    monkeypatch.setenv("CLARIFY_VARIANT", "asks_twice")
    args = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "--nl2sql-suite", "evals/chinook.yaml",
            "--nl2sql-clarify", "--nl2sql-roles", "admin", "-k", "chinook_063", "--nl2sql-out", "r.json", "--nl2sql-save-predictions", "p.jsonl"]
    run = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=600)
    assert run.returncode == 1, run.stdout[-3000:]
    assert "the engine asked 2 questions; the case allows 1 (turns)" in run.stdout
    suite = root / "evals" / "chinook.yaml"
    text = suite.read_text()
    anchor = "- id: chinook_064\n"
    suite.write_text(text.replace(anchor, "  turns: 2\n" + anchor, 1))
    run = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:]
    (record,) = json.loads((root / "r.json").read_text())["items"]
    assert [t["speaker"] for t in record["turns"]] == ["user", "engine", "user", "engine", "user", "engine"]
    # the second question ("which years?") is about the other reading: its rows judge the answer
    assert record["clarification"]["reading"] == "spending in the latest year" and record["clarification"]["resolved"] is True
    (saved,) = [json.loads(x) for x in (root / "p.jsonl").read_text().splitlines()]
    assert saved["follow_up"]["status"] == "needs_clarification" and saved["follow_up"]["follow_up"]["sql"]
    (root / "conftest.py").unlink()  # the replay engine answers now, from the saved conversation
    replay = subprocess.run([*args[:-4], "--nl2sql-predictions", "p.jsonl", "--nl2sql-out", "replay.json"], cwd=root,
                            capture_output=True, text=True, timeout=600)
    assert replay.returncode == 0, replay.stdout[-3000:]
    assert json.loads((root / "replay.json").read_text())["items"][0]["clarification"]["resolved"] is True
