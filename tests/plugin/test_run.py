"""Running items: modes, scorers as hooks, failure reports, JSON report, xdist, --lf."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows

from .conftest import ROUTING_SUITE


def _strip_timings(report: dict) -> dict:
    report = json.loads(json.dumps(report))
    for key in ("started", "duration_s", "workers"):
        report["run"].pop(key, None)
    for item in report["items"]:
        item.pop("latency_s", None)
        for step in item.get("steps") or []:
            step.pop("latency_s", None)  # the engine's own timings of each step
    return report


def test_mode_plans_passes_every_item_and_reports(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-mode", "plans", "--nl2sql-clarify")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(
        [
            "*= nl2sql =*",
            "mode plans; 8 items, 8 passed, 0 failed*",
            "*execution accuracy*100.0%*(4/4*",
            " per role (answer items; checked: outcome, result_match, routing):",
            "*viewer*100.0%*",
            " per outcome (answer items; checked: *):",
            "*clarify*100.0%*(1/1*",
            "*refused*100.0%*(1/1*",
            "*unanswerable*100.0%*(2/2*",
        ]
    )


def test_mode_retrieval_routes_without_an_llm(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "routing.yaml").write_text(ROUTING_SUITE)
    result = pytester.runpytest("--nl2sql-suite", "evals/routing.yaml", "--nl2sql-mode", "retrieval", "--nl2sql-out", "r.json")
    data = json.loads((project / "r.json").read_text())
    assert data["schema"] == "pytest-nl2sql/report" and data["version"] == 1
    routing = data["summary"]["routing_accuracy"]
    assert routing["total"] == 3
    assert {i["case_id"]: i["scores"]["routing"]["passed"] for i in data["items"]} == {
        i["case_id"]: i["verdict"] == "passed" for i in data["items"]
    }
    assert result.ret in (0, 1)
    result.stdout.fnmatch_lines(["*routing accuracy*"])


def test_a_failing_item_shows_question_role_sql_and_row_diff(pytester: pytest.Pytester, project: Path) -> None:
    update_rows(project / "evals" / "mini.yaml", {"mini_001": RowsUpdate([{"Country": "Atlantis", "customer_count": 99}])})
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "-k", "mini_001 and admin")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "Traceback" not in out
    result.stdout.fnmatch_lines(
        [
            "*mini.yaml:4:3: case 'mini_001' as admin (plans mode)",
            "  question: How many customers do we have, by country?",
            "  expected: allowed",
            "  actual:   ok",
            "  FAILED result_match: 24 rows, the gold has 1",
            "  gold SQL:",
            "    SELECT Country, COUNT(CustomerId) AS customer_count FROM Customer GROUP BY Country",
            "  generated SQL:",
            "  missing rows (first 1):",
            "    'Atlantis', 99",
            "  unexpected rows (first 10):",
        ]
    )


def test_a_conftest_scorer_adds_scores_and_can_fail_items(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(
        """
        from pytest_nl2sql.scoring.scorers import Score

        def pytest_nl2sql_score(context):
            if context.answer is None or context.answer.sql is None:
                return None
            short = len(context.answer.sql) < 60
            return Score("short_sql", short, detail="generated SQL is long")
        """
    )
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-out", "r.json")
    data = json.loads((project / "r.json").read_text())
    scored = {i["nodeid"].split("::")[1]: i["scores"].get("short_sql", {}).get("passed") for i in data["items"]}
    assert scored["mini_002[admin]"] is False  # the join's SQL is long
    result.stdout.fnmatch_lines(["*FAILED short_sql: generated SQL is long*"])


def test_builtin_scorers_can_be_blocked(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "-p", "no:nl2sql_scorers", "--nl2sql-out", "r.json")
    data = json.loads((project / "r.json").read_text())
    assert all(item["scores"] == {} for item in data["items"])
    result.assert_outcomes(passed=7)


def test_a_conftest_engine_replaces_the_reference_engine(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(
        """
        from pytest_nl2sql.engine.protocol import Answer, RouteResult

        class Refuser:
            def route(self, question, role):
                return RouteResult(ranked=[("chinook", 1.0)], shortlist=["chinook"])

            def answer(self, question, role, llm):
                return Answer(status="refused", message="no")

        def pytest_nl2sql_make_engine(config, project):
            return Refuser()
        """
    )
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    result.assert_outcomes(passed=1, failed=6)  # only the viewer's refusal is right


def test_an_engine_that_raises_fails_only_that_item(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(
        """
        from pytest_nl2sql.engine.reference import ReferenceEngine

        class Flaky(ReferenceEngine):
            def answer(self, question, role, llm):
                if "media type" in question:
                    raise RuntimeError("engine exploded")
                return super().answer(question, role, llm)

        def pytest_nl2sql_make_engine(config, project):
            return Flaky(project)
        """
    )
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    result.assert_outcomes(passed=5, failed=2)
    result.stdout.fnmatch_lines(["*engine error: RuntimeError: engine exploded*"])


def test_xdist_gives_the_same_verdicts_and_report(pytester: pytest.Pytester, project: Path) -> None:
    serial = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-clarify", "--nl2sql-out", "serial.json", "-p", "no:cacheprovider")
    parallel = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-clarify", "-n", "2", "--nl2sql-out", "parallel.json", "-p", "no:cacheprovider")
    assert serial.ret == parallel.ret == 0
    a = _strip_timings(json.loads((project / "serial.json").read_text()))
    b = _strip_timings(json.loads((project / "parallel.json").read_text()))
    assert a == b
    assert len(a["items"]) == 8


def test_last_failed_reruns_only_the_failing_items(pytester: pytest.Pytester, project: Path) -> None:
    update_rows(project / "evals" / "mini.yaml", {"mini_002": RowsUpdate([])})
    first = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    first.assert_outcomes(passed=5, failed=2)
    again = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--lf")
    again.assert_outcomes(failed=2)
    assert "mini_002[admin]" in again.stdout.str() and "mini_001" not in "".join(
        line for line in again.outlines if line.startswith("FAILED")
    )


def test_junitxml_carries_scores_and_github_summary_is_written(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = project / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--junitxml", "j.xml", "-o", "junit_family=xunit1")
    xml = (project / "j.xml").read_text()
    assert 'name="nl2sql.result_match" value="pass"' in xml
    assert 'name="nl2sql.outcome" value="pass"' in xml
    text = summary.read_text()
    assert text.startswith("### pytest-nl2sql (plans mode)")
    assert "| **accuracy** | 100.0% | 7/7 |" in text


def test_junitxml_under_xunit2_has_no_testcase_properties(pytester: pytest.Pytester, project: Path) -> None:
    """junit-10.xsd (pytest's default junit_family=xunit2) allows <properties> in <testsuite>
    only: every <testcase> holds only the elements the schema lists for it."""
    import xml.etree.ElementTree as ET

    pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--junitxml", "j.xml")
    root = ET.parse(project / "j.xml").getroot()
    cases = root.findall(".//testcase")
    assert len(cases) == 7
    allowed = {"skipped", "error", "failure", "system-out", "system-err"}
    assert all({child.tag for child in case} <= allowed for case in cases), [ET.tostring(c)[:200] for c in cases]
    suite = root.find("testsuite")
    assert suite is not None and {p.get("name") for p in suite.iter("property")} >= {"nl2sql_complete", "nl2sql_missing"}


def test_a_crashed_worker_is_reported_not_dropped(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(
        """
        import os
        from pytest_nl2sql.engine.reference import ReferenceEngine

        class Crashing(ReferenceEngine):
            def answer(self, question, role, llm):
                if "media type" in question and role == "admin":
                    os._exit(3)  # the worker process dies mid-item
                return super().answer(question, role, llm)

        def pytest_nl2sql_make_engine(config, project):
            return Crashing(project)
        """
    )
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-n", "2", "--nl2sql-out", "r.json", "-p", "no:cacheprovider")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*crashed (not scored): evals/mini.yaml::mini_002?admin?*"])
    data = json.loads((project / "r.json").read_text())
    assert "evals/mini.yaml::mini_002[admin]" in data["run"]["crashed"]


def test_the_chinook_suite_gives_the_same_report_under_xdist(pytester: pytest.Pytester, demo_dir: Path) -> None:
    import shutil

    root = pytester.path
    (root / "data").symlink_to(demo_dir / "data")
    shutil.copy(demo_dir / "nl2sql.yaml", root / "nl2sql.yaml")
    (root / "evals").mkdir()
    shutil.copy(demo_dir / "evals" / "chinook.yaml", root / "evals" / "chinook.yaml")
    args = ["--nl2sql-suite", "evals/chinook.yaml", "-p", "no:cacheprovider"]
    serial = pytester.runpytest_subprocess(*args, "-n", "0", "--nl2sql-out", "r0.json")
    parallel = pytester.runpytest_subprocess(*args, "-n", "2", "--nl2sql-out", "r2.json")
    assert serial.ret == parallel.ret == 0
    a = _strip_timings(json.loads((root / "r0.json").read_text()))
    b = _strip_timings(json.loads((root / "r2.json").read_text()))
    assert a == b
    assert a["summary"]["passed"] == len(a["items"]) > 150


@pytest.mark.parametrize("needs_llm", [False, True])
def test_an_engine_with_its_own_model_is_passed_no_llm_in_mode_plans(
    pytester: pytest.Pytester, project: Path, needs_llm: bool
) -> None:
    """The protocol (engine/protocol.py): ``needs_llm = False`` means mode plans does not ask the
    case for its plan and the engine's ``llm`` is None; otherwise it gets the case's plan."""
    pytester.makeconftest(
        f"""
        from pytest_nl2sql.engine.reference import ReferenceEngine

        class Recording(ReferenceEngine):
            needs_llm = {needs_llm}

            def answer(self, question, role, llm):
                with open("llms.txt", "a") as f:
                    f.write(type(llm).__name__ + "\\n")
                return super().answer(question, role, llm)

        def pytest_nl2sql_make_engine(config, project):
            return Recording(project)
        """
    )
    pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-mode", "plans")
    seen = set((project / "llms.txt").read_text().split())
    assert seen == ({"FakeLLM"} if needs_llm else {"NoneType"})
