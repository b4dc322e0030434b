"""docs/engine.md: the third-party engine plugged in both documented ways, and the Python
snippet on a fresh demo."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_nl2sql.engine.validator import REFUSAL_MESSAGE
from pytest_nl2sql.upkeep.init import init_demo

from .blocks import named_block


def test_the_third_party_engine_runs_from_a_conftest_in_mode_plans_and_retrieval(
    pytester: pytest.Pytester, shop_project: Path
) -> None:
    (shop_project / "conftest.py").write_text(named_block("engine.md", "conftest.py"))
    result = pytester.runpytest_subprocess("--nl2sql-suite", "shop.yaml", "-p", "no:cacheprovider", "--nl2sql-out", "plans.json")
    result.assert_outcomes(passed=4)
    report = json.loads((shop_project / "plans.json").read_text())
    by_id = {i["nodeid"]: i for i in report["items"]}
    assert by_id["shop.yaml::shop_001[clerk]"]["scores"]["result_match"]["passed"] is True
    assert by_id["shop.yaml::shop_001[guest]"]["status"] == "refused"
    assert by_id["shop.yaml::shop_003[clerk]"]["status"] == "not_answerable"

    result = pytester.runpytest_subprocess("--nl2sql-suite", "shop.yaml", "--nl2sql-mode", "retrieval", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*routing accuracy*100.0%*(4/4*"])


def test_the_third_party_engine_is_really_scored(pytester: pytest.Pytester, shop_project: Path) -> None:
    """A wrong expectation fails: the example is judged, not just called."""
    (shop_project / "conftest.py").write_text(named_block("engine.md", "conftest.py"))
    suite = shop_project / "shop.yaml"
    suite.write_text(suite.read_text().replace("- {n: 3}", "- {n: 4}"))
    result = pytester.runpytest_subprocess("--nl2sql-suite", "shop.yaml", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*case 'shop_001' as clerk (plans mode)", "  FAILED result_match: rows differ"])


def test_the_third_party_engine_runs_from_nl2sql_yaml(pytester: pytest.Pytester, shop_project: Path) -> None:
    (shop_project / "nl2sql.yaml").write_text(named_block("engine.md", "nl2sql.yaml"))
    (shop_project / "evals.yaml").write_text("suites: [shop.yaml]\n")
    (shop_project / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")  # plain pytest, in the project
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["nl2sql: shop.yaml 3 approved cases x 2 roles = 4 items*"])


def test_the_python_snippet_answers_and_refuses_on_a_fresh_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    init_demo(tmp_path)
    monkeypatch.chdir(tmp_path)
    snippet = named_block("engine.md", "ask_demo.py")
    namespace: dict = {}
    exec(compile(snippet, "docs/engine.md:ask_demo.py", "exec"), namespace)
    answer, refusal = namespace["answer"], namespace["refusal"]
    assert answer.status == "ok"
    assert list(answer.rows[:3]) == [("USA", 13), ("Canada", 8), ("Brazil", 5)]
    assert refusal.status == "refused" and refusal.message == REFUSAL_MESSAGE
    assert refusal.rows is None and refusal.sql is None
    printed = capsys.readouterr().out.splitlines()
    # the comments in the snippet say what it prints
    assert printed == [
        "ok [('USA', 13), ('Canada', 8), ('Brazil', 5)]",
        f"refused {REFUSAL_MESSAGE}",
    ]
    assert namespace["engine"].route("Which support tickets are still open?", "admin").top == "support"


def test_the_readme_python_snippet_runs_on_the_demo(
    demo_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """README.md's Python example (the block that calls Engine.from_config), when it has one."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    snippets = [b for b in re.findall(r"```python\n(.*?)```", readme, flags=re.S) if "Engine.from_config" in b]
    if not snippets:
        pytest.skip("README.md has no Python snippet with Engine.from_config yet")
    monkeypatch.chdir(demo_dir)
    exec(compile(snippets[0], "README.md", "exec"), {})
    out = capsys.readouterr().out
    # every "# <what it prints>" comment on a print(...) line is what that line printed
    promised = [line.split("#", 1)[1].strip() for line in snippets[0].splitlines() if line.startswith("print(") and "#" in line]
    assert promised and out.splitlines() == promised


def test_the_asking_engine_asks_and_continues(pytester: pytest.Pytester, shop_project: Path) -> None:
    """docs/engine.md's conversation example: the engine asks, the scripted user replies, the
    answer after the reply is judged against the reading's rows."""
    for name in ("asking_engine.py", "shop_clarify.yaml"):
        (shop_project / name).write_text(named_block("engine.md", name))
    (shop_project / "conftest.py").write_text(named_block("engine.md", "conftest_asking.py"))
    result = pytester.runpytest_subprocess("--nl2sql-suite", "shop_clarify.yaml", "--nl2sql-clarify", "-p", "no:cacheprovider",
                                           "--nl2sql-out", "r.json")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([" clarification: 1 needed, 1 asked, 1 recognised, 1 resolved; 0 unnecessary"])
    (item,) = json.loads((shop_project / "r.json").read_text())["items"]
    assert item["clarification"]["reading"] == "how many"
    assert item["turns"][2]["text"] == "Just the number of albums."
    suite = shop_project / "shop_clarify.yaml"
    suite.write_text(suite.read_text().replace("- {n: 3}", "- {n: 4}"))  # the follow-up is really judged
    result = pytester.runpytest_subprocess("--nl2sql-suite", "shop_clarify.yaml", "--nl2sql-clarify", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*clarification: after the reply 'Just the number of albums.' (reading 'how many') the answer is wrong*"])
