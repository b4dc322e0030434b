"""``pytest-nl2sql report publish REPORT DIR``: a history folder of small records and one HTML
page of the figures over time, checked in a real headless Chromium (as the run report is)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.cli import main
from tests.report.test_html import ARTIFACTS, _browser

MINI = ("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-p", "no:randomly")


def _publish(pytester: pytest.Pytester, project: Path, name: str, capsys: pytest.CaptureFixture[str]) -> str:
    pytester.runpytest(*MINI, "--nl2sql-out", name)
    capsys.readouterr()
    assert main(["report", "publish", str(project / name), str(project / "history")]) == 0
    return capsys.readouterr().out


def _three_runs(pytester: pytest.Pytester, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two runs on the demo's database, then one after its schema changed (a series break)."""
    shared = (project / "data").resolve()
    (project / "data").unlink()
    shutil.copytree(shared, project / "data")
    assert "1 runs recorded" in _publish(pytester, project, "r1.json", capsys)
    assert "2 runs recorded" in _publish(pytester, project, "r2.json", capsys)
    with sqlite3.connect(project / "data" / "chinook.sqlite") as con:
        con.execute("ALTER TABLE Genre ADD COLUMN Mood TEXT")
    assert "3 runs recorded" in _publish(pytester, project, "r3.json", capsys)


def test_publish_appends_small_records_and_a_schema_change_starts_a_new_line(
    pytester: pytest.Pytester, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _three_runs(pytester, project, capsys)
    lines = (project / "history" / "history.jsonl").read_text().splitlines()
    assert len(lines) == 3
    first = json.loads(lines[0])
    report = json.loads((project / "r1.json").read_text())
    assert first["suites"] == {"mini.yaml": report["run"]["provenance"]["suites"]["mini.yaml"]["sha256"]}
    assert first["datasources"]["chinook"] == report["run"]["provenance"]["datasources"]["chinook"]["fingerprint"]
    assert first["engine"]["version"] and first["plugin_version"] == report["run"]["plugin_version"]
    assert first["series"] == [{"suite": "mini.yaml", "model": "pytest_nl2sql.engine.reference:ReferenceEngine", "figures": {
        "items": 7, "passed": 7, "failed": 0, "accuracy": 1.0, "execution_accuracy": 1.0, "cost_usd": 0.0,
        "cost_per_passed_usd": 0.0, "latency_p95_s": None}}]
    assert json.loads(lines[2])["datasources"]["chinook"] != first["datasources"]["chinook"]
    page = (project / "history" / "index.html").read_text()
    assert "3 runs, 2 lines" in page and "(series 2: the schema changed)" in page

    # a line nobody can read is skipped and said, never a reason to lose the history
    with (project / "history" / "history.jsonl").open("a") as fh:
        fh.write("{not json\n")
    assert main(["report", "publish", str(project / "r3.json"), str(project / "history")]) == 0
    assert "1 unreadable lines of history.jsonl were skipped" in (project / "history" / "index.html").read_text()
    (project / "junk.json").write_text("{}")
    assert main(["report", "publish", str(project / "junk.json"), str(project / "history")]) == 2
    assert "not a pytest-nl2sql report" in capsys.readouterr().err
    assert main(["report", "publish", str(project / "r1.json"), str(project / "r2.json")]) == 2
    assert "is not a folder (name a folder for the history)" in capsys.readouterr().err


def test_the_history_page_works_in_headless_chromium(pytester: pytest.Pytester, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    driver = _browser()
    from selenium.webdriver.common.by import By

    _three_runs(pytester, project, capsys)
    try:
        driver.get((project / "history" / "index.html").as_uri())
        assert driver.title == "pytest-nl2sql history"
        assert [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
        charts = driver.find_elements(By.CSS_SELECTOR, "svg.chart")
        assert [c.get_attribute("data-figure") for c in charts] == ["accuracy", "execution_accuracy", "cost_per_passed_usd"]
        accuracy = charts[0]
        assert accuracy.is_displayed() and accuracy.size["width"] > 300
        series = accuracy.find_elements(By.CSS_SELECTOR, "polyline.series")
        names = [s.get_attribute("data-series") for s in series]
        assert names == ["mini.yaml / pytest_nl2sql.engine.reference:ReferenceEngine",
                         "mini.yaml / pytest_nl2sql.engine.reference:ReferenceEngine (series 2)"]
        assert [len(s.get_attribute("points").split()) for s in series] == [2, 1]  # the break starts a new line
        assert len(accuracy.find_elements(By.TAG_NAME, "circle")) == 3
        assert series[0].value_of_css_property("stroke") != series[1].value_of_css_property("stroke")
        assert driver.find_element(By.CSS_SELECTOR, '[data-figure="latency_p95_s"]').text == "no run recorded this figure"
        assert len(driver.find_elements(By.CSS_SELECTOR, "#runs tr")) == 4
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "history.png"))
    finally:
        driver.quit()
