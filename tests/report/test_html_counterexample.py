"""A test-suite flag shows its counterexample in the HTML report (the neighbour's seed, the
shrunk rows, both results), and gold findings are listed for the gold's owner, in the JSON
summary, the terminal summary and the page -- checked in a real headless Chromium."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pytest_nl2sql.reporting.html_report import render_html
from pytest_nl2sql.safetext import shown
from tests.report.test_html import ARTIFACTS, _browser

PREDICTIONS = [  # right on the real data (its customer ids stop at 59), wrong in general
    {"id": "mini_001", "sql": "SELECT Country, COUNT(*) AS n FROM Customer WHERE CustomerId < 100 GROUP BY Country"},
]


def _run(pytester: pytest.Pytester) -> tuple[pytest.RunResult, dict]:
    (pytester.path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    result = pytester.runpytest(
        "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-predictions", "p.jsonl", "-k", "admin and mini_001", "-p", "no:randomly",
        "--nl2sql-test-suite", "5", "--nl2sql-out", "r.json", "--nl2sql-html", "r.html",
    )
    return result, json.loads((pytester.path / "r.json").read_text())


def _with_gold_finding(report: dict) -> dict:
    """The report with one more item: a pass whose difference is the gold's fragility (the
    flag's own record, as ``disagreement`` returns a gold finding)."""
    flagged = report["items"][0]
    found = copy.deepcopy(flagged["test_suite"]["disagreed"])
    found["gold_finding"] = "the gold groups by the non-key column name: different rows with one name merge"
    passing = dict(flagged, nodeid="evals/mini.yaml::mini_009[admin]", case_id="mini_009", verdict="passed", failed_scores=[],
                   test_suite={"checked": True, "neighbours": 5, "gold_finding": found})
    return {**report, "items": [*report["items"], passing]}


def test_the_counterexample_and_gold_findings_in_the_outputs(pytester: pytest.Pytester, project: Path) -> None:
    result, report = _run(pytester)
    result.assert_outcomes(failed=1)
    flagged = report["items"][0]["test_suite"]["disagreed"]
    cx = flagged["counterexample"]
    page = (pytester.path / "r.html").read_text(encoding="utf-8")
    assert 'class="counterexample"' in page and f"(seed {flagged['seed']})" in page
    assert f"{cx['row_count']} of its {cx['shrunk_from']} rows" in page
    assert report["summary"]["test_suite"]["gold_findings"] == []
    # a gold finding: in the JSON summary (recomputed), the terminal summary and the page
    from pytest_nl2sql.reporting.report import test_suite_summary

    both = _with_gold_finding(report)
    summary = test_suite_summary(both["items"])["test_suite"]
    assert summary["gold_findings"] == [{"nodeid": "evals/mini.yaml::mini_009[admin]", "case_id": "mini_009", "suite": both["items"][1].get("suite"),
                                         "neighbour": flagged["neighbour"] + 1, "why": both["items"][1]["test_suite"]["gold_finding"]["gold_finding"]}]
    assert "gold is fragile on neighbour" in render_html(both)


def test_the_counterexample_in_headless_chromium(pytester: pytest.Pytester, project: Path, tmp_path: Path) -> None:
    driver = _browser()
    from selenium.webdriver.common.by import By

    _, report = _run(pytester)
    both = _with_gold_finding(report)
    page = tmp_path / "index.html"
    page.write_text(render_html(both), encoding="utf-8")
    cx = report["items"][0]["test_suite"]["disagreed"]["counterexample"]
    try:
        driver.get(page.as_uri())
        assert [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
        # the failing item opens onto its counterexample: the rows, then both results
        row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "#items tbody tr.item") if r.get_attribute("data-verdict") == "failed")
        box = row.find_element(By.CSS_SELECTOR, ".counterexample")
        assert not box.is_displayed()
        row.find_element(By.CSS_SELECTOR, "details > summary").click()
        assert box.is_displayed()
        assert "counterexample: neighbour" in box.text and "(seed 0)" in box.text
        shown_rows = box.find_elements(By.CSS_SELECTOR, "table.cx-rows tr")
        assert len(shown_rows) == cx["row_count"] + len(cx["rows"])  # a header row per table
        gold = [c.text for c in box.find_elements(By.CSS_SELECTOR, "table.cx-gold td")]
        answer = [c.text for c in box.find_elements(By.CSS_SELECTOR, "table.cx-answer td")]
        assert gold == [shown(v) for r in cx["gold_rows"] for v in r] and answer == [shown(v) for r in cx["answer_rows"] for v in r]
        assert gold != answer
        # the gold finding: listed, with a link to its item and its own counterexample
        findings = driver.find_element(By.ID, "gold-findings")
        assert findings.is_displayed() and "gold is fragile on neighbour" in findings.text
        assert findings.find_element(By.CSS_SELECTOR, "a").get_attribute("href").endswith("#item-1")
        findings.find_element(By.CSS_SELECTOR, "details > summary").click()
        assert findings.find_element(By.CSS_SELECTOR, ".counterexample table.cx-gold").is_displayed()
        ARTIFACTS.mkdir(exist_ok=True)
        driver.execute_script("arguments[0].scrollIntoView()", box)
        driver.save_screenshot(str(ARTIFACTS / "html_counterexample.png"))
    finally:
        driver.quit()


def test_a_hostile_counterexample_is_shown_escaped_never_a_crash() -> None:
    from pytest_nl2sql.reporting.report import test_suite_summary

    items = [
        {"nodeid": "a", "verdict": "failed", "failed_scores": ["x"], "test_suite": {"checked": True, "disagreed": {
            "neighbour": "zz", "counterexample": {"rows": [{"table": 1, "columns": 5, "rows": 7}], "gold_rows": 5, "answer_rows": [1, ["<i>"]]}}}},
        {"nodeid": "b", "verdict": "passed", "test_suite": {"checked": True, "gold_finding": {
            "neighbour": True, "gold_finding": "<script>x</script>", "counterexample": []}}},
        {"nodeid": "c", "verdict": "passed", "test_suite": {"checked": True, "gold_finding": "text"}},
    ]
    page = render_html({"run": {}, "summary": {}, "items": items})
    assert "<script>x</script>" not in page and "&lt;script&gt;" in page and "<i>" not in page
    assert [g["nodeid"] for g in test_suite_summary(items)["test_suite"]["gold_findings"]] == ["b"]
