"""The HTML report: one self-contained file, checked in a real headless Chromium.

The browser test needs Debian's ``chromium`` and ``chromium-driver`` and the ``selenium``
package (the test extra); .ci/run installs them. Where they are absent it skips, saying which.
It leaves a screenshot in ``tests/report/.artifacts/`` (ignored by git) for a human to look at.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pytest_nl2sql.reporting.html_report import render_html
from pytest_nl2sql.suitefile.writer import RowsUpdate, update_rows

ARTIFACTS = Path(__file__).resolve().parent / ".artifacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)


def _report(pytester: pytest.Pytester, project: Path) -> tuple[Path, dict]:
    from pytest_nl2sql.suitefile.loader import load_suite

    rows = [dict(r) for r in load_suite(project / "evals" / "mini.yaml").get("mini_001").rows]
    rows[0] = {**rows[0], "customer_count": 999}
    update_rows(project / "evals" / "mini.yaml", {"mini_001": RowsUpdate(rows)})
    pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-html", "report/index.html", "--nl2sql-out", "out.json")
    return project / "report" / "index.html", json.loads((project / "out.json").read_text())


def test_the_page_is_self_contained_and_escapes_what_it_shows(pytester: pytest.Pytester, project: Path) -> None:
    page, data = _report(pytester, project)
    text = page.read_text(encoding="utf-8")
    # no network: nothing loaded from anywhere (inline CSS and JS, a data: icon)
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", text)
    assert "<link rel=\"stylesheet\"" not in text and "<script src" not in text
    assert "evals/mini.yaml::mini_001[admin]" in text and "999" in text
    record = dict(data["items"][0], question="<script>alert(1)</script>", verdict="failed", failed_scores=["x"])
    rendered = render_html({**data, "items": [record]})
    assert "<script>alert(1)</script>" not in rendered and "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered


def _browser():
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip("Chromium is not installed (apt-get install chromium chromium-driver; .ci/run does it)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)


def test_the_page_works_in_headless_chromium(pytester: pytest.Pytester, project: Path) -> None:
    driver = _browser()
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page, data = _report(pytester, project)
    try:
        driver.get(page.as_uri())
        assert driver.title.startswith("pytest-nl2sql: mini.yaml")
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == [], errors

        # the failures come first: count, links to the items, the worst breakdowns
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "html_report_top.png"))
        failures = driver.find_element(By.ID, "failures")
        assert failures.location["y"] < 200 and failures.is_displayed()
        assert failures.find_element(By.TAG_NAME, "h2").text == "2 failed of 7 items"
        links = failures.find_elements(By.CSS_SELECTOR, "ol a")
        assert [a.text for a in links] == ["evals/mini.yaml::mini_001[admin]", "evals/mini.yaml::mini_001[analyst]"]
        assert "worst breakdowns" in failures.text
        # colour by distance from the goal: a bar short of 100% is not drawn like a full one
        colours: dict[str, str] = {}
        for b in driver.find_elements(By.CSS_SELECTOR, "#breakdowns .bar"):  # the first: accuracy (routing repeats names)
            name = b.find_element(By.XPATH, "./preceding-sibling::div[1]").text
            colours.setdefault(name, b.find_element(By.TAG_NAME, "i").value_of_css_property("background-color"))
        full = {c for name, c in colours.items() if name == "join"}  # mini_002: all passed
        part = {c for name, c in colours.items() if name == "customers"}  # mini_001: 1 of 3 passed
        assert full and part and full.isdisjoint(part), colours

        def shown() -> list[str]:
            return [r.get_attribute("data-verdict") for r in driver.find_elements(By.CSS_SELECTOR, "#items tbody tr.item") if r.is_displayed()]

        assert len(shown()) == len(data["items"]) == 7
        Select(driver.find_element(By.ID, "filter-verdict")).select_by_value("failed")
        assert shown() == ["failed", "failed"]  # mini_001 as admin and analyst
        assert driver.find_element(By.ID, "shown-count").text == "2"
        Select(driver.find_element(By.ID, "filter-role")).select_by_value("analyst")
        assert shown() == ["failed"]
        Select(driver.find_element(By.ID, "filter-verdict")).select_by_value("")
        Select(driver.find_element(By.ID, "filter-role")).select_by_value("")
        search = driver.find_element(By.ID, "filter-text")
        search.send_keys("media type")  # mini_002's question
        assert len(shown()) == 2
        search.clear()
        search.send_keys("x")  # 'input' fires on typing; clear() alone does not
        search.clear()
        Select(driver.find_element(By.ID, "filter-tag")).select_by_value("join")
        assert len(shown()) == 2
        Select(driver.find_element(By.ID, "filter-tag")).select_by_value("")

        # a failure opens onto its question, both SQLs and the row diff
        row = next(r for r in driver.find_elements(By.CSS_SELECTOR, "#items tbody tr.item") if r.get_attribute("data-verdict") == "failed")
        diff = row.find_element(By.CSS_SELECTOR, ".diff")
        assert not diff.is_displayed()
        row.find_element(By.CSS_SELECTOR, "details > summary").click()
        assert diff.is_displayed()
        assert "999" in row.find_element(By.CSS_SELECTOR, ".diff .unexpected").text or "999" in row.find_element(By.CSS_SELECTOR, ".diff").text
        cells = row.find_elements(By.CSS_SELECTOR, ".diff table.rowdiff tr")
        assert cells and all(c.value_of_css_property("white-space") == "pre" for c in row.find_elements(By.CSS_SELECTOR, ".diff td"))
        assert row.find_element(By.CSS_SELECTOR, ".gold-sql").is_displayed()
        assert row.find_element(By.CSS_SELECTOR, ".generated-sql").is_displayed()
        assert "How many customers" in row.text
        assert driver.find_element(By.ID, "confusion").is_displayed()
        assert driver.find_element(By.ID, "breakdowns").is_displayed()
        ARTIFACTS.mkdir(exist_ok=True)
        driver.execute_script("arguments[0].scrollIntoView()", row)
        driver.save_screenshot(str(ARTIFACTS / "html_report.png"))  # a failure opened: SQL and row diff
        assert [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")] == []
    finally:
        driver.quit()
